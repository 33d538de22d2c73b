/// Minimum and maximum of a signal per pixel column, accumulated while the signal streams by.
///
/// A 10 s render has 480,000 samples but the chart is 900 pixels wide: the min/max band per
/// column looks the same as every sample drawn, at a thousandth of the SVG size, and a long
/// render never has to be held in memory.
public struct WaveformEnvelope: Sendable {
    public let totalSamples: Int
    public let columns: Int
    public private(set) var minimum: [Float]
    public private(set) var maximum: [Float]
    public private(set) var received = 0

    /// `columns` is capped at `totalSamples`: with one sample per column min = max = the sample.
    public init(totalSamples: Int, columns maxColumns: Int) {
        precondition(totalSamples >= 1 && maxColumns >= 1)
        self.totalSamples = totalSamples
        columns = min(maxColumns, totalSamples)
        minimum = Array(repeating: .infinity, count: columns)
        maximum = Array(repeating: -.infinity, count: columns)
    }

    public init(samples: [Float], columns: Int) {
        self.init(totalSamples: max(1, samples.count), columns: columns)
        if samples.isEmpty { add(0) } else { append(samples) }
    }

    /// True when every column holds exactly one sample, so a polyline shows the signal exactly.
    public var isExact: Bool { columns == totalSamples }

    /// Column holding sample `index`: ⌊index·columns/total⌋.
    public func column(ofSample index: Int) -> Int { index * columns / totalSamples }

    public mutating func add(_ sample: Float) {
        guard received < totalSamples else { return }
        let c = column(ofSample: received)
        if sample < minimum[c] { minimum[c] = sample }
        if sample > maximum[c] { maximum[c] = sample }
        received += 1
    }

    public mutating func append<S: Sequence>(_ samples: S) where S.Element == Float {
        for s in samples { add(s) }
    }

    /// Every sample of channel `channel` from an interleaved block.
    public mutating func append(interleaved block: UnsafeBufferPointer<Float>, channels: Int, channel: Int) {
        var i = channel
        while i < block.count { add(block[i]); i += channels }
    }
}
