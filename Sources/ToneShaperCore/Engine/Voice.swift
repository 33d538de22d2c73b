/// One sounding note: its own position in the shape, its own phase integrator, its own gain ramp.
///
/// Plain data in a preallocated pool; the engine renders it with `Voice.render`. Transposition
/// and bend multiply the instantaneous frequency, and the phase is the trapezoidal integral of
/// that frequency, so the wave stays continuous whatever changes mid-note.
struct Voice {
    // The first cache line: what the engine's thread reads of every voice at every span (which
    // part it plays, whether a stolen voice is handing over) and changes only at events and ticks.
    // Nothing the render loop writes shares it, so that scan takes no line from the core rendering it.
    enum Stage: UInt8 { case idle, playing, releasing }
    var stage: Stage = .idle
    var note: UInt8 = 0
    /// Key is down (a note-off has not arrived yet).
    var keyDown = false
    /// Key is up but the sustain pedal holds the note.
    var sustained = false
    // What the note was started with.
    var wave: WaveType = .sine
    // A note waiting for this (stolen) voice to fade out.
    var pendingNote: UInt8 = 0
    var pendingVelocity: UInt8 = 0
    /// The voice plays a slot of its own (`Engine.noteFidelity`): freed with the voice.
    var ownsSlot = false
    var part: Int = 0
    var slot: Int = 0
    var pendingPart = -1
    var startOrder: UInt64 = 0
    var releaseOrder: UInt64 = 0
    var terms = 10

    var envelopeKind: UInt8 = 0
    var envelopeDecay: Double = 1  // per-sample factor for the exponential envelope
    var envelopeSmoothing: Double = 1  // one-pole coefficient for ~1 ms
    var noteRatio: Double = 1      // 2^((note − root)/12)
    /// The note's own pitch ratio (a plugin host's per-note tuning), on top of its channel's bend.
    var tuning: Double = 1

    /// Position in the shape (curve units) = origin + steps·step: counted in whole samples from
    /// the last anchor (note start, loop, a duration or fidelity change), not summed, so the loop
    /// knows how many samples are left in a segment and the position does not drift — a pass reads
    /// u = i·du exactly as the article's sampling does.
    var origin: Double = 0
    var steps = 0
    var step: Double = 0
    var position: Double { origin + Double(steps) * step }
    mutating func anchor(at u: Double, step du: Double) { origin = u; steps = 0; step = du }
    /// The curve's extent when `u` was last set: a fidelity change rescales u by the new extent,
    /// so the note keeps its place in the shape.
    var curveLastX: Double = 1
    /// The slot's `generation` the voice last read its frequency from.
    var curveGeneration = 0
    var segment = 0
    var envelope: Double = 1
    /// The envelope as applied: follows `envelope` within ~1 ms, so the jump back to full level
    /// when a decaying shape loops is a quick swell, not a click.
    var smoothedEnvelope: Double = 1
    /// Phase integrator, anchored: the phase (wrapped to [0, 1)) and frequency at the anchor, the
    /// frequency's change per sample, and samples since the anchor. Within a curve segment the
    /// frequency is linear in the sample, so the trapezoid sum is a closed-form quadratic,
    /// φ(j) = phase + j·(2h·frequency + j·h·frequencyStep) with h = ½/rate: every sample's phase
    /// follows from the anchor alone, so eight are computed at once and no block cut changes a bit.
    /// The anchor moves only at segment ends, loops and control changes.
    var phase: Double = 0
    var frequency: Double = 0
    var frequencyStep: Double = 0
    var phaseSteps = 0
    /// The transposition × bend ratio `frequency` was computed with.
    var frequencyRatio: Double = 1

    /// The gain the note's velocity asks for; it plays at this times `expression` and `volume` (`level`).
    var velocityGain: Double = 0
    /// The note's own expression gain, 0...1 (polyphonic key pressure through the map): the one
    /// control that reaches a single note on a channel that plays several.
    var expression: Double = 1
    /// The gain a playing note ramps to: velocity × expression × volume (its attack, and each change
    /// of its expression or volume).
    var level: Double { velocityGain * expression * Double(volume) }

    // Gain: current, per-sample step and samples left in the current ramp.
    var gain: Double = 0
    var gainStep: Double = 0
    var gainTarget: Double = 0
    var rampLeft = 0
    /// Where the current ramp started and how long it is: its n-th sample's gain is
    /// rampFrom + n·gainStep, computed from the start and not summed, so eight samples of a ramp
    /// are eight lanes at once and no block cut changes a bit.
    var rampFrom: Double = 0
    var rampLength = 0

