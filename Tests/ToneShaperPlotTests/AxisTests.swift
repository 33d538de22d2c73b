import Foundation
import Testing
@testable import ToneShaperPlot

@Suite("Axes and nice numbers")
struct AxisTests {
    /// True when `step` is 1, 2 or 5 times a power of ten.
    func isNice(_ step: Double) -> Bool {
        let mantissa = step / pow(10, log10(step).rounded(.down))
        return [1.0, 2, 5, 10].contains { abs(mantissa - $0) < 1e-9 }
    }

    @Test("0…880 Hz gets 100 Hz steps and an axis from 0 to 900")
    func frequencyRange() {
        let axis = Axis.linear(lower: 20, upper: 880, title: "frequency (Hz)", length: 255, horizontal: false, expand: true)
        #expect(axis.lower == 0 && axis.upper == 900)
        #expect(axis.ticks == stride(from: 0.0, through: 900, by: 100).map { $0 })
        #expect(axis.labels.first == "0" && axis.labels.last == "900")
    }

    @Test("ticks are nice, increasing, inside the range, and labelled without excess decimals",
          arguments: [(0.0, 1.09), (-0.23, 0.23), (0.0, 24_000.0), (600.0, 1200.0), (0.001, 0.0042), (-120.0, 0.0)])
    func niceTicks(range: (Double, Double)) {
        for length in [120.0, 255, 480, 860] {
            let axis = Axis.linear(lower: range.0, upper: range.1, title: "t", length: length, horizontal: true, expand: false)
            #expect(axis.ticks.count >= 2, "\(range) at \(length) px")
            let step = axis.ticks[1] - axis.ticks[0]
            #expect(isNice(step), "step \(step)")
            #expect(zip(axis.ticks, axis.ticks.dropFirst()).allSatisfy { $0 < $1 })
            #expect(axis.ticks.allSatisfy { $0 >= range.0 - 1e-12 && $0 <= range.1 + 1e-12 })
            let values = axis.labels.map { Double($0)! }
            for (v, t) in zip(values, axis.ticks) { #expect(abs(v - t) <= step * 1e-6, "label \(v) for tick \(t)") }
            #expect(!axis.labels.contains("-0") && !axis.labels.contains("-0.0"))
        }
    }

    @Test("horizontal tick labels never overlap, whatever the axis length")
    func noOverlap() {
        for length in stride(from: 80.0, through: 1200, by: 37) {
            for upper in [1.09, 4.58, 24_000, 123_456] {
                let axis = Axis.linear(lower: 0, upper: upper, title: "x", length: length, horizontal: true, expand: false)
                let centres = axis.ticks.map { axis.fraction($0) * length }
                for i in 1..<centres.count {
                    let half = (Axis.labelWidth(axis.labels[i], fontSize: 11) + Axis.labelWidth(axis.labels[i - 1], fontSize: 11)) / 2
                    if axis.ticks.count > 2 {
                        #expect(centres[i] - centres[i - 1] >= half, "length \(length), upper \(upper)")
                    }
                }
            }
        }
    }

    @Test("a logarithmic axis from 20 Hz to Nyquist ticks 1-2-5 per decade and maps decades evenly")
    func logarithmic() {
        let axis = Axis.logarithmic(lower: 20, upper: 24_000, title: "frequency (Hz)", length: 450, horizontal: false)
        #expect(axis.ticks.first == 20 && axis.ticks.contains(1000) && axis.ticks.last == 20_000)
        #expect(zip(axis.ticks, axis.ticks.dropFirst()).allSatisfy { $0 < $1 })
        #expect(abs((axis.fraction(1000) - axis.fraction(100)) - (axis.fraction(10_000) - axis.fraction(1000))) < 1e-12)
        #expect(abs(axis.fraction(20)) < 1e-12 && abs(axis.fraction(24_000) - 1) < 1e-12)
    }

    @Test("labels carry the decimals of the step")
    func labels() {
        #expect(NiceNumbers.label(0.25, step: 0.05) == "0.25")
        #expect(NiceNumbers.label(440, step: 100) == "440")
        #expect(NiceNumbers.label(-0.0000001, step: 0.1) == "0.0")
        #expect(NiceNumbers.label(1.5, step: 0.5) == "1.5")
    }
}
