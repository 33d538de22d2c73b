/// One sounding note: its own position in the shape, its own phase integrator, its own gain ramp.
///
/// Plain data in a preallocated pool; the engine renders it with `Voice.render`. Transposition
/// and bend multiply the instantaneous frequency, and the phase is the running trapezoidal
/// integral of that frequency, so the wave stays continuous whatever changes mid-note.
struct Voice {
    enum Stage: UInt8 { case idle, playing, releasing }
    var stage: Stage = .idle
    var part: Int = 0
    var slot: Int = 0
    var note: UInt8 = 0
    /// Key is down (a note-off has not arrived yet).
    var keyDown = false
    /// Key is up but the sustain pedal holds the note.
    var sustained = false
    var startOrder: UInt64 = 0
    var releaseOrder: UInt64 = 0

    // What the note was started with.
    var wave: WaveType = .sine
    var terms = 10
    var envelopeKind: UInt8 = 0
    var envelopeDecay: Double = 1  // per-sample factor for the exponential envelope
    var envelopeSmoothing: Double = 1  // one-pole coefficient for ~1 ms
    var noteRatio: Double = 1      // 2^((note − root)/12)

    // Position in the shape (curve units) and its segment cursor.
    var u: Double = 0
    /// The curve's extent when `u` was last set: a fidelity change rescales u by the new extent,
    /// so the note keeps its place in the shape.
    var curveLastX: Double = 1
    var segment = 0
    var envelope: Double = 1
    /// The envelope as applied: follows `envelope` within ~1 ms, so the jump back to full level
    /// when a decaying shape loops is a quick swell, not a click.
    var smoothedEnvelope: Double = 1
    // Phase integrator state: integral (wrapped to [0,1)) and the last frequency (the overlap).
    var phase: Double = 0
    var frequency: Double = 0
    /// The transposition × bend ratio `frequency` was computed with.
    var frequencyRatio: Double = 1

    // Gain: current, per-sample step and samples left in the current ramp.
    var gain: Double = 0
    var gainStep: Double = 0
    var gainTarget: Double = 0
    var rampLeft = 0

    // A note waiting for this (stolen) voice to fade out.
    var pendingNote: UInt8 = 0
    var pendingVelocity: UInt8 = 0
    var pendingPart = -1

    var noise: UInt32 = 0x9E37_79B9
    /// Band-limited table level and blend weight, chosen every 8 samples of absolute time.
    var blendLevel = 0
    var blendWeight: Float = 0

    /// Sets a linear ramp from the current gain to `target` over `samples` samples.
    mutating func ramp(to target: Double, samples: Int) {
        gainTarget = target
        if samples <= 0 {
            gain = target; gainStep = 0; rampLeft = 0
        } else {
            gainStep = (target - gain) / Double(samples)
            rampLeft = samples
        }
    }
}

/// Per-block scratch the voice kernels share (one voice at a time), allocated once.
struct VoiceScratch {
    let phase: UnsafeMutablePointer<Float>
    /// The same phase in Double, for the Fourier series whose high partials need it.
    let precisePhase: UnsafeMutablePointer<Double>
    let frequency: UnsafeMutablePointer<Float>
    let gain: UnsafeMutablePointer<Float>
    init(capacity: Int) {
        phase = .allocate(capacity: capacity)
        precisePhase = .allocate(capacity: capacity)
        frequency = .allocate(capacity: capacity)
        gain = .allocate(capacity: capacity)
    }
    func deallocate() { phase.deallocate(); precisePhase.deallocate(); frequency.deallocate(); gain.deallocate() }
}

