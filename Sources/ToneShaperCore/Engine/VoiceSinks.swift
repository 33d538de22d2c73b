/// Where the phase walk's samples go: a group of up to eight consecutive frames at a time.
protocol VoiceSink {
    /// Whether the sink chooses something every 8 frames of absolute time (a table level).
    static var groups: Bool { get }
    mutating func choose(frequency: Double)
    /// Frames n ..< n + m (m ≤ 8): lane i holds frame n + i's phase, not wrapped (≥ 0), and gain.
    mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>)
}

/// The phase wrapped to [0, 1) without a float→int conversion per lane: adding 1.5·2⁵² to p − ½
/// leaves round(p − ½) in the low bits, so p minus it is the fraction (a tie gives 1, folded to 0).
@inline(__always) func wrappedPhases(_ p: SIMD8<Double>) -> SIMD8<Double> {
    let magic = roundingMagic
    let whole = ((p - 0.5) + magic) - magic
    let fraction = p - whole
    return fraction.replacing(with: fraction - 1, where: fraction .>= 1)
}

/// Adds eight values (or the first m) to the bus at frame n.
@inline(__always) func addLanes(_ values: SIMD8<Float>, into bus: UnsafeMutablePointer<Float>, at n: Int, count m: Int) {
    if m == 8 {
        let raw = UnsafeMutableRawPointer(bus + n)
        raw.storeBytes(of: raw.loadUnaligned(as: SIMD8<Float>.self) + values, as: SIMD8<Float>.self)
    } else {
        for i in 0..<m { bus[n + i] += values[i] }
    }
}

/// The sine in two passes, like the tables (`TableSink`): the walk writes each sample's phase,
/// centred on 0 in Float, to scratch (and its gain, unless the voice's gain is steady through the
/// block); `mix` then makes eight polynomial sines at a time from them into the bus, a loop with
/// nothing carried from one group to the next.
struct SineSink: VoiceSink {
    let centred: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>
    /// The gain of every sample in the block when `steady` (a held note: the walk hands every group
    /// the same gain), so neither pass stores or loads one per sample.
    let steady: Bool, steadyGain: Float
    init(_ scratch: VoiceScratch, steadyGain: Float?) {
        centred = scratch.phase; gains = scratch.gain
        steady = steadyGain != nil; self.steadyGain = steadyGain ?? 0
    }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains g: SIMD8<Float>) {
        // sin 2πφ needs φ only up to a whole number: the nearest one is the cheapest to take away.
        let y = SIMD8<Float>(centredPhases(phases))
        if m == 8 {
            UnsafeMutableRawPointer(centred + n).storeBytes(of: y, as: SIMD8<Float>.self)
            if !steady { UnsafeMutableRawPointer(gains + n).storeBytes(of: g, as: SIMD8<Float>.self) }
        } else {
            for i in 0..<m { centred[n + i] = y[i]; gains[n + i] = g[i] }
        }
    }

    /// The second pass: frames 0 ..< count into `bus` (past `count`, earlier finite values, dropped).
    @inline(__always) func mix(count: Int, into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        if steady {
            let g = SIMD8<Float>(repeating: steadyGain)
            while n < count {
                let y = UnsafeRawPointer(centred + n).loadUnaligned(as: SIMD8<Float>.self)
                addLanes(fastSin2Pi(centred: y) * g, into: bus, at: n, count: Swift.min(8, count &- n))
                n &+= 8
            }
            return
        }
        while n < count {
            let y = UnsafeRawPointer(centred + n).loadUnaligned(as: SIMD8<Float>.self)
            let g = UnsafeRawPointer(gains + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes(fastSin2Pi(centred: y) * g, into: bus, at: n, count: Swift.min(8, count &- n))
            n &+= 8
        }
    }
}

/// Scratch buffers for a second pass over the block: the phase in Float and the gain.
/// (Plain types, not one generic one: a generic type's metadata is made at first use, which in an
/// unoptimised build would be an allocation on the audio thread.)
struct ScratchSink: VoiceSink {
    let phase: UnsafeMutablePointer<Float>, gain: UnsafeMutablePointer<Float>
    init(_ scratch: VoiceScratch) { phase = scratch.phase; gain = scratch.gain }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>) {
        let wrapped = SIMD8<Float>(wrappedPhases(phases))
        for i in 0..<m { phase[n + i] = wrapped[i]; gain[n + i] = gains[i] }
    }
}

