/// The article's unit functions: period 1, defined on [0, 1) and extended by the fractional part.
///
/// These are the exact reference definitions (Double, libm). The voice renders the same functions
/// through faster kernels (`fastSin2Pi`, harmonic recurrences, band-limited tables) and the tests
/// hold those kernels to these.
public enum UnitFunction {
    /// Maps any t to [0, 1) the way the article does (`truncatingRemainder`), with negatives wrapped.
    @inlinable public static func unitPhase(_ t: Double) -> Double {
        let p = t.truncatingRemainder(dividingBy: 1)
        return p < 0 ? p + 1 : p
    }

    public static func sine(_ t: Double) -> Double { _sin(2 * .pi * unitPhase(t)) }

    public static func square(_ t: Double) -> Double { unitPhase(t) < 0.5 ? 1 : -1 }

    public static func triangle(_ t: Double) -> Double {
        let p = unitPhase(t)
        if p < 0.25 { return 4 * p }
        if p < 0.75 { return -4 * p + 2 }
        return 4 * p - 4
    }

    /// The article's sawtooth is the ramp t itself (0 up to 1, mean ½).
    public static func sawtooth(_ t: Double) -> Double { unitPhase(t) }

    /// (4/π) Σ sin(2π i t)/i over odd i = 1, 3, …, 2n−1 (n terms).
    public static func squareFourier(_ t: Double, terms n: Int) -> Double {
        var sum = 0.0
        var i = 1
        while i <= 2 * n - 1 {
            let a = Double(i)
            sum += (1 / a) * _sin(2 * a * .pi * t)
            i += 2
        }
        return (4 / .pi) * sum
    }

    /// (8/π²) Σ (−1)^((i−1)/2) sin(2π i t)/i² over odd i ≤ n (the article's loop bound is n itself).
    public static func triangleFourier(_ t: Double, terms n: Int) -> Double {
        var sum = 0.0
        var i = 1
        while i <= n {
            let a = Double(i)
            sum += (_pow(-1, (a - 1) / 2) / (a * a)) * _sin(2 * a * .pi * t)
            i += 2
        }
        return (8 / (.pi * .pi)) * sum
    }

    /// ½ − (1/π) Σ sin(2π i t)/i over i = 1…n.
    public static func sawtoothFourier(_ t: Double, terms n: Int) -> Double {
        var sum = 0.0
        if n >= 1 {
            for i in 1...n { sum += _sin(Double(i) * 2 * .pi * t) / Double(i) }
        }
        return 0.5 + (-1 / .pi) * sum
    }

    /// The reference value of any wave type at phase t, with `terms` for the Fourier series.
    /// Band-limited types are given with `harmonics` partials (zero-mean, peak ≈ 1).
    public static func value(_ type: WaveType, at t: Double, terms: Int, harmonics: Int = 1) -> Double {
        switch type {
        case .sine: return sine(t)
        case .square: return square(t)
        case .triangle: return triangle(t)
        case .sawtooth: return sawtooth(t)
        case .squareFourier: return squareFourier(t, terms: terms)
        case .triangleFourier: return triangleFourier(t, terms: terms)
        case .sawtoothFourier: return sawtoothFourier(t, terms: terms)
        case .bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth:
            return BandLimitedSpectrum(type)!.value(at: t, harmonics: harmonics)
        case .noise: return 0
        }
    }
}

/// The harmonic recipe of a band-limited classic wave: which partials, with which amplitudes.
///
/// Zero-mean versions of the article's square, triangle and (rising) sawtooth, so no DC reaches the mix.
public struct BandLimitedSpectrum: Sendable {
    public let type: WaveType
    public init?(_ type: WaveType) {
        guard type.isBandLimited else { return nil }
        self.type = type
    }
    /// Amplitude of the sine partial of harmonic k (0 when the wave has no such partial).
    public func amplitude(harmonic k: Int) -> Double {
        let a = Double(k)
        switch type {
        case .bandLimitedSquare: return k % 2 == 1 ? 4 / (.pi * a) : 0
        case .bandLimitedTriangle:
            guard k % 2 == 1 else { return 0 }
            return (((k - 1) / 2) % 2 == 0 ? 1 : -1) * 8 / (.pi * .pi * a * a)
        default: return -2 / (.pi * a)  // rising sawtooth 2t − 1
        }
    }
    public func value(at t: Double, harmonics: Int) -> Double {
        var sum = 0.0
        if harmonics >= 1 {
            for k in 1...harmonics { sum += amplitude(harmonic: k) * _sin(2 * .pi * Double(k) * t) }
        }
        return sum
    }
}
