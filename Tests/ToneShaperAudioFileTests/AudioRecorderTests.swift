import Foundation
import Testing
import ToneShaperAudioFile

@Suite("AudioRecorder")
struct AudioRecorderTests {
    /// Deterministic, non-periodic test signal: any lost, repeated or reordered block shows.
    static func knownSignal(frames: Int, channels: Int) -> [Float] {
        var state: UInt32 = 12_345
        return (0..<(frames * channels)).map { index in
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Float(state >> 8) / Float(1 << 24) - 0.5
            return 0.5 * sin(Float(index / channels) * 0.0123 + Float(index % channels)) + 0.1 * noise
        }
    }

    @Test("10 s captured in 128-frame buffers from another thread reads back identical, nothing dropped")
    func recordsEverything() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/take.wav"
            let rate = 48_000, channels = 2, chunk = 128
            let signal = Self.knownSignal(frames: 10 * rate, channels: channels)
            let recorder = try AudioRecorder(path: path, format: .wav32Float, sampleRate: rate, channels: channels)

            let done = DispatchSemaphore(value: 0)
            let audioThread = Thread {
                signal.withUnsafeBufferPointer { all in
                    var offset = 0
                    while offset < all.count {
                        // Stand-in for the sound card's clock: a real device delivers 128 frames
                        // every 2.7 ms; here we only wait until the ring has room, so the test runs
                        // as fast as the disk thread drains and the ring wraps thousands of times.
                        // The wait is bounded so a broken drain shows up as drops, not a hang.
                        var polls = 0
                        while recorder.writableFrames < chunk && polls < 50_000 {
                            usleep(200)
                            polls += 1
                        }
                        recorder.capture(UnsafeBufferPointer(rebasing: all[offset..<(offset + chunk * channels)]))
                        offset += chunk * channels
                    }
                }
                done.signal()
            }
            audioThread.start()
            done.wait()

            let report = try recorder.finish()
            #expect(report.framesDropped == 0)
            #expect(report.framesWritten == 10 * rate)
            let contents = try AudioFileReader.read(path: path)
            #expect(contents.sampleRate == rate)
            #expect(contents.channels == channels)
            #expect(contents.frames == 10 * rate)
            #expect(firstDifference(contents.samples, signal) == nil)
        }
    }

    @Test("a producer that outruns a tiny ring gets drops counted, and written + dropped = produced")
    func countsDrops() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/overrun.wav"
            let rate = 48_000, channels = 2, chunk = 128, chunks = 750
            // 1 ms of buffer is smaller than one 128-frame buffer, so every capture overflows.
            let recorder = try AudioRecorder(path: path, format: .wav32Float, sampleRate: rate, channels: channels,
                                             bufferSeconds: 0.001)
            // Frame k is (k, -k): exact in float, so the file shows which frames survived.
            var buffer = [Float](repeating: 0, count: chunk * channels)
            for block in 0..<chunks {
                for frame in 0..<chunk {
                    let k = Float(block * chunk + frame)
                    buffer[frame * 2] = k
                    buffer[frame * 2 + 1] = -k
                }
                buffer.withUnsafeBufferPointer { recorder.capture($0) }
            }
            let produced = chunk * chunks

            let report = try recorder.finish()
            #expect(report.framesDropped > 0)
            #expect(report.framesWritten + report.framesDropped == produced)
            #expect(recorder.framesDropped == report.framesDropped)

            let contents = try AudioFileReader.read(path: path)
            #expect(contents.frames == report.framesWritten)
            // What was kept is whole frames, in order, each one of those produced.
            let left = contents.channel(0), right = contents.channel(1)
            #expect(zip(left, right).allSatisfy { $0 == -$1 }, "a frame was split or corrupted")
            #expect(zip(left, left.dropFirst()).allSatisfy { $0 < $1 }, "frames repeated or reordered")
            #expect(left.allSatisfy { $0 >= 0 && $0 < Float(produced) && $0 == $0.rounded() })
        }
    }

    @Test("finish is idempotent and a released recorder still closes its file")
    func finishTwice() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/twice.flac"
            let recorder = try AudioRecorder(path: path, format: .flac24, sampleRate: 8000, channels: 1)
            let tone = sine(frequency: 100, sampleRate: 8000, frames: 800, channels: 1)
            tone.withUnsafeBufferPointer { recorder.capture($0) }
            let first = try recorder.finish()
            let second = try recorder.finish()
            #expect(first == second)
            #expect(first.framesWritten == 800)
            #expect(try AudioFileReader.read(path: path).frames == 800)

            let releasedPath = "\(dir)/released.wav"
            do {
                let released = try AudioRecorder(path: releasedPath, format: .wav16, sampleRate: 8000, channels: 1)
                tone.withUnsafeBufferPointer { released.capture($0) }
            }
            #expect(try AudioFileReader.read(path: releasedPath).frames == 800)
        }
    }

    @Test("an unwritable path fails when the recorder is created, naming the path")
    func unwritable() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/missing/take.ogg"
            let error = #expect(throws: AudioFileError.self) {
                try AudioRecorder(path: path, format: .oggVorbis, sampleRate: 48_000, channels: 2)
            }
            #expect(error?.text.contains(path) == true)
        }
    }

    @Test("a libsndfile error on the disk thread is thrown by finish",
          .enabled(if: FileManager.default.isWritableFile(atPath: "/dev/full")))
    func diskError() throws {
        // libsndfile's FLAC encoder writes its stream header at the first write, which /dev/full
        // refuses (ENOSPC): the open succeeds and the failure happens on the disk thread.
        let recorder = try AudioRecorder(path: "/dev/full", format: .flac16, sampleRate: 8000, channels: 1)
        let tone = sine(frequency: 100, sampleRate: 8000, frames: 800, channels: 1)
        tone.withUnsafeBufferPointer { recorder.capture($0) }
        let error = #expect(throws: AudioFileError.self) { try recorder.finish() }
        #expect(error?.text.contains("/dev/full") == true)
        // The same error again, not a report.
        #expect(throws: AudioFileError.self) { try recorder.finish() }
    }
}
