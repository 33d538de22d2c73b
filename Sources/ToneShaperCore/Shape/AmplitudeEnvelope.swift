/// How loudness evolves over one cycle of the shape (the article's `scale(t)`).
///
/// The article's examples use a linear decay `1 - t/duration` and an exponential decay `exp(-2t)`.
public enum AmplitudeEnvelope: Equatable, Sendable {
    case constant
    /// 1 − t/duration over each cycle.
    case linearDecay
    /// exp(−rate·t), t in seconds from the start of each cycle.
    case exponentialDecay(rate: Double)

    /// Value at time t (seconds) within a cycle of the given duration.
    public func value(at t: Double, duration: Double) -> Double {
        switch self {
        case .constant: return 1
        case .linearDecay: return max(0, 1 - t / duration)
        case .exponentialDecay(let rate): return _exp(-rate * t)
        }
    }
}

extension AmplitudeEnvelope: Codable {
    private enum CodingKeys: String, CodingKey { case kind, rate }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try c.decode(String.self, forKey: .kind)
        switch kind {
        case "constant": self = .constant
        case "linear-decay": self = .linearDecay
        case "exponential-decay": self = .exponentialDecay(rate: try c.decodeIfPresent(Double.self, forKey: .rate) ?? 2)
        default:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: c,
                debugDescription: "unknown envelope kind '\(kind)' (expected constant, linear-decay, exponential-decay)")
        }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .constant: try c.encode("constant", forKey: .kind)
        case .linearDecay: try c.encode("linear-decay", forKey: .kind)
        case .exponentialDecay(let rate):
            try c.encode("exponential-decay", forKey: .kind)
            try c.encode(rate, forKey: .rate)
        }
    }
}
