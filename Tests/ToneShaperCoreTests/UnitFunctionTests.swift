import Foundation
import Testing
@testable import ToneShaperCore

/// The article's formulas, written again here from the text, independently of the core.
private enum Article {
    static func sine(_ t: Double) -> Double { sin(2 * .pi * t) }
    static func square(_ t: Double) -> Double { t < 0.5 ? 1 : -1 }
    static func triangle(_ t: Double) -> Double {
        if t < 0.25 { return 4 * t } else if t < 0.75 { return -4 * t + 2 }
        return 4 * t - 4
    }
    static func sawtooth(_ t: Double) -> Double { t }
    static func squareFourier(_ t: Double, _ n: Int) -> Double {
        var sum = 0.0
        for i in stride(from: 1, through: n * 2, by: 2) { sum += (1.0 / Double(i)) * sin(2 * Double(i) * .pi * t) }
        return (4.0 / .pi) * sum
    }
    static func triangleFourier(_ t: Double, _ n: Int) -> Double {
        var sum = 0.0
        for i in stride(from: 1, through: n, by: 2) {
            let a = Double(i)
            sum += (pow(-1, (a - 1) / 2) / pow(a, 2.0)) * sin(2 * a * .pi * t)
        }
        return (8.0 / pow(.pi, 2.0)) * sum
    }
    static func sawtoothFourier(_ t: Double, _ n: Int) -> Double {
        var sum = 0.0
        for i in 1...n { sum += sin(Double(i) * 2.0 * .pi * t) / Double(i) }
        return 0.5 + (-1.0 / .pi) * sum
    }
    /// The article's extension to the real line: s(t.truncatingRemainder(dividingBy: 1)).
    static func periodic(_ f: (Double) -> Double, _ t: Double) -> Double { f(t.truncatingRemainder(dividingBy: 1)) }
}

@Suite("Unit functions: the article's period-1 waves and their Fourier partial sums")
struct UnitFunctionTests {
    @Test("sine, square, triangle and sawtooth take the article's values at 0, ⅛, ¼, ½, ¾")
    func knownPoints() {
        let eps = 1e-12
        #expect(abs(UnitFunction.sine(0)) < eps)
        #expect(abs(UnitFunction.sine(0.125) - 0.5.squareRoot()) < eps)
        #expect(abs(UnitFunction.sine(0.25) - 1) < eps)
        #expect(abs(UnitFunction.sine(0.5)) < eps)
        #expect(abs(UnitFunction.sine(0.75) + 1) < eps)

        #expect(UnitFunction.square(0) == 1)
        #expect(UnitFunction.square(0.125) == 1)
        #expect(UnitFunction.square(0.25) == 1)
        #expect(UnitFunction.square(0.5) == -1)
        #expect(UnitFunction.square(0.75) == -1)

        #expect(UnitFunction.triangle(0) == 0)
        #expect(abs(UnitFunction.triangle(0.125) - 0.5) < eps)
        #expect(abs(UnitFunction.triangle(0.25) - 1) < eps)
        #expect(abs(UnitFunction.triangle(0.5)) < eps)
        #expect(abs(UnitFunction.triangle(0.75) + 1) < eps)

        #expect(UnitFunction.sawtooth(0) == 0)
        #expect(UnitFunction.sawtooth(0.125) == 0.125)
        #expect(UnitFunction.sawtooth(0.25) == 0.25)
        #expect(UnitFunction.sawtooth(0.5) == 0.5)
        #expect(UnitFunction.sawtooth(0.75) == 0.75)
    }

    @Test("beyond [0, 1) every unit function repeats with period 1 (the article's truncatingRemainder)")
    func periodicity() {
        let fns: [(String, (Double) -> Double, (Double) -> Double)] = [
            ("sine", UnitFunction.sine, Article.sine), ("square", UnitFunction.square, Article.square),
            ("triangle", UnitFunction.triangle, Article.triangle), ("sawtooth", UnitFunction.sawtooth, Article.sawtooth),
        ]
        for (name, core, article) in fns {
            for t in stride(from: 0.0, to: 1.0, by: 0.0625) {
                for shift in [1.0, 2.0, 7.0, 1000.0] {
                    // Dyadic points stay exact after adding whole numbers.
                    #expect(abs(core(t + shift) - core(t)) < 1e-9, "\(name)(\(t) + \(shift))")
                    #expect(abs(core(t + shift) - Article.periodic(article, t + shift)) < 1e-9, "\(name)(\(t) + \(shift))")
                }
                // Negative arguments wrap into [0, 1) too.
                #expect(abs(core(t - 3) - core(t)) < 1e-9, "\(name)(\(t) − 3)")
            }
        }
        // π and π + 1 share the fractional part 0.14159…, as in the article's example.
        #expect(abs(UnitFunction.sawtooth(Double.pi) - 0.14159265358979312) < 1e-12)
        #expect(abs(UnitFunction.sawtooth(Double.pi + 1) - 0.14159265358979312) < 1e-12)
    }

