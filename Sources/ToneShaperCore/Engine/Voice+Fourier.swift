extension Voice {
    /// The article's Fourier partial sums Σ w_k·sin(kθ), summed by Clenshaw's recurrence
    /// b_k = w_k + 2cosθ·b_{k+1} − b_{k+2} from the last term down (the sum is then sinθ·b_1;
    /// `clenshaw` counts from 0, so there it is sinθ·b_0): one
    /// sine and one cosine per sample, not one per term; per term one multiply, one subtract and
    /// one add on two running values, where stepping sin(kθ) upward and adding each term to a sum
    /// took two multiplies and two adds on three (and the square and triangle, odd terms only, now
    /// step by 2θ: one step per term, not two).
    ///
    /// Eight samples side by side in SIMD lanes, two groups of eight at a time: each term waits on
    /// the one before (a multiply, then an add), and a second, independent chain fills that wait.
    /// Two running values per group keep both groups and their 2cosθ in an AVX2 build's 16 vector
    /// registers (the upward sum's three per group spilled, and three groups of Clenshaw's too).
    /// AVX-512 builds (32 registers; `TONESHAPER_AVX512`) take four groups, 32 samples, at a time
    /// while a block has them: four chains keep the multiply and add pipes busy where two waited
    /// on each step (held 10-term voices 0.76–0.80× the two-group time), and the seeds of four
    /// groups overlap too. The
    /// seeds come from `sinCos2Pi`, eight at a time, and each term's weight is read from a table
    /// (`VoiceScratch.fourierWeights`), off the chain. Past `count`, to the next multiple of 8,
    /// lanes read the scratch's earlier (finite) values and are dropped.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, weights: UnsafeMutablePointer<Double>,
                           into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        #if TONESHAPER_AVX512
        // Four groups at a time (AVX-512 builds: the four chains and their 2cosθ stay in the 32
        // registers), then the rest by two. Each lane's arithmetic is the same either way.
        while n &+ 32 <= count {
            let p = UnsafeRawPointer(phase + n)
            let v = partialSums(wave, terms: terms, weights: weights,
                                (p.loadUnaligned(as: SIMD8<Double>.self), p.loadUnaligned(fromByteOffset: 64, as: SIMD8<Double>.self),
                                 p.loadUnaligned(fromByteOffset: 128, as: SIMD8<Double>.self),
                                 p.loadUnaligned(fromByteOffset: 192, as: SIMD8<Double>.self)))
            let g = UnsafeRawPointer(gain + n)
            addLanes(floats(v.0) * g.loadUnaligned(as: SIMD8<Float>.self), into: bus, at: n, count: 8)
            addLanes(floats(v.1) * g.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self), into: bus, at: n &+ 8, count: 8)
            addLanes(floats(v.2) * g.loadUnaligned(fromByteOffset: 64, as: SIMD8<Float>.self), into: bus, at: n &+ 16, count: 8)
            addLanes(floats(v.3) * g.loadUnaligned(fromByteOffset: 96, as: SIMD8<Float>.self), into: bus, at: n &+ 24, count: 8)
            n &+= 32
        }
        #endif
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
        switch wave {
        case .squareFourier: return partialSums(SquareSeries.self, terms, weights, pa, pb)
        case .triangleFourier: return partialSums(TriangleSeries.self, terms, weights, pa, pb)
        default: return partialSums(SawtoothSeries.self, terms, weights, pa, pb)
        }
    }

    @inline(__always) static func partialSums<W: FourierSeries>(_: W.Type, _ terms: Int, _ weights: UnsafeMutablePointer<Double>,
                                                                _ pa: SIMD8<Double>, _ pb: SIMD8<Double>)
        -> (SIMD8<Double>, SIMD8<Double>) {
        // Seeded in Double to within a few ulps: the recurrence carries any seed error into every term.
        let (sa, ca) = sinCos2Pi(pa), (sb, cb) = sinCos2Pi(pb)
        let (a, b) = clenshaw(W.chainLength(terms: terms), W.alpha(sa, ca), W.alpha(sb, cb)) { W.weight($0, weights) }
        return (W.sum(sa, a), W.sum(sb, b))
    }

    /// Clenshaw's recurrence b_j = w_j + α·b_{j+1} − b_{j+2} from j = count − 1 down to 0, for two
    /// groups: each group's (b_0, b_1). With α = 2cosθ, Σ_{j<count} w_j·sin((j+1)θ) = sinθ·b_0 (the
    /// saw); with α = 2cos2θ, Σ_{j<count} w_j·sin((2j+1)θ) = sinθ·(b_0 + b_1) (odd harmonics only).
    @inline(__always) static func clenshaw(_ count: Int, _ alphaA: SIMD8<Double>, _ alphaB: SIMD8<Double>,
                                           weight: (Int) -> Double)
        -> (a: (SIMD8<Double>, SIMD8<Double>), b: (SIMD8<Double>, SIMD8<Double>)) {
        var ua = SIMD8<Double>(repeating: 0), va = ua, ub = ua, vb = ua  // b_{j+1}, b_{j+2}
        var j = count &- 1
        // Two terms per step, each new b written over the one two terms back: no register moved between terms.
        while j > 0 {
            let w0 = weight(j), w1 = weight(j &- 1)
            va = (w0 - va) + alphaA * ua; vb = (w0 - vb) + alphaB * ub
            ua = (w1 - ua) + alphaA * va; ub = (w1 - ub) + alphaB * vb
            j &-= 2
        }
        // Now ua = b_{j+1}, va = b_{j+2} with j = 0 or −1.
        if j == 0 {
            let w = weight(0)
            va = (w - va) + alphaA * ua; vb = (w - vb) + alphaB * ub
            return ((va, ua), (vb, ub))
        }
        return ((ua, va), (ub, vb))
    }

    /// `partialSums` at four groups of eight phases (used by AVX-512 builds; built in every build, so
    /// the tests can hold it to the two-group sums), each lane with the same operations in the same
    /// order as there: only Clenshaw's loop is written apart.
    @inline(__always) static func partialSums(_ wave: WaveType, terms: Int, weights: UnsafeMutablePointer<Double>,
                                              _ p: (SIMD8<Double>, SIMD8<Double>, SIMD8<Double>, SIMD8<Double>))
        -> (SIMD8<Double>, SIMD8<Double>, SIMD8<Double>, SIMD8<Double>) {
        switch wave {
        case .squareFourier: return partialSums(SquareSeries.self, terms, weights, p)
        case .triangleFourier: return partialSums(TriangleSeries.self, terms, weights, p)
        default: return partialSums(SawtoothSeries.self, terms, weights, p)
        }
    }

    @inline(__always) static func partialSums<W: FourierSeries>(_: W.Type, _ terms: Int, _ weights: UnsafeMutablePointer<Double>,
                                                                _ p: (SIMD8<Double>, SIMD8<Double>, SIMD8<Double>, SIMD8<Double>))
        -> (SIMD8<Double>, SIMD8<Double>, SIMD8<Double>, SIMD8<Double>) {
        let (s0, c0) = sinCos2Pi(p.0), (s1, c1) = sinCos2Pi(p.1), (s2, c2) = sinCos2Pi(p.2), (s3, c3) = sinCos2Pi(p.3)
        let b = clenshaw(W.chainLength(terms: terms), (W.alpha(s0, c0), W.alpha(s1, c1), W.alpha(s2, c2), W.alpha(s3, c3))) {
            W.weight($0, weights)
        }
        return (W.sum(s0, b.0), W.sum(s1, b.1), W.sum(s2, b.2), W.sum(s3, b.3))
    }

    /// `clenshaw` for four groups: each group's (b_0, b_1), the same steps in the same order.
    @inline(__always) static func clenshaw(_ count: Int, _ alpha: (SIMD8<Double>, SIMD8<Double>, SIMD8<Double>, SIMD8<Double>),
                                           weight: (Int) -> Double)
        -> ((SIMD8<Double>, SIMD8<Double>), (SIMD8<Double>, SIMD8<Double>), (SIMD8<Double>, SIMD8<Double>), (SIMD8<Double>, SIMD8<Double>)) {
        let (a0, a1, a2, a3) = alpha
        var u0 = SIMD8<Double>(repeating: 0), v0 = u0, u1 = u0, v1 = u0, u2 = u0, v2 = u0, u3 = u0, v3 = u0
        var j = count &- 1
        while j > 0 {
            let w0 = weight(j), w1 = weight(j &- 1)
            v0 = (w0 - v0) + a0 * u0; v1 = (w0 - v1) + a1 * u1; v2 = (w0 - v2) + a2 * u2; v3 = (w0 - v3) + a3 * u3
            u0 = (w1 - u0) + a0 * v0; u1 = (w1 - u1) + a1 * v1; u2 = (w1 - u2) + a2 * v2; u3 = (w1 - u3) + a3 * v3
            j &-= 2
        }
        if j == 0 {
            let w = weight(0)
            v0 = (w - v0) + a0 * u0; v1 = (w - v1) + a1 * u1; v2 = (w - v2) + a2 * u2; v3 = (w - v3) + a3 * u3
            return ((v0, u0), (v1, u1), (v2, u2), (v3, u3))
        }
        return ((u0, v0), (u1, v1), (u2, v2), (u3, v3))
    }
}

