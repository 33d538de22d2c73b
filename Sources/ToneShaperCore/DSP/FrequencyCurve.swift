/// The quantised curve v(u) a voice reads, as straight segments over u in [0, N].
///
/// Piecewise interpolation: a voice asks for the value at its own position each sample and
/// keeps a segment cursor, so only the buffer's range is ever computed. Storage is allocated once
/// with room for the largest preset, so re-quantising on a fidelity change never allocates.
public struct FrequencyCurve {
    /// Segment j covers u < end[j] (and ≥ end[j−1]); the first and last are flat extensions.
    let end: UnsafeMutablePointer<Double>
    let slope: UnsafeMutablePointer<Double>
    let intercept: UnsafeMutablePointer<Double>
    public private(set) var segmentCount = 0
    /// The last quantised index: the curve spans u in [0, lastX].
    public private(set) var lastX: Double = 1
    let capacity: Int

    init(capacity pointCapacity: Int) {
        capacity = pointCapacity + 1
        end = .allocate(capacity: capacity)
        slope = .allocate(capacity: capacity)
        intercept = .allocate(capacity: capacity)
    }

    func deallocate() { end.deallocate(); slope.deallocate(); intercept.deallocate() }

    /// Builds the segments from points already on integer x (the article's userIFCurve).
    /// Points sharing an x keep the first; x must not decrease.
    mutating func build(xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, count: Int) {
        precondition(count >= 1 && count + 1 <= capacity)
        var m = 0
        var lastXValue = -Double.infinity
        // Segment 0 is the flat lead-in before the first point (the article extends the first value).
        end[0] = xs[0]; slope[0] = 0; intercept[0] = ys[0]
        var prevX = xs[0], prevY = ys[0]
        lastXValue = xs[0]
        m = 1
        for i in 1..<count where xs[i] > lastXValue {
            let s = (ys[i] - prevY) / (xs[i] - prevX)
            end[m] = xs[i]; slope[m] = s; intercept[m] = prevY - s * prevX
            prevX = xs[i]; prevY = ys[i]; lastXValue = xs[i]
            m += 1
        }
        end[m] = .infinity; slope[m] = 0; intercept[m] = prevY
        segmentCount = m + 1
        lastX = prevX
    }

    /// First segment whose end lies beyond u (binary search; used once per block per voice).
    @inline(__always) func segment(containing u: Double) -> Int {
        var lo = 0, hi = segmentCount - 1
        while lo < hi {
            let mid = (lo + hi) >> 1
            if end[mid] > u { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    @inline(__always) func value(at u: Double) -> Double {
        let j = segment(containing: u)
        return intercept[j] + slope[j] * u
    }
}

/// Renders a curve's values for consecutive sample ranges: the article's piecewise interpolation.
///
/// Sample i of a pass of `sampleCount` samples sits at u = i·lastX/(sampleCount − 1), so the
/// first sample reads the first point and the last sample the last point.
public final class CurveSampler {
    var curve: FrequencyCurve
    let du: Double
    var index = 0

    /// `points` are (x, frequency) with integer-valued, non-decreasing x.
    public init(userIFCurve points: [(x: Double, frequency: Double)], sampleCount: Int) {
        curve = FrequencyCurve(capacity: points.count)
        let xs = points.map(\.x), ys = points.map(\.frequency)
        curve.build(xs: xs, ys: ys, count: points.count)
        du = sampleCount > 1 ? curve.lastX / Double(sampleCount - 1) : 0
    }
    deinit { curve.deallocate() }

    /// Fills `output` with the next `output.count` samples' frequencies.
    public func next(into output: UnsafeMutableBufferPointer<Double>) {
        guard !output.isEmpty else { return }
        var u = Double(index) * du
        var j = curve.segment(containing: u)
        for n in 0..<output.count {
            u = Double(index + n) * du
            while u >= curve.end[j] { j += 1 }
            output[n] = curve.intercept[j] + curve.slope[j] * u
        }
        index += output.count
    }
}
