import Foundation
import Testing
import ToneShaperCore
@testable import ToneShaperPlot

@Suite("Shape curves and waveform envelope")
struct ShapeCurvesTests {
    @Test("at the root note the played curve passes through the drawn points, spanning the engine's pass")
    func rootNote() {
        let c = ShapeCurves(shape: peakShape(), sampleRate: 8000)
        #expect(c.ratio == 1)
        #expect(c.played.map(\.frequency) == [30, 440, 50])
        #expect(c.drawn == c.played)
        // 8000 samples per pass: the last point is reached at sample 7999.
        #expect(abs(c.played.last!.time - 7999.0 / 8000) < 1e-12)
        #expect(c.cycleSeconds == 1)
    }

    @Test("an octave above the root doubles every played frequency; the untransposed points stay as drawn")
    func transposition() {
        let shape = peakShape()
        let c = ShapeCurves(shape: shape, note: shape.rootNote + 12, sampleRate: 8000)
        #expect(abs(c.ratio - 2) < 1e-12)
        #expect(c.played.map(\.frequency) == [60, 880, 100])
        #expect(c.drawn.map(\.frequency) == [60, 880, 100])
        #expect(c.untransposed.map(\.frequency) == [30, 440, 50])
        let fifthDown = ShapeCurves(shape: shape, note: shape.rootNote - 7, sampleRate: 8000)
        #expect(abs(fifthDown.played[1].frequency - 440 * pow(2, -7.0 / 12)) < 1e-9)
    }

    @Test("a low fidelity moves points to quantised times and keeps the first of points that collide, like the engine")
    func quantisation() {
        // The article's curve at N = 4: 0.231·4 = 0.92 → 0 collides with the first point and is dropped.
        let shape = Shape(name: "coarse", points: [.init(time: 0, frequency: 54), .init(time: 0.231, frequency: 460),
                                                   .init(time: 0.846, frequency: 54), .init(time: 1, frequency: 360)],
                          duration: 1, minFrequency: 20, maxFrequency: 920, fidelity: 4)
        let c = ShapeCurves(shape: shape, sampleRate: 1000)
        #expect(c.played.map(\.frequency) == [54, 54, 360])
        let span = 999.0 / 1000
        #expect(c.played.map(\.time) == [0, 3.0 / 4 * span, span])
        #expect(c.drawn.count == 4)  // the drawn dots still show where the user put the points
        #expect(!c.played.contains { $0.frequency == 460 })
    }

    @Test("several cycles repeat the curve one pass length apart")
    func cycles() {
        let c = ShapeCurves(shape: peakShape(), cycles: 3, sampleRate: 8000)
        #expect(c.played.count == 9 && c.drawn.count == 9)
        for k in 0..<3 { #expect(abs(c.played[3 * k + 1].time - (Double(k) + 3999.5 / 8000)) < 1e-12) }
    }

    @Test("the envelope keeps every sample when there are fewer samples than columns")
    func exactEnvelope() {
        let samples: [Float] = [0, 0.5, -0.25, 1]
        let e = WaveformEnvelope(samples: samples, columns: 100)
        #expect(e.isExact && e.columns == 4)
        #expect(e.maximum == samples && e.minimum == samples)
    }

    @Test("a long sine reduced to 100 columns keeps ±amplitude in every column, and a one-sample spike survives")
    func longEnvelope() {
        var samples = sineWave(440, amplitude: 0.8, count: 48_000, rate: 48_000)
        samples[30_000] = 0.99
        let e = WaveformEnvelope(samples: samples, columns: 100)
        #expect(!e.isExact && e.columns == 100)
        for c in 0..<100 where c != 62 {
            #expect(e.maximum[c] > 0.79 && e.maximum[c] <= 0.8 && e.minimum[c] < -0.79, "column \(c)")
        }
        #expect(e.column(ofSample: 30_000) == 62)
        #expect(e.maximum[62] == 0.99)
    }

    @Test("rendering through the engine gives the shape's waveform: silence at the start, sound of the preset's level")
    func engineRender() throws {
        let shape = peakShape()
        let (envelope, held) = try ShapePlot.renderWaveform(shape: shape, note: shape.rootNote, cycles: 2,
                                                           sampleRate: 8000, columns: 400)
        #expect(held == 16_000)
        #expect(envelope.received == envelope.totalSamples && envelope.totalSamples > held)
        let peak = max(envelope.maximum.max()!, -envelope.minimum.min()!)
        #expect(peak > 0.05 && peak <= Float(shape.amplitude) + 1e-6, "peak \(peak)")
        // After the release the voice is silent.
        #expect(abs(envelope.maximum.last!) < 0.01 && abs(envelope.minimum.last!) < 0.01)
    }
}
