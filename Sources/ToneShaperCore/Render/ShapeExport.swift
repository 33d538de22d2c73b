import ToneShaperMIDI

/// The article's ToneWriter: a shape played at one note for N cycles of its duration.
public enum ShapeExport {
    /// An engine that plays only `shape`, on every channel: what render-shape, plots and the
    /// editor's previews render through.
    public static func engine(for shape: Shape, sampleRate: Double, voices: Int = 1, masterGain: Double? = nil,
                              pointCapacity: Int = 0, buildsEveryTable: Bool = true) throws(ShapeError) -> Engine {
        var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
        config.buildsEveryTable = buildsEveryTable
        if let masterGain { config.masterGain = masterGain }
        config.channelPresets = Array(repeating: 0, count: 16)
        config.pointCapacity = pointCapacity
        return Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
    }

    /// The master gain render-shape and the editor's Export write with unless told otherwise
    /// (`--gain`): −6 dB, room for the echo.
    public static let defaultGainDecibels = -6.0

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

