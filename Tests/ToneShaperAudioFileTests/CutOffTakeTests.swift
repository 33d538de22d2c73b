import Foundation
import Testing
import ToneShaperAudioFile

/// What a recording killed before `close()` leaves: every write has reached the kernel, so a copy
/// of the file taken while the writer is still open is exactly what a SIGKILL would leave on disk.
@Suite("A take cut off before it is closed")
struct CutOffTakeTests {
    /// 1.5 s of a tone, then 4.5 s of silence: the silence is where an Ogg page waits longest
    /// (libogg ends a page at 4 KB or 255 packets, and silent packets are a few bytes).
    static let rate = 48_000
    static let signal: [Float] = {
        let tone = sine(frequency: 440, sampleRate: rate, frames: 3 * rate / 2, channels: 2, amplitude: 0.5)
        return tone + [Float](repeating: 0, count: 2 * 9 * rate / 2)
    }()

    /// Writes `signal` in 4096-frame blocks with a header update once a second of audio, as the
    /// recorder's disk thread does, and returns a copy of the file as it was before `close()`.
    static func writeAndCut(_ path: String, _ format: AudioFileFormat) throws -> String {
        let writer = try AudioFileWriter(path: path, format: format, sampleRate: rate, channels: 2)
        var updated = 0
        try signal.withUnsafeBufferPointer { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + 2 * 4096)
                try writer.write(interleaved: UnsafeBufferPointer(rebasing: all[offset..<end]))
                offset = end
                if writer.framesWritten - updated >= rate {
                    updated = writer.framesWritten
                    writer.updateHeader()
                }
            }
        }
        let cut = path + ".cut." + format.fileExtension
        try FileManager.default.copyItem(atPath: path, toPath: cut)
        try writer.close()
        return cut
    }

    @Test("reads back to within a second of what was written, and claims the length it holds", arguments: AudioFileFormat.allCases)
    func readsBack(format: AudioFileFormat) throws {
        try withTemporaryDirectory { dir in
            let cut = try Self.writeAndCut("\(dir)/take.\(format.fileExtension)", format)
            let written = Self.signal.count / 2
            let stream = try AudioFileStream(path: cut)
            let contents = try AudioFileReader.read(path: cut)
            #expect(contents.format == format && contents.sampleRate == Self.rate && contents.channels == 2)
            // A reader that sizes its buffer from the header (python-soundfile) needs a true claim,
            // not FLAC's "unknown", which libsndfile turns into 2^63 - 1 frames.
            #expect(stream.claimedFrames == Int64(contents.frames), "\(format): claims \(stream.claimedFrames), holds \(contents.frames)")
            #expect(contents.frames <= written)
            #expect(contents.frames >= written - Self.rate - 4096, "\(format): \(contents.frames) of \(written) frames")
            if format.isLossless {
                let tolerance: Float = format == .wav32Float ? 0 : 1.5 / 32768
                #expect(maxAbsoluteDifference(contents.samples, Array(Self.signal[0..<contents.samples.count])) <= tolerance)
            } else {
                // The tone is there, at its level (Vorbis keeps loudness, not samples).
                let level = rootMeanSquare(contents.samples[0..<(2 * Self.rate)])
                #expect(abs(level - rootMeanSquare(Self.signal[0..<(2 * Self.rate)])) < 0.02, "\(level)")
            }
        }
    }

    @Test("closed after its header updates, the file is whole: every frame, its length claimed, Ogg in one stream", arguments: AudioFileFormat.allCases)
    func closedWhole(format: AudioFileFormat) throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/take.\(format.fileExtension)"
            _ = try Self.writeAndCut(path, format)
            let written = Self.signal.count / 2
            let contents = try AudioFileReader.read(path: path)
            #expect(try AudioFileStream(path: path).claimedFrames == Int64(contents.frames))
            if format.isLossless {
                #expect(contents.frames == written)
            } else {
                // A chained Ogg file (a new stream at every header update) reads as its first stream only.
                #expect(abs(contents.frames - written) <= 2048, "\(contents.frames) of \(written) frames")
            }
        }
    }
}
