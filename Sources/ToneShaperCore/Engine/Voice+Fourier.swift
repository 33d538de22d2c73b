extension Voice {
    /// The article's Fourier partial sums, with sin(kθ) from the Chebyshev recurrence
    /// sin((k+1)θ) = 2cosθ·sin(kθ) − sin((k−1)θ): one sine and one cosine per sample, not one per term.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, into bus: UnsafeMutablePointer<Float>) {
        for n in 0..<count {
            // Seeded with libm in Double: the recurrence carries any seed error into every term.
            let angle = 2 * Double.pi * phase[n]
            let s1 = _sin(angle)
            let c1 = _cos(angle)
            let twoC = 2 * c1
            var sPrev = 0.0, s = s1  // sin(0θ), sin(1θ)
            var sum = 0.0
            var value: Double
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
            bus[n] += Float(value) * gain[n]
        }
    }
}
