/// A preset as a part is playing it: the quantised curve plus the live values of its knobs.
///
/// A program change fills a slot no note plays (see `Engine.freeSlot`), so notes already
/// sounding finish on the shape they started with.
struct ShapeSlot {
    var preset = -1
    var curve: FrequencyCurve
    /// Counts rebuilds of `curve`: a voice that saw another generation re-reads its frequency (a
    /// fidelity change or an edited shape swapped in), so it never carries a stale slope.
    var generation = 0
    /// Scratch for quantised points (x, y) while rebuilding the curve.
    let xs: UnsafeMutablePointer<Double>
    let ys: UnsafeMutablePointer<Double>

    var fidelity: Double = 1
    var fidelityTarget: Double = 1
    var duration: Double = 1
    var durationTarget: Double = 1
    /// Position step per sample and the loop length in curve units (N + du: one cycle = duration).
    var du: Double = 0
    var period: Double = 1
    /// Where a pass ends: half a step before `period`, so the S-th step wraps whichever way the
    /// float product S·du rounds (a pass is exactly S samples, as in the article).
    var loopPoint: Double = 1
    /// The largest transposition ratio a voice on this slot plays at: the shape's highest point
    /// times it is `PlayableRange.ceiling`, 100 kHz (bends and vibrato are held under it).
    var ratioCap: Double = 1

    init(pointCapacity: Int, pieceBudget: Int = 0) {
        curve = FrequencyCurve(capacity: pointCapacity, pieceBudget: pieceBudget)
        xs = .allocate(capacity: pointCapacity)
        ys = .allocate(capacity: pointCapacity)
    }

    func deallocate() { curve.deallocate(); xs.deallocate(); ys.deallocate() }

    /// Loads a preset and quantises its curve at the preset's own fidelity.
    mutating func load(_ preset: Int, from table: PresetTable, sampleRate: Double) {
        self.preset = preset
        let info = table.info[preset]
        fidelity = Double(info.fidelity); fidelityTarget = fidelity
        duration = info.duration; durationTarget = duration
        ratioCap = PlayableRange.ceiling / info.highest
        requantize(table: table)
        updateStep(sampleRate: sampleRate)
    }

    /// The article's userIFCurve at the current fidelity, rebuilt in place.
    mutating func requantize(table: PresetTable) {
        let info = table.info[preset]
        let t = info.times, f = info.frequencies
        let n = Int(fidelity.rounded())
        let t0 = t[0], t1 = t[info.count - 1]
        for i in 0..<info.count {
            xs[i] = Double(Shape.quantize(t[i], from: t0, to: t1, n: n))
            ys[i] = f[i]
        }
        curve.build(xs: xs, ys: ys, kinds: info.kinds, count: info.count)
        generation &+= 1
    }

    /// du = lastX/(S − 1) with S = ⌊duration·rate⌋ samples per pass, as in the article.
    mutating func updateStep(sampleRate: Double) {
        let samples = max(2, Int(duration * sampleRate))
        du = curve.lastX / Double(samples - 1)
        period = curve.lastX + du
        loopPoint = period - 0.5 * du
    }

    /// Moves duration and fidelity toward their targets; called once per block.
    mutating func glide(table: PresetTable, sampleRate: Double, coefficient: Double) {
        var changed = false
        if duration != durationTarget {
            duration += (durationTarget - duration) * coefficient
            if abs(duration - durationTarget) < 1e-6 * durationTarget { duration = durationTarget }
            changed = true
        }
        if fidelity != fidelityTarget {
            // Geometric glide: N moves by equal ratios, so 6 → 2000 sweeps as evenly as it sounds.
            let before = Int(fidelity.rounded())
            fidelity *= _pow(fidelityTarget / fidelity, coefficient)
            if abs(fidelity - fidelityTarget) < 0.5 { fidelity = fidelityTarget }
            if Int(fidelity.rounded()) != before { requantize(table: table) }
            changed = true
        }
        if changed { updateStep(sampleRate: sampleRate) }
    }
}

/// Every preset's points and settings, in storage allocated before rendering starts.
///
/// Each entry points at its own times and frequencies, so an edited shape can be swapped in on the
/// audio thread by copying one `Info` (see `ShapeData` and `Engine.replaceShape`).
struct PresetTable {
    struct Info {
        var times: UnsafeMutablePointer<Double>
        var frequencies: UnsafeMutablePointer<Double>
        var kinds: UnsafeMutablePointer<SegmentKind>
        var count: Int
        var duration: Double
        var fidelity: Int
        var wave: WaveType
        var terms: Int
        var rootNote: Int
        var amplitude: Double
        var envelopeKind: UInt8  // 0 constant, 1 linear, 2 exponential
        var envelopeRate: Double
        var echoDelay: Double
        var echoVolume: Double
        var attack: Double
        var release: Double
        var program: Int
        /// The lowest and highest frequency of the points: which keys can sound the shape.
        var lowest: Double
        var highest: Double