extension Voice {
    /// Advances the voice `count` samples: pass 1 (sequential) integrates the phase and computes
    /// the gain; pass 2 (independent per sample, vectorisable) evaluates the wave and mixes it in.
    @inline(__always)
    mutating func render(count: Int, intoPeriod: Int, slot s: UnsafeMutablePointer<ShapeSlot>, ratio: Double, halfStep: Double,
                         scratch: VoiceScratch, tables: UnsafeMutablePointer<Float>, nyquistReciprocal: Double,
                         into bus: UnsafeMutablePointer<Float>) {
        let curve = s.pointee.curve
        let period = s.pointee.period
        var u = self.u
        if curve.lastX != curveLastX {
            // A fidelity change rebuilt the curve: keep the place in the shape, re-read the frequency.
            u *= curve.lastX / curveLastX
            curveLastX = curve.lastX
            frequency = curve.value(at: min(u, curve.lastX)) * ratio
            frequencyRatio = ratio
        }
        if u >= period {
            // A shorter duration put the voice past the end of the loop: back into it, read afresh.
            u -= period * Double(Int(u / period))
            frequency = curve.value(at: u) * ratio
            frequencyRatio = ratio
        }
        // The carried cursor is almost always still right; search only when it is not.
        let carried = segment
        let seg = carried < curve.segmentCount && u < curve.end[carried] && (carried == 0 || u >= curve.end[carried - 1])
            ? carried : curve.segment(containing: u)
        // Pass 1, specialised per envelope and per what pass 2 needs, so the loop carries no
        // per-sample decisions the compiler could not resolve.
        let wantsFrequency = wave.isBandLimited, wantsPrecise = wave.isFourierSeries
        // A constant envelope that has settled at 1 needs no smoothing at all.
        let kind = envelopeKind == 0 && smoothedEnvelope == 1 ? 3 : envelopeKind
        if wantsFrequency {
            // Band-limited waves read a table at a data-dependent address, which no compiler
            // vectorises: one fused loop lets that work fill the cycles pass 1's phase chain waits on.
            let base = BandLimitedTables.waveBase(tables, wave)
            let scale = Float(Double(BandLimitedTables.maxHarmonics) * nyquistReciprocal)
            // Steady (no ramp, envelope settled at 1: the usual held note) takes one gain for the block.
            switch kind {
            case 3 where rampLeft == 0: advanceBandLimited(Unity.self, SteadyGain.self, count, intoPeriod, s, u, seg, ratio, halfStep, base, scale, bus)
            case 3: advanceBandLimited(Unity.self, RampedGain.self, count, intoPeriod, s, u, seg, ratio, halfStep, base, scale, bus)
            case 0: advanceBandLimited(ConstantLevel.self, RampedGain.self, count, intoPeriod, s, u, seg, ratio, halfStep, base, scale, bus)
            case 1: advanceBandLimited(LinearDecay.self, RampedGain.self, count, intoPeriod, s, u, seg, ratio, halfStep, base, scale, bus)
            default: advanceBandLimited(ExponentialDecay.self, RampedGain.self, count, intoPeriod, s, u, seg, ratio, halfStep, base, scale, bus)
            }
            return
        }
        // Steady: level settled and no ramp under way (ramps start only at events, which begin
        // blocks), so the gain is one number for the whole block.
        let steady = kind == 3 && rampLeft == 0
        let steadyGain = Float(gain)
        switch (kind, wantsFrequency, wantsPrecise) {
        case (3, false, false): advance(Unity.self, PhaseOnly.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (3, true, _): advance(Unity.self, WithFrequency.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (3, _, true): advance(Unity.self, WithPrecisePhase.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (0, false, false): advance(ConstantLevel.self, PhaseOnly.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (1, false, false): advance(LinearDecay.self, PhaseOnly.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (_, false, false): advance(ExponentialDecay.self, PhaseOnly.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (0, true, _): advance(ConstantLevel.self, WithFrequency.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (1, true, _): advance(LinearDecay.self, WithFrequency.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (_, true, _): advance(ExponentialDecay.self, WithFrequency.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (0, _, true): advance(ConstantLevel.self, WithPrecisePhase.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        case (1, _, true): advance(LinearDecay.self, WithPrecisePhase.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        default: advance(ExponentialDecay.self, WithPrecisePhase.self, count, s, u, seg, ratio, halfStep, scratch, !steady)
        }
        let ph = scratch.phase, pd = scratch.precisePhase, fr = scratch.frequency, ga = scratch.gain
        if steady && wave != .sine && !wave.isBandLimited { ga.update(repeating: steadyGain, count: count) }

        switch wave {
        case .sine where steady:
            for n in 0..<count { bus[n] += fastSin2Pi(ph[n]) * steadyGain }
        case .sine:
            for n in 0..<count { bus[n] += fastSin2Pi(ph[n]) * ga[n] }
        case .square:
            for n in 0..<count { bus[n] += (ph[n] < 0.5 ? 1 : -1) * ga[n] }
        case .triangle:
            for n in 0..<count {
                var q = ph[n] + 0.25
                q = q >= 1 ? q - 1 : q
                bus[n] += (1 - 4 * abs(q - 0.5)) * ga[n]
            }
        case .sawtooth:
            for n in 0..<count { bus[n] += ph[n] * ga[n] }
        case .squareFourier, .triangleFourier, .sawtoothFourier:
            Voice.mixFourier(wave, terms: terms, count: count, phase: pd, gain: ga, into: bus)
        case .bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth:
            break  // rendered by advanceBandLimited above
        case .noise:
            var x = noise
            for n in 0..<count {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                bus[n] += (Float(Int32(bitPattern: x)) * (1 / 2_147_483_648)) * ga[n]
            }
            noise = x
        }
    }

    /// Pass 1: walks the shape and integrates the phase for `count` samples, writing what pass 2
    /// reads. State lives in locals for the whole loop (the scratch pointers could alias `self`).
    @inline(__always)
    mutating func advance<E: EnvelopeShape, O: PhaseOutputs>(
        _: E.Type, _: O.Type, _ count: Int, _ s: UnsafeMutablePointer<ShapeSlot>, _ start: Double, _ startSegment: Int,
        _ ratio: Double, _ halfStep: Double, _ scratch: VoiceScratch, _ writesGain: Bool
    ) {
        let curve = s.pointee.curve
        let end = curve.end, slope = curve.slope, intercept = curve.intercept
        let du = s.pointee.du, period = s.pointee.period
        let invPeriod = 1 / period
        var u = start, seg = startSegment
        var phase = self.phase, f = self.frequency
        // Within a segment v(u) is linear, so the frequency moves by a constant per sample; it is
        // evaluated from the curve only where that stops being true (next segment, loop, block start
        // after a ratio or curve change — all at frames that do not depend on how blocks are cut).
        if ratio != frequencyRatio {
            f *= ratio / frequencyRatio
            frequencyRatio = ratio
        }
        var limit = min(end[seg], period)
        var df = slope[seg] * du * ratio
        var g = gain, env = envelope, smoothed = smoothedEnvelope
        var left = rampLeft
        let step = gainStep, target = gainTarget
        let decay = envelopeDecay, smoothing = envelopeSmoothing
        let ph = scratch.phase, pd = scratch.precisePhase, fr = scratch.frequency, ga = scratch.gain
        for n in 0..<count {
            // Output of this sample from the current state.
            if E.smooths { smoothed += (E.value(u: u, invPeriod: invPeriod, running: env) - smoothed) * smoothing }
            ph[n] = Float(phase)
            if O.precise { pd[n] = phase }
            if O.frequency { fr[n] = Float(f) }
            if writesGain { ga[n] = Float(g * smoothed) }
            // Advance to the next sample.
            u += du
            let fNext: Double
            if u >= limit {
                if u >= period { u -= period; seg = 0; env = 1 } else if E.usesRunningValue { env *= decay }
                while u >= end[seg] { seg += 1 }
                limit = min(end[seg], period)
                df = slope[seg] * du * ratio
                fNext = (intercept[seg] + slope[seg] * u) * ratio
            } else {
                if E.usesRunningValue { env *= decay }
                fNext = f + df
            }
            phase += (f + fNext) * halfStep
            f = fNext
            // Wrap to [0, 1): a compare on the loop-carried chain instead of a float→int round trip.
            if phase >= 1 { phase -= Double(Int64(phase)) }
            if left > 0 {
                g += step
                left -= 1
                if left == 0 { g = target }
            }
        }
        self.u = u; segment = seg; self.phase = phase; frequency = f
        gain = g; envelope = env; smoothedEnvelope = smoothed; rampLeft = left
    }

    /// Pass 1 and the band-limited table read in one loop, for the band-limited waves. Two
    /// neighbouring levels are read at one shared index and blended by the Float level weight; the
    /// level and weight are chosen every 8 samples of absolute time (so block boundaries change
    /// nothing), with 1 % headroom for the frequency to rise before the next choice.
    @inline(__always)
    mutating func advanceBandLimited<E: EnvelopeShape, G: GainMode>(
        _: E.Type, _: G.Type, _ count: Int, _ intoPeriod: Int, _ s: UnsafeMutablePointer<ShapeSlot>, _ start: Double,
        _ startSegment: Int, _ ratio: Double, _ halfStep: Double, _ base: UnsafeMutablePointer<Float>,
        _ scale: Float, _ bus: UnsafeMutablePointer<Float>
    ) {
        let curve = s.pointee.curve
        let end = curve.end, slope = curve.slope, intercept = curve.intercept
        let du = s.pointee.du, period = s.pointee.period
        let invPeriod = 1 / period
        var u = start, seg = startSegment
        var phase = self.phase, f = self.frequency
        if ratio != frequencyRatio {
            f *= ratio / frequencyRatio
            frequencyRatio = ratio
        }
        var limit = min(end[seg], period)
        var df = slope[seg] * du * ratio
        var g = gain, env = envelope, smoothed = smoothedEnvelope
        var left = rampLeft
        let step = gainStep, target = gainTarget
        let decay = envelopeDecay, smoothing = envelopeSmoothing
        var level = blendLevel, w = blendWeight
        let steadyGain = Float(g)
        var n = 0
        while n < count {
            if (intoPeriod + n) & 7 == 0 {
                (level, w) = BandLimitedTables.blend(scaledFrequency: Float(f) * scale * 1.01)
            }
            let stop = min(count, n + 8 - ((intoPeriod + n) & 7))
            let pairs = UnsafeRawPointer(base + level * BandLimitedTables.pairStride)
            while n < stop {
                if E.smooths { smoothed += (E.value(u: u, invPeriod: invPeriod, running: env) - smoothed) * smoothing }
                let (i, t) = BandLimitedTables.position(phase: phase)
                // (rich[i], lean[i], rich[i+1], lean[i+1]) in one load.
                let q = pairs.loadUnaligned(fromByteOffset: 8 * i, as: SIMD4<Float>.self)
                let here = q.lowHalf, next = q.highHalf
                let v = here + (next - here) * t
                bus[n] += (v.x + (v.y - v.x) * w) * (G.ramps ? Float(g * smoothed) : steadyGain)
                // Advance to the next sample (as in `advance`).
                u += du
                let fNext: Double
                if u >= limit {
                    if u >= period { u -= period; seg = 0; env = 1 } else if E.usesRunningValue { env *= decay }
                    while u >= end[seg] { seg += 1 }
                    limit = min(end[seg], period)
                    df = slope[seg] * du * ratio
                    fNext = (intercept[seg] + slope[seg] * u) * ratio
                } else {
                    if E.usesRunningValue { env *= decay }
                    fNext = f + df
                }
                phase += (f + fNext) * halfStep
                f = fNext
                if phase >= 1 { phase -= Double(Int64(phase)) }
                if G.ramps && left > 0 {
                    g += step
                    left -= 1
                    if left == 0 { g = target }
                }
                n &+= 1
            }
        }
        blendLevel = level; blendWeight = w
        self.u = u; segment = seg; self.phase = phase; frequency = f
        gain = g; envelope = env; smoothedEnvelope = smoothed; rampLeft = left
    }

    /// The article's Fourier partial sums, with sin(kθ) from the Chebyshev recurrence
    /// sin((k+1)θ) = 2cosθ·sin(kθ) − sin((k−1)θ): one sine and one cosine per sample, not one per term.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>) {
        for n in 0..<count {
            // Seeded with libm in Double: the recurrence carries any seed error into every term.
            let angle = 2 * Double.pi * phase[n]
            let s1 = _sin(angle)
            let c1 = _cos(angle)
            let twoC = 2 * c1
            var sPrev = 0.0, s = s1  // sin(0θ), sin(1θ)
            var sum = 0.0
            var value: Double
            switch wave {
            case .squareFourier:
                // odd k = 1, 3, …, 2·terms − 1, weight 1/k
                var k = 1
                while k <= 2 * terms - 1 {
                    if k & 1 == 1 { sum += s / Double(k) }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (4 / Double.pi) * sum
            case .triangleFourier:
                var k = 1
                while k <= terms {
                    if k & 1 == 1 {
                        let sign: Double = ((k - 1) / 2) & 1 == 0 ? 1 : -1
                        sum += sign * s / Double(k * k)
                    }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (8 / (Double.pi * Double.pi)) * sum
            default:
                var k = 1
                while k <= terms {
                    sum += s / Double(k)
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = 0.5 - sum / Double.pi
            }
            bus[n] += Float(value) * gain[n]
        }
    }
}

/// An amplitude envelope over one pass of the shape, resolved at compile time in pass 1.
protocol EnvelopeShape {
    static var usesRunningValue: Bool { get }
    static var smooths: Bool { get }
    static func value(u: Double, invPeriod: Double, running: Double) -> Double
}
/// Constant level already at 1: nothing to compute.
enum Unity: EnvelopeShape {
    static var usesRunningValue: Bool { false }
    static var smooths: Bool { false }
    @inline(__always) static func value(u: Double, invPeriod: Double, running: Double) -> Double { 1 }
}
enum ConstantLevel: EnvelopeShape {
    static var usesRunningValue: Bool { false }
    static var smooths: Bool { true }
    @inline(__always) static func value(u: Double, invPeriod: Double, running: Double) -> Double { 1 }
}
enum LinearDecay: EnvelopeShape {
    static var usesRunningValue: Bool { false }
    static var smooths: Bool { true }
    @inline(__always) static func value(u: Double, invPeriod: Double, running: Double) -> Double { 1 - u * invPeriod }
}
enum ExponentialDecay: EnvelopeShape {
    static var usesRunningValue: Bool { true }
    static var smooths: Bool { true }
    @inline(__always) static func value(u: Double, invPeriod: Double, running: Double) -> Double { running }
}

/// Whether the gain moves within a block (a ramp or a smoothed envelope), resolved at compile time.
protocol GainMode { static var ramps: Bool { get } }
enum SteadyGain: GainMode { static var ramps: Bool { false } }
enum RampedGain: GainMode { static var ramps: Bool { true } }

/// What pass 2 needs besides the Float phase and the gain.
protocol PhaseOutputs {
    static var frequency: Bool { get }
    static var precise: Bool { get }
}
enum PhaseOnly: PhaseOutputs { static var frequency: Bool { false }; static var precise: Bool { false } }
enum WithFrequency: PhaseOutputs { static var frequency: Bool { true }; static var precise: Bool { false } }
enum WithPrecisePhase: PhaseOutputs { static var frequency: Bool { false }; static var precise: Bool { true } }
