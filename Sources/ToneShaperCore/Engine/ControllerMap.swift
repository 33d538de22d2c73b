/// What a controller can change. Values are in the parameter's own unit (seconds, semitones, …).
public enum Parameter: String, CaseIterable, Codable, Sendable, BitwiseCopyable {
    /// Shape amplitude, 0...1 (replaces the preset's amplitude).
    case amplitude
    /// Channel volume, 0...1: scales the amplitude (CC 7), so a mixer move keeps presets' balance.
    case volume
    /// Shape duration in seconds: how long one pass through the curve takes.
    case duration
    /// Fidelity N (integer ≥ 1).
    case fidelity
    case echoDelay = "echo-delay"
    case echoVolume = "echo-volume"
    /// Wave type by index into `WaveType.allCases` (applies to notes started afterwards).
    case waveType = "wave-type"
    case attack
    case release
    case pitchBendRange = "pitch-bend-range"
    /// Stereo position, −1 (left) … 1 (right).
    case pan
    /// Vibrato depth in semitones (mod wheel).
    case vibrato
    /// Sustain pedal: values ≥ 0.5 hold released notes.
    case sustain

    /// The range a value is clamped to before it reaches the engine.
    public var limits: ClosedRange<Double> {
        switch self {
        case .amplitude, .volume: return 0...1
        case .duration: return 0.001...600
        case .fidelity: return 1...Double(Shape.maximumFidelity)
        case .echoDelay: return 0.001...Shape.maximumEchoDelay
        case .echoVolume: return 0...0.95
        case .waveType: return 0...Double(WaveType.count - 1)
        case .attack: return 0...10
        case .release: return 0...30
        case .pitchBendRange: return 0...48
        case .pan: return -1...1
        case .vibrato: return 0...2
        case .sustain: return 0...1
        }
    }
}

/// How a 0...127 controller value is spread over a parameter's min...max.
public enum ControllerCurve: String, Codable, Sendable {
    case linear
    /// Equal ratios per step: the natural feel for times and frequencies (min must be > 0).
    case exponential
}

/// One controller assignment: a controller (and optionally channel) to a parameter over a range.
public struct ControllerAssignment: Equatable, Sendable {
    /// What the player moves. Pressure matters most in MPE, where each note has a channel of its
    /// own, so a channel's pressure is that one note's.
    public enum Source: String, Sendable, CaseIterable {
        /// A control change; `controller` says which.
        case controlChange = "cc"
        /// Channel pressure (aftertouch): reaches the channel's parameter, like a CC.
        case channelPressure = "pressure"
        /// Polyphonic key pressure: one key's pressure. On `amplitude` it sets that note's own
        /// level (each voice has a gain for it); any other parameter belongs to the channel (its
        /// shape slot, bus or bend) and moves for the whole channel.
        case polyPressure = "polypressure"
    }
    public var source: Source
    /// The CC number (0 for the pressure sources).
    public var controller: UInt8
    /// nil = any channel.
    public var channel: UInt8?
    public var parameter: Parameter
    public var minimum: Double
    public var maximum: Double
    public var curve: ControllerCurve

    public init(source: Source = .controlChange, controller: UInt8 = 0, channel: UInt8? = nil, parameter: Parameter,
                minimum: Double, maximum: Double, curve: ControllerCurve = .linear) {
        self.source = source
        self.controller = source == .controlChange ? controller : 0
        self.channel = channel; self.parameter = parameter
        self.minimum = minimum; self.maximum = maximum; self.curve = curve
    }

    /// The parameter value for a controller (or pressure) value 0...127.
    @inline(__always) public func value(for cc: UInt8) -> Double {
        let x = Double(min(cc, 127)) / 127
        let v: Double
        switch curve {
        case .linear: v = minimum + (maximum - minimum) * x
        case .exponential: v = minimum * _pow(maximum / minimum, x)
        }
        return min(max(v, parameter.limits.lowerBound), parameter.limits.upperBound)
    }
}

/// Controller number → parameter, for every channel: a flat table of 16 channels × (128 CCs,
/// channel pressure, poly pressure), so a lookup on the audio thread is one index, no search and
/// no allocation.
public struct ControllerMap: Sendable {
    public private(set) var assignments: [ControllerAssignment]
    private var table: [Int32]  // index into assignments, −1 = unassigned (a file may have any number of lines)
    /// Table entries per channel: the 128 CCs, then channel pressure, then poly pressure.
    private static let sources = 130

    @inline(__always) private static func column(_ source: ControllerAssignment.Source, _ controller: UInt8) -> Int {
        switch source {
        case .controlChange: return Int(controller & 127)
        case .channelPressure: return 128
        case .polyPressure: return 129
        }
    }

    public init(_ assignments: [ControllerAssignment]) {
        self.assignments = assignments
        table = [Int32](repeating: -1, count: 16 * Self.sources)
        // Later lines win; a channel-specific line wins over an any-channel line.
        for (i, a) in assignments.enumerated() where a.channel == nil {
            for ch in 0..<16 { table[ch * Self.sources + Self.column(a.source, a.controller)] = Int32(truncatingIfNeeded: i) }
        }
        for (i, a) in assignments.enumerated() {
            if let ch = a.channel { table[Int(ch) * Self.sources + Self.column(a.source, a.controller)] = Int32(truncatingIfNeeded: i) }
        }
    }

    @inline(__always) public func assignment(channel: UInt8, controller: UInt8) -> ControllerAssignment? {
        assignment(channel: channel, source: .controlChange, controller: controller)
    }

    /// What `source` (a CC number for `.controlChange`) drives on `channel`, if anything.
    @inline(__always) public func assignment(channel: UInt8, source: ControllerAssignment.Source,
                                             controller: UInt8 = 0) -> ControllerAssignment? {
        let i = table[Int(channel & 15) * Self.sources + Self.column(source, controller)]
        return i < 0 ? nil : assignments[Int(i)]
    }

    /// The default mapping (also shipped as Mappings/default.map): common keyboard controls.
    public static let standard = ControllerMap([
        ControllerAssignment(controller: 1, parameter: .vibrato, minimum: 0, maximum: 1),
        ControllerAssignment(controller: 7, parameter: .volume, minimum: 0, maximum: 1),
        ControllerAssignment(controller: 10, parameter: .pan, minimum: -1, maximum: 1),
        ControllerAssignment(controller: 64, parameter: .sustain, minimum: 0, maximum: 1),
        ControllerAssignment(controller: 70, parameter: .amplitude, minimum: 0, maximum: 1),
        ControllerAssignment(controller: 71, parameter: .duration, minimum: 0.05, maximum: 8, curve: .exponential),
        ControllerAssignment(controller: 74, parameter: .fidelity, minimum: 1, maximum: 2000, curve: .exponential),
        ControllerAssignment(controller: 72, parameter: .release, minimum: 0.005, maximum: 5, curve: .exponential),
        ControllerAssignment(controller: 73, parameter: .attack, minimum: 0.001, maximum: 2, curve: .exponential),
        ControllerAssignment(controller: 91, parameter: .echoVolume, minimum: 0, maximum: 0.9),
        ControllerAssignment(controller: 94, parameter: .echoDelay, minimum: 0.02, maximum: 1.5, curve: .exponential),
    ])
}