        /// The settings of `shape`, its points at `times`/`frequencies`/`kinds` (filled here).
        init(_ s: Shape, times: UnsafeMutablePointer<Double>, frequencies: UnsafeMutablePointer<Double>,
             kinds: UnsafeMutablePointer<SegmentKind>) {
            for (j, p) in s.points.enumerated() {
                times[j] = p.time
                frequencies[j] = p.frequency
                kinds[j] = p.kind
            }
            var kind: UInt8 = 0, rate = 0.0
            var low = Double.infinity, high = 0.0
            for p in s.points {
                low = min(low, p.frequency); high = max(high, p.frequency)
            }
            lowest = low; highest = high
            switch s.envelope {
            case .constant: kind = 0
            case .linearDecay: kind = 1
            case .exponentialDecay(let r): kind = 2; rate = r
            }
            self.times = times; self.frequencies = frequencies; self.kinds = kinds; count = s.points.count
            duration = s.duration; fidelity = s.fidelity; wave = s.wave; terms = s.fourierTerms
            rootNote = s.rootNote; amplitude = s.amplitude; envelopeKind = kind; envelopeRate = rate
            echoDelay = s.echo.delay; echoVolume = s.echo.volume; attack = s.attack; release = s.release
            program = s.program
        }
    }
    let info: UnsafeMutablePointer<Info>
    let count: Int
    /// Entries below this answer to program changes; the rest (shapes named by file on the command
    /// line) are reached only by index, so their program numbers cannot clash with the library's.
    let listedCount: Int
    let times: UnsafeMutablePointer<Double>
    let frequencies: UnsafeMutablePointer<Double>
    let kinds: UnsafeMutablePointer<SegmentKind>
    let maxPoints: Int
    /// Pieces beyond one each that the shapes' exponential segments take at any fidelity, up to
    /// `Shape.pieceBudget`: what a slot needs to play any of them (0 when none has one).
    let pieceBudget: Int

    init(_ shapes: [Shape], listedCount: Int? = nil) {
        count = shapes.count
        self.listedCount = min(listedCount ?? shapes.count, shapes.count)
        let total = shapes.reduce(0) { $0 + $1.points.count }
        maxPoints = shapes.map(\.points.count).max() ?? 2
        pieceBudget = min(Shape.pieceBudget, shapes.map(ExponentialPieces.bound).max() ?? 0)
        info = .allocate(capacity: max(1, count))
        times = .allocate(capacity: max(1, total))
        frequencies = .allocate(capacity: max(1, total))
        kinds = .allocate(capacity: max(1, total))
        var offset = 0
        for (i, s) in shapes.enumerated() {
            (info + i).initialize(to: Info(s, times: times + offset, frequencies: frequencies + offset, kinds: kinds + offset))
            offset += s.points.count
        }
    }

    func deallocate() { info.deallocate(); times.deallocate(); frequencies.deallocate(); kinds.deallocate() }

    /// Library index of the preset with this program number (linear: 128 entries at most, no allocation).
    func index(program: Int) -> Int? {
        for i in 0..<listedCount where info[i].program == program { return i }
        return nil
    }
}

/// An edited shape flattened for the audio thread: built (allocated) and freed off it, handed over
/// as one pointer through the lock-free path, installed by `Engine.replaceShape`.
public struct ShapeData: @unchecked Sendable, BitwiseCopyable {
    let info: UnsafeMutablePointer<PresetTable.Info>

    /// Allocates; call it on the editor's thread, never the audio thread.
    public init(_ shape: Shape) {
        let n = max(1, shape.points.count)
        info = .allocate(capacity: 1)
        info.initialize(to: PresetTable.Info(shape, times: .allocate(capacity: n), frequencies: .allocate(capacity: n),
                                             kinds: .allocate(capacity: n)))
    }

    public var pointCount: Int { info.pointee.count }

    /// Frees what `init` allocated; call it on the editor's thread once the engine gave it back.
    public func deallocate() {
        info.pointee.times.deallocate()
        info.pointee.frequencies.deallocate()
        info.pointee.kinds.deallocate()
        info.deallocate()
    }
}
