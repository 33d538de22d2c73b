/// A tone shape: a drawn instantaneous-frequency curve v(t) and how to sound it.
///
/// The curve from the first to the last point is played over `duration` seconds (the article
/// normalises point times by the first and last point before quantising them to [0, N]).
public struct Shape: Equatable, Sendable {
    public struct Point: Equatable, Sendable {
        public var time: Double
        public var frequency: Double
        /// How the segment that begins here reaches the next point (meaningless on the last point).
        public var kind: SegmentKind
        public init(time: Double, frequency: Double, kind: SegmentKind = .linear) {
            self.time = time; self.frequency = frequency; self.kind = kind
        }
    }
    public struct Echo: Equatable, Sendable {
        /// Seconds between repeats.
        public var delay: Double
        /// Level of each repeat relative to the previous one (feedback), 0 = off.
        public var volume: Double
        public init(delay: Double, volume: Double) { self.delay = delay; self.volume = volume }
        public static let off = Echo(delay: 0.25, volume: 0)
    }

    public var name: String
    public var description: String
    /// MIDI program number that selects this shape (program change), 0...127.
    public var program: Int
    public var points: [Point]
    public var duration: Double
    public var minFrequency: Double
    public var maxFrequency: Double
    public var wave: WaveType
    public var amplitude: Double
    public var envelope: AmplitudeEnvelope
    public var echo: Echo
    /// N: point times are quantised to integers in [0, N]; low N coarsens the curve audibly.
    public var fidelity: Int
    /// Terms of the Fourier partial sums (square/triangle/sawtooth-fourier).
    public var fourierTerms: Int
    /// The key that plays the shape untransposed.
    public var rootNote: Int
    public var attack: Double
    public var release: Double

    public static let maximumFidelity = 1_000_000
    public static let maximumFourierTerms = 512
    public static let maximumEchoDelay = 2.0
    /// Points a shape may have: far more than a drawn curve needs (the editor's sketches reduce to
    /// tens), and the bound the editor's engine preallocates its curves for.
    public static let maximumPoints = 4096
    /// Longest pass: ten minutes, the duration knob's own limit (a pass is counted in samples).
    public static let maximumDuration = 600.0
    /// Highest frequency a point may have, and a voice plays whatever transposes it (tuning, bends,
    /// vibrato: see `PlayableRange`): above every sample rate's Nyquist (192 kHz at most), and low
    /// enough that a ten-minute pass at it keeps the phase walk exact.
    public static let maximumFrequency = 100_000.0
    /// Straight pieces exponential segments may take beyond one each, in every curve an engine
    /// plays: room fixed before rendering, so re-quantising on the audio thread never allocates,
    /// and enough for pieces of a quarter semitone (0.045 cent from the exact glide) whenever
    /// N ≤ 4096 or the glides add up to less than 85 octaves (see `ExponentialPieces`). As many
    /// as `maximumPoints`: an editing engine's curves (one per part and per voice) take twice the
    /// room they took without kinds, not more.
    public static let pieceBudget = 4096

    public init(name: String, description: String = "", program: Int = 0, points: [Point], duration: Double,
                minFrequency: Double, maxFrequency: Double, wave: WaveType = .sine, amplitude: Double = 0.5,
                envelope: AmplitudeEnvelope = .constant, echo: Echo = .off, fidelity: Int = 1000,
                fourierTerms: Int = 10, rootNote: Int = 69, attack: Double = 0.005, release: Double = 0.05) {
        self.name = name; self.description = description; self.program = program
        self.points = points; self.duration = duration
        self.minFrequency = minFrequency; self.maxFrequency = maxFrequency
        self.wave = wave; self.amplitude = amplitude; self.envelope = envelope; self.echo = echo
        self.fidelity = fidelity; self.fourierTerms = fourierTerms; self.rootNote = rootNote
        self.attack = attack; self.release = release
    }

    /// A constant tone at `frequency` Hz (handy for tests and tuning).
    public static func constant(_ frequency: Double, wave: WaveType = .sine, duration: Double = 1,
                                amplitude: Double = 0.5, rootNote: Int = 69) -> Shape {
        Shape(name: "constant-\(frequency)", points: [Point(time: 0, frequency: frequency),
                                                     Point(time: duration, frequency: frequency)],
              duration: duration, minFrequency: frequency, maxFrequency: frequency, wave: wave,
              amplitude: amplitude, fidelity: 1, rootNote: rootNote)
    }

