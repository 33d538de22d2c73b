import Foundation
import Testing
@testable import ToneShaperCore

/// The article's worked numbers, asserted on what a voice actually walks: the phase its render
/// loop integrates sample by sample (read through the Fourier waves' Double phase scratch), and
/// the instantaneous frequency recovered from it. The reference CurveSampler and
/// PiecewiseIntegrator are held to the same numbers, so the specification covers the code that
/// makes the sound and the references cannot drift from it.
@Suite("The article's numbers on the voice's own walk")
struct ArticleNumbersOnTheWalkTests {
    /// Walks a voice over a curve through the points (x, frequency) with step `du`, for `count`
    /// samples, one sample apart by `halfStep·2` seconds; returns the phase each sample was output at.
    static func walk(xs: [Double], frequencies: [Double], du: Double, count: Int, halfStep: Double,
                     blocks: [Int]? = nil) -> [Double] {
        var slot = ShapeSlot(pointCapacity: xs.count)
        defer { slot.deallocate() }
        xs.withUnsafeBufferPointer { x in
            frequencies.withUnsafeBufferPointer { f in slot.curve.build(xs: x.baseAddress!, ys: f.baseAddress!, count: xs.count) }
        }
        slot.du = du
        slot.period = slot.curve.lastX + du
        slot.loopPoint = slot.period - 0.5 * du
        let scratch = VoiceScratch(capacity: count)
        defer { scratch.deallocate() }
        var voice = Voice()
        voice.stage = .playing
        voice.wave = .sawtoothFourier
        voice.terms = 1
        voice.noteRatio = 1
        voice.frequencyRatio = 1
        voice.anchor(at: 0, step: du)
        voice.curveLastX = slot.curve.lastX
        voice.curveGeneration = slot.generation
        voice.frequency = slot.curve.value(at: 0)
        voice.ramp(to: 1, samples: 0)
        var phases: [Double] = []
        var bus = [Float](repeating: 0, count: count)
        var done = 0
        var sizes = (blocks ?? [count]).makeIterator()
        while done < count {
            let n = min(sizes.next() ?? count, count - done)
            bus.withUnsafeMutableBufferPointer { out in
                withUnsafeMutablePointer(to: &slot) { s in
                    voice.render(count: n, intoPeriod: 0, slot: s, ratio: 1, halfStep: halfStep, scratch: scratch,
                                 tables: BandLimitedTables.shared.everyWave, nyquistReciprocal: 1e-9, into: out.baseAddress!)
                }
            }
            phases += (0..<n).map { scratch.precisePhase[$0] }
            done += n
        }
        return phases
    }

    /// Frequencies from consecutive phases: φ[n+1] − φ[n] = (f[n] + f[n+1])·halfStep (the trapezoid),
    /// starting from the known first frequency. Small steps keep every difference below one cycle.
    static func frequencies(from phases: [Double], first: Double, halfStep: Double) -> [Double] {
        var f = [first]
        for n in 1..<phases.count {
            var d = phases[n] - phases[n - 1]
            if d < 0 { d += 1 }
            f.append(d / halfStep - f[n - 1])
        }
        return f
    }

    @Test("the 15-sample interpolation of (1, 6.3), (3, 11.1), (7, 2.1): the voice's frequency, in any blocks, is the article's list")
    func fifteenSamples() {
        let h = 0.5e-3
        for blocks in [[15], [5], [1], [7, 8], [2, 3]] {
            let phases = Self.walk(xs: [1, 3, 7], frequencies: [6.3, 11.1, 2.1], du: 0.5, count: 15, halfStep: h, blocks: blocks)
            let f = Self.frequencies(from: phases, first: 6.3, halfStep: h)
            #expect(f.map { ($0 * 1000).rounded() / 1000 } == IntegratorTests.article15, "blocks \(blocks)")
        }
        // The reference sampler says the same.
        let reference = CurveSampler(userIFCurve: IntegratorTests.curve15, sampleCount: 15)
        var values = [Double](repeating: 0, count: 15)
        values.withUnsafeMutableBufferPointer { reference.next(into: $0) }
        #expect(values.map { ($0 * 1000).rounded() / 1000 } == IntegratorTests.article15)
    }