    @Test("the unit functions equal the article's code on a dense grid of [0, 1)")
    func matchesArticleOnGrid() {
        for j in 0..<1000 {
            let t = Double(j) / 1000 + 0.000_37
            #expect(abs(UnitFunction.sine(t) - Article.sine(t)) < 1e-12)
            #expect(UnitFunction.square(t) == Article.square(t))
            #expect(abs(UnitFunction.triangle(t) - Article.triangle(t)) < 1e-12)
            #expect(abs(UnitFunction.sawtooth(t) - Article.sawtooth(t)) < 1e-12)
        }
    }

    @Test("Fourier partial sums equal the article's formulas for every term count")
    func fourierMatchesArticle() {
        for n in [1, 2, 3, 5, 8, 10, 25] {
            for j in 0..<200 {
                let t = Double(j) / 200 + 0.0013
                #expect(abs(UnitFunction.squareFourier(t, terms: n) - Article.squareFourier(t, n)) < 1e-12, "square n=\(n) t=\(t)")
                #expect(abs(UnitFunction.triangleFourier(t, terms: n) - Article.triangleFourier(t, n)) < 1e-12, "triangle n=\(n) t=\(t)")
                #expect(abs(UnitFunction.sawtoothFourier(t, terms: n) - Article.sawtoothFourier(t, n)) < 1e-12, "sawtooth n=\(n) t=\(t)")
            }
        }
        // square_fourier(0.25, n) = 4/π Σ_{odd i ≤ 2n−1} sin(πi/2)/i = 4/π (1 − 1/3 + 1/5 − …)
        for n in [1, 2, 3, 10] {
            var leibniz = 0.0
            for k in 0..<n { leibniz += (k % 2 == 0 ? 1 : -1) / Double(2 * k + 1) }
            #expect(abs(UnitFunction.squareFourier(0.25, terms: n) - 4 / .pi * leibniz) < 1e-12)
        }
    }

    @Test("Fourier partial sums converge to the wave where it is smooth (Gibbs only near the jumps)")
    func fourierLimits() {
        // Square at ¼: the Leibniz series, error below 4/π · 1/(2n+1).
        #expect(abs(UnitFunction.squareFourier(0.25, terms: 2000) - 1) < 1e-3)
        #expect(abs(UnitFunction.squareFourier(0.75, terms: 2000) + 1) < 1e-3)
        // The article's sawtooth series ½ − (1/π) Σ sin(2πit)/i converges to t on (0, 1): ¼ at ¼.
        #expect(abs(UnitFunction.sawtoothFourier(0.25, terms: 2001) - 0.25) < 1e-3)
        #expect(abs(UnitFunction.sawtoothFourier(0.6, terms: 4000) - Article.sawtooth(0.6)) < 1e-3)
        // Triangle converges everywhere (coefficients fall as 1/i²).
        for t in [0.1, 0.25, 0.4, 0.5, 0.8] {
            #expect(abs(UnitFunction.triangleFourier(t, terms: 999) - Article.triangle(t)) < 1e-3, "t=\(t)")
        }
        // Away from the jump at 0 and ½ the square sum is within a small error of ±1 …
        for t in [0.1, 0.2, 0.3, 0.4] {
            #expect(abs(UnitFunction.squareFourier(t, terms: 1000) - 1) < 0.01, "t=\(t)")
        }
        // … while next to the jump the overshoot stays near 9 % (Gibbs), whatever the term count.
        for n in [50, 200] {
            var peak = 0.0
            for j in 1..<2000 { peak = max(peak, UnitFunction.squareFourier(Double(j) / 200_000, terms: n)) }
            #expect(peak > 1.15 && peak < 1.2, "n=\(n) peak \(peak)")
        }
    }

