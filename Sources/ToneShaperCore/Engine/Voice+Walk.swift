extension Voice {
    /// Advances the voice `count` samples. The phase walk hands groups of eight samples (phases and
    /// gains) to a sink that makes the wave: the sine straight into the bus, the band-limited tables
    /// and the other waves through scratch buffers and a second pass.
    @inline(__always)
    mutating func render(count: Int, intoPeriod: Int, slot s: UnsafeMutablePointer<ShapeSlot>, ratio: Double, halfStep: Double,
                         scratch: VoiceScratch, tables: TableGeometry, nyquistReciprocal: Double,
                         into bus: UnsafeMutablePointer<Float>) {
        let curve = s.pointee.curve
        let period = s.pointee.period, du = s.pointee.du
        var u = position
        var reread = false
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
            reread = true
        }
        if u >= s.pointee.loopPoint {
            // A shorter duration put the voice past the end of the loop: back into it, read afresh.
            u = Voice.nextPass(u, period: period, step: du)
            anchor(at: u, step: du)
            reread = true
        }
        // The carried cursor is almost always still right; search only when it is not.
        let carried = segment
        let seg = carried < curve.segmentCount && u < curve.end[carried] && (carried == 0 || u >= curve.end[carried - 1])
            ? carried : curve.segment(containing: u)
        // Within a segment the frequency moves by a constant per sample; when that constant, the
        // ratio or the curve changes, the phase is anchored afresh where it is.
        let df = curve.slope[seg] * du * ratio
        if reread || ratio != frequencyRatio || df != frequencyStep {
            settlePhase(halfStep: halfStep)
            if reread {
                frequency = curve.value(at: min(u, curve.lastX)) * ratio
            } else if ratio != frequencyRatio {
                frequency *= ratio / frequencyRatio
            }
            frequencyRatio = ratio
            frequencyStep = df
        }
        // A constant envelope that has settled at 1 needs no smoothing at all; with no ramp under
        // way either (ramps start only at events, which begin blocks) the gain is one number.
        let kind = envelopeKind == 0 && smoothedEnvelope == 1 ? 3 : envelopeKind
        switch wave {
        case .bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth:
            var sink = TableSink(wave, tables: tables,
                                 scale: Float(Double(BandLimitedTables.maxHarmonics) * nyquistReciprocal),
                                 scratch: scratch, level: blendLevel, weight: blendWeight)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
            blendLevel = sink.level; blendWeight = sink.weight
            sink.mix(count: count, into: bus)
            return
        case .sine:
            // Steady through the block exactly when the walk takes its steady path (`kind` 3, no
            // ramp): every group then gets Float(gain).
            var sink = SineSink(scratch, steadyGain: kind == 3 && rampLeft == 0 ? Float(gain) : nil)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
            sink.mix(count: count, into: bus)
            return
        case .squareFourier, .triangleFourier, .sawtoothFourier:
            var sink = PreciseScratchSink(scratch)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
        case .square, .triangle, .sawtooth, .noise:
            var sink = ScratchSink(scratch)
            walk(&sink, kind: kind, count: count, intoPeriod: intoPeriod, slot: s, segment: seg, ratio: ratio, halfStep: halfStep)
        }
        let ph = scratch.phase, pd = scratch.precisePhase, ga = scratch.gain
        switch wave {
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
            Voice.mixFourier(wave, terms: terms, count: count, phase: pd, gain: ga, weights: scratch.fourierWeights, into: bus)
        case .noise:
            var x = noise
            for n in 0..<count {
                x ^= x << 13; x ^= x >> 17; x ^= x << 5
                bus[n] += (Float(Int32(bitPattern: x)) * (1 / 2_147_483_648)) * ga[n]
            }
            noise = x
        case .sine, .bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth:
            break  // made in the walk above
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

    /// The phase walk: steps through the shape for `count` samples in groups of eight frames of
    /// absolute time, handing each group's phases and gains to `sink`. Inside a segment a group's
    /// eight phases come from the anchor at once (the closed-form trapezoid, in SIMD lanes); only a
    /// group that crosses a segment end or the loop walks sample by sample, and a steady voice does
    /// no per-sample bookkeeping at all. State lives in locals for the whole loop (the sink's
    /// pointers could alias `self`).
    @inline(__always)
    mutating func walk<E: EnvelopeShape, G: GainMode, S: VoiceSink>(
        _: E.Type, _: G.Type, _ target: inout S, _ count: Int, _ intoPeriod: Int, _ s: UnsafeMutablePointer<ShapeSlot>,
        _ startSegment: Int, _ ratio: Double, _ halfStep: Double, _ released: Bool
    ) {
        // The sink in a local: through `inout` its fields would be reloaded after every store to the bus.
        var sink = target
        defer { target = sink }
        let curve = s.pointee.curve
        let du = step, period = s.pointee.period, loopPoint = s.pointee.loopPoint
        let invPeriod = 1 / period
        var at = WalkPosition(curve: curve, origin: origin, k: steps, segment: startSegment, step: du, loopPoint: loopPoint,
                              phase: phase, frequency: frequency, frequencyStep: frequencyStep, phaseSteps: phaseSteps,
                              halfStep: halfStep, envelope: envelope,
                              known: (boundaryLimit, boundaryOrigin, boundaryStepSize, boundaryStep))
        var g = gain, smoothed = smoothedEnvelope
        var left = rampLeft
        let gainStep = self.gainStep, gainTarget = self.gainTarget
        let rampFrom = self.rampFrom, rampLength = self.rampLength
        /// The gain with `left` samples of the ramp to go: from its start, not summed (see `rampFrom`).
        @inline(__always) func rampedGain(left: Int) -> Double {
            left == 0 ? gainTarget : rampFrom + Double(rampLength &- left) * gainStep
        }
        let decay = envelopeDecay, smoothing = envelopeSmoothing
        let steadyGain = SIMD8<Float>(repeating: Float(g))
        let perSample = G.ramps || E.smooths || E.usesRunningValue
        let lanes = SIMD8<Double>(0, 1, 2, 3, 4, 5, 6, 7)
        /// Eight lanes' gains `done` samples into the ramp, the target for lanes at or past its end
        /// (`left` samples of it to go from lane 0): `rampedGain` in lanes.
        @inline(__always) func rampedGains(done: SIMD8<Double>, left: Int) -> SIMD8<Double> {
            let ramped = rampFrom + done * gainStep
            return left < 8 ? ramped.replacing(with: gainTarget, where: lanes .>= Double(left)) : ramped
        }

        var n = 0
        while n < count {
            if !perSample && (intoPeriod + n) & 7 == 0 {
                // A steady voice, whole groups well inside the segment: four groups per step, then
                // two, so their chains overlap and the loop's bookkeeping is paid once for 32
                // samples (held saw 2.59 → 2.47 ns beside two per step). The same lanes as below.
                // The sample indices carried as a vector, 32 on per step (whole numbers, exact): built
                // afresh from `j` each step, they were a dozen 128-bit moves and blends per group.
                var lane0 = SIMD8<Double>(repeating: Double(at.j)) + lanes
                while n + 32 <= count && at.k + 32 < at.boundary {
                    let lane1 = lane0 + 8, lane2 = lane0 + 16, lane3 = lane0 + 24
                    let phases0 = at.phases(lane0)
                    let phases1 = at.phases(lane1)
                    let phases2 = at.phases(lane2)
                    let phases3 = at.phases(lane3)
                    if S.groups { sink.choose(frequency: at.frequency(after: 0)) }
                    sink.put(n, 8, phases: phases0, gains: steadyGain)
                    if S.groups { sink.choose(frequency: at.frequency(after: 8)) }
                    sink.put(n + 8, 8, phases: phases1, gains: steadyGain)
                    if S.groups { sink.choose(frequency: at.frequency(after: 16)) }
                    sink.put(n + 16, 8, phases: phases2, gains: steadyGain)
                    if S.groups { sink.choose(frequency: at.frequency(after: 24)) }
                    sink.put(n + 24, 8, phases: phases3, gains: steadyGain)
                    at.k &+= 32; at.j &+= 32; n &+= 32
                    lane0 += 32
                }
                while n + 16 <= count && at.k + 16 < at.boundary {
                    let lane0 = SIMD8<Double>(repeating: Double(at.j)) + lanes, lane1 = lane0 + 8
                    let phases0 = at.phases(lane0)
                    let phases1 = at.phases(lane1)
                    if S.groups { sink.choose(frequency: at.frequency(after: 0)) }
                    sink.put(n, 8, phases: phases0, gains: steadyGain)
                    if S.groups { sink.choose(frequency: at.frequency(after: 8)) }
                    sink.put(n + 8, 8, phases: phases1, gains: steadyGain)
                    at.k &+= 16; at.j &+= 16; n &+= 16
                }
                if n >= count { break }
            }
            if G.ramps && !E.smooths && !E.usesRunningValue && (intoPeriod + n) & 7 == 0 {
                // An attack or release with nothing else moving, whole groups inside the segment:
                // two per step, as the steady loop above, each group's phases and gains exactly as
                // the one-group branch below computes them (the ramp's sample counts carried as a
                // vector, whole numbers, exact; the target from the ramp's end on). Attacks and
                // releases are about a twelfth of a dense render's voice-samples.
                var lane0 = SIMD8<Double>(repeating: Double(at.j)) + lanes
                var done0 = SIMD8<Double>(repeating: Double(rampLength &- left)) + lanes
                while n + 16 <= count && at.k + 16 < at.boundary {
                    let lane1 = lane0 + 8, done1 = done0 + 8
                    let phases0 = at.phases(lane0)
                    let phases1 = at.phases(lane1)
                    let ramped0 = rampedGains(done: done0, left: left), ramped1 = rampedGains(done: done1, left: left &- 8)
                    if S.groups { sink.choose(frequency: at.frequency(after: 0)) }
                    sink.put(n, 8, phases: phases0, gains: SIMD8<Float>(ramped0 * smoothed))
                    if S.groups { sink.choose(frequency: at.frequency(after: 8)) }
                    sink.put(n + 8, 8, phases: phases1, gains: SIMD8<Float>(ramped1 * smoothed))
                    left = Swift.max(0, left &- 16)
                    at.k &+= 16; at.j &+= 16; n &+= 16
                    lane0 += 16; done0 += 16
                }
                g = rampedGain(left: left)
                if n >= count { break }
            }
            let into = (intoPeriod + n) & 7
            let m = min(count - n, 8 - into)
            if S.groups && into == 0 { sink.choose(frequency: at.frequency(after: 0)) }
            // No segment end inside the group: all its lanes share the anchor.
            let shared = at.k + m <= at.boundary
            var phases = SIMD8<Double>(repeating: 0)
            if shared {
                let lane = SIMD8<Double>(repeating: Double(at.j)) + lanes
                phases = at.phases(lane)
            }
            var gains = steadyGain
            if !perSample && shared {
                at.k &+= m; at.j &+= m
                if at.k >= at.boundary { at.crossBoundary(E.self, period: period, ratio: ratio, decay: decay) }
            } else if G.ramps && !E.smooths && !E.usesRunningValue && shared {
                // An attack or release with nothing else moving: the group's gains in lanes, each
                // rampFrom + n·step from the ramp's start (the target from its end on), as the
                // sample-by-sample branch below computes them one at a time.
                let done = SIMD8<Double>(repeating: Double(rampLength &- left)) + lanes
                let ramped = rampedGains(done: done, left: left)
                gains = SIMD8<Float>(ramped * smoothed)
                left = Swift.max(0, left &- m)
                g = rampedGain(left: left)
                at.k &+= m; at.j &+= m
                if at.k >= at.boundary { at.crossBoundary(E.self, period: period, ratio: ratio, decay: decay) }
            } else {
                for i in 0..<m {
                    if !shared {
                        phases[i] = at.phase(Double(at.j))
                    }
                    if E.smooths {
                        let u = at.origin + Double(at.k) * du
                        let level = E.value(u: u, invPeriod: invPeriod, running: at.envelope)
                        // After note-off the pass envelope only falls: a release that crosses the loop
                        // point fades on instead of swelling back to the top of the next pass.
                        if !released || level < smoothed { smoothed += (level - smoothed) * smoothing }
                    }
                    if G.ramps { gains[i] = Float(g * smoothed) }
                    at.k &+= 1; at.j &+= 1
                    if at.k >= at.boundary {
                        at.crossBoundary(E.self, period: period, ratio: ratio, decay: decay)
                    } else if E.usesRunningValue { at.envelope *= decay }
                    if G.ramps && left > 0 {
                        left -= 1
                        g = rampedGain(left: left)
                    }
                }
            }
            sink.put(n, m, phases: phases, gains: gains)
            n &+= m
        }
        origin = at.origin; steps = at.k; segment = at.segment
        phase = at.anchorPhase; frequency = at.anchorFrequency; frequencyStep = at.df; phaseSteps = at.j
        gain = g; envelope = at.envelope; smoothedEnvelope = smoothed; rampLeft = left
        boundaryLimit = at.limit; boundaryOrigin = at.origin; boundaryStepSize = du; boundaryStep = at.boundary
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

/// The walk's place: in the shape (origin + k·step, the segment, the step at which it ends) and in
/// the phase (the anchor: see `Voice.phase`). Plain struct fields, not a closure's captures, which
/// an unoptimised build would put in heap boxes on the audio thread.
struct WalkPosition {
    let end: UnsafeMutablePointer<Double>, slope: UnsafeMutablePointer<Double>, intercept: UnsafeMutablePointer<Double>
    let step: Double, loopPoint: Double, halfStep: Double
    var origin: Double, k: Int, segment: Int
    /// The step at which the position reaches the segment's end (or the loop's), `limit`: until
    /// then the walk needs no position at all.
    var boundary: Int, limit: Double
    var anchorPhase: Double, anchorFrequency: Double, df: Double, j: Int
    /// φ(j) = anchorPhase + j·(c1 + j·c2).
    var c1: Double, c2: Double
    var envelope: Double

    /// φ at eight sample indices from the anchor (whole numbers: exact in Double), one per lane.
    @inline(__always) func phases(_ j: SIMD8<Double>) -> SIMD8<Double> { anchorPhase + j * (c1 + j * c2) }
    /// φ at one sample index from the anchor: the lanes' arithmetic, so the same bits.
    @inline(__always) func phase(_ j: Double) -> Double { anchorPhase + j * (c1 + j * c2) }
    /// The frequency `k` samples past the walk's place (the group a sink chooses for).
    @inline(__always) func frequency(after k: Int) -> Double { anchorFrequency + Double(j + k) * df }

    @inline(__always)
    init(curve: FrequencyCurve, origin: Double, k: Int, segment: Int, step: Double, loopPoint: Double,
         phase: Double, frequency: Double, frequencyStep: Double, phaseSteps: Int, halfStep: Double, envelope: Double,
         known: (limit: Double, origin: Double, step: Double, boundary: Int)) {
        end = curve.end; slope = curve.slope; intercept = curve.intercept
        self.step = step; self.loopPoint = loopPoint; self.halfStep = halfStep
        self.origin = origin; self.k = k; self.segment = segment
        limit = min(end[segment], loopPoint)
        // The last block's answer when it was asked the same (see `Voice.boundaryStep`).
        boundary = limit == known.limit && origin == known.origin && step == known.step
            ? known.boundary : Voice.firstStep(reaching: limit, origin: origin, step: step)
        anchorPhase = phase; anchorFrequency = frequency; df = frequencyStep; j = phaseSteps
        c1 = 2 * halfStep * frequency; c2 = halfStep * frequencyStep
        self.envelope = envelope
    }

    /// The step onto a new segment or pass, taken at step k (already counted): the phase there is
    /// the trapezoid from the last sample of the old segment (its frequency from the anchor) to the
    /// curve's value at the new place, and becomes the new anchor.
    @inline(__always)
    mutating func crossBoundary<E: EnvelopeShape>(_: E.Type, period: Double, ratio: Double, decay: Double) {
        var u = origin + Double(k) * step
        let last = Double(j - 1)
        let lastPhase = phase(last)
        let lastFrequency = frequency(after: -1)
        if u >= loopPoint {
            u = Voice.nextPass(u, period: period, step: step)
            origin = u; k = 0; segment = 0; envelope = 1
        } else if E.usesRunningValue { envelope *= decay }
        while u >= end[segment] { segment += 1 }
        limit = min(end[segment], loopPoint)
        boundary = Voice.firstStep(reaching: limit, origin: origin, step: step)
        df = slope[segment] * step * ratio
        let next = (intercept[segment] + slope[segment] * u) * ratio
        anchorPhase = fractionalPart(lastPhase + (lastFrequency + next) * halfStep)
        anchorFrequency = next
        j = 0
        c1 = 2 * halfStep * anchorFrequency; c2 = halfStep * df
    }
}
