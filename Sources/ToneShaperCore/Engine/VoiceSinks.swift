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
@inline(__always) func mix(_ values: SIMD8<Float>, into bus: UnsafeMutablePointer<Float>, at n: Int, count m: Int) {
    if m == 8 {
        let raw = UnsafeMutableRawPointer(bus + n)
        raw.storeBytes(of: raw.loadUnaligned(as: SIMD8<Float>.self) + values, as: SIMD8<Float>.self)
    } else {
        for i in 0..<m { bus[n + i] += values[i] }
    }
}

/// The sine, straight into the bus: eight polynomial sines at once.
struct SineSink: VoiceSink {
    let bus: UnsafeMutablePointer<Float>
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>) {
        // sin 2πφ needs φ only up to a whole number: the nearest one is the cheapest to take away.
        let magic = roundingMagic
        let centred = phases - ((phases + magic) - magic)
        mix(fastSin2Pi(centred: SIMD8<Float>(centred)) * gains, into: bus, at: n, count: m)
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

/// `ScratchSink` plus the phase in Double, for the Fourier series whose high partials need it.
struct PreciseScratchSink: VoiceSink {
    let phase: UnsafeMutablePointer<Float>, precisePhase: UnsafeMutablePointer<Double>, gain: UnsafeMutablePointer<Float>
    init(_ scratch: VoiceScratch) { phase = scratch.phase; precisePhase = scratch.precisePhase; gain = scratch.gain }
    static var groups: Bool { false }
    @inline(__always) mutating func choose(frequency: Double) {}
    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>) {
        let wrapped = wrappedPhases(phases)
        for i in 0..<m { precisePhase[n + i] = wrapped[i]; phase[n + i] = Float(wrapped[i]); gain[n + i] = gains[i] }
    }
}

/// A band-limited table read straight into the bus: two neighbouring levels at one shared place,
/// blended by the level weight, read with a 4-point cubic (under −96 dB: see `BandLimitedTables`).
/// The level and weight are chosen every 8 samples of absolute time (so block boundaries change
/// nothing), with 1 % headroom for the frequency to rise before the next choice.
struct TableSink: VoiceSink {
    let base: UnsafeMutablePointer<Float>
    /// Hz to the `blend` scale (maxHarmonics / Nyquist).
    let scale: Float
    let bus: UnsafeMutablePointer<Float>
    var level: Int
    var weight: Float
    var pairs: UnsafeRawPointer
    /// Points in the current level's table.
    var size: Int
    /// The quarter octave of the last choice (empty until the first).
    var band: (level: Int, low: Float, high: Float, inverseSpan: Float) = (0, 0, 0, 0)
    /// (1 − weight, weight) four times: blends a (rich, lean) pair per tap.
    var levelWeights: SIMD8<Float>

    init(base: UnsafeMutablePointer<Float>, scale: Float, bus: UnsafeMutablePointer<Float>, level: Int, weight: Float) {
        self.base = base; self.scale = scale; self.bus = bus; self.level = level; self.weight = weight
        size = 0; pairs = UnsafeRawPointer(base)
        levelWeights = TableSink.levelWeights(weight)
        select(level)
    }

    /// Points at a level's table.
    @inline(__always) mutating func select(_ level: Int) {
        let layout = BandLimitedTables.layout
        size = layout[2 * level]
        pairs = UnsafeRawPointer(base + layout[2 * level + 1])
    }

    @inline(__always) static func levelWeights(_ weight: Float) -> SIMD8<Float> {
        let w = SIMD2<Float>(1 - weight, weight)
        return SIMD8<Float>(lowHalf: SIMD4(lowHalf: w, highHalf: w), highHalf: SIMD4(lowHalf: w, highHalf: w))
    }

    /// Samples i−1 … i+2, the two levels blended.
    @inline(__always) func taps(_ i: UInt64) -> SIMD4<Float> {
        let q = pairs.loadUnaligned(fromByteOffset: 8 * Int(truncatingIfNeeded: i), as: SIMD8<Float>.self) * levelWeights
        return q.evenHalf + q.oddHalf
    }

    /// Four lanes' taps (a 4 × 4 block, transposed so each vector holds one tap of every lane)
    /// against their cubic weights.
    @inline(__always) func quad(_ a: SIMD4<Float>, _ b: SIMD4<Float>, _ c: SIMD4<Float>, _ d: SIMD4<Float>,
                                _ w0: SIMD4<Float>, _ w1: SIMD4<Float>, _ w2: SIMD4<Float>, _ w3: SIMD4<Float>) -> SIMD4<Float> {
        let ab0 = SIMD4<Float>(a.x, b.x, a.y, b.y), ab1 = SIMD4<Float>(a.z, b.z, a.w, b.w)
        let cd0 = SIMD4<Float>(c.x, d.x, c.y, d.y), cd1 = SIMD4<Float>(c.z, d.z, c.w, d.w)
        let t0 = SIMD4<Float>(lowHalf: ab0.lowHalf, highHalf: cd0.lowHalf)
        let t1 = SIMD4<Float>(lowHalf: ab0.highHalf, highHalf: cd0.highHalf)
        let t2 = SIMD4<Float>(lowHalf: ab1.lowHalf, highHalf: cd1.lowHalf)
        let t3 = SIMD4<Float>(lowHalf: ab1.highHalf, highHalf: cd1.highHalf)
        return (t0 * w0 + t1 * w1) + (t2 * w2 + t3 * w3)
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
        levelWeights = TableSink.levelWeights(weight)
    }

    @inline(__always) mutating func put(_ n: Int, _ m: Int, phases: SIMD8<Double>, gains: SIMD8<Float>) {
        let (index, t) = BandLimitedTables.positions(phases: phases, size: size)
        // Per lane, samples i−1 … i+2 of both levels, (rich, lean) pairs, in one 32-byte load,
        // blended into four taps; the taps gathered across lanes meet the lanes' cubic weights.
        // Lanes by constant index throughout: a loop over lanes would go through memory.
        let w = BandLimitedTables.cubicWeights(t)
        let low = quad(taps(index[0]), taps(index[1]), taps(index[2]), taps(index[3]),
                       w.0.lowHalf, w.1.lowHalf, w.2.lowHalf, w.3.lowHalf)
        let high = quad(taps(index[4]), taps(index[5]), taps(index[6]), taps(index[7]),
                        w.0.highHalf, w.1.highHalf, w.2.highHalf, w.3.highHalf)
        let values = SIMD8<Float>(lowHalf: low, highHalf: high)
        mix(values * gains, into: bus, at: n, count: m)
    }
}
