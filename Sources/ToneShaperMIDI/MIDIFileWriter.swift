/// Writes timed messages as a format 0 Standard MIDI File, to record a live performance.
///
/// One tempo at tick 0, each message with its delta time (explicit status bytes, no running
/// status), then End of Track at the last message. Frames become ticks by rounding, so the
/// round trip is exact only when a tick is no longer than a frame: see
/// `sampleExactTicksPerQuarter(sampleRate:tempoMicrosecondsPerQuarter:)`.
public enum MIDIFileWriter {
    /// Largest ticks-per-quarter a metrical division can hold (15 bits).
    public static let maxTicksPerQuarter = 0x7FFF

    /// - Parameters:
    ///   - events: messages in any order; sorted by frame here, equal frames keeping their order.
    ///     Negative frames are written at tick 0; out-of-range channels and data are masked or
    ///     clamped to what MIDI can carry.
    ///   - ticksPerQuarter: 1...32767.
    ///   - tempoMicrosecondsPerQuarter: 1...0xFFFFFF (the Set Tempo event has 24 bits).
    public static func write(
        _ events: [TimedMIDIMessage],
        sampleRate: Double,
        ticksPerQuarter: Int = 960,
        tempoMicrosecondsPerQuarter: Int = 500_000
    ) -> [UInt8] {
        precondition(sampleRate > 0 && sampleRate.isFinite, "sample rate must be positive")
        precondition((1...maxTicksPerQuarter).contains(ticksPerQuarter), "ticks per quarter must be 1...32767")
        precondition((1...0xFF_FFFF).contains(tempoMicrosecondsPerQuarter), "tempo must fit in 24 bits")

        let ticksPerFrame = Double(ticksPerQuarter) * 1_000_000 / Double(tempoMicrosecondsPerQuarter) / sampleRate
        let ordered = events.inFrameOrder()

        var track: [UInt8] = [0x00, 0xFF, 0x51, 0x03,
                              UInt8(tempoMicrosecondsPerQuarter >> 16),
                              UInt8(tempoMicrosecondsPerQuarter >> 8 & 0xFF),
                              UInt8(tempoMicrosecondsPerQuarter & 0xFF)]
        var previousTick = 0
        for event in ordered {
            let tick = Self.tick(atFrame: event.frame, ticksPerFrame: ticksPerFrame)
            appendDelta(tick - previousTick, to: &track)
            track += event.message.clampedToWireRange.bytes
            previousTick = tick
        }
        track += [0x00, 0xFF, 0x2F, 0x00]

        var file: [UInt8] = Array("MThd".utf8) + bigEndian(6, width: 4)
        file += bigEndian(0, width: 2) + bigEndian(1, width: 2) + bigEndian(ticksPerQuarter, width: 2)
        file += Array("MTrk".utf8) + bigEndian(track.count, width: 4) + track
        return file
    }

    /// The smallest ticks-per-quarter at which every frame survives a write/parse round trip
    /// unchanged (a tick no longer than a frame); nil when that needs more than 32767.
    /// At 120 bpm: 22050 for 44.1 kHz, 24000 for 48 kHz, nil for 96 kHz.
    public static func sampleExactTicksPerQuarter(
        sampleRate: Double, tempoMicrosecondsPerQuarter: Int = 500_000
    ) -> Int? {
        guard sampleRate > 0, sampleRate.isFinite, tempoMicrosecondsPerQuarter > 0 else { return nil }
        let needed = (sampleRate * Double(tempoMicrosecondsPerQuarter) / 1_000_000).rounded(.up)
        guard needed <= Double(maxTicksPerQuarter) else { return nil }
        return max(1, Int(needed))
    }

    /// Ticks beyond this are clamped, so a nonsense frame cannot make the file absurdly large
    /// (about 18 years at 960 ticks per quarter and 120 bpm).
    static let maxTick = 1 << 40

    private static func tick(atFrame frame: Int64, ticksPerFrame: Double) -> Int {
        let ticks = (Double(max(frame, 0)) * ticksPerFrame).rounded()
        return ticks < Double(maxTick) ? Int(ticks) : maxTick
    }

    /// A delta too long for one 4-byte quantity is carried by empty text events, which readers ignore.
    private static func appendDelta(_ delta: Int, to track: inout [UInt8]) {
        var rest = delta
        while rest > VariableLengthQuantity.maxValue {
            track += VariableLengthQuantity.encode(VariableLengthQuantity.maxValue) + [0xFF, 0x01, 0x00]
            rest -= VariableLengthQuantity.maxValue
        }
        track += VariableLengthQuantity.encode(rest)
    }

    private static func bigEndian(_ value: Int, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
}

extension MIDIMessage {
    /// The same message with channel and data forced into MIDI's ranges, so its bytes are valid.
    var clampedToWireRange: MIDIMessage {
        func data(_ value: UInt8) -> UInt8 { min(value, 0x7F) }
        switch self {
        case .noteOn(let c, let n, let v): return .noteOn(channel: c & 0x0F, note: data(n), velocity: data(v))
        case .noteOff(let c, let n, let v): return .noteOff(channel: c & 0x0F, note: data(n), velocity: data(v))
        case .controlChange(let c, let cc, let v):
            return .controlChange(channel: c & 0x0F, controller: data(cc), value: data(v))
        case .programChange(let c, let p): return .programChange(channel: c & 0x0F, program: data(p))
        case .pitchBend(let c, let v): return .pitchBend(channel: c & 0x0F, value: min(max(v, -8192), 8191))
        case .channelPressure(let c, let p): return .channelPressure(channel: c & 0x0F, pressure: data(p))
        case .polyPressure(let c, let n, let p): return .polyPressure(channel: c & 0x0F, note: data(n), pressure: data(p))
        }
    }
}
