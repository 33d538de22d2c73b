extension Voice {
    /// The article's Fourier partial sums, with sin(kθ) from the Chebyshev recurrence
    /// sin((k+1)θ) = 2cosθ·sin(kθ) − sin((k−1)θ): one sine and one cosine per sample, not one per term.
    ///
    /// Eight samples side by side in SIMD lanes: each term is one step of a dependent chain (a
    /// multiply and a subtract), which one sample at a time left the core waiting on every term;
    /// eight lanes take the same wait once. Every lane does the same operations in the same order
    /// as one sample did (IEEE division and all), so the samples are the same to the bit. Past
    /// `count`, to the next multiple of 8, lanes read the scratch's earlier (finite) values and are dropped.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        while n < count {
            // Seeded with libm in Double: the recurrence carries any seed error into every term.
            var s1 = SIMD8<Double>(), c1 = SIMD8<Double>()
            for i in 0..<8 {
                let angle = 2 * Double.pi * phase[n &+ i]
                s1[i] = _sin(angle)
                c1[i] = _cos(angle)
            }
            let twoC = 2 * c1
            var sPrev = SIMD8<Double>(repeating: 0), s = s1  // sin(0θ), sin(1θ)
            var sum = SIMD8<Double>(repeating: 0)
            let value: SIMD8<Double>
            switch wave {
            case .squareFourier:
                // odd k = 1, 3, …, 2·terms − 1, weight 1/k
                var k = 1
                while k <= 2 * terms - 1 {
                    if k & 1 == 1 { sum += s / Double(k) }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (4 / Double.pi) * sum
            case .triangleFourier:
                var k = 1
                while k <= terms {
                    if k & 1 == 1 {
                        let sign: Double = ((k - 1) / 2) & 1 == 0 ? 1 : -1
                        sum += sign * s / Double(k * k)
                    }
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = (8 / (Double.pi * Double.pi)) * sum
            default:
                var k = 1
                while k <= terms {
                    sum += s / Double(k)
                    let sNext = twoC * s - sPrev
                    sPrev = s; s = sNext; k += 1
                }
                value = 0.5 - sum / Double.pi
            }
            let g = UnsafeRawPointer(gain + n).loadUnaligned(as: SIMD8<Float>.self)
            mix(SIMD8<Float>(value) * g, into: bus, at: n, count: Swift.min(8, count &- n))
            n &+= 8
        }
    }
}
