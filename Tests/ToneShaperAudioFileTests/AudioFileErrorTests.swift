import Foundation
import Testing
import ToneShaperAudioFile

@Suite("Audio file errors")
struct AudioFileErrorTests {
    @Test("a file estimated larger than the free space is caught before writing; one that fits is not")
    func shortfall() {
        // An hour of stereo WAV 16-bit at 48 kHz is 691.2 MB.
        let hour = 3600 * 48_000
        let lacking = AudioFileFormat.wav16.shortfall(writing: hour, sampleRate: 48_000, channels: 2, to: "/data/x.wav", freeBytes: 500e6)
        #expect(lacking?.needed == 691_200_000)
        #expect(lacking?.free == 500e6)
        #expect(lacking?.folder == "/data")
        #expect(AudioFileFormat.wav16.shortfall(writing: hour, sampleRate: 48_000, channels: 2, to: "/data/x.wav", freeBytes: 700e6) == nil)
        #expect(AudioFileFormat.wav32Float.shortfall(writing: hour, sampleRate: 48_000, channels: 2, to: "/data/x.wav", freeBytes: 700e6) != nil)
        // The real file system of the temporary folder holds a second of audio.
        #expect(AudioFileFormat.flac24.shortfall(writing: 48_000, sampleRate: 48_000, channels: 2, to: NSTemporaryDirectory() + "/x.flac") == nil)
    }

    @Test("a full disk is called a full disk, in every format (FLAC's codec words are not passed on)",
          arguments: [AudioFileFormat.wav16, .flac16, .flac24, .oggVorbis])
    func fullDisk(format: AudioFileFormat) throws {
        // /dev/full accepts the open and fails every write with ENOSPC.
        var message = ""
        do {
            let writer = try AudioFileWriter(path: "/dev/full", format: format, sampleRate: 48_000, channels: 2)
            let block = [Float](repeating: 0.25, count: 2 * 48_000)
            try writer.write(interleaved: block)
            try writer.close()
        } catch {
            message = "\(error)"
        }
        #expect(message.contains("No space left on device"), "\(format): \(message)")
    }

    @Test("an unwritable path fails at open with the path and libsndfile's reason")
    func unwritablePath() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/no-such-folder/take.wav"
            let error = #expect(throws: AudioFileError.self) {
                try AudioFileWriter(path: path, format: .wav16, sampleRate: 48_000, channels: 2)
            }
            let text = error?.text ?? ""
            #expect(text.contains(path))
            #expect(text.contains("No such file or directory"), "libsndfile's text should be kept: \(text)")
        }
    }

    @Test("a combination libsndfile cannot write is refused before a file is created")
    func unsupportedCombination() throws {
        try withTemporaryDirectory { dir in
            // FLAC allows at most 8 channels.
            let path = "\(dir)/nine.flac"
            let error = #expect(throws: AudioFileError.self) {
                try AudioFileWriter(path: path, format: .flac16, sampleRate: 48_000, channels: 9)
            }
            #expect(error?.text.contains(path) == true)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("an Ogg Vorbis rate the encoder has no mode for is refused at open, naming it, before a file is created")
    func vorbisRateRefused() throws {
        try withTemporaryDirectory { dir in
            // libvorbis encodes up to 192 kHz; libsndfile used to accept 384 kHz and write nothing of it.
            let path = "\(dir)/high.ogg"
            let error = #expect(throws: AudioFileError.self) {
                try AudioFileWriter(path: path, format: .oggVorbis, sampleRate: 384_000, channels: 2)
            }
            #expect(error?.text == "\(path): Ogg Vorbis cannot be written at 384000 Hz with 2 channel(s)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test("non-positive rate or channel count is refused", arguments: [(0, 2), (48_000, 0), (-1, 1)])
    func invalidArguments(rate: Int, channels: Int) throws {
        try withTemporaryDirectory { dir in
            #expect(throws: AudioFileError.self) {
                try AudioFileWriter(path: "\(dir)/x.wav", format: .wav16, sampleRate: rate, channels: channels)
            }
        }
    }

    @Test("a partial frame is refused and nothing of it is written")
    func partialFrame() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/partial.wav"
            let writer = try AudioFileWriter(path: path, format: .wav32Float, sampleRate: 8000, channels: 2)
            try writer.write(interleaved: [0.1, 0.2])
            #expect(throws: AudioFileError.self) { try writer.write(interleaved: [0.3, 0.4, 0.5]) }
            #expect(writer.framesWritten == 1)
            try writer.close()
            #expect(try AudioFileReader.read(path: path).samples == [0.1, 0.2])
        }
    }

    @Test("close is idempotent and a write after close is an error")
    func closeTwice() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/closed.flac"
            let writer = try AudioFileWriter(path: path, format: .flac24, sampleRate: 8000, channels: 1)
            try writer.write(interleaved: [0.5, -0.5])
            try writer.close()
            try writer.close()
            #expect(!writer.isOpen)
            #expect(throws: AudioFileError.closed(path: path)) { try writer.write(interleaved: [0.1]) }
            #expect(try AudioFileReader.read(path: path).frames == 2)
        }
    }

    @Test("a writer released without close still leaves a complete file")
    func deinitCloses() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/released.wav"
            do {
                let writer = try AudioFileWriter(path: path, format: .wav16, sampleRate: 8000, channels: 1)
                try writer.write(interleaved: [Float](repeating: 0.5, count: 800))
            }
            let contents = try AudioFileReader.read(path: path)
            #expect(contents.frames == 800)
        }
    }

    @Test("reading a missing or non-audio file names the path")
    func unreadable() throws {
        try withTemporaryDirectory { dir in
            let missing = "\(dir)/missing.wav"
            let first = #expect(throws: AudioFileError.self) { try AudioFileReader.read(path: missing) }
            #expect(first?.text.contains(missing) == true)

            let text = "\(dir)/notes.wav"
            try "not audio at all, just text".write(toFile: text, atomically: true, encoding: .utf8)
            let second = #expect(throws: AudioFileError.self) { try AudioFileReader.read(path: text) }
            #expect(second?.text.contains(text) == true)
        }
    }
}
