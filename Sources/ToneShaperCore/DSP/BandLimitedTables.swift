#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import ToneShaperRealtime

/// Mip-mapped single-cycle tables for the band-limited waves, one table per quarter octave of harmonics.
///
/// Additive synthesis of every partial below Nyquist costs hundreds of sines per sample at low
/// notes; a table per quarter octave does the same in one interpolated lookup. Level L holds partials
/// 1…⌊512/2^(L/4)⌋; a sample at frequency f reads the first level whose top partial is
/// below the Nyquist frequency, so the choice follows the *instantaneous* frequency.
///
/// How clean: reading a table is interpolation, and its error lands between the harmonics. With
/// 4096 points and linear interpolation that error summed to −64 dB re the fundamental at 20 Hz
/// (−74 dB at 100 Hz), audible under a low drone. 4-point cubic Lagrange interpolation with 24 to
/// 64 points per period of the top partial (`sizes`) keeps it at −112 dB or below everywhere from
/// 20 Hz to 20 kHz (AliasingFloorTests holds it to −110 dB). The error falls as the fourth power of
/// the points: 16 points per top partial on the richest levels had left −100.5 dB at 20 Hz.
///
/// How big: each level has just those points (a power of two), so a lean level is small. A voice
/// moves a similar number of points per sample at any pitch, and all the levels of a wave take
/// 1.0 MB instead of 5 MB at a uniform 16384 points: the tables stay in the cache.
public final class BandLimitedTables: @unchecked Sendable {
    /// Points of the richest level (512 partials).
    public static let tableSize = 16384
    public static let maxHarmonics = 512
    /// Points per period of a level's top partial, at least.
    static let pointsPerTopPartial = 24
    /// Levels every quarter octave from 512 partials down to 1: right after a switch a wave keeps
    /// at least 84 % (2^−¼) of the partials Nyquist allows, instead of 50 % with octave levels.
    /// One more, silent level (0 partials) takes fundamentals at or above Nyquist: a note
    /// transposed that high fades out instead of folding back as an alias.
    public static let levelsPerOctave = 4
    public static let levelCount = 9 * levelsPerOctave + 2

    /// Pair tables, [wave][level][entry][2]: entry (L, e) holds level L's sample e − 1 next to
    /// level L+1's at the same place (the last level is paired with itself), both at level L's
    /// resolution. The render loop blends two neighbouring levels at the same place, so the eight
    /// values its cubic reads (samples j − 1 … j + 2 of both levels) sit in 32 consecutive bytes
    /// starting at entry j: one load. Entry 0 is the guard sample before the cycle (sample N − 1)
    /// and the last three repeat samples 0, 1, 2, so a read at any index 0 ..< N stays inside.
    ///
    /// After each wave's pairs, its single tables, [level][entry]: level L's sample e − 1 alone, same
    /// guard and repeats, so samples j − 1 … j + 2 sit in 16 bytes at entry j. Read when no blend is
    /// under way (`TableSink`): half the bytes and none of the pairs' shuffles. Level L's singles
    /// start offsets[L] / 2 floats after the pairs' end, so a row's byte offset among the singles is
    /// exactly half its pair's: the walk writes one offset and each read scales it (1 or 2) in its address.
    let storage: UnsafeMutablePointer<Float>
    /// Points of each level: the interpolation error relative to the fundamental grows as the top
    /// partial gets louder (1/K for a saw of K partials), so leaner levels get more points per
    /// partial — 24 from 256 partials up, 32 down to 17, 64 below.
    static let sizes: [Int] = (0..<levelCount).map { level in
        let k = harmonics(level: level)
        let perPartial = k >= 256 ? pointsPerTopPartial : (k > 16 ? 32 : 64)
        var n = 64
        while n < perPartial * k { n *= 2 }
        return min(n, tableSize)
    }
    /// Where each level's pairs start, in floats from its wave's first table.
    static let offsets: [Int] = sizes.reduce(into: [0]) { $0.append($0.last! + 2 * ($1 + 4)) }
    /// Floats of one wave's pairs; its singles follow them (half as many floats).
    static let pairFloats = offsets.last!
    static let waveStride = pairFloats + pairFloats / 2
    /// (size, offset) per level as raw memory, for the render loop (no array on the audio thread).
    nonisolated(unsafe) static let layout: UnsafeMutablePointer<Int> = {  // written once, read only
        let p = UnsafeMutablePointer<Int>.allocate(capacity: 2 * levelCount)
        for level in 0..<levelCount { p[2 * level] = sizes[level]; p[2 * level + 1] = offsets[level] }
        return p
    }()

