/// Mip-mapped single-cycle tables for the band-limited waves, one table per quarter octave of harmonics.
///
/// Additive synthesis of every partial below Nyquist costs hundreds of sines per sample at low
/// notes; a table per quarter octave does the same in one interpolated lookup. Level L holds partials
/// 1…⌊512/2^(L/4)⌋; a sample at frequency f reads the first level whose top partial is
/// below the Nyquist frequency, so the choice follows the *instantaneous* frequency.
///
/// How clean: reading a table is interpolation, and its error lands between the harmonics. With
/// 4096 points and linear interpolation that error summed to −64 dB re the fundamental at 20 Hz
/// (−74 dB at 100 Hz), audible under a low drone; 8192 points read with 4-point cubic Lagrange
/// interpolation bring it to about −109 dB at 20 Hz and far lower above, under the 16-bit floor of
/// −96 dB everywhere from 20 Hz to 20 kHz (AliasingFloorTests measures it; a Catmull-Rom cubic
/// only just reached −96 dB). The cubic is needed only where a level is rich in partials; the
/// leaner levels (`linearFromLevel`) stay linear, which at 8192 points is already clean enough.
public final class BandLimitedTables: @unchecked Sendable {
    public static let tableSize = 8192
    public static let maxHarmonics = 512
    /// Levels every quarter octave from 512 partials down to 1: right after a switch a wave keeps
    /// at least 84 % (2^−¼) of the partials Nyquist allows, instead of 50 % with octave levels.
    /// One more, silent level (0 partials) takes fundamentals at or above Nyquist: a note
    /// transposed that high fades out instead of folding back as an alias.
    public static let levelsPerOctave = 4
    public static let levelCount = 9 * levelsPerOctave + 2

    /// Pair tables, [wave][level][entry][2]: entry (L, e) holds level L's sample e − 1 next to
    /// level L+1's (the last level is paired with itself). The render loop blends two neighbouring
    /// levels at the same place, so the eight values its cubic reads (samples j − 1 … j + 2 of both
    /// levels) sit in 32 consecutive bytes starting at entry j: one load. Entry 0 is the guard
    /// sample before the cycle (sample N − 1) and the last three repeat samples 0, 1, 2, so the read
    /// at any index `position` returns (0…N) stays inside the table.
    let storage: UnsafeMutablePointer<Float>
    static let stride = tableSize + 4
    static let pairStride = 2 * stride
    static let waveStride = pairStride * levelCount

    public init() {
        let waves = 3
        storage = .allocate(capacity: waves * Self.waveStride)
        let n = Self.tableSize
        // One cycle of sine at table resolution: sin(2π k j / n) = sineTable[(k·j) mod n], exact and cheap.
        // Raw buffers, not arrays: this runs once per process (millions of steps), and unchecked
        // pointer steps keep it short even in a debug build.
        let sineTable = UnsafeMutablePointer<Double>.allocate(capacity: n)
        let acc = UnsafeMutablePointer<Double>.allocate(capacity: n)
        let plain = UnsafeMutablePointer<Float>.allocate(capacity: Self.levelCount * Self.stride)
        defer { sineTable.deallocate(); acc.deallocate(); plain.deallocate() }
        for j in 0..<n { sineTable[j] = _sin(2 * .pi * Double(j) / Double(n)) }
        let mask = n - 1
        for (w, type) in [WaveType.bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth].enumerated() {
            let spectrum = BandLimitedSpectrum(type)!
            acc.update(repeating: 0, count: n)
            // Add partials upwards and snapshot each level as its count is reached (fewest partials first).
            var k = 0
            for level in (0..<Self.levelCount).reversed() {
                let harmonics = Self.harmonics(level: level)
                while k < harmonics {
                    k += 1
                    let a = spectrum.amplitude(harmonic: k)
                    if a == 0 { continue }
                    var index = 0
                    var j = 0
                    while j < n {
                        acc[j] += a * sineTable[index]
                        index = (index &+ k) & mask
                        j &+= 1
                    }
                }
                let row = plain + level * Self.stride
                row[0] = Float(acc[n - 1])
                for j in 0..<n { row[1 + j] = Float(acc[j]) }
                for j in 0..<3 { row[1 + n + j] = Float(acc[j]) }
            }
            for level in 0..<Self.levelCount {
                let rich = plain + level * Self.stride, lean = plain + min(level + 1, Self.levelCount - 1) * Self.stride
                let pairs = storage + w * Self.waveStride + level * Self.pairStride
                for j in 0..<Self.stride {
                    pairs[2 * j] = rich[j]
                    pairs[2 * j + 1] = lean[j]
                }
            }
        }
    }

    deinit { storage.deallocate() }

    /// Partials kept at a given level: ⌊512 / 2^(level/4)⌋.
    public static func harmonics(level: Int) -> Int {
        Int((Double(maxHarmonics) / _exp2(Double(level) / Double(levelsPerOctave))).rounded(.down))
    }

