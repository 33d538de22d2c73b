/// Notes on the voice pool: which voice a note takes is `VoicePool`'s; what it then sounds like is here.
extension Engine {
    /// Velocity to gain: square law (the DLS / GM convention), so velocity 64 is about −12 dB and 32 about −24 dB.
    @inline(__always) static func velocityGain(_ velocity: UInt8) -> Double {
        let v = Double(min(velocity, 127)) / 127
        return v * v
    }

    /// The transposition of `note` for a shape drawn at `root`: the tuning's ratio between them.
    @inline(__always) func noteRatio(_ note: UInt8, root: Int) -> Double {
        _exp2((keySemitones[Int(note & 127)] - keySemitones[128 + min(max(root, 0), 127)]) / 12)
    }

    func noteOn(part p: Int, note: UInt8, velocity: UInt8) {
        // A key the tuning leaves unmapped plays nothing (Scala's 'x'); nor does one whose pitch,
        // on this part's shape, is not finite or lies beyond what can be played (see `PlayableRange`).
        guard !keySemitones[Int(note & 127)].isNaN else { return }
        let info = presets.info[slots[parts[p].currentSlot].preset]
        guard PlayableRange.sounds(ratio: noteRatio(note, root: info.rootNote), lowest: info.lowest, highest: info.highest,
                                   audible: PlayableRange.audibleLimit(wave: parts[p].wave, sampleRate: sampleRate)) else { return }
        switch pool.claim(part: p, note: note) {
        case .retrigger(let i): start(voices + i, part: p, note: note, velocity: velocity, retrigger: true)
        case .idle(let i): start(voices + i, part: p, note: note, velocity: velocity, retrigger: false)
        case .steal(let i): pool.steal(i, for: VoicePool.Pending(part: p, note: note, velocity: velocity))
        case .drop: break
        }
    }

    func noteOff(part p: Int, note: UInt8) {
        for i in 0..<voiceCount where voices[i].part == p {
            let v = voices + i
            if v.pointee.pendingPart == p && v.pointee.pendingNote == note { v.pointee.pendingPart = -1 }
            if v.pointee.stage == .playing && v.pointee.note == note && v.pointee.keyDown {
                if parts[p].sustain {
                    v.pointee.keyDown = false
                    v.pointee.sustained = true
                } else {
                    release(v)
                }
            }
        }
    }

    func release(_ v: UnsafeMutablePointer<Voice>) {
        pool.release(v - voices, samples: max(32, Int(parts[v.pointee.part].release * sampleRate)))
    }

    func start(_ v: UnsafeMutablePointer<Voice>, part p: Int, note: UInt8, velocity: UInt8, retrigger: Bool) {
        let part = parts + p
        wake(p)
        let slotIndex = part.pointee.currentSlot
        let info = presets.info[slots[slotIndex].preset]
        if v.pointee.stage != .idle { slotUsers[v.pointee.slot] -= 1 }
        slotUsers[slotIndex] += 1
        disownSlot(v)
        v.pointee.tuning = 1  // a note starts at its key's pitch, whatever the voice's last note was tuned to
        if v.pointee.stage == .idle { part.pointee.activeVoices += 1 }
        else if v.pointee.part != p {
            parts[v.pointee.part].activeVoices -= 1
            part.pointee.activeVoices += 1
        }
        let order = pool.occupy(v - voices, part: p, note: note)
        v.pointee.slot = slotIndex
        v.pointee.wave = part.pointee.wave
        v.pointee.terms = part.pointee.terms
        v.pointee.envelopeKind = info.envelopeKind
        v.pointee.envelopeDecay = _exp(-info.envelopeRate / sampleRate)
        v.pointee.noteRatio = noteRatio(note, root: info.rootNote)
        v.pointee.anchor(at: 0, step: slots[slotIndex].du)
        v.pointee.curveLastX = slots[slotIndex].curve.lastX
        v.pointee.curveGeneration = slots[slotIndex].generation
        v.pointee.segment = 0
        v.pointee.envelope = 1
        v.pointee.smoothedEnvelope = 1
        v.pointee.envelopeSmoothing = 1 - _exp(-1 / (0.001 * sampleRate))
        // A retriggered voice's wave carries on from its phase now; a fresh one starts at 0.
        if retrigger { v.pointee.settlePhase(halfStep: halfStep) }
        v.pointee.phaseSteps = 0
        v.pointee.frequencyRatio = PlayableRange.bounded(v.pointee.noteRatio * currentRatio(part: p), cap: slots[slotIndex].ratioCap)
        v.pointee.frequency = slots[slotIndex].curve.value(at: 0) * v.pointee.frequencyRatio
        if !retrigger {
            v.pointee.phase = 0
            v.pointee.gain = 0
            v.pointee.expression = 1  // a new note plays at full level until its key's pressure says otherwise
            v.pointee.volume = 1
            v.pointee.noise = UInt32(truncatingIfNeeded: order &* 0x9E37_79B9_7F4A_7C15 >> 32) | 1
        }
        let scaled = Float(v.pointee.frequency * Double(BandLimitedTables.maxHarmonics) * nyquistReciprocal)
        (v.pointee.blendLevel, v.pointee.blendWeight) = BandLimitedTables.blend(scaledFrequency: scaled * 1.01)
        let attackSamples = max(32, Int(part.pointee.attack * sampleRate))
        v.pointee.velocityGain = Engine.velocityGain(velocity)
        v.pointee.ramp(to: v.pointee.level, samples: attackSamples)
    }

