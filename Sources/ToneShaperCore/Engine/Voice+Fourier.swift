extension Voice {
    /// The article's Fourier partial sums Σ w_k·sin(kθ), summed by Clenshaw's recurrence
    /// b_k = w_k + 2cosθ·b_{k+1} − b_{k+2} from the last term down (the sum is then sinθ·b_1): one
    /// sine and one cosine per sample, not one per term; per term one multiply, one subtract and
    /// one add on two running values, where stepping sin(kθ) upward and adding each term to a sum
    /// took two multiplies and two adds on three (and the square and triangle, odd terms only, now
    /// step by 2θ: one step per term, not two).
    ///
    /// Eight samples side by side in SIMD lanes, two groups of eight at a time: each term waits on
    /// the one before (a multiply, then an add), and a second, independent chain fills that wait.
    /// Two running values per group keep both groups and their 2cosθ in the 16 vector registers
    /// (the upward sum's three per group spilled, and three groups of Clenshaw's spilled too). The
    /// seeds come from `sinCos2Pi`, eight at a time, and each term's weight is read from a table
    /// (`VoiceScratch.fourierWeights`), off the chain. Past `count`, to the next multiple of 8,
    /// lanes read the scratch's earlier (finite) values and are dropped.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, weights: UnsafeMutablePointer<Double>,
                           into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        while n < count {
            // A last group alone goes through the same code with itself as the second (each lane's
            // arithmetic is its own: the same bits however a block is cut).
            let second = n &+ 8 < count
            let a = UnsafeRawPointer(phase + n).loadUnaligned(as: SIMD8<Double>.self)
            let b = second ? UnsafeRawPointer(phase + (n &+ 8)).loadUnaligned(as: SIMD8<Double>.self) : a
            let (va, vb) = partialSums(wave, terms: terms, weights: weights, a, b)
            let ga = UnsafeRawPointer(gain + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes(floats(va) * ga, into: bus, at: n, count: Swift.min(8, count &- n))
            if second {
                let gb = UnsafeRawPointer(gain + (n &+ 8)).loadUnaligned(as: SIMD8<Float>.self)
                addLanes(floats(vb) * gb, into: bus, at: n &+ 8, count: Swift.min(8, count &- n &- 8))
            }
            n &+= 16
        }
    }

    /// Eight Doubles to Floats, a half at a time (the eight-lane conversion was a call, not inlined, here).
    @inline(__always) static func floats(_ v: SIMD8<Double>) -> SIMD8<Float> {
        SIMD8<Float>(lowHalf: SIMD4<Float>(v.lowHalf), highHalf: SIMD4<Float>(v.highHalf))
    }

    /// The partial sums at two groups of eight phases, each lane with the same operations in the
    /// same order as any other.
    @inline(__always) static func partialSums(_ wave: WaveType, terms: Int, weights: UnsafeMutablePointer<Double>,
                                              _ pa: SIMD8<Double>, _ pb: SIMD8<Double>)
        -> (SIMD8<Double>, SIMD8<Double>) {
        // Seeded in Double to within a few ulps: the recurrence carries any seed error into every term.
        let (sa, ca) = sinCos2Pi(pa), (sb, cb) = sinCos2Pi(pb)
        // 1/k and 1/k² from the table (the same values the divisions gave), divided past its end.
        let limit = VoiceScratch.fourierTermLimit
        @inline(__always) func reciprocal(_ k: Int) -> Double { k < limit ? weights[k] : 1 / Double(k) }
        @inline(__always) func reciprocalSquare(_ k: Int) -> Double { k < limit ? weights[limit &+ k] : 1 / Double(k * k) }
        switch wave {
        case .squareFourier:
            // odd k = 2j + 1 for j < terms, weight 1/k: sin((2j+1)θ) steps by 2θ (2cos2θ =
            // 2(c − s)(c + s), exact to an ulp where c ≈ ±s too), and the sum is sinθ·(b_0 + b_1).
            let (a, b) = odd(terms, 2 * (ca - sa) * (ca + sa), 2 * (cb - sb) * (cb + sb)) {
                reciprocal(2 &* $0 &+ 1)
            }
            return ((4 / Double.pi) * (sa * a), (4 / Double.pi) * (sb * b))
        case .triangleFourier:
            // odd k = 2j + 1 ≤ terms, weight (−1)^j/k²
            let (a, b) = odd((terms &+ 1) / 2, 2 * (ca - sa) * (ca + sa), 2 * (cb - sb) * (cb + sb)) {
                $0 & 1 == 0 ? reciprocalSquare(2 &* $0 &+ 1) : -reciprocalSquare(2 &* $0 &+ 1)
            }
            let scale = 8 / (Double.pi * Double.pi)
            return (scale * (sa * a), scale * (sb * b))
        default:
            // k = 1 … terms, weight 1/k; the sum is sinθ·b_1.
            let alphaA = 2 * ca, alphaB = 2 * cb
            var ua = SIMD8<Double>(repeating: 0), va = ua, ub = ua, vb = ua  // b_{k+1}, b_{k+2}
            var k = terms
            // Two terms per step, each new b written over the one two terms back: no register moved between terms.
            while k > 1 {
                let w0 = reciprocal(k), w1 = reciprocal(k &- 1)
                va = (w0 - va) + alphaA * ua; vb = (w0 - vb) + alphaB * ub
                ua = (w1 - ua) + alphaA * va; ub = (w1 - ub) + alphaB * vb
                k &-= 2
            }
            if k == 1 {
                va = (1 - va) + alphaA * ua; vb = (1 - vb) + alphaB * ub
                ua = va; ub = vb
            }
            // A multiply by 1/π, not a division per lane (one rounding more, within the Float output's).
            return (0.5 - (sa * ua) * (1 / Double.pi), 0.5 - (sb * ub) * (1 / Double.pi))
        }
    }

    /// Clenshaw's sum over odd harmonics, Σ_{j<count} w_j·sin((2j+1)θ), before the factor sinθ:
    /// b_0 + b_1 for two groups, with beta = 2cos2θ per lane.
    @inline(__always) static func odd(_ count: Int, _ betaA: SIMD8<Double>, _ betaB: SIMD8<Double>,
                                      weight: (Int) -> Double) -> (SIMD8<Double>, SIMD8<Double>) {
        var ua = SIMD8<Double>(repeating: 0), va = ua, ub = ua, vb = ua  // b_{j+1}, b_{j+2}
        var j = count &- 1
        while j > 0 {
            let w0 = weight(j), w1 = weight(j &- 1)
            va = (w0 - va) + betaA * ua; vb = (w0 - vb) + betaB * ub
            ua = (w1 - ua) + betaA * va; ub = (w1 - ub) + betaB * vb
            j &-= 2
        }
        // Now ua = b_{j+1}, va = b_{j+2} with j = 0 or −1.
        if j == 0 {
            let w = weight(0)
            va = (w - va) + betaA * ua; vb = (w - vb) + betaB * ub
            return (va + ua, vb + ub)  // b_0 + b_1
        }
        return (ua + va, ub + vb)  // j = −1: ua = b_0, va = b_1
    }
}