/// The phase in Double and the gain, for the Fourier series whose high partials need the Double
/// (no Float copy: the series never reads one).
struct PreciseScratchSink: VoiceSink {
    let precisePhase: UnsafeMutablePointer<Double>, gain: UnsafeMutablePointer<Float>
    init(_ scratch: VoiceScratch) { precisePhase = scratch.precisePhase; gain = scratch.gain }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>) {
        let wrapped = wrappedPhases(phases)
        if m == 8 {
            UnsafeMutableRawPointer(precisePhase + n).storeBytes(of: wrapped, as: SIMD8<Double>.self)
            UnsafeMutableRawPointer(gain + n).storeBytes(of: gains, as: SIMD8<Float>.self)
        } else {
            for i in 0..<m { precisePhase[n + i] = wrapped[i]; gain[n + i] = gains[i] }
        }
    }
}

/// A band-limited table read into the bus in two passes over the block: two neighbouring levels
/// at one shared place, blended by the level weight, read with a 4-point cubic (see
/// `BandLimitedTables`). The level and weight are chosen every 8 samples of absolute time (so block
/// boundaries change nothing), with 1 % headroom for the frequency to rise before the next choice.
///
/// Why two passes: read in the walk, each group's eight row addresses went from a vector register
/// to eight scalar registers (two µops each) at the end of a long dependent chain (phase → position
/// → index → load → taps), and the core waited on it. The walk now only writes each sample's row
/// offset, fraction, level weight and gain to scratch (`put`: vector arithmetic and stores); `mix`
/// then reads the rows from addresses it loads from memory, with nothing chained from one group
/// to the next, so the loads of many groups are in flight at once.
///
/// Each lane reads one 32-byte row: samples i−1 … i+2 as (rich, lean) pairs. Four lanes' rows are
/// transposed as 64-bit pairs (cheap whole-vector shuffles), so each vector holds one tap of four
/// lanes, still paired; the cubic weights (each lane's twice) sum the taps, and two shuffles part
/// the rich and lean sums into lane order for the blend. Two lane groups, (0, 1, 4, 5) and
/// (2, 3, 6, 7), make those shuffles in-lane.
struct TableSink: VoiceSink {
    let base: UnsafeMutablePointer<Float>
    /// Hz to the `blend` scale (maxHarmonics / Nyquist).
    let scale: Float
    /// The first pass's output, per sample: the row's byte offset from `base`, the fraction past
    /// its second point, the level weight and the gain.
    let rows: UnsafeMutablePointer<UInt64>, fractions: UnsafeMutablePointer<Float>
    let weights: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>
    var level: Int
    var weight: Float
    /// Byte offset of the current level's pairs from `base`.
    var levelOffset: UInt64
    /// Points in the current level's table, as the phase's scale and as the index mask (size − 1):
    /// made once per level, not converted and checked again in every group.
    var points: Double, mask: UInt64
    /// The quarter octave of the last choice (empty until the first).
    var band: (level: Int, low: Float, high: Float, inverseSpan: Float) = (0, 0, 0, 0)

    init(base: UnsafeMutablePointer<Float>, scale: Float, scratch: VoiceScratch, level: Int, weight: Float) {
        self.base = base; self.scale = scale; self.level = level; self.weight = weight
        rows = scratch.rows; fractions = scratch.phase; weights = scratch.weight; gains = scratch.gain
        points = 0; mask = 0; levelOffset = 0
        select(level)
    }

    /// Points at a level's table.
    @inline(__always) mutating func select(_ level: Int) {
        let layout = BandLimitedTables.layout
        let size = layout[2 * level]
        points = Double(size); mask = UInt64(truncatingIfNeeded: size &- 1)
        levelOffset = UInt64(truncatingIfNeeded: 4 &* layout[2 * level + 1])
    }

    /// The cubic's sum for four lanes' rows (a, b, c, d), their pairs kept apart: (rich, lean) of
    /// lane a, of b, of c, of d. `w` holds the taps' weights, each lane's twice.
    @inline(__always) static func taps(_ a: SIMD4<UInt64>, _ b: SIMD4<UInt64>, _ c: SIMD4<UInt64>, _ d: SIMD4<UInt64>,
                                       _ w: (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>)) -> SIMD8<Float> {
        let ab0 = SIMD4<UInt64>(a[0], b[0], a[2], b[2]), ab1 = SIMD4<UInt64>(a[1], b[1], a[3], b[3])
        let cd0 = SIMD4<UInt64>(c[0], d[0], c[2], d[2]), cd1 = SIMD4<UInt64>(c[1], d[1], c[3], d[3])
        let t0 = unsafeBitCast(SIMD4<UInt64>(lowHalf: ab0.lowHalf, highHalf: cd0.lowHalf), to: SIMD8<Float>.self)
        let t1 = unsafeBitCast(SIMD4<UInt64>(lowHalf: ab1.lowHalf, highHalf: cd1.lowHalf), to: SIMD8<Float>.self)
        let t2 = unsafeBitCast(SIMD4<UInt64>(lowHalf: ab0.highHalf, highHalf: cd0.highHalf), to: SIMD8<Float>.self)
        let t3 = unsafeBitCast(SIMD4<UInt64>(lowHalf: ab1.highHalf, highHalf: cd1.highHalf), to: SIMD8<Float>.self)
        return (t0 * w.0 + t1 * w.1) + (t2 * w.2 + t3 * w.3)
    }

