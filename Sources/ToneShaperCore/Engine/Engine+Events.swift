import ToneShaperMIDI

/// What the engine does with each event: MIDI messages, controllers through the map, parameters.
extension Engine {
    public func apply(_ kind: EngineEvent.Kind) {
        switch kind {
        case .midi(let m): handle(m)
        case .parameter(let channel, let parameter, let value): setParameter(parameter, value, part: Int(channel & 15))
        case .note(let control): apply(control)
        }
    }

    public func handle(_ message: MIDIMessage) {
        switch message {
        case .noteOn(let c, let note, let velocity):
            if velocity == 0 { noteOff(part: Int(c & 15), note: note) } else { noteOn(part: Int(c & 15), note: note, velocity: velocity) }
        case .noteOff(let c, let note, _):
            noteOff(part: Int(c & 15), note: note)
        case .controlChange(let c, let controller, let value):
            controlChange(part: Int(c & 15), controller: controller, value: value)
        case .programChange(let c, let program):
            let index = programPresets[Int(program & 127)]
            if index >= 0 { for p in reach(of: Int(c & 15)) { selectPreset(index, part: p) } }
        case .pitchBend(let c, let value):
            parts[Int(c & 15)].bendValue = Double(value)
            // A zone manager's bend adds to every member's own.
            for p in reach(of: Int(c & 15)) { refreshRatio(part: p) }
        case .channelPressure(let c, let pressure):
            if let a = controllerMap.assignment(channel: c & 15, source: .channelPressure) {
                let value = a.value(for: pressure)
                for p in reach(of: Int(c & 15)) { setParameter(a.parameter, value, part: p) }
            }
        case .polyPressure(let c, let note, let pressure):
            keyPressure(part: Int(c & 15), note: note, pressure: pressure)
        }
    }

    /// A slot for part `p`'s next preset: its own current one when no note plays it, else one no
    /// voice plays and no part has current. One always exists (`slotCount` is 16 + voices): if every
    /// voice holds a slot that is no part's current one, `p`'s own current slot has no voice on it.
    func freeSlot(for p: Int) -> Int {
        let own = parts[p].currentSlot
        if own >= 0 && slotUsers[own] == 0 { return own }
        search: for s in 0..<slotCount where slotUsers[s] == 0 {
            for p in 0..<16 where parts[p].currentSlot == s { continue search }
            return s
        }
        preconditionFailure("slot pool exhausted")
    }

    /// Loads a preset into a free slot; sounding notes keep the slot they started on.
    func selectPreset(_ index: Int, part p: Int) {
        let slot = freeSlot(for: p)
        slots[slot].load(index, from: presets, sampleRate: sampleRate)
        parts[p].currentSlot = slot
        adoptSettings(of: index, part: p)
    }

    /// The part takes the preset's bus and note settings (amplitude, wave, envelope times, echo).
    func adoptSettings(of index: Int, part p: Int) {
        let part = parts + p
        let info = presets.info[index]
        part.pointee.program = info.program
        part.pointee.shapeAmplitude = info.amplitude
        part.pointee.amplitudeTarget = info.amplitude * part.pointee.volume
        if part.pointee.activeVoices == 0 && !part.pointee.audible { part.pointee.amplitude = part.pointee.amplitudeTarget }
        part.pointee.wave = info.wave
        part.pointee.terms = info.terms
        part.pointee.attack = info.attack
        part.pointee.release = info.release
        part.pointee.echo.delayTarget = info.echoDelay * sampleRate
        if part.pointee.echo.isOff { part.pointee.echo.delaySamples = info.echoDelay * sampleRate }
        part.pointee.echo.volumeTarget = Float(info.echoVolume)
    }