    /// Checks every rule a playable shape obeys; the error names the field and the value.
    public func validate() throws(ShapeError) {
        func fail(_ field: String, _ value: String, _ reason: String) -> ShapeError {
            ShapeError(file: nil, field: field, value: value, reason: reason)
        }
        guard duration > 0, duration.isFinite else { throw fail("duration", "\(duration)", "must be > 0") }
        guard duration <= Shape.maximumDuration else {
            throw fail("duration", "\(duration)", "must be at most \(Shape.maximumDuration) seconds")
        }
        guard minFrequency > 0, minFrequency.isFinite else { throw fail("minFrequency", "\(minFrequency)", "must be > 0") }
        guard maxFrequency >= minFrequency, maxFrequency.isFinite else {
            throw fail("maxFrequency", "\(maxFrequency)", "must be ≥ minFrequency (\(minFrequency))")
        }
        guard maxFrequency <= Shape.maximumFrequency else {
            throw fail("maxFrequency", "\(maxFrequency)", "must be at most \(Shape.maximumFrequency) Hz")
        }
        guard points.count >= 2 else { throw fail("points", "\(points.count) point(s)", "a shape needs at least 2 points") }
        guard points.count <= Shape.maximumPoints else {
            throw fail("points", "\(points.count) points", "a shape has at most \(Shape.maximumPoints) points")
        }
        for (i, p) in points.enumerated() {
            guard p.time.isFinite, p.time >= 0, p.time <= duration + 1e-9 else {
                throw fail("points[\(i)].time", "\(p.time)", "must lie in [0, duration = \(duration)]")
            }
            if i > 0, !(p.time > points[i - 1].time) {
                throw fail("points[\(i)].time", "\(p.time)", "times must increase (previous is \(points[i - 1].time))")
            }
            guard p.frequency > 0, p.frequency.isFinite else {
                throw fail("points[\(i)].frequency", "\(p.frequency)", "must be > 0")
            }
            guard p.frequency >= minFrequency, p.frequency <= maxFrequency else {
                throw fail("points[\(i)].frequency", "\(p.frequency)",
                           "outside the frequency range [\(minFrequency), \(maxFrequency)]")
            }
        }
        guard fidelity >= 1, fidelity <= Shape.maximumFidelity else {
            throw fail("fidelity", "\(fidelity)", "N must be in 1...\(Shape.maximumFidelity)")
        }
        guard fourierTerms >= 1, fourierTerms <= Shape.maximumFourierTerms else {
            throw fail("fourierTerms", "\(fourierTerms)", "must be in 1...\(Shape.maximumFourierTerms)")
        }
        guard amplitude >= 0, amplitude <= 1 else { throw fail("amplitude", "\(amplitude)", "must be in 0...1") }
        guard (0...127).contains(rootNote) else { throw fail("rootNote", "\(rootNote)", "must be a MIDI note 0...127") }
        guard (0...127).contains(program) else { throw fail("program", "\(program)", "must be 0...127") }
        guard echo.delay > 0, echo.delay <= Shape.maximumEchoDelay else {
            throw fail("echo.delay", "\(echo.delay)", "must be in (0, \(Shape.maximumEchoDelay)] seconds")
        }
        guard echo.volume >= 0, echo.volume < 1 else { throw fail("echo.volume", "\(echo.volume)", "must be in [0, 1)") }
        guard attack >= 0, attack <= 10 else { throw fail("attack", "\(attack)", "must be in 0...10 seconds") }
        guard release >= 0, release <= 30 else { throw fail("release", "\(release)", "must be in 0...30 seconds") }
        if case .exponentialDecay(let rate) = envelope, !(rate >= 0 && rate.isFinite) {
            throw fail("envelope.rate", "\(rate)", "must be ≥ 0")
        }
    }

    /// The article's `userIFCurve`: point times mapped to integers in [0, N], frequencies kept.
    public func userIFCurve(fidelity n: Int? = nil) -> [(x: Int, frequency: Double)] {
        let n = n ?? fidelity
        let t0 = points.first!.time, t1 = points.last!.time
        return points.map { (x: Shape.quantize($0.time, from: t0, to: t1, n: n), frequency: $0.frequency) }
    }

    /// The curve a voice plays at fidelity N (default: the shape's), as the polyline it walks: x
    /// on the grid [0, N] (userIFCurve's), each segment of its kind (a hold's step is two vertices
    /// at one x, an exponential segment its straight pieces). Built by the engine's own code.
    public func playedCurve(fidelity n: Int? = nil) -> [(x: Double, frequency: Double)] {
        let xs = userIFCurve(fidelity: n).map { Double($0.x) }, ys = points.map(\.frequency), kinds = points.map(\.kind)
        var collector = VertexCollector()
        FrequencyCurve.pieces(xs: xs, ys: ys, kinds: kinds, count: points.count,
                              budget: min(Shape.pieceBudget, ExponentialPieces.bound(self)), into: &collector)
        return collector.vertices.isEmpty ? [(xs[0], ys[0])] : collector.vertices
    }

    /// Int((t − t0)·N/(t1 − t0)) as in the article, guarded so the last point lands on N exactly
    /// despite rounding (0.3·(10/0.3) is 9.999…).
    @inline(__always) static func quantize(_ t: Double, from t0: Double, to t1: Double, n: Int) -> Int {
        let x = (t - t0) * Double(n) / (t1 - t0)
        return min(n, Int(x + 1e-9))
    }
}

/// A rejected shape: which file, which field, which value, and why — one line.
public struct ShapeError: Error, CustomStringConvertible, Equatable {
    public var file: String?
    public var field: String
    public var value: String
    public var reason: String
    public init(file: String?, field: String, value: String, reason: String) {
        self.file = file; self.field = field; self.value = value; self.reason = reason
    }
    public var description: String {
        let place = file.map { "\($0): " } ?? ""
        // A fault of the whole file (unreadable, too large, not JSON) has no field to name.
        if field == "(file)" && value.isEmpty { return "\(place)\(reason)" }
        return "\(place)field '\(field)' = \(value): \(reason)"
    }
}
