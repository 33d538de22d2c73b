import EngineFixtures
import Foundation
import Testing
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// The one way an offline render reaches a file (`render`, `render-shape`, the editor's Export).
@Suite("Rendering to a file")
struct RenderToFileTests {
    /// A chord held a third of a second on two channels, then released: 0.6 s at 48 kHz.
    static let performance: [TimedMIDIMessage] = [
        .init(frame: 0, message: .noteOn(channel: 0, note: 60, velocity: 100)),
        .init(frame: 480, message: .noteOn(channel: 1, note: 67, velocity: 80)),
        .init(frame: 16_000, message: .noteOff(channel: 0, note: 60, velocity: 64)),
        .init(frame: 16_000, message: .noteOff(channel: 1, note: 67, velocity: 64)),
    ]
    static let frames = 28_800

    @Test("the file holds what the engine renders, sample for sample, and the peak returned is the file's", arguments: [1, 2])
    func samplesAndPeak(threads: Int) throws {
        let expected = OfflineRenderer(engine: Fixtures.engine(program: 1, threads: threads))
            .renderAll(Self.performance, totalFrames: Self.frames)
        let path = NSTemporaryDirectory() + "toneshaper-render-to-file-\(getpid())-\(threads).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let renderer = OfflineRenderer(engine: Fixtures.engine(program: 1, threads: threads))
        let peak = try renderer.render(Self.performance, totalFrames: Self.frames, to: path, format: .wav32Float)
        let file = try AudioFileReader.read(path: path)
        #expect(file.sampleRate == 48_000 && file.channels == 2 && file.frames == Self.frames)
        #expect(file.samples == expected)
        #expect(peak > 0.01)
        #expect(peak == Fixtures.peak(file.samples, 0..<file.samples.count))
    }

    @Test("a file that cannot be written fails with its reason before anything is rendered")
    func unwritable() {
        let renderer = OfflineRenderer(engine: Fixtures.engine(program: 1))
        var message = ""
        do {
            // /dev/full accepts the open and fails every write (the header's first) with ENOSPC.
            _ = try renderer.render(Self.performance, totalFrames: Self.frames, to: "/dev/full", format: .wav16)
        } catch {
            message = "\(error)"
        }
        #expect(message.contains("No space left on device"), "\(message)")
        #expect(renderer.engine.frame == 0)
    }
}