    @Test("the trapezoid list for [4,5,2,8,6,3,1,9,5,3,4,7,8] at step ¼ is the phase the voice integrates (mod 1), in any blocks")
    func trapezoidList() {
        let samples: [Double] = [4, 5, 2, 8, 6, 3, 1, 9, 5, 3, 4, 7, 8]
        let expected = [0.0, 1.125, 2.0, 3.25, 5.0, 6.125, 6.625, 7.875, 9.625, 10.625, 11.5, 12.875, 14.75]
        for blocks in [[13], [8, 5], [1], [3], [12, 1]] {
            // One curve point per sample (du = 1), a sample every ¼ s: halfStep = ⅛.
            let phases = Self.walk(xs: samples.indices.map(Double.init), frequencies: samples, du: 1, count: 13,
                                   halfStep: 0.125, blocks: blocks)
            for i in 0..<13 {
                let wrapped = expected[i] - expected[i].rounded(.down)
                #expect(abs(phases[i] - wrapped) < 1e-12, "blocks \(blocks), sample \(i): \(phases[i]) vs \(wrapped)")
            }
        }
        #expect(PiecewiseIntegrator.integrateWhole(samples, step: 0.25) == expected)
    }

    @Test("the 36 values of the article's curve at N = 500 are the frequencies the voice walks, within half a sample's change")
    func thirtySix() throws {
        let shape = Shape(name: "article-curve", points: [.init(time: 0, frequency: 54), .init(time: 0.231, frequency: 460),
                                                          .init(time: 0.846, frequency: 54), .init(time: 1, frequency: 360)],
                          duration: 1, minFrequency: 20, maxFrequency: 920, fidelity: 500)
        let curve = shape.userIFCurve()
        #expect(curve.map(\.x) == [0, 115, 423, 500])
        let h = 1e-5
        let phases = Self.walk(xs: curve.map { Double($0.x) }, frequencies: curve.map(\.frequency), du: 500.0 / 35, count: 36, halfStep: h)
        let walked = Self.frequencies(from: phases, first: 54, halfStep: h)
        let printed: [Double] = [54, 105, 156, 206, 257, 308, 359, 409, 460, 442, 423, 405, 386, 368, 349, 331, 312, 294, 275, 257,
                                 239, 220, 202, 183, 165, 146, 128, 109, 91, 72, 54, 115, 176, 238, 299, 360]
        for i in 0..<36 { #expect(abs(walked[i] - printed[i]) <= 30, "sample \(i): \(walked[i]) vs \(printed[i])") }
        #expect(abs(walked[35] - 360) < 1e-6)
        // And the reference sampler agrees with the walk to rounding.
        let reference = CurveSampler(userIFCurve: curve.map { (x: Double($0.x), frequency: $0.frequency) }, sampleCount: 36)
        var values = [Double](repeating: 0, count: 36)
        values.withUnsafeMutableBufferPointer { reference.next(into: $0) }
        for i in 0..<36 { #expect(abs(walked[i] - values[i]) < 1e-6, "sample \(i)") }
    }

    @Test("a long glide is integrated exactly: eight lanes at a time from the segment's anchor equal the sample-by-sample trapezoid, in any blocks")
    func longGlideClosedForm() {
        // 200,000 samples of one straight segment 30 → 2,000 Hz at 48 kHz, then the curve turns down: the
        // phase grows to tens of thousands of cycles inside the segment before it is anchored again.
        let h = 0.5 / 48_000, count = 250_000
        let xs = [0.0, 200_000, 250_000], fs = [30.0, 2_000, 500]
        var reference = [Double](repeating: 0, count: count)
        var phase = 0.0, f = fs[0]
        for n in 0..<count {
            reference[n] = phase - phase.rounded(.down)
            let u = Double(n + 1)
            let next = u <= xs[1] ? fs[0] + (fs[1] - fs[0]) * u / xs[1] : fs[1] + (fs[2] - fs[1]) * (u - xs[1]) / (xs[2] - xs[1])
            phase += (f + next) * h
            f = next
        }
        for blocks in [[256], [61, 7, 200, 1, 3], [count]] {
            let walked = Self.walk(xs: xs, frequencies: fs, du: 1, count: count, halfStep: h, blocks: blocks)
            var worst = 0.0
            for n in 0..<count {
                var d = abs(walked[n] - reference[n])
                d = min(d, 1 - d)  // either side of a wrap
                worst = max(worst, d)
            }
            #expect(worst < 1e-9, "blocks \(blocks): worst phase difference \(worst) cycles")
        }
    }
}
