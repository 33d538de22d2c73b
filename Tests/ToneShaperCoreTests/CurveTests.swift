import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

@Suite("Fidelity N and the frequency curve a note follows")
struct CurveTests {
    static let pulses: [Shape.Point] = [30.0, 440, 50, 440, 50, 440, 50].enumerated().map {
        Shape.Point(time: Double($0.offset) / 6, frequency: $0.element)
    }
    static let articleCurve: [Shape.Point] = [(0.0, 54.0), (0.231, 460.0), (0.846, 54.0), (1.0, 360.0)].map {
        Shape.Point(time: $0.0, frequency: $0.1)
    }

    static func shape(_ points: [Shape.Point], fidelity: Int, duration: Double = 1, wave: WaveType = .sine) -> Shape {
        Shape(name: "curve", points: points.map { Shape.Point(time: $0.time * duration, frequency: $0.frequency) },
              duration: duration, minFrequency: 20, maxFrequency: 1000, wave: wave, amplitude: 0.5, fidelity: fidelity)
    }

    @Test("the article's pulses [30,440,50,440,50,440,50] at N = 6 land on x = 0…6")
    func pulsesAtSix() {
        let curve = Self.shape(Self.pulses, fidelity: 6).userIFCurve()
        #expect(curve.map(\.x) == [0, 1, 2, 3, 4, 5, 6])
        #expect(curve.map(\.frequency) == [30, 440, 50, 440, 50, 440, 50])
        // Scaling N scales the grid: N = 600 puts them on multiples of 100.
        #expect(Self.shape(Self.pulses, fidelity: 600).userIFCurve().map(\.x) == [0, 100, 200, 300, 400, 500, 600])
    }

    @Test("the article's interpolation example (0,54),(0.231,460),(0.846,54),(1,360) at N = 500 gives x = 0, 115, 423, 500")
    func articleCurveAt500() {
        let curve = Self.shape(Self.articleCurve, fidelity: 500).userIFCurve()
        #expect(curve.map(\.x) == [0, 115, 423, 500])
        #expect(curve.map(\.frequency) == [54, 460, 54, 360])
        // The same points over a 3 s shape quantise the same way (times are normalised first).
        #expect(Self.shape(Self.articleCurve, fidelity: 500, duration: 3).userIFCurve().map(\.x) == [0, 115, 423, 500])
        // And a low N truncates them: Int(0.231·2) = 0, Int(0.846·2) = 1.
        #expect(Self.shape(Self.articleCurve, fidelity: 2).userIFCurve().map(\.x) == [0, 0, 1, 2])
    }

    @Test("the article's 36 interpolated values for that curve are reproduced by sampling the quantised curve")
    func articleThirtySix() {
        let curve = Self.shape(Self.articleCurve, fidelity: 500).userIFCurve()
        let sampler = CurveSampler(userIFCurve: curve.map { (x: Double($0.x), frequency: $0.frequency) }, sampleCount: 36)
        var values = [Double](repeating: 0, count: 36)
        values.withUnsafeMutableBufferPointer { sampler.next(into: $0) }
        let printed = [54, 105, 156, 206, 257, 308, 359, 409, 460, 442, 423, 405, 386, 368, 349, 331, 312, 294, 275, 257,
                       239, 220, 202, 183, 165, 146, 128, 109, 91, 72, 54, 115, 176, 238, 299, 360]
        // The article rounds sample positions to integers before interpolating (vDSP), the core samples the
        // straight segments exactly: the two agree within the change over half a sample, ≤ 30 Hz here.
        for i in 0..<36 { #expect(abs(values[i] - Double(printed[i])) <= 30, "sample \(i): \(values[i]) vs \(printed[i])") }
        #expect(values.first == 54 && values.last == 360)
    }

    @Test("a rendered shape follows its curve: the article's pulses reach 440 Hz at ⅙, ½, ⅚ s and 50 Hz at ⅓, ⅔ s")
    func renderedPulsesFollowTheCurve() throws {
        let x = try Bench.note(Self.shape(Self.pulses, fidelity: 6), seconds: 1)
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        for t in [1.0 / 6, 0.5, 5.0 / 6] {
            let f = try #require(Signal.frequency(at: t, track: track))
            #expect(f > 380 && f < 445, "at \(t) s: \(f) Hz")
        }
        for t in [1.0 / 3, 2.0 / 3] {
            let f = try #require(Signal.frequency(at: t, track: track))
            #expect(f > 45 && f < 80, "at \(t) s: \(f) Hz")
        }
        // Halfway up a ramp: (50 + 440)/2 at 5/12 s.
        let mid = try #require(Signal.frequency(at: 5.0 / 12, track: track))
        #expect(abs(mid - 245) < 15, "at 5/12 s: \(mid) Hz")
    }

    @Test("a low N audibly coarsens the shape: N = 2 and N = 500 give different frequency trajectories")
    func lowFidelityCoarsens() throws {
        let fine = try Bench.note(Self.shape(Self.articleCurve, fidelity: 500), seconds: 1)
        let coarse = try Bench.note(Self.shape(Self.articleCurve, fidelity: 2), seconds: 1)
        let fineTrack = Signal.frequencyTrack(fine, sampleRate: Bench.rate)
        let coarseTrack = Signal.frequencyTrack(coarse, sampleRate: Bench.rate)
        // N = 500 peaks at 460 Hz at 0.231 s; N = 2 moved that peak onto x = 0 (dropped) and is still at 54 Hz there.
        let finePeak = try #require(Signal.frequency(at: 0.231, track: fineTrack))
        let coarseAtPeak = try #require(Signal.frequency(at: 0.231, track: coarseTrack))
        #expect(abs(finePeak - 460) < 15, "N = 500 at 0.231 s: \(finePeak) Hz")
        #expect(coarseAtPeak < 70, "N = 2 at 0.231 s: \(coarseAtPeak) Hz")
        // Over the whole pass the two trajectories differ by hundreds of Hz somewhere.
        var largest = 0.0
        for t in stride(from: 0.05, through: 0.95, by: 0.05) {
            if let a = Signal.frequency(at: t, track: fineTrack), let b = Signal.frequency(at: t, track: coarseTrack) {
                largest = max(largest, abs(a - b))
            }
        }
        #expect(largest > 200, "largest trajectory difference \(largest) Hz")
        // At N = 2 the curve is 54 Hz flat, then a ramp to 360 Hz over the second half.
        let coarseLate = try #require(Signal.frequency(at: 0.75, track: coarseTrack))
        #expect(abs(coarseLate - 207) < 15, "N = 2 at 0.75 s: \(coarseLate) Hz")
    }

    @Test("N = 1 (the knob's minimum) still plays: a straight line from the first to the last frequency")
    func fidelityOne() throws {
        let x = try Bench.note(Self.shape(Self.articleCurve, fidelity: 1), seconds: 1)
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        let f = try #require(Signal.frequency(at: 0.5, track: track))
        #expect(abs(f - (54 + 360) / 2) < 12, "N = 1 at 0.5 s: \(f) Hz")
    }
}
