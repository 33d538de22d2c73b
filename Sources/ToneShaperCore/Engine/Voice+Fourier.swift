extension Voice {
    /// The article's Fourier partial sums, with sin(kθ) from the Chebyshev recurrence
    /// sin((k+1)θ) = 2cosθ·sin(kθ) − sin((k−1)θ): one sine and one cosine per sample, not one per term.
    ///
    /// Eight samples side by side in SIMD lanes: each term is one step of a dependent chain (a
    /// multiply and a subtract), which one sample at a time left the core waiting on every term;
    /// eight lanes take the same wait once; the seeds come from `sinCos2Pi`, eight at a time, instead
    /// of libm's sine and cosine per sample, and each term's weight is one scalar division per eight
    /// samples, off the chain, instead of eight vector ones on it. Past `count`, to the next multiple
    /// of 8, lanes read the scratch's earlier (finite) values and are dropped.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        while n < count {
            // Seeded in Double to within a few ulps: the recurrence carries any seed error into every term.
            let (s1, c1) = sinCos2Pi(UnsafeRawPointer(phase + n).loadUnaligned(as: SIMD8<Double>.self))
            let twoC = 2 * c1
            var sPrev = SIMD8<Double>(repeating: 0), s = s1  // sin(0θ), sin(1θ)
            var sum = SIMD8<Double>(repeating: 0)
            let value: SIMD8<Double>
            switch wave {
            case .squareFourier:
                // odd k = 1, 3, …, 2·terms − 1, weight 1/k
                var k = 1
                while k <= 2 * terms - 1 {
                    if k & 1 == 1 { sum += s * (1 / Double(k)) }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (4 / Double.pi) * sum
            case .triangleFourier:
                var k = 1
                while k <= terms {
                    if k & 1 == 1 {
                        let sign: Double = ((k - 1) / 2) & 1 == 0 ? 1 : -1
                        sum += s * (sign / Double(k * k))
                    }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (8 / (Double.pi * Double.pi)) * sum
            default:
                var k = 1
                while k <= terms {
                    sum += s * (1 / Double(k))
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = 0.5 - sum / Double.pi
            }
            let g = UnsafeRawPointer(gain + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes(SIMD8<Float>(value) * g, into: bus, at: n, count: Swift.min(8, count &- n))
            n &+= 8
        }
    }
}
