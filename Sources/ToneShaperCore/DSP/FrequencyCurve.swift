/// The quantised curve v(u) a voice reads, as straight segments over u in [0, N].
///
/// Piecewise interpolation: a voice asks for the value at its own position each sample and
/// keeps a segment cursor, so only the buffer's range is ever computed. Storage is allocated once
/// with room for the largest preset, so re-quantising on a fidelity change never allocates.
///
/// Segment kinds become straight pieces here, so the walk stays the article's linear one: a linear
/// segment is one piece (exactly as before kinds existed), a hold is one flat piece that steps at
/// the next point, and an exponential segment is its values on the integer grid joined by
/// straight lines, several grid steps to a piece when a quarter semitone allows (see
/// `ExponentialPieces`), within a fixed budget of pieces.
public struct FrequencyCurve {
    /// Segment j covers u < end[j] (and ≥ end[j−1]); the first and last are flat extensions.
    let end: UnsafeMutablePointer<Double>
    let slope: UnsafeMutablePointer<Double>
    let intercept: UnsafeMutablePointer<Double>
    public private(set) var segmentCount = 0
    /// The last quantised index: the curve spans u in [0, lastX].
    public private(set) var lastX: Double = 1
    /// Segments the storage holds: one per point, the flat tail, and the piece budget.
    let capacity: Int
    /// Points a curve may be built from.
    public let pointCapacity: Int
    /// Pieces exponential segments may take beyond their first one, together.
    public let pieceBudget: Int

    init(capacity pointCapacity: Int, pieceBudget: Int = 0) {
        self.pointCapacity = pointCapacity
        self.pieceBudget = max(0, pieceBudget)
        capacity = pointCapacity + 1 + self.pieceBudget
        end = .allocate(capacity: capacity)
        slope = .allocate(capacity: capacity)
        intercept = .allocate(capacity: capacity)
    }

    func deallocate() { end.deallocate(); slope.deallocate(); intercept.deallocate() }

    /// Builds the segments from points already on integer x (the article's userIFCurve), every
    /// segment linear. Points sharing an x keep the first; x must not decrease.
    mutating func build(xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, count: Int) {
        build(xs: xs, ys: ys, kinds: nil, count: count)
    }

    /// Builds the segments from points already on integer x, each segment of the kind of the point
    /// it begins at (nil: all linear). Points sharing an x keep the first (and its kind); x must
    /// not decrease. Allocation-free: the audio thread calls it when the fidelity knob turns.
    mutating func build(xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, kinds: UnsafePointer<SegmentKind>?,
                        count: Int) {
        precondition(count >= 1 && count <= pointCapacity)
        // Segment 0 is the flat lead-in before the first point (the article extends the first value).
        end[0] = xs[0]; slope[0] = 0; intercept[0] = ys[0]
        var writer = Writer(end: end, slope: slope, intercept: intercept, count: 1)
        Self.pieces(xs: xs, ys: ys, kinds: kinds, count: count, budget: pieceBudget, into: &writer)
        let m = writer.count, last = Self.lastKept(xs, count)
        end[m] = .infinity; slope[m] = 0; intercept[m] = ys[last]
        segmentCount = m + 1
        lastX = xs[last]
    }

    /// The last point that is kept (the first of those sharing the last x).
    @inline(__always) static func lastKept(_ xs: UnsafePointer<Double>, _ count: Int) -> Int {
        var a = 0
        for i in 1..<max(1, count) where xs[i] > xs[a] { a = i }
        return a
    }

    /// Writes each straight piece as a segment (end, slope, intercept).
    struct Writer: PieceSink {
        let end: UnsafeMutablePointer<Double>, slope: UnsafeMutablePointer<Double>, intercept: UnsafeMutablePointer<Double>
        var count: Int
        @inline(__always) mutating func piece(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) {
            let s = (y1 - y0) / (x1 - x0)
            end[count] = x1; slope[count] = s; intercept[count] = y0 - s * x0
            count += 1
        }
    }

