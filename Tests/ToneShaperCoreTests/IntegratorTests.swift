import Foundation
import TestSupport
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// Integrates `values` piecewise, `sizes` samples at a time (cycling through `sizes`), with one integrator.
private func integratePiecewise(_ values: [Double], step: Double, sizes: [Int]) -> [Double] {
    var integrator = PiecewiseIntegrator(step: step)
    var out = [Double](repeating: .nan, count: values.count)
    var start = 0, k = 0
    values.withUnsafeBufferPointer { v in
        out.withUnsafeMutableBufferPointer { o in
            while start < values.count {
                let n = min(sizes[k % sizes.count], values.count - start)
                integrator.integrate(UnsafeBufferPointer(rebasing: v[start..<(start + n)]),
                                     into: UnsafeMutableBufferPointer(rebasing: o[start..<(start + n)]))
                start += n
                k += 1
            }
        }
    }
    return out
}

/// The article's Simpson integrator (vDSP_vsimpsD's definition), written here only to show it is not additive.
private func simpson(_ a: [Double], step: Double) -> [Double] {
    var c = [Double](repeating: 0, count: a.count)
    if a.count > 1 { c[1] = step * (a[0] + a[1]) / 2 }
    if a.count > 2 { for n in 2..<a.count { c[n] = c[n - 2] + step * (a[n - 2] + 4 * a[n - 1] + a[n]) / 3 } }
    return c
}

/// The article's piecewise procedure: overlap one sample, integrate, drop the first, add the carried total.
private func piecewiseByArticle(_ v: [Double], step: Double, split: Int, rule: ([Double], Double) -> [Double]) -> [Double] {
    let first = rule(Array(v[0..<split]), step)
    var second = rule(Array(v[(split - 1)...]), step)
    second.removeFirst()
    return first + second.map { $0 + first.last! }
}

private func sampled(_ sampler: CurveSampler, partition sizes: [Int], total: Int) -> [Double] {
    var out: [Double] = []
    var done = 0, k = 0
    while done < total {
        let n = min(sizes[k % sizes.count], total - done)
        var buffer = [Double](repeating: .nan, count: n)
        buffer.withUnsafeMutableBufferPointer { sampler.next(into: $0) }
        out += buffer
        done += n
        k += 1
    }
    return out
}

private func rounded3(_ x: [Double]) -> [Double] { x.map { ($0 * 1000).rounded() / 1000 } }

@Suite("Piecewise interpolation and integration (the article's examples)")
struct IntegratorTests {
    static let article15 = [6.3, 6.3, 6.3, 7.5, 8.7, 9.9, 11.1, 9.975, 8.85, 7.725, 6.6, 5.475, 4.35, 3.225, 2.1]
    static let curve15: [(x: Double, frequency: Double)] = [(1, 6.3), (3, 11.1), (7, 2.1)]

    @Test("the article's 15-sample interpolation, in partitions of 5, gives its printed values")
    func articleInterpolationInFives() {
        let s = CurveSampler(userIFCurve: Self.curve15, sampleCount: 15)
        #expect(rounded3(sampled(s, partition: [5], total: 15)) == Self.article15)
    }

