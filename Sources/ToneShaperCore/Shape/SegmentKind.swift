/// How the curve goes from a point to the next one: the kind belongs to the segment that begins at
/// the point (the last point's kind has no segment and is only kept).
///
/// The kinds are part of the model the engine plays, not only of the drawing (as Surge XT's MSEG
/// segment types are): the engine's curve is built from them (`FrequencyCurve.build`).
public enum SegmentKind: String, CaseIterable, Sendable, BitwiseCopyable {
    /// Hz linear in time: the article's segment, and the default, so every file without kinds
    /// plays exactly as before.
    case linear
    /// Constant semitones per second between the two frequencies: the glide a musician hears as
    /// straight (f₀·(f₁/f₀)^s over the segment, s from 0 to 1).
    case exponential
    /// Stays at the point's frequency until the next point's time, then steps to it.
    case hold

    /// The one-line rule a file's third point field must follow.
    static let rule = "must be " + allCases.map { "\"\($0.rawValue)\"" }.dropLast().joined(separator: ", ")
        + " or \"\(allCases.last!.rawValue)\""
}
