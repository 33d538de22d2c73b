import Foundation
import Testing
@testable import ToneShaperCore

/// The straight pieces the engine walks for each segment kind, within the storage allocated for them.
@Suite("Segment kinds on the engine's curve")
struct SegmentKindCurveTests {
    /// A curve built as a slot builds it: points quantised to [0, N], storage for `budget` extra pieces.
    static func curve(_ shape: Shape, budget: Int = Shape.pieceBudget) -> FrequencyCurve {
        var curve = FrequencyCurve(capacity: shape.points.count, pieceBudget: budget)
        let xs = shape.userIFCurve().map { Double($0.x) }
        curve.build(xs: xs, ys: shape.points.map(\.frequency), kinds: shape.points.map(\.kind), count: shape.points.count)
        return curve
    }

    static func cents(_ a: Double, _ b: Double) -> Double { abs(1200 * log2(a / b)) }

    @Test("at N = 1,000,000 an exponential three-octave glide is ~145 straight pieces, never more than 0.045 cent from the exact glide")
    func exponentialAccuracy() {
        let shape = Shape(name: "glide", points: [.init(time: 0, frequency: 110, kind: .exponential), .init(time: 1, frequency: 880)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: Shape.maximumFidelity)
        let curve = Self.curve(shape)
        defer { curve.deallocate() }
        let n = Double(Shape.maximumFidelity)
        #expect(curve.lastX == n)
        #expect((140...150).contains(curve.segmentCount - 2), "\(curve.segmentCount - 2) pieces")
        var worst = 0.0
        for k in 0...100_000 {
            let u = Double(k) * n / 100_000
            worst = max(worst, Self.cents(curve.value(at: u), 110 * pow(8, u / n)))
        }
        #expect(worst < 0.046, "\(worst) cent")
        #expect(worst > 0.01)  // the pieces really are chords, not the exact curve
    }

    @Test("at a low N an exponential segment is its values on the integer grid, joined by straight lines")
    func exponentialOnTheGrid() {
        let shape = Shape(name: "glide", points: [.init(time: 0, frequency: 110, kind: .exponential), .init(time: 1, frequency: 880)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: 3)
        let curve = Self.curve(shape)
        defer { curve.deallocate() }
        for x in 0...3 { #expect(abs(curve.value(at: Double(x)) - 110 * pow(2, Double(x))) < 1e-9) }
        #expect(abs(curve.value(at: 0.5) - 165) < 1e-9)  // halfway between 110 and 220
    }

    @Test("a hold is flat at its point's frequency and steps at the next point's grid position")
    func holdSteps() {
        let shape = Shape(name: "hold", points: [.init(time: 0, frequency: 220, kind: .hold), .init(time: 0.49, frequency: 440),
                                                 .init(time: 1, frequency: 330)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: 4)
        let curve = Self.curve(shape)
        defer { curve.deallocate() }
        // N = 4: 0.49 lands on x = 1.
        #expect(curve.value(at: 0) == 220 && curve.value(at: 0.999) == 220)
        #expect(curve.value(at: 1) == 440)
        #expect(shape.playedCurve().map(\.x) == [0, 1, 1, 4])
        #expect(shape.playedCurve().map(\.frequency) == [220, 220, 440, 330])
    }

    @Test("the played curve of a shape with only linear segments is its quantised points, exactly")
    func linearPlayedCurve() {
        let shape = Shape(name: "article", points: [.init(time: 0, frequency: 54), .init(time: 0.231, frequency: 460),
                                                    .init(time: 0.846, frequency: 54), .init(time: 1, frequency: 360)],
                          duration: 1, minFrequency: 20, maxFrequency: 920, fidelity: 4)
        #expect(shape.playedCurve().map(\.x) == [0, 3, 4])
        #expect(shape.playedCurve().map(\.frequency) == [54, 54, 360])
    }

    @Test("a shape asking far more pieces than the budget (4096 points, each a 12-octave exponential glide, N = 1,000,000) stays inside its storage, every piece's ends on its glide")
    func budgetHolds() {
        let count = Shape.maximumPoints
        let shape = Shape(name: "wild", points: (0..<count).map {
                              .init(time: Double($0) / Double(count - 1), frequency: $0 % 2 == 0 ? 20 : 81_920, kind: .exponential) },
                          duration: 1, minFrequency: 20, maxFrequency: 100_000, fidelity: Shape.maximumFidelity)
        let curve = Self.curve(shape)
        defer { curve.deallocate() }
        #expect(curve.segmentCount <= curve.capacity)
        // One segment per point, the tail, and the whole budget shared among the glides.
        #expect(curve.segmentCount == count + 1 + Shape.pieceBudget, "\(curve.segmentCount) segments")
        #expect(curve.lastX == Double(Shape.maximumFidelity))
        // Every piece starts and ends on the exponential between its two points.
        let xs = shape.userIFCurve().map { Double($0.x) }
        var a = 0
        for j in 1..<(curve.segmentCount - 1) {
            let x1 = curve.end[j], x0 = curve.end[j - 1]
            while xs[a + 1] < x1 { a += 1 }
            let f0 = shape.points[a].frequency, f1 = shape.points[a + 1].frequency
            for x in [x0, x1] {
                let exact = f0 * pow(f1 / f0, (x - xs[a]) / (xs[a + 1] - xs[a]))
                #expect(Self.cents(curve.intercept[j] + curve.slope[j] * x, exact) < 1e-4, "piece \(j) at \(x)")
            }
        }
    }

    @Test("without a piece budget (a slot sized for linear shapes) an exponential segment is one straight piece, not an overrun")
    func noBudget() {
        let shape = Shape(name: "glide", points: [.init(time: 0, frequency: 110, kind: .exponential), .init(time: 1, frequency: 880)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: 1000)
        let curve = Self.curve(shape, budget: 0)
        defer { curve.deallocate() }
        #expect(curve.segmentCount == 3)
        #expect(curve.value(at: 500) == 495)
    }
}
