#if canImport(Glibc)
import Glibc
#endif
import ToneShaperCore
import ToneShaperMIDI

/// Drives an instrument through a whole performance, block by block, handing its output to a sink.
///
/// Each block is one `Instrument.process` call, the method the live front-ends and the plugins
/// call: a message at frame F lands at frame F − blockStart of the block that contains F,
/// whatever the block size, as it does in a live period or a host's block.
public struct OfflineRenderer {
    public let instrument: Instrument
    public let blockFrames: Int
    public var engine: Engine { instrument.engine }

    /// Blocks of 4096 frames by default: the engine cuts its own spans and control periods inside
    /// them; a block is what the events are placed in and what progress is reported by.
    public init(instrument: Instrument, blockFrames: Int = 4096) {
        precondition(blockFrames >= 1)
        self.instrument = instrument
        self.blockFrames = blockFrames
    }

    /// An engine behind its own front door (`Instrument(engine:)`), for a render of its own.
    public init(engine: Engine, blockFrames: Int = 4096) {
        self.init(instrument: Instrument(engine: engine), blockFrames: blockFrames)
    }

    /// Renders `totalFrames` frames of `messages` (sorted by frame, stable) and calls `sink` with
    /// the interleaved stereo samples, in order, a stretch at a time (a span: up to a few thousand
    /// frames); `progress` gets the fraction done.
    ///
    /// With helper threads, each stretch reaches `sink` as soon as it is mastered, on the render
    /// thread that mastered it, while the next span renders: the writing is spread over the spans
    /// and reads samples still in that core's cache. Two block buffers take turns, so a block's
    /// last stretch, mastered during the next block, is still there. The first error `sink`
    /// throws ends the render; `sink` is not called again after it.
    public func render<E: Error>(_ messages: [TimedMIDIMessage], totalFrames: Int,
                                 progress: ((Double) -> Void)? = nil,
                                 sink: (UnsafeBufferPointer<Float>) throws(E) -> Void) throws(E) {
        let sorted = messages.inFrameOrder()
        // The tables of every wave the performance can reach are ready before its first block.
        instrument.engine.prepareTables(for: sorted)
        var events: [InstrumentEvent] = []
        events.reserveCapacity(256)
        let buffers = UnsafeMutablePointer<Float>.allocate(capacity: 4 * blockFrames)
        defer { buffers.deallocate() }
        var next = 0
        var start = 0
        var lastReport = -1
        let failure = Failure<E>()
        let engine = instrument.engine
        try withoutActuallyEscaping(sink) { (sink) throws(E) in
            engine.onMastered = { stretch in
                guard failure.error == nil else { return }
                do throws(E) { try sink(stretch) } catch { failure.error = error }
            }
            defer { engine.onMastered = nil }
            var turn = 0
            while start < totalFrames {
                let count = min(blockFrames, totalFrames - start)
                events.removeAll(keepingCapacity: true)
                while next < sorted.count && sorted[next].frame < Int64(start + count) {
                    events.append(InstrumentEvent(frame: max(0, Int(sorted[next].frame) - start), .message(sorted[next].message)))
                    next += 1
                }
                let buffer = buffers + turn * 2 * blockFrames
                events.withUnsafeBufferPointer {
                    instrument.process(frames: count, events: $0, into: buffer, holdingLastMaster: true)
                }
                if let error = failure.error { instrument.finishMaster(); throw error }
                turn ^= 1
                start += count
                if let progress {
                    let percent = start * 100 / max(1, totalFrames)
                    if percent != lastReport { lastReport = percent; progress(Double(start) / Double(totalFrames)) }
                }
            }
            instrument.finishMaster()
            if let error = failure.error { throw error }
        }
    }

    /// The whole performance as one interleaved array (tests and small renders).
    public func renderAll(_ messages: [TimedMIDIMessage], totalFrames: Int) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(2 * totalFrames)
        render(messages, totalFrames: totalFrames) { out.append(contentsOf: $0) }
        return out
    }
}

extension ShapeExport {
    /// The renderer, its events and its length for `cycles` passes of `shape` held on `note`: the
    /// one setup render-shape and the editor's Export share, so their files are equal sample for sample.
    public static func renderer(for shape: Shape, cycles: Int, note: Int, velocity: Int = 127, sampleRate: Int,
                                gainDecibels: Double = defaultGainDecibels) throws(ShapeError)
        -> (renderer: OfflineRenderer, messages: [TimedMIDIMessage], frames: Int) {
        let engine = try engine(for: shape, sampleRate: Double(sampleRate), masterGain: pow(10, gainDecibels / 20),
                                buildsEveryTable: false)
        let (messages, frames) = performance(of: shape, cycles: cycles, note: UInt8(note), velocity: UInt8(velocity),
                                             sampleRate: Double(sampleRate))
        return (OfflineRenderer(engine: engine), messages, frames)
    }
}

/// The first error an offline render's sink threw, from whichever render thread called it.
private final class Failure<E: Error> {
    var error: E?
}
