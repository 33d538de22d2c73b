import ToneShaperMIDI

/// What the engine does with each event: MIDI messages, controllers through the map, parameters.
extension Engine {
    public func apply(_ kind: EngineEvent.Kind) {
        switch kind {
        case .midi(let m): handle(m)
        case .parameter(let channel, let parameter, let value): setParameter(parameter, value, part: Int(channel & 15))
        case .releaseAll:
            for p in 0..<16 { parts[p].sustain = false }
            for i in 0..<voiceCount where voices[i].stage == .playing { release(voices + i) }
            for i in 0..<voiceCount { voices[i].pendingPart = -1 }
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
            if index >= 0 { selectPreset(index, part: Int(c & 15)) }
        case .pitchBend(let c, let value):
            parts[Int(c & 15)].bendValue = Double(value)
            partRatio[Int(c & 15)] = currentRatio(part: Int(c & 15))
        case .channelPressure, .polyPressure:
            break
        }
    }

    /// A slot no voice plays and no part has current (one always exists: see `slotCount`).
    func freeSlot() -> Int {
        search: for s in 0..<slotCount where slotUsers[s] == 0 {
            for p in 0..<16 where parts[p].currentSlot == s { continue search }
            return s
        }
        preconditionFailure("slot pool exhausted")
    }

    /// Loads a preset into a free slot; sounding notes keep the slot they started on.
    func selectPreset(_ index: Int, part p: Int) {
        let slot = freeSlot()
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
        case 101: part.pointee.rpnMSB = value
        case 100: part.pointee.rpnLSB = value
        case 98, 99: part.pointee.rpnMSB = 127; part.pointee.rpnLSB = 127
        case 6 where part.pointee.rpnMSB == 0 && part.pointee.rpnLSB == 0:
            part.pointee.bendRange = Double(value)  // RPN 0: pitch-bend sensitivity in semitones
        case 38 where part.pointee.rpnMSB == 0 && part.pointee.rpnLSB == 0:
            part.pointee.bendRange = part.pointee.bendRange.rounded(.down) + Double(value) / 100
        default:
            if let a = controllerMap.assignment(channel: UInt8(p), controller: controller) {
                setParameter(a.parameter, a.value(for: value), part: p)
            }
        }
    }

    /// Sets a parameter in its own unit; values outside its limits are clamped.
    public func setParameter(_ parameter: Parameter, _ rawValue: Double, part p: Int) {
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
        case .duration: slot.pointee.durationTarget = value
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
