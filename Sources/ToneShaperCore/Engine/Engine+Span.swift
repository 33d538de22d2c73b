import CPrefetch

/// The render loop between two events: a span of up to `spanPeriods` control periods.
///
/// What a control tick changes is almost all one part's own business — its finished voices, its
/// audibility, its shape's glide, vibrato, pitch ratio and pan — so within a span each part runs
/// its own ticks, period after period, on whichever thread rendered it, into planes as long as the
/// span. The threads meet once per span instead of once per period (128 frames). The planes are
/// then mixed and mastered period by period, in channel order — the same arithmetic, in the same
/// order, as rendering one period at a time, bit for bit — by whichever thread is free during the
/// next span (the planes come in two sets), or at the end of the render call. The one tick that
/// reaches across parts — a stolen voice handing over to its new note — runs whole on the engine's
/// thread, one period at a time, while any such hand-over is pending.
extension Engine {
    /// Whether any voice is fading out to start the note that stole it.
    func handingOver() -> Bool {
        for i in 0..<voiceCount where voices[i].pendingPart >= 0 && voices[i].stage != .idle { return true }
        return false
    }

    /// The whole control tick for every part, on this thread (used while a hand-over is pending).
    func controlTick() {
        for i in 0..<voiceCount where voices[i].stage == .releasing && voices[i].rampLeft == 0 && voices[i].gain <= 0 {
            finish(voices + i)
        }
        var anyAudible = false
        for p in 0..<16 where tickSettings(p) { anyAudible = true }
        restDCBlocker(anyAudible: anyAudible)
    }

    /// Part p's share of a control tick when it runs its own: its voices whose release has ended are
    /// freed (in pool order, as the whole tick does), then its settings move on.
    func tickPart(_ p: Int) {
        let row = partVoices + p * voiceCount
        for j in 0..<partVoiceCount[p] {
            let v = voices + row[j]
            if v.pointee.stage == .releasing && v.pointee.rampLeft == 0 && v.pointee.gain <= 0 { finish(v) }
        }
        _ = tickSettings(p)
    }

    /// Once per control period (maxBlock frames of absolute time), per part: whether it is still
    /// audible, then its shape's glide, vibrato, pitch ratio and pan target. Returns `audible`.
    func tickSettings(_ p: Int) -> Bool {
        let part = parts + p
        let echo = part.pointee.echo
        let echoing = echo.isOff ? 0 : Int(max(echo.delaySamples, echo.delayTarget)) + 2
        let audible = part.pointee.activeVoices > 0 || (part.pointee.audible && part.pointee.quietFrames <= echoing)
        // Written only when it changes: the engine's thread reads it every span (see `Part`).
        if audible != part.pointee.audible { part.pointee.audible = audible }
        if !audible { return false }
        slots[part.pointee.currentSlot].glide(table: presets, sampleRate: sampleRate, coefficient: glideCoefficient)
        if part.pointee.privateSlots > 0 {
            forEachPrivateSlot(part: p) { $0.pointee.glide(table: presets, sampleRate: sampleRate, coefficient: glideCoefficient) }
        }
        if part.pointee.vibratoDepth > 0 {
            part.pointee.vibratoPhase = fractionalPart(part.pointee.vibratoPhase + 5.5 * (Double(maxBlock) / sampleRate))
        }
        // Sixteen parts at every period: exp2 only when bend or vibrato moved (the same bits as
        // recomputing: every writer of `ratio` keeps the semitones it is of, see `refreshRatio`).
        let semitones = currentSemitones(part: p)
        if semitones != part.pointee.ratioSemitones { setRatio(part: p, semitones: semitones) }
        // Pan moves linearly across the coming period, from where the last one ended.
        part.pointee.panFromLeft = part.pointee.panLeft
        part.pointee.panFromRight = part.pointee.panRight
        part.pointee.aimPan()
        return true
    }

    /// All quiet at a tick: the output DC blocker's own tail (after a sound with a mean, e.g. the
    /// article's sawtooth, it swings the other way and returns at 1 Hz) is let die away, then set to
    /// rest below −140 dBFS, so the silence after it is exact zeros without a step.
    @inline(__always) func restDCBlocker(anyAudible: Bool) {
        if !anyAudible && max(abs(dcLeft.y), abs(dcRight.y)) < 1e-7 { dcLeft = (0, 0); dcRight = (0, 0) }
    }

