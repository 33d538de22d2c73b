import Foundation

/// Tick positions people read at a glance: 1, 2 or 5 times a power of ten.
public enum NiceNumbers {
    /// Heckbert's nice number near `x` (> 0): rounded to the closest, or else the next one up.
    public static func nice(_ x: Double, round: Bool) -> Double {
        precondition(x > 0 && x.isFinite, "nice numbers need a positive finite span")
        let exponent = (log10(x)).rounded(.down)
        let power = pow(10, exponent)
        let fraction = x / power
        let f: Double
        if round {
            f = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10
        } else {
            f = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10
        }
        return f * power
    }

    /// The next step on the 1-2-5 ladder.
    static func larger(_ step: Double) -> Double {
        let power = pow(10, (log10(step) + 1e-9).rounded(.down))
        let m = (step / power).rounded()
        return (m < 2 ? 2 : m < 5 ? 5 : 10) * power
    }

    /// The largest nice step that puts no more than `maxCount` ticks in [lower, upper].
    public static func step(lower: Double, upper: Double, maxCount: Int) -> Double {
        let span = upper - lower
        guard span > 0 else { return 1 }
        var step = nice(span / Double(max(1, maxCount - 1)), round: true)
        while multiples(of: step, in: lower, upper).count > max(2, maxCount) { step = larger(step) }
        return step
    }

    /// Multiples of `step` inside [lower, upper], tolerant of rounding at both ends.
    public static func multiples(of step: Double, in lower: Double, _ upper: Double) -> [Double] {
        let eps = step * 1e-9
        let first = ((lower - eps) / step).rounded(.up)
        let last = ((upper + eps) / step).rounded(.down)
        guard last >= first else { return [] }
        return (0...Int(last - first)).map { (first + Double($0)) * step }.map { abs($0) < eps ? 0 : $0 }
    }

    /// 1-2-5 ticks per decade inside [lower, upper] (both > 0); sparser when there are many decades.
    public static func logTicks(lower: Double, upper: Double, maxCount: Int) -> [Double] {
        precondition(lower > 0 && upper > lower)
        for mantissas in [[1.0, 2, 5], [1.0, 3], [1.0]] {
            var ticks: [Double] = []
            var power = pow(10, log10(lower).rounded(.down))
            while power <= upper * 1.000001 {
                for m in mantissas {
                    let v = m * power
                    if v >= lower * 0.999999 && v <= upper * 1.000001 { ticks.append(v) }
                }
                power *= 10
            }
            if ticks.count <= maxCount || mantissas.count == 1 { return ticks }
        }
        return []
    }

    /// A tick label with just the decimals the step needs ("0.25", "440", never "-0").
    public static func label(_ value: Double, step: Double) -> String {
        let decimals = step >= 1 ? 0 : min(6, Int((-log10(step) - 1e-9).rounded(.up)))
        var text = String(format: "%.\(decimals)f", value)
        if text.hasPrefix("-"), text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { text.removeFirst() }
        return text
    }
}

/// One axis of a chart: its range, scale, ticks, tick labels and title (with units).
public struct Axis: Sendable {
    public enum Scale: Sendable, Equatable { case linear, logarithmic }

    public var lower: Double
    public var upper: Double
    public var scale: Scale
    public var ticks: [Double]
    public var labels: [String]
    public var title: String

    public init(lower: Double, upper: Double, scale: Scale, ticks: [Double], labels: [String], title: String) {
        precondition(upper > lower, "an axis needs upper > lower")
        precondition(scale == .linear || lower > 0, "a logarithmic axis needs lower > 0")
        self.lower = lower; self.upper = upper; self.scale = scale
        self.ticks = ticks; self.labels = labels; self.title = title
    }

    /// Where `value` sits along the axis, 0 at `lower` and 1 at `upper`.
    public func fraction(_ value: Double) -> Double {
        switch scale {
        case .linear: return (value - lower) / (upper - lower)
        case .logarithmic: return log(max(value, .leastNormalMagnitude) / lower) / log(upper / lower)
        }
    }

    /// Roughly how wide a label is in DejaVu Sans; enough to keep neighbours apart.
    static func labelWidth(_ label: String, fontSize: Double) -> Double {
        Double(label.count) * 0.62 * fontSize
    }

    /// A linear axis with the finest 1-2-5 step whose labels fit `length` pixels comfortably.
    /// `expand` widens the range to the enclosing ticks (good for frequency, not for time).
    public static func linear(lower: Double, upper: Double, title: String, length: Double, horizontal: Bool,
                              expand: Bool, fontSize: Double = 11) -> Axis {
        var lo = lower, hi = upper
        if !(hi > lo) { lo -= 0.5; hi += 0.5 }  // a flat curve still gets a readable axis around it
        // Walk up the ladder from a step far too fine; the first that fits wins.
        var step = NiceNumbers.nice((hi - lo) / 100, round: false)
        var lastWithTwoTicks: Axis?
        while true {
            let a = expand ? (lo / step).rounded(.down) * step : lo
            let b = expand ? (hi / step).rounded(.up) * step : hi
            let ticks = NiceNumbers.multiples(of: step, in: a, b)
            if ticks.count < 2 {
                if let lastWithTwoTicks { return lastWithTwoTicks }
                // Not even two nice ticks fit: label the ends themselves.
                let ends = [a, b]
                return Axis(lower: a, upper: b, scale: .linear, ticks: ends,
                            labels: ends.map { NiceNumbers.label($0, step: NiceNumbers.nice(b - a, round: true) / 10) },
                            title: title)
            }
            let labels = ticks.map { NiceNumbers.label($0, step: step) }
            let axis = Axis(lower: a, upper: b, scale: .linear, ticks: ticks, labels: labels, title: title)
            let spacing = length * step / (b - a)
            let needed = horizontal ? max((labels.map { labelWidth($0, fontSize: fontSize) }.max() ?? 0) + 12, 64)
                                    : max(fontSize * 1.9, 26)
            if spacing >= needed { return axis }
            lastWithTwoTicks = axis
            step = NiceNumbers.larger(step)
        }
    }

    /// A logarithmic axis with 1-2-5 ticks per decade, thinned until labels fit.
    public static func logarithmic(lower: Double, upper: Double, title: String, length: Double, horizontal: Bool,
                                   fontSize: Double = 11) -> Axis {
        var maxCount = max(2, Int(length / (horizontal ? 45 : 22)))
        while true {
            let ticks = NiceNumbers.logTicks(lower: lower, upper: upper, maxCount: maxCount)
            let labels = ticks.map { NiceNumbers.label($0, step: $0 < 1 ? $0 : 1) }
            let axis = Axis(lower: lower, upper: upper, scale: .logarithmic, ticks: ticks, labels: labels, title: title)
            // The tightest gap on a log axis is between the last two ticks of a decade.
            var fits = true
            for i in 1..<max(1, ticks.count) {
                let gap = (axis.fraction(ticks[i]) - axis.fraction(ticks[i - 1])) * length
                let needed = horizontal
                    ? (labelWidth(labels[i], fontSize: fontSize) + labelWidth(labels[i - 1], fontSize: fontSize)) / 2 + 8
                    : fontSize * 1.5
                if gap < needed { fits = false; break }
            }
            if fits || maxCount <= 2 { return axis }
            maxCount = min(maxCount - 1, ticks.count - 1)
        }
    }
}