    /// The wave types with tables, in storage order.
    static let waves: [WaveType] = [.bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth]

    /// Bit w set: wave `waves[w]`'s tables are built. Written under the mutex, only ever growing;
    /// a builder's release pairs with a reader's acquire, so a reader that sees the bit sees the table.
    private let builtWaves = Atomic<Int>(0)
    /// Held while a wave is built, so two engines made at once (or the background builder and an
    /// engine) build each wave once and the second waits for it.
    private let building = Mutex<Void>(())

    /// Room for every wave's tables, built by `build`: calloc'd, so a wave never built costs neither
    /// its arithmetic (the three took ≈3.6 ms of CPU, the sawtooth two thirds of it) nor its ~260
    /// page faults: a render of sines builds none.
    public init() {
        _ = Self.layout; _ = Self.levelBands  // made here, before any engine reads them
        storage = calloc(Self.waves.count * Self.waveStride, MemoryLayout<Float>.stride)!.assumingMemoryBound(to: Float.self)
    }

    /// Whether `wave`'s tables are ready (false for a wave without tables).
    public func isBuilt(_ wave: WaveType) -> Bool {
        guard let w = Self.waves.firstIndex(of: wave) else { return false }
        return builtWaves.load(ordering: .acquiring) & (1 << w) != 0
    }

    /// Builds the tables of the band-limited waves among `types` that are not built yet (others are
    /// ignored); returns when they are all ready. Never on the audio thread: a wave takes milliseconds.
    public func build(_ types: some Sequence<WaveType>) {
        var wanted = 0
        for type in types { if let w = Self.waves.firstIndex(of: type) { wanted |= 1 << w } }
        guard builtWaves.load(ordering: .acquiring) & wanted != wanted else { return }
        building.withLock { _ in
            let missing = wanted & ~builtWaves.load(ordering: .acquiring)
            guard missing != 0 else { return }
            Self.build(waves: missing, into: storage)
            builtWaves.bitwiseOr(missing, ordering: .releasing)
        }
    }

    /// Every wave's tables (live play, plugins, the editor: any program change may pick any wave).
    public func buildAll() { build(Self.waves) }

    /// The tables with every wave built, for tests that drive a voice without an engine.
    var everyWave: TableGeometry { buildAll(); return TableGeometry(storage) }

    /// Sums the tables of the waves whose bits are set in `selected` into their place in `storage`.
    static func build(waves selected: Int, into storage: UnsafeMutablePointer<Float>) {
        let n = Self.tableSize
        // One cycle of sine at table resolution: sin(2π k j / n) = sineTable[(k·j) mod n], exact.
        // Raw buffers, not arrays: this runs once per process, on the way to the first note.
        let sineTable = UnsafeMutablePointer<Double>.allocate(capacity: n)
        let acc = UnsafeMutablePointer<Double>.allocate(capacity: n + 32)
        // The level just summed and the one before it (one partial group fewer), at full resolution:
        // a level's pairs need both.
        var rich = UnsafeMutablePointer<Float>.allocate(capacity: n)
        var lean = UnsafeMutablePointer<Float>.allocate(capacity: n)
        defer { sineTable.deallocate(); acc.deallocate(); rich.deallocate(); lean.deallocate() }
        for j in 0..<n { sineTable[j] = _sin(2 * .pi * Double(j) / Double(n)) }
        let mask = n - 1, quarter = n / 4
        for (w, type) in Self.waves.enumerated() where selected & (1 << w) != 0 {
            let spectrum = BandLimitedSpectrum(type)!
            acc.update(repeating: 0, count: n + 32)
            // A sum of sines is odd about 0 and ½ (the second half is the first negated); with odd
            // partials only (square, triangle) each half is also even about ¼. So only the first
            // half, or quarter, is summed, and the snapshot mirrors it: a half or a quarter of the work.
            let oddOnly = type != .bandLimitedSawtooth
            let summed = oddOnly ? n / 4 : n / 2
            // Add partials upwards and snapshot each level as its count is reached (fewest partials first).
            var k = 0
            for level in (0..<Self.levelCount).reversed() {
                let harmonics = Self.harmonics(level: level)
                while k < harmonics {
                    k += 1
                    let a = spectrum.amplitude(harmonic: k)
                    if a == 0 { continue }
                    Self.addPartial(k, amplitude: a, through: summed, into: acc, sineTable: sineTable, mask: mask, quarter: quarter)
                }
                swap(&rich, &lean)
                for j in 0...summed { rich[j] = Float(acc[j]) }
                if oddOnly { for j in 1..<(n / 4) { rich[n / 2 - j] = rich[j] } }
                rich[n / 2] = 0
                for j in 1..<(n / 2) { rich[n - j] = -rich[j] }
                rich[0] = 0
                // This level with the previous round's (fewer partials) as its lean partner; the
                // last level (no partials) pairs with itself.
                Self.writePairs(w: w, level: level, rich: rich, lean: level == Self.levelCount - 1 ? rich : lean, into: storage)
            }
        }
    }

