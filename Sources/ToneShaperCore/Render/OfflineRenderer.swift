import ToneShaperMIDI

/// Drives an engine through a whole performance, block by block, handing its output to a sink.
///
/// The same engine and the same event placement as live play: a message at frame F always lands
/// at offset F − blockStart of the block that contains F, whatever the block size.
public struct OfflineRenderer {
    public let engine: Engine
    public let blockFrames: Int

    /// Blocks of 4096 frames by default: the engine cuts its own spans and control periods inside
    /// them; a block is what the events are placed in and what progress is reported by.
    public init(engine: Engine, blockFrames: Int = 4096) {
        precondition(blockFrames >= 1)
        self.engine = engine
        self.blockFrames = blockFrames
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
        var events: [EngineEvent] = []
        events.reserveCapacity(256)
        let buffers = UnsafeMutablePointer<Float>.allocate(capacity: 4 * blockFrames)
        defer { buffers.deallocate() }
        var next = 0
        var start = 0
        var lastReport = -1
        let failure = Failure<E>()
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
                    events.append(EngineEvent(offset: max(0, Int(sorted[next].frame) - start), sorted[next].message))
                    next += 1
                }
                let buffer = buffers + turn * 2 * blockFrames
                events.withUnsafeBufferPointer {
                    engine.render(frames: count, events: $0, into: buffer, holdingLastMaster: true)
                }
                if let error = failure.error { engine.finishMaster(); throw error }
                turn ^= 1
                start += count
                if let progress {
                    let percent = start * 100 / max(1, totalFrames)
                    if percent != lastReport { lastReport = percent; progress(Double(start) / Double(totalFrames)) }
                }
            }
            engine.finishMaster()
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

/// The article's ToneWriter: a shape played at one note for N cycles of its duration.
public enum ShapeExport {
    /// An engine that plays only `shape`, on every channel: what render-shape, plots and the
    /// editor's previews render through.
    public static func engine(for shape: Shape, sampleRate: Double, voices: Int = 1, masterGain: Double? = nil,
                              pointCapacity: Int = 0) throws(ShapeError) -> Engine {
        var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
        if let masterGain { config.masterGain = masterGain }
        config.channelPresets = Array(repeating: 0, count: 16)
        config.pointCapacity = pointCapacity
        return Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
    }

    /// The master gain render-shape and the editor's Export write with unless told otherwise
    /// (`--gain`): −6 dB, room for the echo.
    public static let defaultGainDecibels = -6.0

    /// The renderer, its events and its length for `cycles` passes of `shape` held on `note`: the
    /// one setup render-shape and the editor's Export share, so their files are equal sample for sample.
    public static func renderer(for shape: Shape, cycles: Int, note: Int, velocity: Int = 127, sampleRate: Int,
                                gainDecibels: Double = defaultGainDecibels) throws(ShapeError)
        -> (renderer: OfflineRenderer, messages: [TimedMIDIMessage], frames: Int) {
        let engine = try engine(for: shape, sampleRate: Double(sampleRate), masterGain: _pow(10, gainDecibels / 20))
        let (messages, frames) = performance(of: shape, cycles: cycles, note: UInt8(note), velocity: UInt8(velocity),
                                             sampleRate: Double(sampleRate))
        return (OfflineRenderer(engine: engine), messages, frames)
    }

    /// The events and length for `cycles` passes of the shape held on `note`, plus its release.
    public static func performance(of shape: Shape, cycles: Int, note: UInt8, velocity: UInt8 = 127,
                                   sampleRate: Double) -> (messages: [TimedMIDIMessage], frames: Int) {
        let cycleFrames = max(2, Int(shape.duration * sampleRate))
        let held = cycles * cycleFrames
        // Release, plus a second for the DC blocker (1 Hz) to settle after a sawtooth's mean is released.
        let tail = Int((shape.release + 1) * sampleRate) + (shape.echo.volume > 0 ? echoTailFrames(shape, sampleRate) : 0)
        return ([TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: note, velocity: velocity)),
                 TimedMIDIMessage(frame: Int64(held), message: .noteOff(channel: 0, note: note, velocity: 64))],
                held + tail)
    }

    /// Time for the echo to fall 60 dB.
    static func echoTailFrames(_ shape: Shape, _ sampleRate: Double) -> Int {
        let repeats = _log(0.001) / _log(shape.echo.volume)
        return Int(min(30, repeats * shape.echo.delay) * sampleRate)
    }
}

/// The first error an offline render's sink threw, from whichever render thread called it.
private final class Failure<E: Error> {
    var error: E?
}
