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
/// The weight is 0 through most of each level's band, so `mix` reads the level alone when no group
/// of the block blends (`mixOneLevel`), and both levels only when one does (`mixBlended`). A group
/// whose weight is 0 gives the same bits either way, so where a block boundary falls changes nothing.
struct TableSink: VoiceSink {
    /// The wave's pair tables, and its single tables (`BandLimitedTables.storage`).
    let base: UnsafeMutablePointer<Float>, singles: UnsafeMutablePointer<Float>
    /// Hz to the `blend` scale (maxHarmonics / Nyquist).
    let scale: Float
    /// The first pass's output, per sample: the row's byte offset among the singles (the pairs' is
    /// twice it), the fraction past its second point, the level weight and the gain.
    let rows: UnsafeMutablePointer<UInt64>, fractions: UnsafeMutablePointer<Float>
    let weights: UnsafeMutablePointer<Float>, gains: UnsafeMutablePointer<Float>
    var level: Int
    var weight: Float
    /// Whether any group of this block was given a weight other than 0.
    var blending = false
    /// Byte offset of the current level's singles from `singles` (half its pairs' from `base`).
    var levelOffset: UInt64
    /// Points in the current level's table, as the phase's scale and as the index mask (size − 1):
    /// made once per level, not converted and checked again in every group.
    var points: Double, mask: UInt64
    /// The quarter octave of the last choice; at first, the current level's.
    var band: BandLimitedTables.Band

    /// (points, offset) per level (`TableGeometry.levels`).
    let layout: UnsafeMutablePointer<Int>

    init(_ wave: WaveType, tables: TableGeometry, scale: Float, scratch: VoiceScratch, level: Int, weight: Float) {
        base = tables.waveBase(wave); singles = base + tables.pairFloats; layout = tables.levels
        self.scale = scale; self.level = level; self.weight = weight
        rows = scratch.rows; fractions = scratch.phase; weights = scratch.weight; gains = scratch.gain
        points = 0; mask = 0; levelOffset = 0; band = tables.bands[level]
        select(level)
    }