    /// The level for a sample at `frequency` Hz: the top partial stays strictly below `nyquist`.
    @inline(__always) public static func level(frequency: Double, nyquistReciprocal: Double) -> Int {
        // r = f·maxHarmonics/nyquist; need 2^(L/4) > r, i.e. L = ⌊4·log2 r⌋ + 1. log2 r comes from the
        // exponent bits plus three comparisons of the mantissa against 2^¼, 2^½, 2^¾.
        let r = abs(frequency) * Double(maxHarmonics) * nyquistReciprocal
        let bits = r.bitPattern
        let e = Int((bits >> 52) & 0x7FF) - 1023
        let m = Double(bitPattern: (bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000)
        var q = 4 * e
        q += m >= 1.189_207_115_002_721 ? 1 : 0
        q += m >= 1.414_213_562_373_095 ? 1 : 0
        q += m >= 1.681_792_830_507_429 ? 1 : 0
        return min(levelCount - 1, max(0, q + 1))
    }

    /// The level for `frequency` and a weight toward the next level (fewer partials), rising from
    /// 0 to 1 across each quarter octave: blending the two makes a sweep lose its top partial
    /// gradually instead of in one sample, which would click.
    @inline(__always) public static func blend(frequency: Double, nyquistReciprocal: Double) -> (level: Int, weight: Float) {
        let r = abs(frequency) * Double(maxHarmonics) * nyquistReciprocal
        let bits = r.bitPattern
        let e = Int((bits >> 52) & 0x7FF) - 1023
        let m = Double(bitPattern: (bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000)
        let t1 = 1.189_207_115_002_721, t2 = 1.414_213_562_373_095, t3 = 1.681_792_830_507_429
        let a1 = m >= t1, a2 = m >= t2, a3 = m >= t3
        let q = 4 * e + (a1 ? 1 : 0) + (a2 ? 1 : 0) + (a3 ? 1 : 0)
        let lo = a3 ? t3 : (a2 ? t2 : (a1 ? t1 : 1))
        let hi = a3 ? 2 : (a2 ? t3 : (a1 ? t2 : t1))
        let level = q + 1
        if level < 0 { return (0, 0) }
        if level >= levelCount - 1 { return (levelCount - 1, 0) }
        return (level, Float((m - lo) / (hi - lo)))
    }

    /// `blend` for the render loop, in Float: r = f·maxHarmonics/nyquist is given directly.
    /// The table test holds it to the Double version.
    @inline(__always) static func blend(scaledFrequency r: Float) -> (level: Int, weight: Float) {
        let bits = r.bitPattern
        let e = Int((bits >> 23) & 0xFF) - 127
        let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
        let t1: Float = 1.189_207_1, t2: Float = 1.414_213_6, t3: Float = 1.681_792_8
        let a1 = m >= t1, a2 = m >= t2, a3 = m >= t3
        let q = 4 * e + (a1 ? 1 : 0) + (a2 ? 1 : 0) + (a3 ? 1 : 0)
        let lo: Float = a3 ? t3 : (a2 ? t2 : (a1 ? t1 : 1))
        let inverseSpan: Float = a3 ? 1 / (2 - t3) : (a2 ? 1 / (t3 - t2) : (a1 ? 1 / (t2 - t1) : 1 / (t1 - 1)))
        let level = q + 1
        let inRange = level >= 0 && level < levelCount - 1
        return (min(max(level, 0), levelCount - 1), inRange ? (m - lo) * inverseSpan : 0)
    }

    /// The table position of a phase in [0, 1): index ⌊phase·tableSize⌋ and the fraction past it.
    /// No float→int conversion (Swift checks those): adding 1.5·2⁵² to x − ½ leaves round(x − ½)
    /// in the low bits. x is exact (tableSize is a power of two); at a tie the index can be one low,
    /// which the interpolation absorbs (its fraction is then 1). The result is at most tableSize,
    /// whose four points the guard samples complete, and clamped there whatever the phase.
    @inline(__always) static func position(phase: Double) -> (index: Int, fraction: Float) {
        let x = phase * Double(tableSize)
        let magic = 6_755_399_441_055_744.0
        let rounded = (x - 0.5) + magic
        let i = min(UInt32(truncatingIfNeeded: rounded.bitPattern), UInt32(tableSize))
        return (Int(i), Float(x - (rounded - magic)))
    }

    /// First table of a band-limited wave type.
    @inline(__always) static func waveBase(_ storage: UnsafeMutablePointer<Float>, _ type: WaveType) -> UnsafeMutablePointer<Float> {
        switch type {
        case .bandLimitedSquare: return storage
        case .bandLimitedTriangle: return storage + waveStride
        default: return storage + 2 * waveStride
        }
    }

    /// Level L's sample at table index j (for tests and tools; the voice reads pairs directly).
    public func value(_ type: WaveType, level: Int, index j: Int) -> Float {
        Self.waveBase(storage, type)[level * Self.pairStride + 2 * (j + 1)]
    }

    /// The first level read by linear interpolation: from here on (at most 64 partials in 8192
    /// points, fundamentals above about 370 Hz at 48 kHz) its error stays under −100 dB re the
    /// fundamental, and it costs half the cubic that the richer levels below need.
    static let linearFromLevel = 12

    /// The 4-point cubic Lagrange weights of samples j − 1, j, j + 1, j + 2 for a point a fraction
    /// `t` past sample j: the cubic through those four points, exact for any cubic.
    @inline(__always) static func cubicWeights(_ t: Float) -> SIMD4<Float> {
        let a = t + 1, b = t - 1, c = t - 2
        let tb = t * b, ac = a * c
        return SIMD4<Float>(-tb * c * (1 / 6.0), ac * b * 0.5, -ac * t * 0.5, a * tb * (1 / 6.0))
    }

    /// The shared tables, built on first use (about 10 ms in a release build), never on the audio thread.
    public static let shared = BandLimitedTables()
}