/// One Fourier wave's series for Clenshaw's recurrence: how many terms the chain runs, its
/// multiplier α from sinθ and cosθ, the weight of term j, and how (b_0, b_1) become the wave. Resolved
/// at compile time, so the two- and four-group sums share every step but the chains themselves.
protocol FourierSeries {
    static func chainLength(terms: Int) -> Int
    static func alpha(_ s: SIMD8<Double>, _ c: SIMD8<Double>) -> SIMD8<Double>
    static func weight(_ j: Int, _ weights: UnsafeMutablePointer<Double>) -> Double
    static func sum(_ s: SIMD8<Double>, _ b: (SIMD8<Double>, SIMD8<Double>)) -> SIMD8<Double>
}

extension FourierSeries {
    /// 1/k and 1/k² from the table (the same values the divisions gave), divided past its end.
    @inline(__always) static func reciprocal(_ k: Int, _ weights: UnsafeMutablePointer<Double>) -> Double {
        k < VoiceScratch.fourierTermLimit ? weights[k] : 1 / Double(k)
    }
    @inline(__always) static func reciprocalSquare(_ k: Int, _ weights: UnsafeMutablePointer<Double>) -> Double {
        let limit = VoiceScratch.fourierTermLimit
        return k < limit ? weights[limit &+ k] : 1 / Double(k * k)
    }
    /// 2cos2θ = 2(c − s)(c + s), exact to an ulp where c ≈ ±s too: the odd-only series step by 2θ.
    @inline(__always) static func doubleAngle(_ s: SIMD8<Double>, _ c: SIMD8<Double>) -> SIMD8<Double> { 2 * (c - s) * (c + s) }
}