    /// acc[j] += a·sin(2π k j / n) for j = 0 … through (and up to 31 past it): 32 points at a time
    /// in four independent groups of eight lanes, each lane turned on by a fixed rotation (angle
    /// addition), re-seeded from the exact table every 16 turns so rounding cannot build up. Tens of
    /// times faster than a table read per point, which kept the first note waiting for milliseconds;
    /// four groups, because one rotation's multiply-adds wait on the last.
    @inline(__always) static func addPartial(_ k: Int, amplitude a: Double, through last: Int, into acc: UnsafeMutablePointer<Double>,
                                             sineTable: UnsafeMutablePointer<Double>, mask: Int, quarter: Int) {
        let turnSine = sineTable[(32 &* k) & mask], turnCosine = sineTable[(32 &* k &+ quarter) & mask]
        @inline(__always) func seed(_ j: Int) -> (SIMD8<Double>, SIMD8<Double>) {
            var s = SIMD8<Double>(), c = SIMD8<Double>()
            for l in 0..<8 {
                let i = (k &* (j + l)) & mask
                s[l] = sineTable[i]; c[l] = sineTable[(i &+ quarter) & mask]
            }
            return (s, c)
        }
        @inline(__always) func add(_ j: Int, _ s: SIMD8<Double>) {
            let at = UnsafeMutableRawPointer(acc + j)
            at.storeBytes(of: at.loadUnaligned(as: SIMD8<Double>.self) + a * s, as: SIMD8<Double>.self)
        }
        @inline(__always) func turn(_ s: inout SIMD8<Double>, _ c: inout SIMD8<Double>) {
            (s, c) = (s * turnCosine + c * turnSine, c * turnCosine - s * turnSine)
        }
        var j = 0
        while j <= last {
            var (s0, c0) = seed(j), (s1, c1) = seed(j + 8), (s2, c2) = seed(j + 16), (s3, c3) = seed(j + 24)
            var turns = 0
            while turns < 16 && j <= last {
                add(j, s0); add(j + 8, s1); add(j + 16, s2); add(j + 24, s3)
                turn(&s0, &c0); turn(&s1, &c1); turn(&s2, &c2); turn(&s3, &c3)
                j += 32; turns += 1
            }
        }
    }

    /// Level `level`'s pair table of wave `w`: each level at its own resolution, every
    /// (n / size)-th point of the full cycles `rich` (the level) and `lean` (the next); and the
    /// level's single table, `rich` alone.
    static func writePairs(w: Int, level: Int, rich: UnsafeMutablePointer<Float>, lean: UnsafeMutablePointer<Float>,
                           into storage: UnsafeMutablePointer<Float>) {
        let size = sizes[level], every = tableSize / size
        let pairs = storage + w * waveStride + offsets[level]
        let singles = storage + w * waveStride + pairFloats + offsets[level] / 2
        for e in 0..<(size + 4) {
            let j = ((e &- 1 &+ size) & (size - 1)) &* every  // size is a power of two
            pairs[2 * e] = rich[j]
            pairs[2 * e + 1] = lean[j]
            singles[e] = rich[j]
        }
    }

    deinit { free(storage) }

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

