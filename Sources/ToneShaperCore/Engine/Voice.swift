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
    // Phase integrator state: integral (wrapped to [0,1)) and the last frequency (the overlap).
    var phase: Double = 0
    var frequency: Double = 0
    /// The transposition × bend ratio `frequency` was computed with.
    var frequencyRatio: Double = 1

    /// The gain the note's velocity asks for; it plays at this times `expression`.
    var velocityGain: Double = 0
    /// The note's own expression gain, 0...1 (polyphonic key pressure through the map): the one
    /// control that reaches a single note on a channel that plays several.
    var expression: Double = 1

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
    let gain: UnsafeMutablePointer<Float>
    init(capacity: Int) {
        phase = .allocate(capacity: capacity)
        precisePhase = .allocate(capacity: capacity)
        gain = .allocate(capacity: capacity)
    }
    func deallocate() { phase.deallocate(); precisePhase.deallocate(); gain.deallocate() }
}

extension Voice {
    /// Advances the voice `count` samples. The phase walk (sequential) feeds either a band-limited
    /// table read in the same loop, or scratch buffers that a second, vectorisable pass turns into
    /// the wave and mixes in.
    @inline(__always)
    mutating func render(count: Int, intoPeriod: Int, slot s: UnsafeMutablePointer<ShapeSlot>, ratio: Double, halfStep: Double,
                         scratch: VoiceScratch, tables: UnsafeMutablePointer<Float>, nyquistReciprocal: Double,
                         into bus: UnsafeMutablePointer<Float>) {
        let curve = s.pointee.curve
        let period = s.pointee.period, du = s.pointee.du
        var u = position
        // Knob changes land at control ticks, so re-anchoring here happens at the same frame
        // however the caller cuts blocks.
        if du != step { anchor(at: u, step: du) }  // duration glided: count on in the new step
        if s.pointee.generation != curveGeneration {
            // A fidelity change or an edited shape rebuilt the curve: keep the place in the shape,
            // re-read the frequency (the phase carries on, so the change does not click).
            u *= curve.lastX / curveLastX
            anchor(at: u, step: du)
            curveLastX = curve.lastX
            curveGeneration = s.pointee.generation
            frequency = curve.value(at: min(u, curve.lastX)) * ratio
            frequencyRatio = ratio
        }
        if u >= s.pointee.loopPoint {
            // A shorter duration put the voice past the end of the loop: back into it, read afresh.
            u = Voice.nextPass(u, period: period, step: du)
            anchor(at: u, step: du)
            frequency = curve.value(at: u) * ratio
            frequencyRatio = ratio
        }
        // The carried cursor is almost always still right; search only when it is not.
        let carried = segment
        let seg = carried < curve.segmentCount && u < curve.end[carried] && (carried == 0 || u >= curve.end[carried - 1])
            ? carried : curve.segment(containing: u)
        // A constant envelope that has settled at 1 needs no smoothing at all; with no ramp under
        // way either (ramps start only at events, which begin blocks) the gain is one number.
        let kind = envelopeKind == 0 && smoothedEnvelope == 1 ? 3 : envelopeKind
        let steady = kind == 3 && rampLeft == 0
        if wave.isBandLimited {
            // A table read at a data-dependent address, which no compiler vectorises: done in the
            // phase walk's loop, it fills the cycles the walk's dependency chain leaves idle.
            var sink = TableSink(base: BandLimitedTables.waveBase(tables, wave),
                                 scale: Float(Double(BandLimitedTables.maxHarmonics) * nyquistReciprocal),
                                 bus: bus, level: blendLevel, weight: blendWeight)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
            blendLevel = sink.level; blendWeight = sink.weight
            return
        }
        if wave.isFourierSeries {
            var sink = PreciseScratchSink(scratch)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
        } else {
            var sink = ScratchSink(scratch)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
        }
        let ph = scratch.phase, pd = scratch.precisePhase, ga = scratch.gain
        let steadyGain = Float(gain)
        if steady && wave != .sine { ga.update(repeating: steadyGain, count: count) }

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
            break  // read in the walk above
        case .noise:
            var x = noise
            for n in 0..<count {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                bus[n] += (Float(Int32(bitPattern: x)) * (1 / 2_147_483_648)) * ga[n]
            }
            noise = x
        }
    }

    /// The walk specialised per envelope and per gain mode, so its loop carries no per-sample
    /// decision the compiler could not resolve.
    @inline(__always)
    mutating func walk<S: VoiceSink>(_ sink: inout S, kind: UInt8, count: Int, intoPeriod: Int, slot s: UnsafeMutablePointer<ShapeSlot>,
                                     segment seg: Int, ratio: Double, halfStep: Double) {
        let released = stage == .releasing
        switch kind {
        case 3 where rampLeft == 0: walk(Unity.self, SteadyGain.self, &sink, count, intoPeriod, s, seg, ratio, halfStep, released)
        case 3: walk(Unity.self, RampedGain.self, &sink, count, intoPeriod, s, seg, ratio, halfStep, released)
        case 0: walk(ConstantLevel.self, RampedGain.self, &sink, count, intoPeriod, s, seg, ratio, halfStep, released)
        case 1: walk(LinearDecay.self, RampedGain.self, &sink, count, intoPeriod, s, seg, ratio, halfStep, released)
        default: walk(ExponentialDecay.self, RampedGain.self, &sink, count, intoPeriod, s, seg, ratio, halfStep, released)
        }
    }

    /// The phase walk: steps through the shape and integrates the phase for `count` samples,
    /// handing each sample's phase and gain to `sink`. State lives in locals for the whole loop
    /// (the sink's pointers could alias `self`).
    @inline(__always)
    mutating func walk<E: EnvelopeShape, G: GainMode, S: VoiceSink>(
        _: E.Type, _: G.Type, _ sink: inout S, _ count: Int, _ intoPeriod: Int, _ s: UnsafeMutablePointer<ShapeSlot>,
        _ startSegment: Int, _ ratio: Double, _ halfStep: Double, _ released: Bool
    ) {
        let curve = s.pointee.curve
        let end = curve.end, slope = curve.slope, intercept = curve.intercept
        let du = step, period = s.pointee.period, loopPoint = s.pointee.loopPoint
        let invPeriod = 1 / period
        var origin = self.origin, k = steps, seg = startSegment
        var phase = self.phase, f = self.frequency
        // Within a segment v(u) is linear, so the frequency moves by a constant per sample; it is
        // evaluated from the curve only where that stops being true (next segment, loop, block start
        // after a ratio or curve change — all at frames that do not depend on how blocks are cut).
        if ratio != frequencyRatio {
            f *= ratio / frequencyRatio
            frequencyRatio = ratio
        }
        var df = slope[seg] * du * ratio
        // The step at which the position reaches the segment's end (or the loop's): until then
        // the loop needs no position at all.
        var boundary = Voice.firstStep(reaching: min(end[seg], loopPoint), origin: origin, step: du)
        var g = gain, env = envelope, smoothed = smoothedEnvelope
        var left = rampLeft
        let gainStep = self.gainStep, target = gainTarget
        let decay = envelopeDecay, smoothing = envelopeSmoothing
        let steadyGain = Float(g)
        var n = 0
        while n < count {
            let stop: Int
            if S.groups {
                let into = (intoPeriod + n) & 7
                if into == 0 { sink.choose(frequency: f) }
                stop = min(count, n + 8 - into)
            } else {
                stop = count
            }
            sink.beginGroup(steadyGain: steadyGain)
            while n < stop {
                // Output of this sample from the current state.
                if E.smooths {
                    let u = origin + Double(k) * du
                    let level = E.value(u: u, invPeriod: invPeriod, running: env)
                    // After note-off the pass envelope only falls: a release that crosses the loop
                    // point fades on instead of swelling back to the top of the next pass.
                    if !released || level < smoothed { smoothed += (level - smoothed) * smoothing }
                }
                sink.put(n, phase: phase, gain: G.ramps ? Float(g * smoothed) : steadyGain, G.self)
                // Advance to the next sample.
                k &+= 1
                let fNext: Double
                if k >= boundary {
                    var u = origin + Double(k) * du
                    if u >= loopPoint {
                        u = Voice.nextPass(u, period: period, step: du)
                        origin = u; k = 0; seg = 0; env = 1
                    } else if E.usesRunningValue { env *= decay }
                    while u >= end[seg] { seg += 1 }
                    boundary = Voice.firstStep(reaching: min(end[seg], loopPoint), origin: origin, step: du)
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
                if G.ramps && left > 0 {
                    g += gainStep
                    left -= 1
                    if left == 0 { g = target }
                }
                n &+= 1
            }
        }
        self.origin = origin; steps = k; segment = seg; self.phase = phase; frequency = f
        gain = g; envelope = env; smoothedEnvelope = smoothed; rampLeft = left
    }

    /// Where the next pass starts for a position `u` at or past the loop point: as far past the
    /// loop as `u` is (whole passes dropped), and exactly 0 when it differs from the loop point
    /// only by rounding — so a pass is S samples and restarts at the shape's first point.
    @inline(__always) static func nextPass(_ u: Double, period: Double, step: Double) -> Double {
        let past = u - period * Double(max(1, Int(u / period)))
        return past < 1e-6 * step ? 0 : past
    }

    /// The first step k with origin + k·step ≥ limit: the float estimate, then corrected so it is
    /// exactly the step at which the position, computed the same way, reaches the limit.
    @inline(__always) static func firstStep(reaching limit: Double, origin: Double, step: Double) -> Int {
        let estimate = ((limit - origin) / step).rounded(.up)
        var k = estimate > 0 ? Int(min(estimate, 1e15)) : 0
        while k > 0 && origin + Double(k - 1) * step >= limit { k -= 1 }
        while origin + Double(k) * step < limit { k += 1 }
        return k
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

/// Where the phase walk's samples go.
protocol VoiceSink {
    /// Whether the sink chooses something every 8 frames of absolute time (a table level).
    static var groups: Bool { get }
    mutating func choose(frequency: Double)
    mutating func beginGroup(steadyGain: Float)
    mutating func put<G: GainMode>(_ n: Int, phase: Double, gain: Float, _: G.Type)
}

/// Scratch buffers for a second pass over the block: the phase in Float and, when it ramps, the gain.
/// (Plain types, not one generic one: a generic type's metadata is made at first use, which in an
/// unoptimised build would be an allocation on the audio thread.)
struct ScratchSink: VoiceSink {
    let phase: UnsafeMutablePointer<Float>, gain: UnsafeMutablePointer<Float>
    init(_ scratch: VoiceScratch) { phase = scratch.phase; gain = scratch.gain }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func beginGroup(steadyGain: Float) {}
    @inline(__always) mutating func put<G: GainMode>(_ n: Int, phase p: Double, gain g: Float, _: G.Type) {
        phase[n] = Float(p)
        if G.ramps { gain[n] = g }
    }
}

/// `ScratchSink` plus the phase in Double, for the Fourier series whose high partials need it.
struct PreciseScratchSink: VoiceSink {
    let phase: UnsafeMutablePointer<Float>, precisePhase: UnsafeMutablePointer<Double>, gain: UnsafeMutablePointer<Float>
    init(_ scratch: VoiceScratch) { phase = scratch.phase; precisePhase = scratch.precisePhase; gain = scratch.gain }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func beginGroup(steadyGain: Float) {}
    @inline(__always) mutating func put<G: GainMode>(_ n: Int, phase p: Double, gain g: Float, _: G.Type) {
        phase[n] = Float(p)
        precisePhase[n] = p
        if G.ramps { gain[n] = g }
    }
}

/// A band-limited table read straight into the bus: two neighbouring levels at one shared place,
/// blended by the level weight, read with a 4-point cubic where the levels are rich in partials
/// and linearly where they are not (both under −96 dB; the cubic costs about twice as much). The
/// level and weight are chosen every 8 samples of absolute time (so block boundaries change
/// nothing), with 1 % headroom for the frequency to rise before the next choice.
struct TableSink: VoiceSink {
    let base: UnsafeMutablePointer<Float>
    /// Hz to the `blend` scale (maxHarmonics / Nyquist).
    let scale: Float
    let bus: UnsafeMutablePointer<Float>
    var level: Int
    var weight: Float
    var pairs: UnsafeRawPointer
    var levelWeights = SIMD8<Float>(repeating: 0)
    var steadyWeights = SIMD8<Float>(repeating: 0)
    /// The current level has so many partials that linear interpolation would leave its error
    /// above the 16-bit floor: read it with the cubic.
    var cubic: Bool

    init(base: UnsafeMutablePointer<Float>, scale: Float, bus: UnsafeMutablePointer<Float>, level: Int, weight: Float) {
        self.base = base; self.scale = scale; self.bus = bus; self.level = level; self.weight = weight
        cubic = level < BandLimitedTables.linearFromLevel  // carried with the level: block cuts change nothing
        pairs = UnsafeRawPointer(base)
    }

    static var groups: Bool { true }
    @inline(__always) mutating func choose(frequency: Double) {
        (level, weight) = BandLimitedTables.blend(scaledFrequency: Float(frequency) * scale * 1.01)
        cubic = level < BandLimitedTables.linearFromLevel
    }
    @inline(__always) mutating func beginGroup(steadyGain: Float) {
        pairs = UnsafeRawPointer(base + level * BandLimitedTables.pairStride)
        let w = SIMD2<Float>(1 - weight, weight)
        levelWeights = SIMD8<Float>(lowHalf: SIMD4(lowHalf: w, highHalf: w), highHalf: SIMD4(lowHalf: w, highHalf: w))
        steadyWeights = levelWeights * steadyGain
    }
    @inline(__always) mutating func put<G: GainMode>(_ n: Int, phase: Double, gain: Float, _: G.Type) {
        let (i, t) = BandLimitedTables.position(phase: phase)
        let weights = G.ramps ? levelWeights * gain : steadyWeights
        if cubic {
            // Samples i−1 … i+2 of both levels, (rich, lean) pairs, in one 32-byte load: blend the
            // levels (each pair into one sample), then the cubic over the four.
            let q = pairs.loadUnaligned(fromByteOffset: 8 * i, as: SIMD8<Float>.self)
            let m = q * weights
            let v = (m.evenHalf + m.oddHalf) * BandLimitedTables.cubicWeights(t)
            bus[n] += (v.x + v.y) + (v.z + v.w)
        } else {
            // Few partials: samples i and i+1 of both levels in 16 bytes, weighted bilinearly (the
            // weights come from the phase alone, so after the load only a multiply and a sum remain).
            let q = pairs.loadUnaligned(fromByteOffset: 8 * (i + 1), as: SIMD4<Float>.self)
            let p = q * (SIMD4<Float>(1 - t, 1 - t, t, t) * weights.lowHalf)
            let h = p.lowHalf + p.highHalf
            bus[n] += h.x + h.y
        }
    }
}