/// Odd k = 2j + 1 for j < terms, weight 1/k: sin((2j+1)θ) steps by 2θ, and the sum is sinθ·(b_0 + b_1).
enum SquareSeries: FourierSeries {
    @inline(__always) static func chainLength(terms: Int) -> Int { terms }
    @inline(__always) static func alpha(_ s: SIMD8<Double>, _ c: SIMD8<Double>) -> SIMD8<Double> { doubleAngle(s, c) }
    @inline(__always) static func weight(_ j: Int, _ weights: UnsafeMutablePointer<Double>) -> Double { reciprocal(2 &* j &+ 1, weights) }
    @inline(__always) static func sum(_ s: SIMD8<Double>, _ b: (SIMD8<Double>, SIMD8<Double>)) -> SIMD8<Double> {
        (4 / Double.pi) * (s * (b.0 + b.1))
    }
}

/// Odd k = 2j + 1 ≤ terms, weight (−1)^j/k².
enum TriangleSeries: FourierSeries {
    @inline(__always) static func chainLength(terms: Int) -> Int { (terms &+ 1) / 2 }
    @inline(__always) static func alpha(_ s: SIMD8<Double>, _ c: SIMD8<Double>) -> SIMD8<Double> { doubleAngle(s, c) }
    @inline(__always) static func weight(_ j: Int, _ weights: UnsafeMutablePointer<Double>) -> Double {
        j & 1 == 0 ? reciprocalSquare(2 &* j &+ 1, weights) : -reciprocalSquare(2 &* j &+ 1, weights)
    }
    @inline(__always) static func sum(_ s: SIMD8<Double>, _ b: (SIMD8<Double>, SIMD8<Double>)) -> SIMD8<Double> {
        (8 / (Double.pi * Double.pi)) * (s * (b.0 + b.1))
    }
}

/// k = j + 1 = 1 … terms, weight 1/k: the sum is sinθ·b_0.
enum SawtoothSeries: FourierSeries {
    @inline(__always) static func chainLength(terms: Int) -> Int { terms }
    @inline(__always) static func alpha(_ s: SIMD8<Double>, _ c: SIMD8<Double>) -> SIMD8<Double> { 2 * c }
    @inline(__always) static func weight(_ j: Int, _ weights: UnsafeMutablePointer<Double>) -> Double { reciprocal(j &+ 1, weights) }
    /// A multiply by 1/π, not a division per lane (one rounding more, within the Float output's).
    @inline(__always) static func sum(_ s: SIMD8<Double>, _ b: (SIMD8<Double>, SIMD8<Double>)) -> SIMD8<Double> {
        0.5 - (s * b.0) * (1 / Double.pi)
    }
}