    @Test("fastSin2Pi, the render kernel for sine, agrees with UnitFunction.sine within 1e-5 over [0, 1)")
    func fastSine() {
        var worst = 0.0
        for j in 0..<100_000 {
            let x = Float(Double(j) / 100_000)
            worst = max(worst, abs(Double(fastSin2Pi(x)) - UnitFunction.sine(Double(x))))
        }
        #expect(worst < 1e-5, "worst error \(worst)")
        #expect(fastSin2Pi(0) == 0)
    }

    /// The sine's error budget is the output's: a Float sample's 24-bit mantissa (2⁻²³ ≈ 1.2e-7
    /// at full scale), a few of its roundings at most, so the error stays far below what a 24-bit
    /// or float file can show (−130 dB); the RMS is what a steady tone's distortion adds up to.
    @Test("the sine kernel is within 3.2e-7 of libm's sine at every centred phase k·2⁻²⁰, RMS below 1e-7, exact at 0 and ±½")
    func sineKernelPrecision() {
        var worst = 0.0, squares = 0.0, count = 0
        var k = -(1 << 19)
        while k <= 1 << 19 {
            var s = SIMD8<Float>()
            for i in 0..<8 { s[i] = Float(Double(min(k + i, 1 << 19)) * 0x1p-20) }
            let y = fastSin2Pi(centred: s)
            for i in 0..<8 {
                let e = abs(Double(y[i]) - sin(2 * .pi * Double(s[i])))
                worst = max(worst, e); squares += e * e; count += 1
            }
            k += 8
        }
        #expect(worst < 3.2e-7, "worst error \(worst)")
        #expect((squares / Double(count)).squareRoot() < 1e-7, "RMS error \((squares / Double(count)).squareRoot())")
        let ends = fastSin2Pi(centred: SIMD8(0, 0.5, -0.5, 0.25, -0.25, 0, 0, 0))
        #expect(ends[0] == 0 && ends[1] == 0 && ends[2] == 0, "sin 0, sin π, sin −π: \(ends)")
        #expect(abs(ends[3] - 1) <= 1.2e-7 && abs(ends[4] + 1) <= 1.2e-7, "sin ±π/2: \(ends)")
    }

    /// The Fourier series carry their seed's error into every term, so the seeds are held to libm's
    /// Double sine and cosine (whose own angle 2πy is rounded by up to 4.4e-16 near 2π), not to
    /// the Float kernels' 1e-5.
    @Test("sinCos2Pi, the Fourier voice's seeds, agrees with libm's sin and cos of 2πy within 1e-15 over [0, 1), quarters exact")
    func seedSineCosine() {
        var worst = 0.0
        var j = 0
        while j < 400_000 {
            var y = SIMD8<Double>()
            for i in 0..<8 { y[i] = Double(j + i) / 400_000 }
            y[7] = y[7].nextUp  // off the grid too
            let (s, c) = sinCos2Pi(y)
            for i in 0..<8 {
                worst = max(worst, abs(s[i] - sin(2 * .pi * y[i])), abs(c[i] - cos(2 * .pi * y[i])))
            }
            j += 8
        }
        #expect(worst < 1e-15, "worst error \(worst)")
        let (s, c) = sinCos2Pi(SIMD8(0, 0.25, 0.5, 0.75, 0.125, 0.375, 1 - 0x1p-53, 0x1p-40))
        #expect(s[0] == 0 && c[0] == 1 && s[1] == 1 && c[1] == 0 && c[2] == -1 && s[3] == -1 && c[3] == 0)
        #expect(abs(s[4] - 0.5.squareRoot()) < 2e-16 && abs(c[5] + 0.5.squareRoot()) < 2e-16)
        #expect(abs(s[6] + 2 * .pi * 0x1p-53) < 1e-30 && c[6] == 1 && abs(s[7] - 2 * .pi * 0x1p-40) < 1e-28)
    }
}

