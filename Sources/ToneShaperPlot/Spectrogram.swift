import Foundation

/// Short-time spectrum of a mono signal: Hann-windowed real FFTs, levels in dBFS.
///
/// Frames are centred on multiples of the hop (zero-padded at both ends), so frame k describes
/// the moment k·hop/rate and the picture starts at 0 s. Levels are scaled so a full-scale sine
/// centred on a bin reads 0 dBFS (2/Σw corrects the window's coherent gain).
public struct Spectrogram: Sendable {
    public let fftSize: Int
    public let hop: Int
    public let sampleRate: Double
    /// Length of the analysed signal, in samples.
    public let sampleCount: Int
    public let frameCount: Int
    /// Bins 0...fftSize/2.
    public let binCount: Int
    /// Levels in dBFS, frame after frame: `levels[frame * binCount + bin]`.
    public let levels: [Float]
    /// The quietest level stored; silence reads this instead of −∞.
    public static let silence: Float = -200

    public init(samples: [Float], sampleRate: Double, fftSize: Int = 2048, overlap: Double = 0.75) {
        precondition(sampleRate > 0)
        precondition(overlap >= 0 && overlap < 1, "overlap must be in [0, 1)")
        let fft = RealFFT(size: fftSize)
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        hop = max(1, Int((Double(fftSize) * (1 - overlap)).rounded()))
        sampleCount = samples.count
        frameCount = samples.count / hop + 1
        binCount = fftSize / 2 + 1
        let window = (0..<fftSize).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(fftSize)) }
        let gain = 2 / window.reduce(0, +)
        var levels = [Float](repeating: Self.silence, count: frameCount * binCount)
        var frame = [Double](repeating: 0, count: fftSize)
        var re = [Double](repeating: 0, count: binCount), im = [Double](repeating: 0, count: binCount)
        let floorPower = pow(10, Double(Self.silence) / 10)
        for f in 0..<frameCount {
            let first = f * hop - fftSize / 2
            for n in 0..<fftSize {
                let i = first + n
                frame[n] = i >= 0 && i < samples.count ? Double(samples[i]) * window[n] : 0
            }
            frame.withUnsafeBufferPointer { x in
                re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { fft.transform(x, re: r, im: $0) } }
            }
            for k in 0..<binCount {
                let power = (re[k] * re[k] + im[k] * im[k]) * gain * gain
                levels[f * binCount + k] = Float(10 * log10(max(power, floorPower)))
            }
        }
        self.levels = levels
    }

    public var nyquist: Double { sampleRate / 2 }
    public var duration: Double { Double(sampleCount) / sampleRate }
    public func frequency(ofBin bin: Int) -> Double { Double(bin) * sampleRate / Double(fftSize) }
    public func time(ofFrame frame: Int) -> Double { Double(frame * hop) / sampleRate }
    public func level(frame: Int, bin: Int) -> Float { levels[frame * binCount + bin] }

    /// The loudest bin of a frame (ties: the lowest).
    public func peakBin(frame: Int) -> Int {
        var best = 0
        for k in 1..<binCount where level(frame: frame, bin: k) > level(frame: frame, bin: best) { best = k }
        return best
    }

    public enum FrequencyScale: Sendable, Equatable {
        case linear
        /// Logarithmic from `lowest` Hz up to Nyquist.
        case logarithmic(lowest: Double)
    }

    /// Reduces the spectrogram to at most `columns` × `rows` cells for drawing.
    ///
    /// Each cell keeps the loudest level it covers (max-pooling), so a narrow tone or a short
    /// click survives downsampling instead of being averaged into the background.
    public func grid(columns maxColumns: Int, rows maxRows: Int, frequencyScale: FrequencyScale = .linear) -> SpectrogramGrid {
        precondition(maxColumns >= 1 && maxRows >= 1)
        let columns = min(maxColumns, frameCount)
        // Frame ranges per column.
        let frameStart = (0...columns).map { $0 * frameCount / columns }
        // Frequency edges per row, bottom row first.
        var edges: [Double]
        let rows: Int
        switch frequencyScale {
        case .linear:
            rows = min(maxRows, binCount)
            edges = (0...rows).map { nyquist * Double($0) / Double(rows) }
        case .logarithmic(let lowest):
            rows = maxRows
            let lo = max(lowest, 1e-3)
            edges = (0...rows).map { lo * pow(nyquist / lo, Double($0) / Double(rows)) }
        }
        let binWidth = sampleRate / Double(fftSize)
        // Bins whose centre falls in each row; a row narrower than a bin takes the nearest bin.
        var binRanges: [ClosedRange<Int>] = []
        if case .linear = frequencyScale, rows == binCount {
            // One row per bin, edges halfway between bin centres.
            edges = [0] + (1..<binCount).map { (Double($0) - 0.5) * binWidth } + [nyquist]
        }
        for r in 0..<rows {
            let a = Int((edges[r] / binWidth).rounded(.up)), b = Int((edges[r + 1] / binWidth).rounded(.up)) - 1
            if b >= a {
                binRanges.append(min(a, binCount - 1)...min(b, binCount - 1))
            } else {
                let nearest = min(binCount - 1, Int(((edges[r] + edges[r + 1]) / 2 / binWidth).rounded()))
                binRanges.append(nearest...nearest)
            }
        }
        // The top row also owns the Nyquist bin.
        if case .linear = frequencyScale, let last = binRanges.last { binRanges[rows - 1] = last.lowerBound...(binCount - 1) }
        var values = [Float](repeating: Self.silence, count: columns * rows)
        for c in 0..<columns {
            for r in 0..<rows {
                var best = Self.silence
                for f in frameStart[c]..<frameStart[c + 1] {
                    let base = f * binCount
                    for k in binRanges[r] where levels[base + k] > best { best = levels[base + k] }
                }
                values[r * columns + c] = best
            }
        }
        let timeEdges = (0...columns).map { (Double(frameStart[$0] * hop) - Double(hop) / 2) / sampleRate }
        return SpectrogramGrid(columns: columns, rows: rows, values: values, frequencyEdges: edges, timeEdges: timeEdges)
    }
}

/// A drawable spectrogram: `values[row * columns + column]` in dBFS, row 0 the lowest frequencies.
public struct SpectrogramGrid: Sendable {
    public let columns: Int
    public let rows: Int
    public let values: [Float]
    /// rows + 1 frequencies (Hz): row r covers frequencyEdges[r]..<frequencyEdges[r + 1].
    public let frequencyEdges: [Double]
    /// columns + 1 times (s): column c covers timeEdges[c]..<timeEdges[c + 1] (frame centres ± hop/2).
    public let timeEdges: [Double]

    public func value(column: Int, row: Int) -> Float { values[row * columns + column] }

    /// The row whose frequency range holds `frequency`.
    public func row(containing frequency: Double) -> Int? {
        (0..<rows).first { frequencyEdges[$0] <= frequency && frequency < frequencyEdges[$0 + 1] }
    }

    /// The loudest row of a column.
    public func peakRow(column: Int) -> Int {
        var best = 0
        for r in 1..<rows where value(column: column, row: r) > value(column: column, row: best) { best = r }
        return best
    }
}
