/// A preset as a part is playing it: the quantised curve plus the live values of its knobs.
///
/// Each part has two slots; a program change fills the other one, so notes already sounding
/// finish on the shape they started with.
struct ShapeSlot {
    var preset = -1
    var curve: FrequencyCurve
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

    init(pointCapacity: Int) {
        curve = FrequencyCurve(capacity: pointCapacity)
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
        requantize(table: table)
        updateStep(sampleRate: sampleRate)
    }

    /// The article's userIFCurve at the current fidelity, rebuilt in place.
    mutating func requantize(table: PresetTable) {
        let info = table.info[preset]
        let t = table.times + info.offset, f = table.frequencies + info.offset
        let n = Int(fidelity.rounded())
        let t0 = t[0], t1 = t[info.count - 1]
        for i in 0..<info.count {
            xs[i] = Double(Shape.quantize(t[i], from: t0, to: t1, n: n))
            ys[i] = f[i]
        }
        curve.build(xs: xs, ys: ys, count: info.count)
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

/// Every preset's points and settings, flattened into storage allocated once.
struct PresetTable {
    struct Info {
        var offset: Int
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
    }
    let info: UnsafeMutablePointer<Info>
    let count: Int
    let times: UnsafeMutablePointer<Double>
    let frequencies: UnsafeMutablePointer<Double>
    let maxPoints: Int

    init(_ shapes: [Shape]) {
        count = shapes.count
        let total = shapes.reduce(0) { $0 + $1.points.count }
        maxPoints = shapes.map(\.points.count).max() ?? 2
        info = .allocate(capacity: max(1, count))
        times = .allocate(capacity: max(1, total))
        frequencies = .allocate(capacity: max(1, total))
        var offset = 0
        for (i, s) in shapes.enumerated() {
            for (j, p) in s.points.enumerated() {
                times[offset + j] = p.time
                frequencies[offset + j] = p.frequency
            }
            var kind: UInt8 = 0, rate = 0.0
            switch s.envelope {
            case .constant: kind = 0
            case .linearDecay: kind = 1
            case .exponentialDecay(let r): kind = 2; rate = r
            }
            (info + i).initialize(to: Info(
                offset: offset, count: s.points.count, duration: s.duration, fidelity: s.fidelity, wave: s.wave,
                terms: s.fourierTerms, rootNote: s.rootNote, amplitude: s.amplitude, envelopeKind: kind,
                envelopeRate: rate, echoDelay: s.echo.delay, echoVolume: s.echo.volume, attack: s.attack,
                release: s.release, program: s.program))
            offset += s.points.count
        }
    }

    func deallocate() { info.deallocate(); times.deallocate(); frequencies.deallocate() }

    /// Library index of the preset with this program number (linear: 128 entries at most, no allocation).
    func index(program: Int) -> Int? {
        for i in 0..<count where info[i].program == program { return i }
        return nil
    }
}