/// Renders one voice directly at a known phase: a constant frequency f makes the phase of sample n
/// exactly n·f/rate, so every sample can be compared with the reference unit function.
private func renderVoice(wave: WaveType, frequency f: Double, terms: Int = 10, count: Int, rate: Double = 48_000) -> [Float] {
    let table = PresetTable([Shape.constant(f, wave: wave)])
    defer { table.deallocate() }
    var slot = ShapeSlot(pointCapacity: table.maxPoints)
    defer { slot.deallocate() }
    slot.load(0, from: table, sampleRate: rate)
    let scratch = VoiceScratch(capacity: count)
    defer { scratch.deallocate() }
    var voice = Voice()
    voice.stage = .playing
    voice.wave = wave
    voice.terms = terms
    voice.noteRatio = 1
    voice.frequency = f
    voice.ramp(to: 1, samples: 0)
    var bus = [Float](repeating: 0, count: count)
    bus.withUnsafeMutableBufferPointer { out in
        withUnsafeMutablePointer(to: &slot) { s in
            voice.render(count: count, intoPeriod: 0, slot: s, ratio: 1, halfStep: 0.5 / rate, scratch: scratch,
                         tables: BandLimitedTables.shared.everyWave, nyquistReciprocal: 2 / rate, into: out.baseAddress!)
        }
    }
    return bus
}

@Suite("Render kernels hold to the reference unit functions")
struct KernelTests {
    @Test("a rendered sine, triangle and sawtooth voice equals UnitFunction at phase n·f/rate within 1e-5",
          arguments: [WaveType.sine, .triangle, .sawtooth])
    func naiveVoices(wave: WaveType) {
        let f = 441.0, rate = 48_000.0
        let out = renderVoice(wave: wave, frequency: f, count: 4000)
        var worst = 0.0
        for n in out.indices {
            let expected = UnitFunction.value(wave, at: Double(n) * f / rate, terms: 10)
            worst = max(worst, abs(Double(out[n]) - expected))
        }
        #expect(worst < 1e-5, "\(wave) worst error \(worst)")
    }

    @Test("a rendered square voice equals UnitFunction.square except within a hair of its jumps")
    func naiveSquare() {
        let f = 441.0, rate = 48_000.0
        let out = renderVoice(wave: .square, frequency: f, count: 4000)
        for n in out.indices {
            let t = UnitFunction.unitPhase(Double(n) * f / rate)
            if abs(t - 0.5) < 1e-6 || t < 1e-6 || t > 1 - 1e-6 { continue }
            #expect(Double(out[n]) == UnitFunction.square(t), "sample \(n) phase \(t)")
        }
    }

    @Test("a rendered Fourier voice equals the article's partial sums within 1e-5, for any term count a shape allows",
          arguments: [(WaveType.squareFourier, 8), (.triangleFourier, 9), (.sawtoothFourier, 12), (.squareFourier, 10),
                      (.triangleFourier, 512), (.squareFourier, 30), (.sawtoothFourier, 100), (.sawtoothFourier, 11),
                      (.squareFourier, Shape.maximumFourierTerms)])
    func fourierVoices(wave: WaveType, terms: Int) {
        let f = 55.0, rate = 48_000.0
        let out = renderVoice(wave: wave, frequency: f, terms: terms, count: 3000)
        var worst = 0.0
        for n in out.indices {
            let expected = UnitFunction.value(wave, at: Double(n) * f / rate, terms: terms)
            worst = max(worst, abs(Double(out[n]) - expected))
        }
        #expect(worst < 1e-5, "\(wave) × \(terms) worst error \(worst)")
    }