    @Test("the same interpolation in one call, and in other partitions, gives the same values",
          arguments: [[15], [1], [2, 3], [7, 8], [4], [14, 1], [1, 13, 1]])
    func articleInterpolationAnyPartition(sizes: [Int]) {
        let s = CurveSampler(userIFCurve: Self.curve15, sampleCount: 15)
        let values = sampled(s, partition: sizes, total: 15)
        #expect(rounded3(values) == Self.article15)
        let whole = sampled(CurveSampler(userIFCurve: Self.curve15, sampleCount: 15), partition: [15], total: 15)
        for i in values.indices { #expect(abs(values[i] - whole[i]) < 1e-12) }
    }

    @Test("the article's constant-1 example: ∫1 over [0, 2.5] at step ¼, whole and in two overlapping parts")
    func constantOne() {
        let ones = [Double](repeating: 1, count: 11)
        let expected = (0...10).map { Double($0) * 0.25 }
        #expect(PiecewiseIntegrator.integrateWhole(ones, step: 0.25) == expected)
        #expect(integratePiecewise(ones, step: 0.25, sizes: [7, 4]) == expected)
        #expect(integratePiecewise(ones, step: 0.25, sizes: [1]) == expected)
    }

    @Test("the article's trapezoid list for [4,5,2,8,6,3,1,9,5,3,4,7,8] at step ¼, whole and piecewise")
    func trapezoidList() {
        let samples: [Double] = [4, 5, 2, 8, 6, 3, 1, 9, 5, 3, 4, 7, 8]
        let expected = [0.0, 1.125, 2.0, 3.25, 5.0, 6.125, 6.625, 7.875, 9.625, 10.625, 11.5, 12.875, 14.75]
        #expect(PiecewiseIntegrator.integrateWhole(samples, step: 0.25) == expected)
        // [4,5,2,8,6,3,1,9] then [5,3,4,7,8]: the integrator carries the 9 across the boundary itself.
        #expect(integratePiecewise(samples, step: 0.25, sizes: [8, 5]) == expected)
        for sizes in [[1], [3], [5, 8], [12, 1], [2, 7]] {
            let p = integratePiecewise(samples, step: 0.25, sizes: sizes)
            for i in p.indices { #expect(abs(p[i] - expected[i]) < 1e-12, "sizes \(sizes) index \(i)") }
        }
        // The article's own overlap procedure with the trapezoid rule is additive too.
        let article = piecewiseByArticle(samples, step: 0.25, split: 8) { PiecewiseIntegrator.integrateWhole($0, step: $1) }
        #expect(article == expected)
    }

    @Test("Simpson's rule is not additive: the article's split changes its result (why the core uses trapezoids)")
    func simpsonIsNotAdditive() {
        let samples: [Double] = [4, 5, 2, 8, 6, 3, 1, 9, 5, 3, 4, 7, 8]
        let whole = simpson(samples, step: 0.25)
        // The article's printed Simpson values check this little integrator.
        let printed = [0.0, 1.125, 2.1666666666666665, 2.875, 5.5, 5.791666666666666, 7.083333333333333,
                       7.124999999999999, 10.583333333333332, 9.791666666666666, 12.333333333333332,
                       11.958333333333332, 15.666666666666666]
        for i in whole.indices { #expect(abs(whole[i] - printed[i]) < 1e-12) }
        let pieces = piecewiseByArticle(samples, step: 0.25, split: 8, rule: simpson)
        #expect(abs(pieces[8] - 8.875) < 1e-12)
        #expect(abs(pieces.last! - 13.958333333333332) < 1e-12)
        #expect(abs(pieces.last! - whole.last!) > 1)
    }

    @Test("44,100 random frequencies in 20…22,050 Hz: piecewise integration in any buffer size equals the whole",
          arguments: [[64], [512], [8192], [1], [7], [333], [1000], [1, 7, 333, 1000, 64]])
    func randomBuffers(sizes: [Int]) {
        var rng = SplitMix64(seed: 0x70_6E_53_68_61_70_65_72)
        let rate = 44_100.0
        let v = (0..<44_100).map { _ in Double.random(in: 20.0...22_050, using: &rng) }
        let whole = PiecewiseIntegrator.integrateWhole(v, step: 1 / rate)
        let pieces = integratePiecewise(v, step: 1 / rate, sizes: sizes)
        var worst = 0.0
        for i in v.indices.dropFirst() { worst = max(worst, abs(pieces[i] - whole[i]) / abs(whole[i])) }
        #expect(worst < 1e-9, "worst relative difference \(worst)")
        #expect(pieces[0] == 0)
        // Simpson's rule, split the same way, drifts far apart (the article measures tens of cycles).
        if sizes == [512] {
            let simpsonWhole = simpson(v, step: 1 / rate)
            let simpsonPieces = piecewiseByArticle(v, step: 1 / rate, split: 513, rule: simpson)
            var drift = 0.0
            for i in v.indices { drift = max(drift, abs(simpsonPieces[i] - simpsonWhole[i])) }
            #expect(drift > 1e-3, "Simpson split drift \(drift)")
        }
    }

    @Test("the integrator's advance(to:) is the same recurrence as its buffer form")
    func advanceMatchesBuffers() {
        var rng = SplitMix64(seed: 99)
        let v = (0..<1000).map { _ in Double.random(in: 20...20_000, using: &rng) }
        var a = PiecewiseIntegrator(step: 1 / 48_000)
        a.start(value: v[0])
        var stepwise = [0.0]
        for x in v.dropFirst() { stepwise.append(a.advance(to: x)) }
        let whole = PiecewiseIntegrator.integrateWhole(v, step: 1 / 48_000)
        for i in v.indices { #expect(abs(stepwise[i] - whole[i]) <= 1e-12 * max(1, whole[i])) }
    }

    @Test("a constant-frequency shape renders at exactly its frequency (within 0.1 %)",
          arguments: [440.0, 1000.0, 3520.0, 97.0])
    func constantFrequency(f: Double) throws {
        let x = try Bench.note(Bench.tone(f), seconds: 0.25)
        let measured = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.02)..<Bench.seconds(0.24)))
        #expect(abs(measured / f - 1) < 0.001, "measured \(measured) Hz for \(f) Hz")
    }

    @Test("a transposed note renders at f·2^((note − root)/12) (within 0.1 %)",
          arguments: [81, 57, 62, 76, 100])
    func transposedNote(note: Int) throws {
        let shape = Bench.tone(440, rootNote: 69)
        let x = try Bench.note(shape, note: UInt8(note), seconds: 0.25)
        let measured = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.02)..<Bench.seconds(0.24)))
        let expected = Bench.equalTempered(note, root: 69, frequency: 440)
        #expect(abs(measured / expected - 1) < 0.001, "note \(note): measured \(measured) Hz, expected \(expected) Hz")
    }
}