    /// The straight pieces from the first point to the last, in order: a linear segment is one
    /// piece, a hold one flat piece (its step is the next piece's start), an exponential segment
    /// its pieces on the grid (`ExponentialPieces`), sharing `budget` pieces beyond one each.
    @inline(__always)
    static func pieces<S: PieceSink>(xs: UnsafePointer<Double>, ys: UnsafePointer<Double>, kinds: UnsafePointer<SegmentKind>?,
                                     count: Int, budget: Int, into sink: inout S) {
        // Pieces the exponential segments want beyond their first: when more than the budget, each
        // gets its share in proportion (coarser pieces, never more storage), rounded so the shares
        // add up to the budget exactly: segment i gets ⌊Wᵢ·B/W⌋ − ⌊Wᵢ₋₁·B/W⌋ of it, Wᵢ the wants so
        // far, which is never more than it wants.
        var wanted = 0
        if let kinds {
            var a = 0
            for i in 1..<max(1, count) where xs[i] > xs[a] {
                if kinds[a] == .exponential {
                    wanted += ExponentialPieces.count(span: xs[i] - xs[a], from: ys[a], to: ys[i]) - 1
                }
                a = i
            }
        }
        var wantedSoFar = 0
        var prevX = xs[0], prevY = ys[0]
        var kind = kinds?[0] ?? .linear
        for i in 1..<max(1, count) where xs[i] > prevX {
            switch kind {
            case .linear:
                sink.piece(prevX, prevY, xs[i], ys[i])
            case .hold:
                sink.piece(prevX, prevY, xs[i], prevY)
            case .exponential:
                let span = xs[i] - prevX
                var pieces = ExponentialPieces.count(span: span, from: prevY, to: ys[i])
                if wanted > budget {
                    let before = wantedSoFar * budget / wanted
                    wantedSoFar += pieces - 1
                    pieces = 1 + wantedSoFar * budget / wanted - before
                }
                // Whole grid steps per piece; the last piece takes what is left.
                let stride = (span / Double(pieces)).rounded(.up)
                let rate = _log(ys[i] / prevY) / span
                var x0 = prevX, y0 = prevY
                while true {
                    let x1 = min(x0 + stride, xs[i])
                    let y1 = x1 < xs[i] ? prevY * _exp(rate * (x1 - prevX)) : ys[i]
                    sink.piece(x0, y0, x1, y1)
                    if x1 >= xs[i] { break }
                    x0 = x1; y0 = y1
                }
            }
            prevX = xs[i]; prevY = ys[i]
            kind = kinds?[i] ?? .linear
        }
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

/// Receives a curve's straight pieces, from (x0, y0) to (x1, y1), in order.
protocol PieceSink {
    mutating func piece(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double)
}

/// Collects the pieces as a polyline (a hold's step is two vertices at one x). Off the audio thread.
struct VertexCollector: PieceSink {
    var vertices: [(x: Double, frequency: Double)] = []
    mutating func piece(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) {
        if let last = vertices.last, last.x == x0, last.frequency == y0 {} else { vertices.append((x0, y0)) }
        vertices.append((x1, y1))
    }
}

/// How finely an exponential segment is cut into straight pieces.
///
/// The curve is f₀·r^s (s = 0…1, r = f₁/f₀) sampled on the integer grid x; a straight piece whose
/// ends are ρ apart in ratio lies above the exponential by at most (ln ρ)²/8 in ratio (the chord
/// of e^(λs) over [0, 1] peaks at λ²/8 for small λ). Pieces of at most a quarter semitone
/// (ln ρ = ln 2/48) are therefore at most 2.6e-5 sharp: 0.045 cent, far below what anyone hears,
/// and the pitch is exact at every piece's ends. A segment of c cents over g grid steps takes
/// ⌊25·g/c⌋ steps a piece (at least one: at low N every grid point, which is the coarsening N
/// means), so at most min(g, ⌈2c/25⌉) pieces: an octave's glide about 48.
///
/// The pieces of all exponential segments share a fixed budget (`Shape.pieceBudget` beyond one
/// each), so a rebuild on the audio thread writes into storage allocated before: the budget is
/// never reached while N ≤ the budget (pieces never outnumber grid steps) nor while the glides
/// add up to less than 4096 quarter semitones (85 octaves). Past it, the segments share the
/// budget in proportion to their wants: pieces k times longer, at most 0.045·k² cent sharp.
enum ExponentialPieces {
    /// Largest interval a piece spans, in cents.
    static let centsPerPiece = 25.0

    /// Pieces a segment of `span` grid steps from `f0` to `f1` Hz takes.
    @inline(__always) static func count(span: Double, from f0: Double, to f1: Double) -> Int {
        let cents = abs(1200 * _log(f1 / f0) / _log(2))
        guard cents > centsPerPiece, span > 1 else { return 1 }
        let stride = max(1, (span * centsPerPiece / cents).rounded(.down))
        return Int(min((span / stride).rounded(.up), 1e9))
    }

    /// The most pieces a shape's exponential segments take at any fidelity, beyond one each
    /// (segments of points merged by quantisation span at most the shape's whole range).
    static func bound(_ shape: Shape) -> Int {
        let frequencies = shape.points.map(\.frequency)
        guard let low = frequencies.min(), let high = frequencies.max(), low > 0 else { return 0 }
        let cents = 1200 * _log(high / low) / _log(2)
        let each = max(0, (2 * cents / centsPerPiece).rounded(.up))
        let segments = shape.points.dropLast().filter { $0.kind == .exponential }.count
        return Int(min(Double(segments) * each, 1e9))
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
