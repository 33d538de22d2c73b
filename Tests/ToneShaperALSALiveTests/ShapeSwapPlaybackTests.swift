import Foundation
import TestSupport
import Testing
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

/// The editor's ALSA route: `edit --device` runs a ALSAPlayer whose preset 0 is the shape being
/// edited, and every edit goes to its audio thread through `offerShape`.
@Suite("Editing while the instrument plays through a real PCM")
struct ShapeSwapPlaybackTests {
    static func flat(_ f: Double) -> Shape {
        Shape(name: "edited", points: [.init(time: 0, frequency: f), .init(time: 1, frequency: f)], duration: 1,
              minFrequency: 20, maxFrequency: 2000, amplitude: 0.6, fidelity: 1000)
    }

    @Test("an edit offered while the audio thread writes to the capture PCM is what the device plays from then on")
    func editReachesTheDevice() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let pcm = try PCMOutput(device: "capture", sampleRate: 48_000, periodFrames: 128, periods: 3, configText: folder.configText)
        let engine = try ShapeExport.engine(for: Self.flat(250), sampleRate: 48_000, voices: 8, pointCapacity: Shape.maximumPoints)
        let endFrame: Int64 = 20 * 48_000
        let player = ALSAPlayer(instrument: Instrument(engine: engine), pcm: pcm,
                                source: .performance([TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 69, velocity: 120))],
                                                     endFrame: endFrame),
                                realtime: false)
        try player.start()
        while player.session.framesRendered < 48_000 && !player.isFinished { usleep(200) }
        let offeredAt = player.session.framesRendered
        #expect(player.session.offerShape(Self.flat(375), preset: 0))
        while !player.isFinished { usleep(2_000) }
        let summary = player.stop()
        #expect(summary.audioFailure == nil)
        try #require(offeredAt < endFrame - 96_000, "the audio thread finished before the edit was offered")

        let captured = try folder.capturedFloats()
        let left = stride(from: 0, to: Int(2 * endFrame), by: 2).map { captured[$0] }
        func frequency(_ range: Range<Int>) -> Double? { ZeroCrossings.frequency(left, rate: 48_000, in: range) }
        let before = try #require(frequency(4_800..<Int(offeredAt)))
        let after = try #require(frequency((Int(endFrame) - 48_000)..<Int(endFrame)))
        #expect(abs(before - 250) < 0.5)
        #expect(abs(after - 375) < 0.5)
        // The swap landed at a period start after the offer, within a few periods, without a click.
        var steepest: Float = 0, atSwap: Float = 0
        for i in (Int(endFrame) - 48_000)..<Int(endFrame) { steepest = max(steepest, abs(left[i] - left[i - 1])) }
        for i in Int(offeredAt)..<min(left.count, Int(offeredAt) + 4_800) { atSwap = max(atSwap, abs(left[i] - left[i - 1])) }
        #expect(atSwap <= steepest * 1.05)
    }
}
