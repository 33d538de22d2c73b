#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Thin aliases so the DSP files need no platform conditionals.
@inline(__always) func _exp(_ x: Double) -> Double { exp(x) }
@inline(__always) func _sin(_ x: Double) -> Double { sin(x) }
@inline(__always) func _cos(_ x: Double) -> Double { cos(x) }
@inline(__always) func _pow(_ x: Double, _ y: Double) -> Double { pow(x, y) }
@inline(__always) func _log(_ x: Double) -> Double { log(x) }
@inline(__always) func _exp2(_ x: Double) -> Double { exp2(x) }

/// 1.5·2⁵²: adding it to a Double (|x| < 2⁵¹) leaves x rounded to a whole number, in its low
/// mantissa bits too; subtracting it again gives that whole number. Rounding eight lanes at once
/// without a float→int conversion per lane.
/// (A computed constant: a stored global would be read through its lazy initialiser on every use.)
@inline(__always) var roundingMagic: SIMD8<Double> { SIMD8(repeating: 6_755_399_441_055_744.0) }

/// Fractional part for x ≥ 0 via truncation (cvttsd2si), avoiding a libm `floor` call on baseline x86-64.
/// A value no Int64 holds (NaN, infinite, beyond 2^63) gives 0 instead of a trap: such a phase has
/// no fraction left to keep, and the audio thread must not stop over it.
@inline(__always) func fractionalPart(_ x: Double) -> Double {
    guard x.magnitude < 0x1p63 else { return 0 }
    return x - Double(Int64(x))
}

/// sin 2πy and cos 2πy for eight phases y in [0, 1), in Double, within a few units in the last
/// place of libm's (the Fourier series' seeds: sixteen libm calls per eight samples had cost more
/// than ten terms of the series).
///
/// y = q/4 + d with q the nearest quarter: d is exact (y and q/4 are within a factor of two of each
/// other) and |2πd| ≤ π/4, where near-minimax polynomials of degree 13 and 14 (fitted for this
/// range by a Remez exchange: docs/fit-sincos.py; error below 7e-18 before rounding) are as
/// exact as the Taylor series to the 17th and 16th power they replace, with three fewer steps:
/// the seeds were most of a 10-term series' cost; the quarter turns swap and negate them, which
/// rounds nothing.
@inline(__always) func sinCos2Pi(_ y: SIMD8<Double>) -> (sin: SIMD8<Double>, cos: SIMD8<Double>) {
    let magic = roundingMagic
    let turns4 = y * 4  // exact
    let shifted = turns4 + magic  // the nearest whole number of quarters, also in the low bits
    let quarters = shifted - magic
    // (4y − q)·π/2 is (y − q/4)·2π scaled by powers of two: the same bits, one multiply fewer.
    let r = (turns4 - quarters) * (Double.pi / 2)
    let r2 = r * r
    var ps = SIMD8<Double>(repeating: 1.589474377040521e-10)
    ps = ps * r2 - 2.5050735127590825e-08
    ps = ps * r2 + 2.755731365524797e-06
    ps = ps * r2 - 1.9841269830153462e-04
    ps = ps * r2 + 8.333333333323673e-03
    ps = ps * r2 - 1.6666666666666644e-01
    let sine = r + r * r2 * ps
    var pc = SIMD8<Double>(repeating: -1.1368002341469852e-11)
    pc = pc * r2 + 2.0875898081312853e-09
    pc = pc * r2 - 2.7557315740699307e-07
    pc = pc * r2 + 2.480158729463356e-05
    pc = pc * r2 - 1.3888888888882846e-03
    pc = pc * r2 + 4.166666666666665e-02
    let cosine = (1 - 0.5 * r2) + (r2 * r2) * pc
    // Quarter turn q: sin(qπ/2 + x) = sin x, cos x, −sin x, −cos x; cos(qπ/2 + x) = cos x, −sin x, −cos x, sin x.
    // The swap by bit masks, not `replacing(with:where:)`: on eight Double lanes that went lane by
    // lane through the stack (a store-forwarding stall each), which cost more than the series.
    let q = unsafeBitCast(shifted, to: SIMD8<UInt64>.self)
    let swap = SIMD8<UInt64>(repeating: 0) &- (q & 1)  // all ones in the odd quarters
    let sineBits = unsafeBitCast(sine, to: SIMD8<UInt64>.self), cosineBits = unsafeBitCast(cosine, to: SIMD8<UInt64>.self)
    let s = (sineBits & ~swap) | (cosineBits & swap), c = (cosineBits & ~swap) | (sineBits & swap)
    let sineSign = (q & 2) &<< 62, cosineSign = ((q &+ 1) & 2) &<< 62
    return (unsafeBitCast(s ^ sineSign, to: SIMD8<Double>.self), unsafeBitCast(c ^ cosineSign, to: SIMD8<Double>.self))
}