    /// Points at a level's table.
    @inline(__always) mutating func select(_ level: Int) {
        let size = layout[2 * level]
        points = Double(size); mask = UInt64(truncatingIfNeeded: size &- 1)
        levelOffset = UInt64(truncatingIfNeeded: 2 &* layout[2 * level + 1])
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
            // Left the quarter octave (at a block's first choice, the level's own band): find the level.
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
        let offsets = SIMD8<UInt64>(repeating: levelOffset) &+ (index &<< 2)
        blending = blending || weight != 0
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
    @inline(__always) func mix(count: Int, into bus: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        if blending { mixBlended(count: count, into: bus) } else { mixOneLevel(count: count, into: bus) }
    }

    /// Both levels, blended. Each lane reads one 32-byte row: samples i−1 … i+2 as (rich, lean)
    /// pairs. Four lanes' rows are transposed as 64-bit pairs (cheap whole-vector shuffles), so each
    /// vector holds one tap of four lanes, still paired; the cubic weights (each lane's twice) sum the
    /// taps, and two shuffles part the rich and lean sums into lane order for the blend. Two lane
    /// groups, (0, 1, 4, 5) and (2, 3, 6, 7), make those shuffles in-lane.
    ///
    /// Each group's eight rows are loaded one group ahead, before the group before them is summed:
    /// loaded in their own group, the cubic and the transposes waited on a chain of two loads (the
    /// offset, then the row) with nothing else of the group to do, and a group's ~60 vector
    /// operations do not fit the scheduler beside the next group's. The last group loads its own
    /// rows again instead of reading past the block.
    @inline(__always) func mixBlended(count: Int, into bus: UnsafeMutablePointer<Float>) {
        let table = UnsafeRawPointer(base)
        @inline(__always) func row(_ i: Int) -> SIMD4<UInt64> {
            table.loadUnaligned(fromByteOffset: 2 &* Int(truncatingIfNeeded: rows[i]), as: SIMD4<UInt64>.self)
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

    /// The level alone: each lane reads one 16-byte row, samples i−1 … i+2. The rows of lanes
    /// (0 | 1), (2 | 3), (4 | 5), (6 | 7) share a vector; a 4×4 transpose within the halves leaves
    /// each tap in lane order (0, 2, 4, 6 | 1, 3, 5, 7), so the fractions go into that order and the
    /// sums come back out of it (LLVM folds both into the transpose: 16 shuffles and 25 arithmetic
    /// operations per 8 samples, against the pairs' 28 and 36). The cubic is `mixBlended`'s sum in the
    /// same order, so a group it would have read at weight 0 (rich + 0·(lean − rich) = rich, and a
    /// ±0 added to a bus that starts at +0) comes out the same bits.
    @inline(__always) func mixOneLevel(count: Int, into bus: UnsafeMutablePointer<Float>) {
        let table = UnsafeRawPointer(singles)
        @inline(__always) func row(_ i: Int) -> SIMD4<Float> {
            table.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: rows[i]), as: SIMD4<Float>.self)
        }
        @inline(__always) func two(_ i: Int) -> SIMD8<Float> { SIMD8(lowHalf: row(i), highHalf: row(i &+ 1)) }
        @inline(__always) func pairs(_ v: SIMD8<Float>) -> SIMD4<UInt64> { unsafeBitCast(v, to: SIMD4<UInt64>.self) }
        let last = (count &- 1) & ~7
        var z0 = two(0), z1 = two(2), z2 = two(4), z3 = two(6)
        var n = 0
        while n < count {
            let inOrder = UnsafeRawPointer(fractions + n).loadUnaligned(as: SIMD8<Float>.self)
            let t = SIMD8<Float>(inOrder[0], inOrder[2], inOrder[4], inOrder[6], inOrder[1], inOrder[3], inOrder[5], inOrder[7])
            let w = BandLimitedTables.cubicWeights(t)
            // Taps 0, 1 (p, u) and 2, 3 (q, v) of lanes (0, 2 | 1, 3) and (4, 6 | 5, 7), interleaved.
            let p = pairs(SIMD8<Float>(z0[0], z1[0], z0[1], z1[1], z0[4], z1[4], z0[5], z1[5]))
            let q = pairs(SIMD8<Float>(z0[2], z1[2], z0[3], z1[3], z0[6], z1[6], z0[7], z1[7]))
            let u = pairs(SIMD8<Float>(z2[0], z3[0], z2[1], z3[1], z2[4], z3[4], z2[5], z3[5]))
            let v = pairs(SIMD8<Float>(z2[2], z3[2], z2[3], z3[3], z2[6], z3[6], z2[7], z3[7]))
            let next = Swift.min(n &+ 8, last)
            z0 = two(next); z1 = two(next &+ 2); z2 = two(next &+ 4); z3 = two(next &+ 6)
            let t0 = unsafeBitCast(SIMD4<UInt64>(p[0], u[0], p[2], u[2]), to: SIMD8<Float>.self)
            let t1 = unsafeBitCast(SIMD4<UInt64>(p[1], u[1], p[3], u[3]), to: SIMD8<Float>.self)
            let t2 = unsafeBitCast(SIMD4<UInt64>(q[0], v[0], q[2], v[2]), to: SIMD8<Float>.self)
            let t3 = unsafeBitCast(SIMD4<UInt64>(q[1], v[1], q[3], v[3]), to: SIMD8<Float>.self)
            let x = (t0 * w.0 + t1 * w.1) + (t2 * w.2 + t3 * w.3)
            let sum = SIMD8<Float>(x[0], x[4], x[1], x[5], x[2], x[6], x[3], x[7])
            let g = UnsafeRawPointer(gains + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes(sum * g, into: bus, at: n, count: Swift.min(8, count &- n))
            n &+= 8
        }
    }
}