    /// Renders a span: `count` frames from `intoPeriod` frames into a control period, ending on the
    /// period grid or earlier (an event or the caller's end). With `partsTick`, each part runs the
    /// tick at every period start inside the span; without, the caller ran the whole tick already.
    func renderSpan(_ out: UnsafeMutablePointer<Float>, count: Int, intoPeriod: Int, partsTick: Bool) {
        jobCount = count
        jobIntoPeriod = intoPeriod
        jobPartsTick = partsTick
        listParts()
        if let crew {
            crew.run { renderShare(0) }
        } else {
            renderShare(0)
        }
        // This span's mix and master wait for the next span, where a free thread does them beside
        // its parts, or for the end of the call.
        spanSequence += 1
        pendingMaster = MasterJob(out: out, count: count, intoPeriod: intoPeriod, partsTick: partsTick, set: planeSet,
                                  split: threadCount > 1 ? runStarts[1] : 0, sequence: spanSequence)
        planeSet ^= 1
    }

    /// The mix and master of the last span, if still to do, on this thread.
    public func finishMaster() {
        if let master = pendingMaster { mixAndMaster(master, prefixed: false) }
        pendingMaster = nil
    }

    /// The first run's share of a span's mix: period by period, the planes of channels below
    /// `job.split` audible there, panned, summed in channel order into `prefixLeft`/`prefixRight`.
    func mixPrefix(_ job: MasterJob) {
        var start = 0, into = job.intoPeriod, segment = 0
        while start < job.count {
            let m = min(job.count - start, maxBlock - into)
            addPlanes(job, from: 0, to: job.split, start: start, count: m, into: into, segment: segment,
                      onto: nil, left: prefixLeft + start, right: prefixRight + start)
            start += m; into = 0; segment += 1
        }
    }

    /// Period by period: the planes of the parts audible there reach the mix in channel order,
    /// whoever rendered them — from zero, or `prefixed` from the sum `mixPrefix` left of the
    /// channels below `job.split` — then the master stage.
    func mixAndMaster(_ job: MasterJob, prefixed: Bool) {
        let first = prefixed ? job.split : 0
        var start = 0, into = job.intoPeriod, segment = 0
        while start < job.count {
            let m = min(job.count - start, maxBlock - into)
            // Where a period starts, the parts' own ticks said who is audible: the DC blocker may
            // rest before the period is mastered.
            if job.partsTick && into == 0 {
                let bit = UInt32(1) << UInt32(segment)
                var anyAudible = false
                for p in 0..<16 where spanAudible[16 * p + job.set] & bit != 0 { anyAudible = true; break }
                restDCBlocker(anyAudible: anyAudible)
            }
            addPlanes(job, from: first, to: 16, start: start, count: m, into: into, segment: segment,
                      onto: prefixed ? (prefixLeft + start, prefixRight + start) : nil, left: mixLeft, right: mixRight,
                      mastering: job.out + 2 * start)
            start += m; into = 0; segment += 1
        }
        onMastered?(UnsafeBufferPointer(start: job.out, count: 2 * job.count))
    }