    func controlChange(part p: Int, controller: UInt8, value: UInt8) {
        let part = parts + p
        switch controller {
        case 120, 121, 123, 124, 125, 126, 127:
            for q in reach(of: p) { channelMode(controller, part: q) }
        case 101: part.pointee.rpnMSB = value
        case 100: part.pointee.rpnLSB = value
        case 98, 99: part.pointee.rpnMSB = 127; part.pointee.rpnLSB = 127
        case 6 where part.pointee.rpnMSB == 0 && part.pointee.rpnLSB == 0:
            setBendRange(Double(value), part: p)  // RPN 0: pitch-bend sensitivity in semitones
        case 38 where part.pointee.rpnMSB == 0 && part.pointee.rpnLSB == 0:
            setBendRange(part.pointee.bendRange.rounded(.down) + Double(value) / 100, part: p)
        case 6 where part.pointee.rpnMSB == 0 && part.pointee.rpnLSB == 6 && (p == 0 || p == 15) && value <= 15:
            configureZone(lower: p == 0, members: Int(value))  // RPN 6: the MPE Configuration Message
        default:
            if let a = controllerMap.assignment(channel: UInt8(p), controller: controller) {
                let mapped = a.value(for: value)
                for q in reach(of: p) { setParameter(a.parameter, mapped, part: q) }
            }
        }
    }

    /// The channel mode messages (and Reset All Controllers), on one part.
    func channelMode(_ controller: UInt8, part p: Int) {
        let part = parts + p
        switch controller {
        case 120:  // All Sound Off: silence now (a 2 ms fade, never a click).
            for i in 0..<voiceCount where voices[i].stage != .idle && voices[i].part == p {
                voices[i].pendingPart = -1
                voices[i].stage = .releasing
                voices[i].keyDown = false
                voices[i].sustained = false
                voices[i].ramp(to: 0, samples: stealFadeSamples)
            }
        case 121:  // Reset All Controllers (RP-015): bend, modulation, pedal, RPN.
            part.pointee.bendValue = 0
            part.pointee.vibratoDepth = 0
            setSustain(false, part: p)
            part.pointee.rpnMSB = 127; part.pointee.rpnLSB = 127
        case 123, 124, 125, 126, 127:  // All Notes Off (and the mode messages that imply it).
            for i in 0..<voiceCount where voices[i].part == p {
                voices[i].pendingPart = -1
                if voices[i].stage == .playing && voices[i].keyDown {
                    if part.pointee.sustain { voices[i].keyDown = false; voices[i].sustained = true } else { release(voices + i) }
                }
            }
        default:
            break
        }
    }

    /// Sets a parameter in its own unit; values outside its limits are clamped.
    public func setParameter(_ parameter: Parameter, _ rawValue: Double, part p: Int) {
        // NaN passes through min/max untouched, and a duration or fidelity of NaN would trap.
        guard !rawValue.isNaN else { return }
        let value = min(max(rawValue, parameter.limits.lowerBound), parameter.limits.upperBound)
        let part = parts + p
        let slot = slots + part.pointee.currentSlot
        switch parameter {
        case .amplitude:
            part.pointee.shapeAmplitude = value
            part.pointee.amplitudeTarget = value * part.pointee.volume
        case .volume:
            part.pointee.volume = value
            part.pointee.amplitudeTarget = part.pointee.shapeAmplitude * value
        case .duration:
            slot.pointee.durationTarget = value
            if part.pointee.privateSlots > 0 { forEachPrivateSlot(part: p) { $0.pointee.durationTarget = value } }
        case .fidelity: slot.pointee.fidelityTarget = value.rounded()
        case .echoDelay: part.pointee.echo.delayTarget = value * sampleRate
        case .echoVolume:
            part.pointee.echo.volumeTarget = Float(value)
            if value > 0 { wake(p) }
        case .waveType: part.pointee.wave = WaveType(index: Int(value.rounded()))
        case .attack: part.pointee.attack = value
        case .release: part.pointee.release = value
        case .pitchBendRange: part.pointee.bendRange = value
        case .pan: part.pointee.pan = value
        case .vibrato: part.pointee.vibratoDepth = value
        case .sustain: setSustain(value >= 0.5, part: p)
        }
    }

    func setSustain(_ on: Bool, part p: Int) {
        parts[p].sustain = on
        if !on {
            for i in 0..<voiceCount where voices[i].part == p && voices[i].sustained && voices[i].stage == .playing {
                release(voices + i)
            }
        }
    }
}