    /// AVX-512 builds sum four groups of eight at once, others two: every lane must come out the
    /// same bits either way (a render is the same file whatever CPU made it).
    @Test("the Fourier sums give the same bits four groups at a time as two, for every wave and term count",
          arguments: [WaveType.sawtoothFourier, .squareFourier, .triangleFourier])
    func fourierGroupWidths(wave: WaveType) {
        let scratch = VoiceScratch(capacity: 32)
        defer { scratch.deallocate() }
        var random = SystemRandomNumberGenerator()
        for terms in [1, 2, 3, 10, 11, 100, Shape.maximumFourierTerms] {
            var p = [SIMD8<Double>](repeating: SIMD8(), count: 4)
            for g in 0..<4 { for i in 0..<8 { p[g][i] = Double.random(in: 0..<1, using: &random) } }
            p[0][0] = 0; p[0][1] = 0.25; p[0][2] = 0.5; p[3][7] = 1 - 0x1p-53
            let four = Voice.partialSums(wave, terms: terms, weights: scratch.fourierWeights, (p[0], p[1], p[2], p[3]))
            let (a, b) = Voice.partialSums(wave, terms: terms, weights: scratch.fourierWeights, p[0], p[1])
            let (c, d) = Voice.partialSums(wave, terms: terms, weights: scratch.fourierWeights, p[2], p[3])
            for (g, (x, y)) in [(four.0, a), (four.1, b), (four.2, c), (four.3, d)].enumerated() {
                for i in 0..<8 { #expect(x[i].bitPattern == y[i].bitPattern, "\(wave) × \(terms), group \(g) lane \(i): \(x[i]) vs \(y[i])") }
            }
        }
    }

    @Test("a rendered band-limited voice equals its harmonic sums (partials below Nyquist, blended across a quarter octave) within 1e-5",
          arguments: [(WaveType.bandLimitedSawtooth, 5000.0), (.bandLimitedSquare, 2500.0), (.bandLimitedTriangle, 3100.0),
                      (.bandLimitedSawtooth, 9000.0)])
    func bandLimitedVoices(wave: WaveType, f: Double) {
        let rate = 48_000.0
        let out = renderVoice(wave: wave, frequency: f, count: 3000)
        // The voice blends the level whose partials fit below Nyquist with the next, leaner one,
        // choosing them with 1 % headroom for a rising frequency.
        let (level, weight) = BandLimitedTables.blend(frequency: f * 1.01, nyquistReciprocal: 2 / rate)
        let rich = BandLimitedTables.harmonics(level: level)
        let lean = BandLimitedTables.harmonics(level: level + 1)
        #expect(Double(rich) * f < rate / 2)
        #expect(level == BandLimitedTables.level(frequency: f * 1.01, nyquistReciprocal: 2 / rate))
        var worst = 0.0
        for n in out.indices {
            let t = Double(n) * f / rate
            let spectrum = BandLimitedSpectrum(wave)!
            let expected = (1 - Double(weight)) * spectrum.value(at: t, harmonics: rich) + Double(weight) * spectrum.value(at: t, harmonics: lean)
            worst = max(worst, abs(Double(out[n]) - expected))
        }
        #expect(worst < 1e-5, "\(wave) at \(f) Hz worst error \(worst)")
    }

    /// Level L keeps its partials below Nyquist for r = 1.01·f·512/Nyquist in [2^((L−1)/4), 2^(L/4));
    /// the voice plays that level alone through the band's lower three quarters (in r) and fades
    /// to the next level across the top quarter, reaching it at the top.
    @Test("a band-limited voice plays its level alone below the top quarter of the level's band and blends toward the next across it, within 1e-5 of the harmonic sums",
          arguments: [(WaveType.bandLimitedSawtooth, 20, 0.4), (.bandLimitedSawtooth, 20, 0.9), (.bandLimitedSquare, 17, 0.05),
                      (.bandLimitedTriangle, 24, 0.7), (.bandLimitedSquare, 12, 0.8), (.bandLimitedSawtooth, 28, 0.97)])
    func bandLimitedBlendOnlyAtTheTop(wave: WaveType, level: Int, place: Double) {
        let rate = 48_000.0
        let low = exp2(Double(level - 1) / 4), high = exp2(Double(level) / 4)
        let f = (low + place * (high - low)) * (rate / 2) / 512 / 1.01
        let weight = place < 0.75 ? 0 : (place - 0.75) / 0.25
        let rich = BandLimitedTables.harmonics(level: level), lean = BandLimitedTables.harmonics(level: level + 1)
        #expect(Double(rich) * f * 1.01 < rate / 2 && rich > lean)
        let out = renderVoice(wave: wave, frequency: f, count: 3000)
        let spectrum = BandLimitedSpectrum(wave)!
        var worst = 0.0
        for n in out.indices {
            let t = Double(n) * f / rate
            let expected = (1 - weight) * spectrum.value(at: t, harmonics: rich) + weight * spectrum.value(at: t, harmonics: lean)
            worst = max(worst, abs(Double(out[n]) - expected))
        }
        #expect(worst < 1e-5, "\(wave) at \(f) Hz (level \(level), \(place) of its band) worst error \(worst)")
    }
}