    static var groups: Bool { true }
    @inline(__always) mutating func choose(frequency: Double) {
        let r = Float(frequency) * scale * 1.01
        if !(r >= band.low && r < band.high) {
            // Left the current quarter octave (or the first choice in this block): find the level.
            band = BandLimitedTables.band(scaledFrequency: r)
            if band.level != level {
                level = band.level
                select(level)
            }
        }
        weight = BandLimitedTables.weight(r, in: band)
    }

    /// The first pass: where frames n ..< n + m read, and how loud.
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains g: SIMD8<Float>) {
        let (index, t) = BandLimitedTables.positions(phases: phases, points: points, mask: mask)
        let offsets = SIMD8<UInt64>(repeating: levelOffset) &+ (index &<< 3)
        if m == 8 {
            UnsafeMutableRawPointer(rows + n).storeBytes(of: offsets, as: SIMD8<UInt64>.self)
            UnsafeMutableRawPointer(fractions + n).storeBytes(of: t, as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(weights + n).storeBytes(of: SIMD8<Float>(repeating: weight), as: SIMD8<Float>.self)
            UnsafeMutableRawPointer(gains + n).storeBytes(of: g, as: SIMD8<Float>.self)
        } else {
            for i in 0..<m { rows[n + i] = offsets[i]; fractions[n + i] = t[i]; weights[n + i] = weight; gains[n + i] = g[i] }
        }
    }

    /// The second pass: frames 0 ..< count read from the tables and added to `bus`. Past `count`
    /// (to the next multiple of 8) the scratch holds earlier, still valid offsets, whose values are
    /// computed and dropped.
    ///
    /// Each group's eight rows are loaded one group ahead, before the group before them is summed:
    /// loaded in their own group, the cubic and the transposes waited on a chain of two loads (the
    /// offset, then the row) with nothing else of the group to do, and a group's ~60 vector
    /// operations do not fit the scheduler beside the next group's. The last group loads its own
    /// rows again instead of reading past the block.
    @inline(__always) func mix(count: Int, into bus: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        let table = UnsafeRawPointer(base)
        @inline(__always) func row(_ i: Int) -> SIMD4<UInt64> {
            table.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: rows[i]), as: SIMD4<UInt64>.self)
        }
        let last = (count &- 1) & ~7
        var r0 = row(0), r1 = row(1), r2 = row(2), r3 = row(3), r4 = row(4), r5 = row(5), r6 = row(6), r7 = row(7)
        var n = 0
        while n < count {
            let t = UnsafeRawPointer(fractions + n).loadUnaligned(as: SIMD8<Float>.self)
            // Lanes by constant index throughout: a loop over lanes would go through memory.
            let tA = SIMD8<Float>(t[0], t[0], t[1], t[1], t[4], t[4], t[5], t[5])
            let tB = SIMD8<Float>(t[2], t[2], t[3], t[3], t[6], t[6], t[7], t[7])
            let x = TableSink.taps(r0, r1, r4, r5, BandLimitedTables.cubicWeights(tA))
            let y = TableSink.taps(r2, r3, r6, r7, BandLimitedTables.cubicWeights(tB))
            let next = Swift.min(n &+ 8, last)
            r0 = row(next); r1 = row(next &+ 1); r2 = row(next &+ 2); r3 = row(next &+ 3)
            r4 = row(next &+ 4); r5 = row(next &+ 5); r6 = row(next &+ 6); r7 = row(next &+ 7)
            // (lanes 0, 1, 4, 5 | 2, 3, 6, 7) as (rich, lean) pairs: parted into lanes 0 … 7 in order.
            let rich = SIMD8<Float>(x[0], x[2], y[0], y[2], x[4], x[6], y[4], y[6])
            let lean = SIMD8<Float>(x[1], x[3], y[1], y[3], x[5], x[7], y[5], y[7])
            let w = UnsafeRawPointer(weights + n).loadUnaligned(as: SIMD8<Float>.self)
            let g = UnsafeRawPointer(gains + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes((rich + w * (lean - rich)) * g, into: bus, at: n, count: Swift.min(8, count &- n))
            n &+= 8
        }
    }
}
