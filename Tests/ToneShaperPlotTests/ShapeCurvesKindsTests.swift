import Foundation
import Testing
import ToneShaperCore
@testable import ToneShaperPlot

/// `toneshaper plot` draws each segment kind as it sounds: the played line is the engine's curve.
@Suite("Segment kinds in the shape plot")
struct ShapeCurvesKindsTests {
    static let kinds = Shape(name: "kinds", points: [.init(time: 0, frequency: 110, kind: .exponential), .init(time: 0.5, frequency: 880, kind: .hold),
                                                     .init(time: 0.75, frequency: 440), .init(time: 1, frequency: 220)],
                             duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: 1000)

    /// The polyline's frequency at time t (the value before a step at t).
    static func frequency(at t: Double, _ line: [ShapeCurves.Sample]) -> Double {
        for i in 1..<line.count where line[i].time >= t {
            let a = line[i - 1], b = line[i]
            return b.time == a.time ? a.frequency : a.frequency + (b.frequency - a.frequency) * (t - a.time) / (b.time - a.time)
        }
        return line.last!.frequency
    }

    @Test("the played line glides exponentially (311 Hz halfway up 110 → 880), holds 880 Hz, steps to 440 and then falls straight")
    func playedCurve() throws {
        let c = ShapeCurves(shape: Self.kinds, sampleRate: 8000)
        let span = 7999.0 / 8000  // the last point is reached at the pass's last sample
        #expect(abs(Self.frequency(at: 0.25 * span, c.played) - 311.13) < 0.2)
        #expect(abs(Self.frequency(at: 0.6 * span, c.played) - 880) < 1e-9)
        #expect(abs(Self.frequency(at: 0.875 * span, c.played) - 330) < 1e-6)
        // The hold's step: two vertices at the next point's time, 880 then 440.
        let step = c.played.indices.filter { $0 > 0 && c.played[$0].time == c.played[$0 - 1].time }
        try #require(step.count == 1)
        #expect(c.played[step[0] - 1].frequency == 880 && c.played[step[0]].frequency == 440)
        #expect(abs(c.played[step[0]].time - 0.75 * span) < 1e-9)
    }

    @Test("the SVG's played polyline and its dashed root line (another note) both bend with the glide and step at the hold")
    func svgDrawsTheKinds() throws {
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: Self.kinds, note: Self.kinds.rootNote + 12, sampleRate: 8000))
        for name in ["played", "root"] {
            let line = polylinePoints(try #require(nodes.first { $0.name == "polyline" && $0.hasClass(name) }).attributes["points"]!)
            #expect(line.count > 20, "\(name): \(line.count) points, the glide is drawn as a curve")
            // Exactly one vertical run: the hold's step (SVG y grows downward: 880 → 440 goes down the page).
            let verticals = (1..<line.count).filter { line[$0].x == line[$0 - 1].x && line[$0].y != line[$0 - 1].y }
            #expect(verticals.count == 1, "\(name)")
            #expect(verticals.allSatisfy { line[$0].y > line[$0 - 1].y }, "\(name)")
        }
    }
}