    /// A silent part starting to sound: nothing to glide from, so its controls take their
    /// targets at once and its pan starts where it is.
    func wake(_ p: Int) {
        let part = parts + p
        guard !part.pointee.audible else { return }
        part.pointee.audible = true
        part.pointee.quietFrames = 0
        let slot = slots + part.pointee.currentSlot
        if slot.pointee.duration != slot.pointee.durationTarget || slot.pointee.fidelity != slot.pointee.fidelityTarget {
            slot.pointee.duration = slot.pointee.durationTarget
            slot.pointee.fidelity = slot.pointee.fidelityTarget
            slot.pointee.requantize(table: presets)
            slot.pointee.updateStep(sampleRate: sampleRate)
        }
        refreshRatio(part: p)
        part.pointee.aimPan()
        part.pointee.panFromLeft = part.pointee.panLeft; part.pointee.panFromRight = part.pointee.panRight
    }

    /// The part's pitch ratio: bend (in MPE plus its zone manager's bend), plus vibrato at its
    /// current LFO phase.
    func currentRatio(part p: Int) -> Double { _exp2(currentSemitones(part: p) / 12) }

    /// Sets the part's `ratio` from its bend and vibrato now, with the semitones it is of (so a
    /// tick whose semitones are the same may keep it: every writer of `ratio` comes here or to the tick).
    func refreshRatio(part p: Int) { setRatio(part: p, semitones: currentSemitones(part: p)) }

    /// The part's `ratio` for `semitones`, kept with them (the one place the two are written).
    @inline(__always) func setRatio(part p: Int, semitones: Double) {
        parts[p].ratioSemitones = semitones
        parts[p].ratio = _exp2(semitones / 12)
    }

    /// The bend (the part's, its zone manager's) and vibrato in semitones: `currentRatio`'s exponent.
    @inline(__always) func currentSemitones(part p: Int) -> Double {
        let part = parts[p]
        var semitones = part.bendValue / 8192 * part.bendRange
        if part.manager >= 0 {
            let manager = parts[part.manager]
            semitones += manager.bendValue / 8192 * manager.bendRange
        }
        if part.vibratoDepth > 0 { semitones += part.vibratoDepth * Double(fastSin2Pi(Float(part.vibratoPhase))) }
        return semitones
    }

    /// A voice whose release has ended: free it, or start the note that stole it.
    func finish(_ v: UnsafeMutablePointer<Voice>) {
        if let next = pool.handOver(v - voices) {
            start(v, part: next.part, note: next.note, velocity: next.velocity, retrigger: false)
        } else {
            parts[v.pointee.part].activeVoices -= 1
            slotUsers[v.pointee.slot] -= 1
            disownSlot(v)
            pool.free(v - voices)
        }
    }
}
