import Foundation

/// Short-time spectrum of a mono signal: Hann-windowed real FFTs, levels in dBFS.
///
/// Frames are centred on multiples of the hop (zero-padded at both ends), so frame k describes
/// the moment k·hop/rate and the picture starts at 0 s. Levels are scaled so a full-scale sine
/// centred on a bin reads 0 dBFS (2/Σw corrects the window's coherent gain).
public struct Spectrogram: Sendable {
    public let fftSize: Int
    /// Samples between the kept frames (the analysis hop × `merged`).
    public let hop: Int
    /// Analysis frames merged into each kept frame (1 unless `maxFrames` was reached).
    public let merged: Int
    /// Samples between analysed frames.
    public var analysisHop: Int { hop / merged }
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
        var offset = 0
        self.init(sampleRate: sampleRate, fftSize: fftSize, overlap: overlap) { chunk in
            let n = min(chunk.count, samples.count - offset)
            for i in 0..<n { chunk[i] = samples[offset + i] }
            offset += n
            return n
        }
    }

    /// Analyses samples as `read` delivers them (it fills the buffer and returns how many it put
    /// there, 0 at the end), holding only one FFT window of them: a file of any length is streamed.
    /// The frames kept are at most `maxFrames`: when there would be more, neighbours are merged
    /// (each bin keeps the louder level), so the hop doubles and memory stays bounded while a
    /// short sound still shows. With the default, every frame is kept.
    public init(sampleRate: Double, fftSize: Int = 2048, overlap: Double = 0.75, maxFrames: Int = .max,
                read: (UnsafeMutableBufferPointer<Float>) throws -> Int) rethrows {
        precondition(sampleRate > 0)
        precondition(overlap >= 0 && overlap < 1, "overlap must be in [0, 1)")
        precondition(maxFrames >= 2)
        let maxFrames = maxFrames == .max ? maxFrames : maxFrames & ~1  // merged in pairs
        let fft = RealFFT(size: fftSize)
        self.fftSize = fftSize
        self.sampleRate = sampleRate
        let baseHop = max(1, Int((Double(fftSize) * (1 - overlap)).rounded()))
        let binCount = fftSize / 2 + 1
        self.binCount = binCount
        let window = (0..<fftSize).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(fftSize)) }
        let gain = 2 / window.reduce(0, +)
        let floorPower = pow(10, Double(Self.silence) / 10)
        var frame = [Double](repeating: 0, count: fftSize)
        var re = [Double](repeating: 0, count: binCount), im = [Double](repeating: 0, count: binCount)
        var levels: [Float] = []
        var columns = 0, framesPerColumn = 1

        /// Samples from absolute index `base` on: only what the next frames still need.
        var pending: [Float] = []
        var base = 0
        var total = 0
        let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8192)
        defer { chunk.deallocate() }
        var next = 0  // the next frame to compute; frame f is centred on sample f·hop
        var ended = false
        while true {
            let got = ended ? 0 : try read(chunk)
            if got > 0 {
                pending.append(contentsOf: chunk[0..<got])
                total += got
            } else {
                ended = true
            }
            // Every frame whose window is complete (or, at the end, every frame up to total/hop).
            while ended ? next <= total / baseHop : next * baseHop + fftSize / 2 <= total {
                let first = next * baseHop - fftSize / 2
                for n in 0..<fftSize {
                    let i = first + n
                    frame[n] = i >= base && i < total ? Double(pending[i - base]) * window[n] : 0
                }
                frame.withUnsafeBufferPointer { x in
                    re.withUnsafeMutableBufferPointer { r in im.withUnsafeMutableBufferPointer { fft.transform(x, re: r, im: $0) } }
                }
                if next % framesPerColumn == 0 && next / framesPerColumn == maxFrames {
                    // Full: merge neighbouring columns; the hop doubles.
                    for c in 0..<(columns / 2) {
                        for k in 0..<binCount { levels[c * binCount + k] = max(levels[2 * c * binCount + k], levels[(2 * c + 1) * binCount + k]) }
                    }
                    columns /= 2
                    levels.removeLast(levels.count - columns * binCount)
                    framesPerColumn *= 2
                }
                let startsColumn = next % framesPerColumn == 0
                if startsColumn { levels.append(contentsOf: repeatElement(Self.silence, count: binCount)); columns += 1 }
                let row = (columns - 1) * binCount
                for k in 0..<binCount {
                    let power = (re[k] * re[k] + im[k] * im[k]) * gain * gain
                    let level = Float(10 * log10(max(power, floorPower)))
                    levels[row + k] = startsColumn ? level : max(levels[row + k], level)
                }
                next += 1
                // Samples before the next frame's window are no longer needed.
                let keepFrom = next * baseHop - fftSize / 2
                if keepFrom > base {
                    let drop = min(keepFrom - base, pending.count)
                    pending.removeFirst(drop)
                    base += drop
                }
            }
            if ended { break }
        }
        hop = baseHop * framesPerColumn
        merged = framesPerColumn
        sampleCount = total
        frameCount = columns
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
