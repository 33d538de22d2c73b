import ToneShaperCore
import ToneShaperMIDI

/// What `toneshaper learn` needs: which controller moved, and a mapping line ready to paste.
public enum ControllerLearning {
    /// A controller a mapping file may assign. The channel mode messages (120...127) and the
    /// RPN/NRPN selectors (98...101) are handled by the engine itself, so moving them teaches nothing.
    public static func isLearnable(controller: UInt8) -> Bool {
        controller < 120 && !(98...101).contains(controller)
    }

    /// The first learnable control change among `messages`, in order.
    public static func firstControlChange(in messages: [MIDIMessage]) -> (channel: UInt8, controller: UInt8, value: UInt8)? {
        for message in messages {
            if case .controlChange(let channel, let controller, let value) = message, isLearnable(controller: controller) {
                return (channel, controller, value)
            }
        }
        return nil
    }

    /// The controller as a musician reads it: `cc 21 channel 1 (value 64)` (channel 1-based).
    public static func describe(channel: UInt8, controller: UInt8, value: UInt8) -> String {
        "cc \(controller) channel \(Int(channel) + 1) (value \(value))"
    }

    /// The range and curve a knob for `parameter` should sweep: the default mapping's, so a learnt
    /// knob feels like the built-in ones, and otherwise the parameter's useful span
    /// (every wave type; a bend range up to two octaves).
    public static func suggestedRange(for parameter: Parameter) -> (minimum: Double, maximum: Double, curve: ControllerCurve) {
        if let known = ControllerMap.standard.assignments.last(where: { $0.parameter == parameter }) {
            return (known.minimum, known.maximum, known.curve)
        }
        switch parameter {
        case .pitchBendRange: return (0, 24, .linear)
        default: return (parameter.limits.lowerBound, parameter.limits.upperBound, .linear)
        }
    }

    /// A line for a mapping file, e.g. `cc 21  fidelity  1 2000 exponential` (with `channel N` when
    /// the assignment should apply to one channel only). `ControllerMapFile.parse` reads it back.
    public static func mappingLine(controller: UInt8, parameter: Parameter, channel: UInt8? = nil) -> String {
        let range = suggestedRange(for: parameter)
        var line = "cc \(controller)  \(parameter.rawValue)  \(format(range.minimum)) \(format(range.maximum)) \(range.curve.rawValue)"
        if let channel { line += " channel \(Int(channel) + 1)" }
        return line
    }

    /// Shortest text that reads back as the same number: `1`, `2000`, `0.05`, `-1`.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
