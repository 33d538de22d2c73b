import Foundation
import Testing
@testable import ToneShaperPlot

@Suite("Real FFT")
struct FFTTests {
    /// X[k] = Σ x[n]·e^(−2πi·kn/N), computed the slow way.
    func directDFT(_ x: [Double]) -> (re: [Double], im: [Double]) {
        let n = x.count
        var re = [Double](repeating: 0, count: n / 2 + 1), im = re
        for k in 0...(n / 2) {
            for j in 0..<n {
                let angle = -2 * Double.pi * Double(k * j % n) / Double(n)
                re[k] += x[j] * cos(angle)
                im[k] += x[j] * sin(angle)
            }
        }
        return (re, im)
    }

    @Test("matches a direct DFT on random data for every size from 4 to 2048 points",
          arguments: [4, 8, 16, 64, 256, 1024, 2048])
    func matchesDirectDFT(size: Int) {
        var rng = SeededRandom(seed: UInt64(size) * 7919)
        let x = (0..<size).map { _ in Double.random(in: -1...1, using: &rng) }
        let fast = RealFFT(size: size).transform(x)
        let slow = directDFT(x)
        var worst = 0.0
        for k in 0...(size / 2) {
            worst = max(worst, abs(fast.re[k] - slow.re[k]), abs(fast.im[k] - slow.im[k]))
        }
        #expect(fast.re.count == size / 2 + 1)
        #expect(worst < 1e-9 * Double(size), "largest difference \(worst)")
    }

    @Test("a cosine on bin k puts N/2 into bin k and nothing elsewhere")
    func cosineOnBin() {
        let n = 512, k = 37
        let x = (0..<n).map { cos(2 * Double.pi * Double(k * $0) / Double(n)) }
        let X = RealFFT(size: n).transform(x)
        for bin in 0...(n / 2) {
            let magnitude = (X.re[bin] * X.re[bin] + X.im[bin] * X.im[bin]).squareRoot()
            #expect(abs(magnitude - (bin == k ? Double(n) / 2 : 0)) < 1e-8, "bin \(bin): \(magnitude)")
        }
    }

    @Test("reusing one instance gives the same answer for the same input (no state leaks between frames)")
    func reusable() {
        var rng = SeededRandom(seed: 42)
        let a = (0..<256).map { _ in Double.random(in: -1...1, using: &rng) }
        let b = (0..<256).map { _ in Double.random(in: -1...1, using: &rng) }
        let fft = RealFFT(size: 256)
        let first = fft.transform(a)
        _ = fft.transform(b)
        let again = fft.transform(a)
        #expect(first.re == again.re && first.im == again.im)
    }
}
