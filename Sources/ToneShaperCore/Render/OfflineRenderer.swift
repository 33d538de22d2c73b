import ToneShaperMIDI

/// Drives an engine through a whole performance, block by block, handing each block to a sink.
///
/// The same engine and the same event placement as live play: a message at frame F always lands
/// at offset F − blockStart of the block that contains F, whatever the block size.
public struct OfflineRenderer {
    public let engine: Engine
    public let blockFrames: Int

    /// Blocks of 4096 frames by default: the engine cuts its own control periods inside them, and a
    /// file writer called once per 4096 frames makes a few hundred system calls for a minute of
    /// audio, not thousands.
    public init(engine: Engine, blockFrames: Int = 4096) {
        precondition(blockFrames >= 1)
        self.engine = engine
        self.blockFrames = blockFrames
    }

    /// Renders `totalFrames` frames of `messages` (sorted by frame, stable) and calls `sink` with
    /// each block of interleaved stereo samples, in order; `progress` gets the fraction done.
    ///
    /// With helper threads, block k is finished (its last span's mix and master) and handed to
    /// `sink` while block k + 1 renders, by whichever render thread is free first (two buffers take
    /// turns): neither costs the threads time between blocks. The first error `sink` throws ends
    /// the render.
    public func render<E: Error>(_ messages: [TimedMIDIMessage], totalFrames: Int,
                                 progress: ((Double) -> Void)? = nil,
                                 sink: (UnsafeBufferPointer<Float>) throws(E) -> Void) throws(E) {
        let sorted = messages.inFrameOrder()
        var events: [EngineEvent] = []
        events.reserveCapacity(256)
        let buffers = UnsafeMutablePointer<Float>.allocate(capacity: 4 * blockFrames)
        defer { buffers.deallocate() }
        let overlapped = engine.threadCount > 1
        var next = 0
        var start = 0
        var lastReport = -1
        let handover = Handover<E>()  // one job for the whole render: nothing is allocated per block
        try withoutActuallyEscaping(sink) { (sink) throws(E) in
            let job = {
                guard let block = handover.block else { return }
                do throws(E) { try sink(block) } catch { handover.failure = error }
            }
            var written: UnsafeBufferPointer<Float>?  // rendered, not yet handed to the sink
            var turn = 0
            while start < totalFrames {
                let count = min(blockFrames, totalFrames - start)
                events.removeAll(keepingCapacity: true)
                while next < sorted.count && sorted[next].frame < Int64(start + count) {
                    events.append(EngineEvent(offset: max(0, Int(sorted[next].frame) - start), sorted[next].message))
                    next += 1
                }
                let buffer = buffers + turn * 2 * blockFrames
                if overlapped {
                    handover.block = written
                    events.withUnsafeBufferPointer {
                        engine.render(frames: count, events: $0, into: buffer, alongside: job, holdingLastMaster: true)
                    }
                    if let failure = handover.failure { throw failure }
                } else {
                    if let block = written { try sink(block) }
                    events.withUnsafeBufferPointer { engine.render(frames: count, events: $0, into: buffer) }
                }
                written = UnsafeBufferPointer(start: buffer, count: 2 * count)
                turn ^= 1
                start += count
                if let progress {
                    let percent = start * 100 / max(1, totalFrames)
                    if percent != lastReport { lastReport = percent; progress(Double(start) / Double(totalFrames)) }
                }
            }
            engine.finishMaster()
            if let block = written { try sink(block) }
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

/// The block an offline render hands to its sink beside the next one, and the sink's error.
private final class Handover<E: Error> {
    var block: UnsafeBufferPointer<Float>?
    var failure: E?
}
