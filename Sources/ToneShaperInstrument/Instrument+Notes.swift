import ToneShaperCore

/// Single notes as a plugin host names them (CLAP: a note id, or a key and channel): their
/// expressions reach the voices playing them, as MPE's member-channel bend, pressure and CC 74
/// reach the one note on their channel.
extension InstrumentEvent.Kind {
    /// The note's pitch `semitones` (±120) away from its key, on top of its channel's bend.
    public static func tuning(_ semitones: Double, channel: Int, key: Int) -> Self {
        .note(NoteControl(.tuning, channel: channel, key: key, value: semitones))
    }

    /// Pressure 0...1 is the note's own level, as key pressure through the standard map's
    /// amplitude (0 silent, 1 as loud as its velocity).
    public static func pressure(_ pressure: Double, channel: Int, key: Int) -> Self {
        .note(NoteControl(.gain, channel: channel, key: key, value: min(max(pressure, 0), 1)))
    }

    /// Volume 0...4 (linear: 1 as its velocity says, 2 about +6 dB) scales the note's level, on
    /// top of what its pressure sets.
    public static func volume(_ amplitude: Double, channel: Int, key: Int) -> Self {
        .note(NoteControl(.volume, channel: channel, key: key, value: min(max(amplitude, 0), 4)))
    }

    /// Brightness 0...1 is the note's own fidelity along the Fidelity control's knob (1 … 2000,
    /// exponential), where CC 74 puts it on an MPE member channel.
    public static func brightness(_ brightness: Double, channel: Int, key: Int) -> Self {
        .note(NoteControl(.fidelity, channel: channel, key: key, value: InstrumentParameter.fidelity.value(normalised: brightness)))
    }

    /// A note-on at a velocity of 0...1: MIDI's velocity v/127 (v ≥ 1), so a host's notes play
    /// exactly as the same notes from a MIDI file.
    public static func noteOn(channel: Int, key: Int, velocity: Double) -> Self? {
        guard (0...15).contains(channel), (0...127).contains(key), !velocity.isNaN else { return nil }
        let v = UInt8(min(max((velocity * 127).rounded(), 1), 127))
        return .midi(0x90 | UInt8(channel), UInt8(key), v)
    }

    /// Key up for a note, or (−1 for channel or key) for every note it names.
    public static func noteOff(channel: Int, key: Int) -> Self {
        if (0...15).contains(channel) && (0...127).contains(key) { return .midi(0x80 | UInt8(channel), UInt8(key), 0) }
        return .note(NoteControl(.release, channel: channel, key: key))
    }

    /// The notes named stop at once (a 2 ms fade).
    public static func choke(channel: Int, key: Int) -> Self {
        .note(NoteControl(.choke, channel: channel, key: key))
    }
}

extension InstrumentParameter {
    /// The table's rows a voice can also take per note: its level and its fidelity.
    public static let amplitude = table.first { $0.parameter == .amplitude }!
    public static let fidelity = table.first { $0.parameter == .fidelity }!
}

extension Instrument {
    /// Whether `key` on `channel` still sounds (a host is told when a note has ended). Audio thread.
    public func isSounding(channel: Int, key: Int) -> Bool {
        guard (0...15).contains(channel), (0...127).contains(key) else { return false }
        return engine.isSounding(part: channel, note: UInt8(key))
    }
}