    /// The part of each quarter-octave band (in r = f·maxHarmonics/nyquist, from its top down) across
    /// which a level is blended toward the next. Blending makes a sweep lose its top partials
    /// gradually instead of in one sample (a click), but the level alone is alias-free anywhere in
    /// its band, so below this part the weight is exactly 0 and the render reads one level, not two
    /// (`TableSink`). A quarter of the band in r is 4 % in frequency (0.7 semitone): a sweep of an
    /// octave in a tenth of a second still takes ≈ 280 samples at 48 kHz to cross it.
    static let blendedPart = 0.25

    /// The level for `frequency` and a weight toward the next level (fewer partials): 0 through
    /// most of each quarter octave, rising to 1 across its top `blendedPart` (in r), so that at the
    /// band's top the blend has become the next level: a sweep loses its top partial gradually
    /// instead of in one sample, which would click.
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
        let start = hi - blendedPart * (hi - lo)
        return (level, m < start ? 0 : Float((m - start) / (hi - start)))
    }

    /// `blend` for the render loop, in Float: r = f·maxHarmonics/nyquist is given directly.
    /// The table test holds it to the Double version.
    @inline(__always) static func blend(scaledFrequency r: Float) -> (level: Int, weight: Float) {
        let b = band(scaledFrequency: r)
        return (b.level, weight(r, in: b))
    }

    /// The band of r = f·maxHarmonics/nyquist in which `blend` keeps one level, [low, high), where
    /// its blend starts (`start`: high less `blendedPart` of the band) and its slope: inside it the
    /// weight is max(0, (r − start)·inverseSpan), so a voice gliding within a quarter octave needs
    /// two comparisons per choice, not the level's search.
    @inline(__always) static func band(scaledFrequency r: Float) -> Band {
        let bits = r.bitPattern
        let e = Int((bits >> 23) & 0xFF) - 127
        let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
        let (t1, t2, t3) = quarterOctaves
        let a1 = m >= t1, a2 = m >= t2, a3 = m >= t3
        let q = 4 * e + (a1 ? 1 : 0) + (a2 ? 1 : 0) + (a3 ? 1 : 0)
        let level = q + 1
        // Below the richest level's band every partial fits; above the last, nothing does.
        if level < 0 { return (0, 0, t3 * 0.5, .infinity, 0) }
        if level >= levelCount - 1 { return (levelCount - 1, Float(maxHarmonics), .infinity, .infinity, 0) }
        let lo: Float = a3 ? t3 : (a2 ? t2 : (a1 ? t1 : 1))
        let hi: Float = a3 ? 2 : (a2 ? t3 : (a1 ? t2 : t1))
        let start = hi - Float(blendedPart) * (hi - lo)
        let power = Float(bitPattern: bits & 0x7F80_0000)  // 2^e: scaling by it is exact
        return (level, lo * power, hi * power, start * power, 1 / ((hi - start) * power))
    }

    /// 2^¼, 2^½, 2^¾ in Float: where `band` splits each octave of r (a literal: no lazy global on
    /// the render path).
    @inline(__always) static var quarterOctaves: (Float, Float, Float) { (1.189_207_1, 1.414_213_6, 1.681_792_8) }

    /// A quarter-octave band of r from `band`.
    typealias Band = (level: Int, low: Float, high: Float, start: Float, inverseSpan: Float)

    /// Each level's band as `band` finds it for a frequency inside (level 0's own quarter octave, not
    /// the band below it): a voice's first choice in a block starts from its level's band and looks
    /// for the level only when it has left it, as every later choice does, instead of from nothing.
    nonisolated(unsafe) static let levelBands: UnsafeMutablePointer<Band> = {  // written once, read only
        let p = UnsafeMutablePointer<Band>.allocate(capacity: levelCount)
        let (t1, t2, t3) = quarterOctaves
        let edges: [Float] = [1, t1, t2, t3, 2]
        for level in 0..<levelCount {
            let q = level - 1
            let e = q >= 0 ? q / 4 : -1, a = q - 4 * e
            p[level] = band(scaledFrequency: 0.5 * (edges[a] + edges[a + 1]) * Float(sign: .plus, exponent: e, significand: 1))
        }
        return p
    }()

    /// The weight toward the next level for r in a band from `band`: +0 below the blend's start.
    @inline(__always) static func weight(_ r: Float, in b: Band) -> Float {
        b.inverseSpan == 0 || r < b.start ? 0 : (r - b.start) * b.inverseSpan
    }

    /// The table positions of eight phases (not wrapped, ≥ 0) in a table of `points` points (a power
    /// of two; `mask` = points − 1, both made once per level by the caller, not in every group):
    /// index ⌊phase·size⌋ mod size and the fraction past it. No float→int conversion:
    /// adding 1.5·2⁵² to x − ½ leaves round(x − ½) in the low bits, and the mask keeps only the
    /// place in the cycle. x is exact (size is a power of two); at a tie the index can be one low,
    /// which the interpolation absorbs (its fraction is then 1). Masked, the index stays inside
    /// the table whatever the phase.
    @inline(__always) static func positions(phases: SIMD8<Double>, points: Double, mask: UInt64) -> (index: SIMD8<UInt64>, fraction: SIMD8<Float>) {
        let x = phases * points
        let magic = roundingMagic
        let rounded = (x - 0.5) + magic
        let index = unsafeBitCast(rounded, to: SIMD8<UInt64>.self) & SIMD8(repeating: mask)
        return (index, SIMD8<Float>(x - (rounded - magic)))
    }

    /// First table of a band-limited wave type.
    @inline(__always) static func waveBase(_ storage: UnsafeMutablePointer<Float>, _ type: WaveType) -> UnsafeMutablePointer<Float> {
        TableGeometry(storage).waveBase(type)
    }

    /// Level L's sample at phase j / size(L) (for tests and tools, which build the wave first if
    /// needed; the voice reads pairs directly).
    public func value(_ type: WaveType, level: Int, index j: Int) -> Float {
        build(CollectionOfOne(type))
        return Self.waveBase(storage, type)[Self.offsets[level] + 2 * (j + 1)]
    }

    /// The 4-point cubic Lagrange weights of samples j − 1, j, j + 1, j + 2 for a point a fraction
    /// `t` past sample j (one per lane): the cubic through those four points, exact for any cubic.
    @inline(__always) static func cubicWeights(_ t: SIMD8<Float>)
        -> (SIMD8<Float>, SIMD8<Float>, SIMD8<Float>, SIMD8<Float>) {
        let a = t + 1, b = t - 1, c = t - 2
        let tb = t * b, ac = a * c
        return (-tb * c * (1 / 6.0), ac * b * 0.5, -ac * t * 0.5, a * tb * (1 / 6.0))
    }

    /// The tables every engine reads. Each wave is built when an engine (or `buildInBackground`)
    /// first asks for it, never on the audio thread.
    public static let shared = BandLimitedTables()

    /// Starts building every wave's shared tables on a thread of their own, so that a command that
    /// plays live finds them ready. A plain thread: Foundation's `Thread` takes a millisecond or more to start.
    public static func buildInBackground() {
        // On another CPU: on the creator's, it waits for `main` to yield (3–4 ms seen).
        if case .success(let thread) = NativeThread.spawn(onAnotherCPU: true, { BandLimitedTables.shared.buildAll() }) {
            thread.detach()
        }
    }
}

