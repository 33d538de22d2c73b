import ArgumentParser

/// `play --jack`: ToneShaper as a JACK client (also under PipeWire: `pw-jack toneshaper play --jack`).
/// With it, --connect names JACK MIDI ports (or regular expressions over their names).
struct JACKOptions: ParsableArguments {
    @Flag(name: .long, help: "Play as a JACK client (JACK or PipeWire's JACK: pw-jack toneshaper play --jack): a MIDI input port and two audio outputs, at the graph's rate and buffer size, both followed when they change (at a new rate --record is finalised). --connect then takes JACK MIDI port names or regular expressions.")
    var jack = false

    @Option(name: .customLong("jack-name"), help: "With --jack: the JACK client name (default: ToneShaper).")
    var jackName: String?

    @Option(name: .customLong("output"), help: "With --jack: playback port to connect out_left/out_right to, a JACK port name or regular expression (repeatable, in order; default: the first two physical playback ports).")
    var outputs: [String] = []

    @Flag(name: .customLong("no-auto-connect"), help: "With --jack: connect the outputs nowhere (leave it to the patchbay).")
    var noAutoConnect = false

    /// The name the client asks for.
    var clientName: String { jackName ?? "ToneShaper" }

    /// The options that only make sense together, and the ALSA ones that do not apply to JACK.
    func validate(live: LiveDeviceOptions) throws {
        if !jack {
            if jackName != nil { throw ValidationError("--jack-name needs --jack") }
            if !outputs.isEmpty { throw ValidationError("--output needs --jack (ALSA's device is --device)") }
            if noAutoConnect { throw ValidationError("--no-auto-connect needs --jack") }
            return
        }
        if let jackName, jackName.isEmpty || jackName.contains(":") {
            throw ValidationError("--jack-name '\(jackName)' must be a non-empty name without ':'")
        }
        if noAutoConnect && !outputs.isEmpty { throw ValidationError("--no-auto-connect and --output contradict each other; give one") }
        if live.device != nil { throw ValidationError("--device is ALSA's; with --jack the JACK server owns the device (connect the outputs with --output)") }
        if live.period != nil || live.periods != nil {
            throw ValidationError("--period/--periods are ALSA's; with --jack the JACK server sets the buffer size (jackd -p, or PIPEWIRE_QUANTUM)")
        }
    }
}
