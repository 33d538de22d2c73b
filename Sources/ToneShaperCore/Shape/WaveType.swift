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

    /// Stable small integer, used when a controller selects the wave type.
    public var index: Int { WaveType.allCases.firstIndex(of: self)! }

    public var isBandLimited: Bool {
        self == .bandLimitedSquare || self == .bandLimitedTriangle || self == .bandLimitedSawtooth
    }
    public var isFourierSeries: Bool {
        self == .squareFourier || self == .triangleFourier || self == .sawtoothFourier
    }
}