/// The tables' storage and layout as plain values, read once by the engine and handed to every
/// voice. The layout's `static let`s are lazy globals: on Linux each read is a call (`swift_once`)
/// with the caller's vector registers saved around it, three for every voice each period before.
struct TableGeometry {
    let storage: UnsafeMutablePointer<Float>
    /// (points, offset in floats from the wave's first table) per level: `BandLimitedTables.layout`.
    let levels: UnsafeMutablePointer<Int>
    /// Each level's band: `BandLimitedTables.levelBands`.
    let bands: UnsafeMutablePointer<BandLimitedTables.Band>
    /// Floats of one wave's pairs (its singles follow), and of one wave's pairs and singles.
    let pairFloats: Int, waveStride: Int

    init(_ storage: UnsafeMutablePointer<Float>) {
        self.storage = storage
        levels = BandLimitedTables.layout
        bands = BandLimitedTables.levelBands
        pairFloats = BandLimitedTables.pairFloats
        waveStride = BandLimitedTables.waveStride
    }

    /// First table of a band-limited wave type.
    @inline(__always) func waveBase(_ type: WaveType) -> UnsafeMutablePointer<Float> {
        switch type {
        case .bandLimitedSquare: return storage
        case .bandLimitedTriangle: return storage + waveStride
        default: return storage + 2 * waveStride
        }
    }
}