    /// Sums the planes of channels `from..<to` audible in one period (`count` frames from `start`,
    /// `into` frames into the control period, the span's `segment`) into `left`/`right`, in channel
    /// order, each panned as it is added: the gains move linearly across the control period, the
    /// ramp position exact integer frames. The sum starts from `onto` (a prefix of the channels
    /// before) or from zero. With `mastering`, the sum is mastered into it as it goes: each 16-frame
    /// stretch while the next is summed, its DC blocker stepped a frame per plane added (`DCBlocker`),
    /// so that chain of dependent steps runs beside the sums instead of after them.
    ///
    /// Eight frames at a time with every plane added in registers: the same operations in the same
    /// order per frame as a pass over the mix for each plane, so the same bits, without loading and
    /// storing the two sums sixteen times per frame.
    @inline(__always) func addPlanes(_ job: MasterJob, from: Int, to: Int, start: Int, count m: Int, into: Int, segment: Int,
                                     onto: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>)?,
                                     left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                     mastering out: UnsafeMutablePointer<Float>? = nil) {
        let planes = buses + job.set * 16 * maxSpan
        let ramps = panRamps + job.set * 16 * 32
        let bit = UInt32(1) << UInt32(segment)
        let first = Int32(truncatingIfNeeded: into + 1)
        // The audible planes, in channel order, on the stack (sixteen at most).
        var listed: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int)
            = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &listed) { raw in
            let list = raw.baseAddress!.assumingMemoryBound(to: Int.self)
            var count = 0
            for p in from..<to where spanAudible[16 * p + job.set] & bit != 0 { list[count] = p; count &+= 1 }
            var n = 0
            let lanes = SIMD8<Int32>(0, 1, 2, 3, 4, 5, 6, 7)
            // With `out`, the stretch summed last (n − 16 ..< n) is mastered while the next one is
            // summed, a frame per plane (`DCBlocker`): frames `done ..< n` of it are still to go.
            let gain = Float(configuration.masterGain), pole = dcPole
            var dc = DCBlocker(left: dcLeft, right: dcRight)
            var clipped = 0
            // Sixteen frames a step, as two groups of eight side by side: a group's sums are one
            // chain of adds through the planes (in channel order, which fixes the bits), so two
            // chains at once keep the adder busy where one waited on its own last add.
            while n + 16 <= m {
                var done = n == 0 ? 0 : n &- 16
                var l0 = SIMD8<Float>(repeating: 0), r0 = SIMD8<Float>(repeating: 0)
                var l1 = SIMD8<Float>(repeating: 0), r1 = SIMD8<Float>(repeating: 0)
                if let (fromLeft, fromRight) = onto {
                    l0 = UnsafeRawPointer(fromLeft + n).loadUnaligned(as: SIMD8<Float>.self)
                    l1 = UnsafeRawPointer(fromLeft + n + 8).loadUnaligned(as: SIMD8<Float>.self)
                    r0 = UnsafeRawPointer(fromRight + n).loadUnaligned(as: SIMD8<Float>.self)
                    r1 = UnsafeRawPointer(fromRight + n + 8).loadUnaligned(as: SIMD8<Float>.self)
                }
                let k0 = SIMD8<Float>(SIMD8<Int32>(repeating: first &+ Int32(truncatingIfNeeded: n)) &+ lanes)
                let k1 = SIMD8<Float>(SIMD8<Int32>(repeating: first &+ Int32(truncatingIfNeeded: n + 8)) &+ lanes)
                for q in 0..<count {
                    let p = list[q]
                    // (Wrapping arithmetic: checked, each index was three more instructions per plane.)
                    let plane = planes + (p &* maxSpan &+ start &+ n)
                    // Written a span or two ago, other parts' voices since: four lines on is asked
                    // for now (a hint: past a plane's end it costs nothing).
                    toneshaper_prefetch(plane + 64)
                    let s0 = UnsafeRawPointer(plane).loadUnaligned(as: SIMD8<Float>.self)
                    let s1 = UnsafeRawPointer(plane + 8).loadUnaligned(as: SIMD8<Float>.self)
                    let ramp = ramps[p &* 32 &+ segment]
                    l0 += s0 * (ramp[0] + ramp[1] * k0)
                    l1 += s1 * (ramp[0] + ramp[1] * k1)
                    r0 += s0 * (ramp[2] + ramp[3] * k0)
                    r1 += s1 * (ramp[2] + ramp[3] * k1)
                    if let out, done < n {
                        dc.step(left, right, done, into: out, gain: gain, pole: pole)
                        done &+= 1
                    }
                }
                if let out, n > 0 { clipped &+= dc.finishStretch(left, right, from: done, end: n, into: out, gain: gain, pole: pole) }
                UnsafeMutableRawPointer(left + n).storeBytes(of: l0, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(left + n + 8).storeBytes(of: l1, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(right + n).storeBytes(of: r0, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(right + n + 8).storeBytes(of: r1, as: SIMD8<Float>.self)
                n &+= 16
            }
            if let out, n > 0 { clipped &+= dc.finishStretch(left, right, from: n &- 16, end: n, into: out, gain: gain, pole: pole) }
            if out != nil {
                dcLeft = dc.left; dcRight = dc.right
                clippedSamples += clipped
            }
            while n + 8 <= m {
                var l = SIMD8<Float>(repeating: 0), r = SIMD8<Float>(repeating: 0)
                if let (fromLeft, fromRight) = onto {
                    l = UnsafeRawPointer(fromLeft + n).loadUnaligned(as: SIMD8<Float>.self)
                    r = UnsafeRawPointer(fromRight + n).loadUnaligned(as: SIMD8<Float>.self)
                }
                let k = SIMD8<Float>(SIMD8<Int32>(repeating: first &+ Int32(truncatingIfNeeded: n)) &+ lanes)
                for q in 0..<count {
                    let p = list[q]
                    let s = UnsafeRawPointer(planes + p * maxSpan + start + n).loadUnaligned(as: SIMD8<Float>.self)
                    let ramp = ramps[p * 32 + segment]
                    l += s * (ramp[0] + ramp[1] * k)
                    r += s * (ramp[2] + ramp[3] * k)
                }
                UnsafeMutableRawPointer(left + n).storeBytes(of: l, as: SIMD8<Float>.self)
                UnsafeMutableRawPointer(right + n).storeBytes(of: r, as: SIMD8<Float>.self)
                if let out { master(left + n, right + n, into: out + 2 * n, count: 8) }
                n &+= 8
            }
            let tail = n
            while n < m {
                var l: Float = 0, r: Float = 0
                if let (fromLeft, fromRight) = onto { l = fromLeft[n]; r = fromRight[n] }
                let k = Float(first &+ Int32(truncatingIfNeeded: n))
                for q in 0..<count {
                    let p = list[q]
                    let s = planes[p * maxSpan + start + n]
                    let ramp = ramps[p * 32 + segment]
                    l += s * (ramp[0] + ramp[1] * k)
                    r += s * (ramp[2] + ramp[3] * k)
                }
                left[n] = l; right[n] = r
                n &+= 1
            }
            if let out, tail < m { master(left + tail, right + tail, into: out + 2 * tail, count: m - tail) }
        }
    }

    /// Master: gain, a one-pole DC blocker with a 1 Hz corner per side (whatever mean a shape or an
    /// echo builds up never reaches the speakers, and low notes do not droop), interleave, then a
    /// hard clip (counted).
    @inline(__always) func master(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                                  into out: UnsafeMutablePointer<Float>, count: Int) {
        let gain = Float(configuration.masterGain), pole = dcPole
        var dc = DCBlocker(left: dcLeft, right: dcRight)
        for n in 0..<count { dc.step(left, right, n, into: out, gain: gain, pole: pole) }
        dcLeft = dc.left; dcRight = dc.right
        clippedSamples += Engine.clip(out, count: 2 * count)
    }

    /// The master's hard clip of `count` interleaved samples in place, eight at a time with the
    /// selects of `min(max(b, −1), 1)` (NaN passes both, and counts); returns how many it changed.
    /// A pass of its own: in the DC blocker's loop it had added a dozen instructions per frame
    /// beside that loop's chain (see `DCBlocker`).
    @inline(__always) static func clip(_ out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var i = 0
        var clipped = SIMD8<Int32>(repeating: 0)
        while i + 8 <= count {
            let b = UnsafeRawPointer(out + i).loadUnaligned(as: SIMD8<Float>.self)
            let c = b.replacing(with: -1, where: b .<= -1).replacing(with: 1, where: b .> 1)
            clipped &+= SIMD8<Int32>(repeating: 0).replacing(with: 1, where: c .!= b)
            UnsafeMutableRawPointer(out + i).storeBytes(of: c, as: SIMD8<Float>.self)
            i &+= 8
        }
        var tail = 0
        while i < count {
            let b = out[i], c = min(max(b, -1), 1)
            tail += c != b ? 1 : 0
            out[i] = c
            i &+= 1
        }
        return Int(clipped.wrappedSum()) + tail
    }

    /// A part's bus for one period's frames: gain (ramped), then echo; and whether it is still
    /// carrying sound.
    func processPart(_ p: Int, bus: UnsafeMutablePointer<Float>, count: Int) {
        let part = parts + p
        var a = part.pointee.amplitude
        let target = part.pointee.amplitudeTarget
        if a == target {
            // Settled (the usual case): one gain for the block, applied in the echo's pass.
            part.pointee.echo.process(bus, count: count, gain: Float(a))
        } else {
            let maxStep = 1 / rampSamples
            for n in 0..<count {
                a += min(max(target - a, -maxStep), maxStep)
                bus[n] *= Float(a)
            }
            part.pointee.amplitude = a
            part.pointee.echo.process(bus, count: count)
        }
        // Loudness decides when an echo tail has died away; while notes sound it is not needed
        // (`activeVoices` only falls at control ticks), so it is only measured once they have stopped.
        if part.pointee.activeVoices > 0 || Engine.peak(bus, count: count) > 1e-6 {
            part.pointee.quietFrames = 0
        } else {
            part.pointee.quietFrames += count
        }
    }

    /// Part p's equal-power pan across the coming period, for the mix: the left and right gains
    /// where the last period ended and their steps per frame toward this period's target.
    @inline(__always) func panRamp(_ p: Int) -> SIMD4<Float> {
        let part = parts + p
        let l0 = part.pointee.panFromLeft, r0 = part.pointee.panFromRight
        let period = Float(maxBlock)
        return SIMD4(l0, (part.pointee.panLeft - l0) / period, r0, (part.pointee.panRight - r0) / period)
    }

    /// Largest |x| over `count` samples, eight lanes at a time (the render command's peak meter too).
    @inline(__always) public static func peak(_ x: UnsafePointer<Float>, count: Int) -> Float {
        var high = SIMD8<Float>(repeating: 0), low = SIMD8<Float>(repeating: 0)
        var n = 0
        while n + 8 <= count {
            let v = UnsafeRawPointer(x + n).loadUnaligned(as: SIMD8<Float>.self)
            // (Selects, not the stdlib's pointwiseMax/Min: those are generic calls, not inlined.)
            high = high.replacing(with: v, where: v .> high)
            low = low.replacing(with: v, where: v .< low)
            n += 8
        }
        var result = max(high.max(), -low.min())
        while n < count { result = max(result, abs(x[n])); n += 1 }
        return result
    }
}

/// A span's mix and master, to be done: where its output goes and which planes hold it.
struct MasterJob {
    let out: UnsafeMutablePointer<Float>
    let count: Int
    let intoPeriod: Int
    let partsTick: Bool
    let set: Int
    /// The channel the second thread's run started at: with several threads, the first run's
    /// planes are summed apart, where they were rendered (`mixPrefix`).
    let split: Int
    /// Which span this is (`Engine.spanSequence`).
    let sequence: Int
}

/// The master's one-pole DC blocker, both sides, in registers: y = (x − x₋₁) + pole·y₋₁ per frame.
///
/// Each frame waits on the last (a multiply and an add, the order fixing the bits), about six
/// cycles a frame that nothing can shorten. `addPlanes` therefore steps it one frame per plane
/// while it sums the next stretch: the chain runs beside independent work instead of after it.
struct DCBlocker {
    var left: (x: Float, y: Float), right: (x: Float, y: Float)

    /// Frame n of the summed `l`/`r`, times the master gain, through the blocker into out[2n], out[2n + 1].
    @inline(__always) mutating func step(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, _ n: Int,
                                         into out: UnsafeMutablePointer<Float>, gain: Float, pole: Float) {
        let a = l[n] * gain, b = r[n] * gain
        let ya = a - left.x + pole * left.y, yb = b - right.x + pole * right.y
        left = (a, ya); right = (b, yb)
        out[2 &* n] = ya
        out[2 &* n &+ 1] = yb
    }

    /// Frames `from ..< end` stepped, then the 16-frame stretch ending at `end` (all its frames
    /// mastered now) clipped: how many samples the clip changed.
    @inline(__always) mutating func finishStretch(_ l: UnsafeMutablePointer<Float>, _ r: UnsafeMutablePointer<Float>, from: Int, end: Int,
                                                  into out: UnsafeMutablePointer<Float>, gain: Float, pole: Float) -> Int {
        var f = from
        while f < end { step(l, r, f, into: out, gain: gain, pole: pole); f &+= 1 }
        return Engine.clip(out + 2 &* (end &- 16), count: 32)
    }
}
