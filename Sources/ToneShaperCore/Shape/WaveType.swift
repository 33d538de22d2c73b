/// The periodic unit function s(x) a shape is sampled with (period 1, see the ToneShaper article).
///
/// The first seven are the article's; the band-limited ones keep every harmonic below Nyquist for
/// the instantaneous frequency of each sample, so a drawn sweep does not alias.
public enum WaveType: String, Codable, CaseIterable, Sendable {
    case sine
    case square
    case triangle
    case sawtooth
    case squareFourier = "square-fourier"
    case triangleFourier = "triangle-fourier"
    case sawtoothFourier = "sawtooth-fourier"
    case bandLimitedSquare = "band-limited-square"
    case bandLimitedTriangle = "band-limited-triangle"
    case bandLimitedSawtooth = "band-limited-sawtooth"
    case noise

    /// Number of wave types (a constant, so the audio thread never builds `allCases`).
    public static let count = 11

    /// The wave type at position `index` of `allCases` (clamped), for a controller selecting the
    /// wave; a switch, so the audio thread allocates nothing. A test keeps it in step with allCases.
    public init(index: Int) {
        switch index {
        case ...0: self = .sine
        case 1: self = .square
        case 2: self = .triangle
        case 3: self = .sawtooth
        case 4: self = .squareFourier
        case 5: self = .triangleFourier
        case 6: self = .sawtoothFourier
        case 7: self = .bandLimitedSquare
        case 8: self = .bandLimitedTriangle
        case 9: self = .bandLimitedSawtooth
        default: self = .noise
        }
    }

    public var isBandLimited: Bool {
        self == .bandLimitedSquare || self == .bandLimitedTriangle || self == .bandLimitedSawtooth
    }
    public var isFourierSeries: Bool {
        self == .squareFourier || self == .triangleFourier || self == .sawtoothFourier
    }
}