/// p minus its nearest whole number, in [−½, ½], eight lanes (|p| < 2⁵¹; exact). Where Core is
/// built for a CPU with a vector rounding instruction (Package.swift's TONESHAPER_VECTOR_ROUNDING)
/// one `vroundpd` per four lanes; elsewhere adding and subtracting 1.5·2⁵², which rounds the same
/// way (to nearest, ties to even) but costs two additions, and the sine's walk is bound by its
/// additions. (On plain x86-64, `rounded()` would be a libm call per lane.)
@inline(__always) func centredPhases(_ p: SIMD8<Double>) -> SIMD8<Double> {
    #if TONESHAPER_VECTOR_ROUNDING
    return p - p.rounded(.toNearestOrEven)
    #else
    let magic = roundingMagic
    return p - ((p + magic) - magic)
    #endif
}

/// sin(2πs) for s in [−½, ½], as a polynomial: eight at a time, branch-free, within 3.0e-7 of
/// libm's sine, RMS 8.5e-8 (docs/fit-sine.py, the Float evaluation's roundings included).
///
/// The render loop calls this for every voice-sample. sin 2πs = s·(1 − 4s²)·R(s²): the factor
/// (1 − 4s²) holds the zeros at ±½, so R is smooth over the whole turn and no folding into a
/// quarter (and sign bits restored) is needed; R is the near-minimax polynomial of degree 4 on
/// [0, ¼] (fitted error 1.05e-7, below Float's 2⁻²³ at full scale), here times 4 (exact in Float)
/// so the factor is ¼ − s², one subtraction. Twelve multiplies and adds for eight sines, against
/// thirteen, a min and three bit operations for the folded series it replaces.
@inlinable @inline(__always) public func fastSin2Pi(centred s: SIMD8<Float>) -> SIMD8<Float> {
    let x = s * s
    var r = SIMD8<Float>(repeating: 12.233_301)
    r = r * x - 38.123_196
    r = r * x + 67.043_9
    r = r * x - 64.834_68
    r = r * x + 25.132_73
    return (s * (0.25 - x)) * r
}

/// sin(2πx) for a phase x in [0, 1) (control-rate uses: vibrato, tests).
@inlinable @inline(__always) public func fastSin2Pi(_ x: Float) -> Float {
    fastSin2Pi(centred: SIMD8<Float>(repeating: x < 0.5 ? x : x - 1))[0]
}

/// Uninitialised memory for `count` values starting on a cache line (64 bytes): for what threads
/// write side by side (voices, parts, buses), so none of them shares a line with another's.
/// Freed through `UnsafeMutableRawPointer(p).deallocate()`.
func cacheAligned<T>(_: T.Type, count: Int) -> UnsafeMutablePointer<T> {
    UnsafeMutableRawPointer.allocate(byteCount: max(1, count) * MemoryLayout<T>.stride, alignment: 64)
        .bindMemory(to: T.self, capacity: max(1, count))
}

/// 128 bytes of nothing, stored between fields that different threads write: a cache line and the
/// neighbour the prefetcher pairs with it, so a write by one core leaves the other's fields alone.
struct LinePairPadding {
    private let words: (Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