    var noise: UInt32 = 0x9E37_79B9
    /// Band-limited table level and blend weight, chosen every 8 samples of absolute time.
    var blendLevel = 0
    var blendWeight: Float = 0
    /// The note's volume from a plugin host (CLAP's volume expression), 0...4, linear: a factor of
    /// its own beside `expression`, so a host's volume and the note's pressure never undo each other.
    /// (A Float, here: it fills the four bytes after `blendWeight`, so a voice stays 320 bytes.)
    var volume: Float = 1

    /// The step at which the walk last found its segment (or pass) to end (`Voice.firstStep`), and
    /// the limit, origin and step it was found from: the next block's walk takes it when those are
    /// the same (a held note's are) instead of a division and a correction loop per voice and block,
    /// which had been a sixth of the sine's walk. The same function of the same values: same bits.
    /// These four words also pad a voice to whole cache lines (320 bytes, in a pool aligned to 64):
    /// threads render neighbouring voices, and a line two of them wrote would bounce between their cores.
    var boundaryLimit: Double = .nan, boundaryOrigin: Double = .nan, boundaryStepSize: Double = .nan
    var boundaryStep = 0

    /// The phase `steps` samples past the anchor, not wrapped. The walk's lanes compute the same
    /// operations in the same order (with the two coefficients hoisted), so an anchor settled here
    /// carries on exactly where the walk left off.
    @inline(__always) func unwrappedPhase(steps j: Double, halfStep h: Double) -> Double {
        phase + j * (2 * h * frequency + j * (h * frequencyStep))
    }

    /// Moves the anchor to the current sample — before anything changes the frequency or its step
    /// (a bend, a duration or fidelity change, a retriggered note), so the phase carries on from
    /// where it is.
    mutating func settlePhase(halfStep h: Double) {
        guard phaseSteps != 0 else { return }
        let j = Double(phaseSteps)
        phase = fractionalPart(unwrappedPhase(steps: j, halfStep: h))
        frequency += j * frequencyStep
        phaseSteps = 0
    }

    /// Sets a linear ramp from the current gain to `target` over `samples` samples.
    mutating func ramp(to target: Double, samples: Int) {
        gainTarget = target
        if samples <= 0 {
            gain = target; gainStep = 0; rampLeft = 0; rampLength = 0
        } else {
            gainStep = (target - gain) / Double(samples)
            rampLeft = samples
            rampFrom = gain; rampLength = samples
        }
    }
}

/// Per-block scratch the voice kernels share (one voice at a time), allocated once.
/// Eight entries past `capacity`, so a pass may read a last group of eight whole.
struct VoiceScratch {
    /// The phase in Float (the band-limited tables: the fraction past a table point).
    let phase: UnsafeMutablePointer<Float>
    /// The same phase in Double, for the Fourier series whose high partials need it.
    let precisePhase: UnsafeMutablePointer<Double>
    let gain: UnsafeMutablePointer<Float>
    /// The band-limited tables' row offsets (bytes among the single tables; the pairs' are twice them) and level weights, from the walk to `TableSink.mix`.
    let rows: UnsafeMutablePointer<UInt64>
    let weight: UnsafeMutablePointer<Float>
    /// The Fourier series' term weights: 1/k at k, 1/k² at `fourierTermLimit` + k, for k up to the
    /// square's highest term (2·512 − 1). Read per term instead of divided: a division on every
    /// term was the longest wait in the series once its seeds came eight at a time.
    let fourierWeights: UnsafeMutablePointer<Double>
    static let fourierTermLimit = 2 * Shape.maximumFourierTerms
    init(capacity: Int) {
        let padded = capacity + 8
        phase = .allocate(capacity: padded); phase.initialize(repeating: 0, count: padded)
        precisePhase = .allocate(capacity: padded); precisePhase.initialize(repeating: 0, count: padded)
        gain = .allocate(capacity: padded); gain.initialize(repeating: 0, count: padded)
        // Offset 0 is a row of every wave's first table: whatever a pass reads past the block stays inside.
        rows = .allocate(capacity: padded); rows.initialize(repeating: 0, count: padded)
        weight = .allocate(capacity: padded); weight.initialize(repeating: 0, count: padded)
        let limit = Self.fourierTermLimit
        fourierWeights = .allocate(capacity: 2 * limit)
        fourierWeights.initialize(repeating: 0, count: 2 * limit)
        for k in 1..<limit { fourierWeights[k] = 1 / Double(k); fourierWeights[limit + k] = 1 / Double(k * k) }
    }
    func deallocate() {
        phase.deallocate(); precisePhase.deallocate(); gain.deallocate(); rows.deallocate(); weight.deallocate()
        fourierWeights.deallocate()
    }
}

