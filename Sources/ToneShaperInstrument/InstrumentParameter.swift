#if canImport(Glibc)
import Glibc
#endif
import ToneShaperCore

/// One control a host shows, automates and saves: the plugins' ports and the README's list are
/// made from this table, so they cannot drift apart from what the engine does with a value.
///
/// Each is one of the mapping file's parameters (`Parameter`), over the range the standard
/// controller map gives its knob (or the parameter's own limits where no knob reaches it), and
/// is applied exactly as a controller applies it: to every channel, ramped or glided as the CC
/// path ramps it.
public struct InstrumentParameter: Sendable, Equatable {
    public enum Unit: String, Sendable {
        case none, seconds, semitones
    }
    /// Position in `InstrumentParameter.table`: the id events and ports use.
    public let id: Int
    /// The mapping file's name for it ("echo-delay"), and its LV2 symbol ("echo_delay").
    public let parameter: Parameter
    public let name: String
    public let unit: Unit
    public let range: ClosedRange<Double>
    /// What a host shows before the knob is moved (the plugin applies a value only when it moves,
    /// so an unmoved knob leaves each preset's own setting alone).
    public let defaultValue: Double
    /// Equal ratios per step (times, fidelity), as the standard map's exponential knobs.
    public let isLogarithmic: Bool
    public let isInteger: Bool
    /// Named values (the wave types), for hosts that show a menu.
    public let choices: [String]

    public var symbol: String { parameter.rawValue.replacingHyphens() }

    /// Whether a CLAP host may modulate it for one note alone (a voice's own level or fidelity);
    /// the others are the whole instrument's, as their controllers are.
    public var isModulatedPerNote: Bool { parameter == .amplitude || parameter == .fidelity }

    /// A value in the parameter's unit from 0...1, along the knob's curve.
    public func value(normalised x: Double) -> Double {
        let t = min(max(x, 0), 1)
        let v = isLogarithmic ? range.lowerBound * pow(range.upperBound / range.lowerBound, t)
                              : range.lowerBound + (range.upperBound - range.lowerBound) * t
        return clamp(isInteger ? v.rounded() : v)
    }

    /// The 0...1 position of a value along the knob's curve.
    public func normalised(_ value: Double) -> Double {
        let v = clamp(value)
        return isLogarithmic ? log(v / range.lowerBound) / log(range.upperBound / range.lowerBound)
                             : (v - range.lowerBound) / (range.upperBound - range.lowerBound)
    }

    /// The value held to the range (NaN: the default).
    public func clamp(_ value: Double) -> Double {
        value.isNaN ? defaultValue : min(max(value, range.lowerBound), range.upperBound)
    }

    /// The host-facing controls, in port order.
    public static let table: [InstrumentParameter] = {
        let knobs = ControllerMap.standard.assignments
        var rows: [InstrumentParameter] = []
        func add(_ parameter: Parameter, _ name: String, _ unit: Unit, default value: Double,
                 range: ClosedRange<Double>? = nil, integer: Bool = false, choices: [String] = []) {
            let knob = knobs.first { $0.parameter == parameter && $0.source == .controlChange }
            let span = range ?? knob.map { $0.minimum...$0.maximum } ?? parameter.limits
            rows.append(InstrumentParameter(id: rows.count, parameter: parameter, name: name, unit: unit, range: span,
                                            defaultValue: value, isLogarithmic: knob?.curve == .exponential,
                                            isInteger: integer, choices: choices))
        }
        add(.amplitude, "Amplitude", .none, default: 0.5)
        add(.volume, "Volume", .none, default: 1)
        add(.pan, "Pan", .none, default: 0)
        add(.duration, "Duration", .seconds, default: 1)
        add(.fidelity, "Fidelity", .none, default: 100, integer: true)
        add(.attack, "Attack", .seconds, default: 0.005)
        add(.release, "Release", .seconds, default: 0.05)
        add(.echoDelay, "Echo delay", .seconds, default: 0.25)
        add(.echoVolume, "Echo volume", .none, default: 0)
        add(.vibrato, "Vibrato", .semitones, default: 0)
        add(.pitchBendRange, "Pitch bend range", .semitones, default: 2)
        add(.waveType, "Wave type", .none, default: 0, integer: true, choices: WaveType.allCases.map(\.rawValue))
        return rows
    }()
}

extension String {
    /// "echo-delay" → "echo_delay": LV2 symbols are C identifiers.
    func replacingHyphens() -> String { String(map { $0 == "-" ? "_" : $0 }) }
}

extension InstrumentParameter {
    /// The README's list of the plugin's controls (a test holds README.md to it).
    public static var markdownTable: String {
        var lines = ["| Control | LV2 port symbol | CLAP id | Unit | Range | Default | Knob | CLAP per note |",
                     "|---|---|---|---|---|---|---|---|"]
        for row in table {
            let unit = row.unit == .none ? "" : row.unit.rawValue
            let knob = !row.choices.isEmpty ? row.choices.joined(separator: ", ")
                : row.isLogarithmic ? "exponential" : row.isInteger ? "whole steps" : "linear"
            lines.append("| \(row.name) | `\(row.symbol)` | \(row.id) | \(unit) | \(LV2Turtle.decimal(row.range.lowerBound)) … \(LV2Turtle.decimal(row.range.upperBound)) | \(LV2Turtle.decimal(row.defaultValue)) | \(knob) | \(row.isModulatedPerNote ? "yes" : "") |")
        }
        return lines.joined(separator: "\n")
    }
}
