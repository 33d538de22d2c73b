extension Voice {
    /// The article's Fourier partial sums, with sin(kθ) from the Chebyshev recurrence
    /// sin((k+1)θ) = 2cosθ·sin(kθ) − sin((k−1)θ): one sine and one cosine per sample, not one per term.
    ///
    /// Eight samples side by side in SIMD lanes: each term is one step of a dependent chain (a
    /// multiply and a subtract), which one sample at a time left the core waiting on every term;
    /// eight lanes take the same wait once, and two groups of eight side by side fill it; the seeds
    /// come from `sinCos2Pi`, eight at a time, instead of libm's sine and cosine per sample, and each
    /// term's weight is read from a table (`VoiceScratch.fourierWeights`), off the chain. Past
    /// `count`, to the next multiple of 8, lanes read the scratch's earlier (finite) values and are dropped.
    static func mixFourier(_ wave: WaveType, terms: Int, count: Int, phase: UnsafeMutablePointer<Double>,
                           gain: UnsafeMutablePointer<Float>, weights: UnsafeMutablePointer<Double>,
                           into bus: UnsafeMutablePointer<Float>) {
        var n = 0
        while n < count {
            // Two groups side by side where the block has them: each term's step waits on the last
            // (a multiply, then a subtract), and a second, independent chain fills that wait. A last
            // group alone goes through the same code with itself as the second.
            let pair = n &+ 8 < count
            let a = UnsafeRawPointer(phase + n).loadUnaligned(as: SIMD8<Double>.self)
            let b = pair ? UnsafeRawPointer(phase + (n &+ 8)).loadUnaligned(as: SIMD8<Double>.self) : a
            let (va, vb) = partialSums(wave, terms: terms, weights: weights, a, b)
            let ga = UnsafeRawPointer(gain + n).loadUnaligned(as: SIMD8<Float>.self)
            addLanes(floats(va) * ga, into: bus, at: n, count: Swift.min(8, count &- n))
            if pair {
                let gb = UnsafeRawPointer(gain + (n &+ 8)).loadUnaligned(as: SIMD8<Float>.self)
                addLanes(floats(vb) * gb, into: bus, at: n &+ 8, count: Swift.min(8, count &- n &- 8))
            }
            n &+= pair ? 16 : 8
        }
    }

    /// Eight Doubles to Floats, a half at a time (the eight-lane conversion was a call, not inlined, here).
    @inline(__always) static func floats(_ v: SIMD8<Double>) -> SIMD8<Float> {
        SIMD8<Float>(lowHalf: SIMD4<Float>(v.lowHalf), highHalf: SIMD4<Float>(v.highHalf))
    }

    /// The partial sums at two groups of eight phases, each lane with the same operations in the
    /// same order as one group alone.
    @inline(__always) static func partialSums(_ wave: WaveType, terms: Int, weights: UnsafeMutablePointer<Double>, _ pa: SIMD8<Double>, _ pb: SIMD8<Double>)
        -> (SIMD8<Double>, SIMD8<Double>) {
        // Seeded in Double to within a few ulps: the recurrence carries any seed error into every term.
        let (sa1, ca1) = sinCos2Pi(pa), (sb1, cb1) = sinCos2Pi(pb)
        let twoCa = 2 * ca1, twoCb = 2 * cb1
        // Two terms per step, each new sine written over the one two terms back (x ← 2c·y − x, then
        // y ← 2c·x − y): no register shuffled between terms, so the chains stay in registers.
        var xa = SIMD8<Double>(repeating: 0), ya = sa1  // sin((k−1)θ), sin(kθ), k = 1
        var xb = SIMD8<Double>(repeating: 0), yb = sb1
        var sumA = SIMD8<Double>(repeating: 0), sumB = SIMD8<Double>(repeating: 0)
        @inline(__always) func twoSteps() {
            xa = twoCa * ya - xa; xb = twoCb * yb - xb
            ya = twoCa * xa - ya; yb = twoCb * xb - yb
        }
        // 1/k and 1/k² from the table (the same values the divisions gave), divided past its end.
        let limit = VoiceScratch.fourierTermLimit
        @inline(__always) func reciprocal(_ k: Int) -> Double { k < limit ? weights[k] : 1 / Double(k) }
        @inline(__always) func reciprocalSquare(_ k: Int) -> Double { k < limit ? weights[limit &+ k] : 1 / Double(k * k) }
        switch wave {
        case .squareFourier:
            // odd k = 1, 3, …, 2·terms − 1, weight 1/k
            var k = 1
            while k <= 2 * terms - 1 {
                let w = reciprocal(k)
                sumA += ya * w; sumB += yb * w
                twoSteps(); k += 2
            }
            return ((4 / Double.pi) * sumA, (4 / Double.pi) * sumB)
        case .triangleFourier:
            // odd k = 1, 3, … ≤ terms, weight ±1/k²
            var k = 1
            while k <= terms {
                let sign: Double = ((k - 1) / 2) & 1 == 0 ? 1 : -1
                let w = sign * reciprocalSquare(k)
                sumA += ya * w; sumB += yb * w
                twoSteps(); k += 2
            }
            let scale = 8 / (Double.pi * Double.pi)
            return (scale * sumA, scale * sumB)
        default:
            var k = 1
            while k < terms {
                let w0 = reciprocal(k), w1 = reciprocal(k + 1)
                sumA += ya * w0; sumB += yb * w0
                xa = twoCa * ya - xa; xb = twoCb * yb - xb
                sumA += xa * w1; sumB += xb * w1
                ya = twoCa * xa - ya; yb = twoCb * xb - yb
                k += 2
            }
            if k == terms {
                let w = reciprocal(k)
                sumA += ya * w; sumB += yb * w
            }
            // A multiply by 1/π, not a division per lane (one rounding more, within the Float output's).
            return (0.5 - sumA * (1 / Double.pi), 0.5 - sumB * (1 / Double.pi))
        }
    }
}
