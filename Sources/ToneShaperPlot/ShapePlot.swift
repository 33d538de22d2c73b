import Foundation
import ToneShaperCore
import ToneShaperInstrument

/// A shape's frequency curve over time, as drawn and as the engine plays it.
///
/// The played curve is the article's userIFCurve at the preset's fidelity (points sharing a
/// quantised index keep the first, as the engine's curve does) with each segment of its kind as
/// the engine plays it (`Shape.playedCurve`: a hold's step, an exponential glide's pieces), times
/// the note's transposition ratio, laid out with the engine's own timing: a pass lasts S = ⌊duration·rate⌋ samples and
/// index x is reached at sample x·(S − 1)/N.
public struct ShapeCurves: Sendable {
    public struct Sample: Sendable, Equatable {
        public var time: Double
        public var frequency: Double
        public init(time: Double, frequency: Double) { self.time = time; self.frequency = frequency }
    }

    /// The preset's own points at their drawn times, transposed like the played curve, one copy per
    /// cycle: where a dot leaves the line, quantisation moved that point.
    public let drawn: [Sample]
    /// The same points untransposed (as drawn for the root note); equal to `drawn` at the root.
    public let untransposed: [Sample]
    /// The drawn curve at the root note: the points at their drawn times joined by their segments'
    /// kinds (an exponential glide bent, a hold stepping at the next point), one copy per cycle.
    public let asDrawn: [Sample]
    /// The polyline actually played, transposed, one pass per cycle.
    public let played: [Sample]
    /// 2^((note − root)/12).
    public let ratio: Double
    public let note: Int
    public let cycles: Int
    public let fidelity: Int
    /// Seconds per pass through the shape.
    public let cycleSeconds: Double

    public init(shape: Shape, note: Int? = nil, cycles: Int = 1, sampleRate: Double) {
        precondition(cycles >= 1 && sampleRate > 0 && shape.points.count >= 2)
        let note = note ?? shape.rootNote
        self.note = note
        self.cycles = cycles
        fidelity = shape.fidelity
        ratio = pow(2, Double(note - shape.rootNote) / 12)
        let passSamples = max(2, Int(shape.duration * sampleRate))
        cycleSeconds = Double(passSamples) / sampleRate
        let span = Double(passSamples - 1) / sampleRate

        let quantised = shape.playedCurve()
        let lastX = max(1, quantised.last!.x)
        let t0 = shape.points.first!.time, t1 = shape.points.last!.time

        var drawn: [Sample] = [], untransposed: [Sample] = [], asDrawn: [Sample] = [], played: [Sample] = []
        for k in 0..<cycles {
            let start = Double(k) * cycleSeconds
            func time(_ p: Shape.Point) -> Double { start + (p.time - t0) / (t1 - t0) * span }
            for (i, p) in shape.points.enumerated() {
                let t = time(p)
                drawn.append(Sample(time: t, frequency: p.frequency * ratio))
                untransposed.append(Sample(time: t, frequency: p.frequency))
                asDrawn.append(Sample(time: t, frequency: p.frequency))
                guard i + 1 < shape.points.count else { continue }
                let next = shape.points[i + 1], tNext = time(next)
                switch p.kind {
                case .linear: break
                case .hold: asDrawn.append(Sample(time: tNext, frequency: p.frequency))
                case .exponential:
                    // Pieces of at most 1/64 of the glide: smooth at any plot size.
                    for j in 1..<64 {
                        let s = Double(j) / 64
                        asDrawn.append(Sample(time: t + s * (tNext - t), frequency: p.frequency * pow(next.frequency / p.frequency, s)))
                    }
                }
            }
            for q in quantised {
                played.append(Sample(time: start + q.x / lastX * span, frequency: q.frequency * ratio))
            }
        }
        self.drawn = drawn
        self.untransposed = untransposed
        self.asDrawn = asDrawn
        self.played = played
    }
}

/// The `plot PRESET` picture: the frequency curve above the waveform it produces, on one time axis.
public enum ShapePlot {
    public static let width = 960.0
    public static let height = 760.0

    /// Where the two charts go; the waveform's pixel width decides how many envelope columns to keep.
    public struct Layout: Sendable {
        public var frequency: Chart
        public var waveform: Chart
    }

    /// `peak` is the waveform's largest magnitude: the amplitude axis is scaled to it (never past ±1),
    /// so a quiet preset still shows its wave shape, as the article scales its audio plot.
    public static func layout(shape: Shape, curves: ShapeCurves, totalSeconds: Double, peak: Double) -> Layout {
        let top = 78.0, chartHeight = 255.0, gap = 110.0, right = 28.0
        let frequencies = curves.untransposed.map(\.frequency) + curves.played.map(\.frequency)
        let fLow = min(shape.minFrequency, frequencies.min()!), fHigh = max(shape.maxFrequency, frequencies.max()!)
        let fAxis = Axis.linear(lower: fLow, upper: fHigh, title: "frequency (Hz)", length: chartHeight,
                                horizontal: false, expand: true)
        let range = peak > 0 && peak.isFinite ? min(1, peak) : 1
        var aAxis = Axis.linear(lower: -range, upper: range, title: "amplitude", length: chartHeight, horizontal: false, expand: true)
        if aAxis.upper > 1 || aAxis.lower < -1 {
            aAxis = Axis.linear(lower: -1, upper: 1, title: "amplitude", length: chartHeight, horizontal: false, expand: true)
        }
        let left = max(Chart.leftMargin(for: fAxis.labels), Chart.leftMargin(for: aAxis.labels))
        let plotWidth = width - left - right
        let tAxis = Axis.linear(lower: 0, upper: totalSeconds, title: "time (s)", length: plotWidth, horizontal: true,
                                expand: false)
        let frequency = Chart(id: "frequency", title: "frequency curve v(t)",
                              area: PlotRect(x: left, y: top, width: plotWidth, height: chartHeight),
                              xAxis: tAxis, yAxis: fAxis)
        let waveform = Chart(id: "waveform", title: "waveform s(x(t)), left channel",
                             area: PlotRect(x: left, y: top + chartHeight + gap, width: plotWidth, height: chartHeight),
                             xAxis: tAxis, yAxis: aAxis)
        return Layout(frequency: frequency, waveform: waveform)
    }

    /// Renders the shape through the engine (one voice, `cycles` passes held on `note`, then the
    /// release) and keeps the left channel as a min/max envelope `columns` wide.
    public static func renderWaveform(shape: Shape, note: Int, cycles: Int, sampleRate: Double,
                                      columns: Int) throws -> (envelope: WaveformEnvelope, heldFrames: Int) {
        let engine = try ShapeExport.engine(for: shape, sampleRate: sampleRate)
        let (messages, frames) = ShapeExport.performance(of: shape, cycles: cycles, note: UInt8(note), sampleRate: sampleRate)
        var envelope = WaveformEnvelope(totalSamples: frames, columns: columns)
        OfflineRenderer(engine: engine).render(messages, totalFrames: frames) { block in
            envelope.append(interleaved: block, channels: 2, channel: 0)
        }
        let held = messages.first { if case .noteOff = $0.message { return true } else { return false } }.map { Int($0.frame) } ?? frames
        return (envelope, held)
    }

    /// The whole picture for a preset: render, lay out, draw.
    public static func svg(shape: Shape, note: Int? = nil, cycles: Int = 1, sampleRate: Double) throws -> String {
        let curves = ShapeCurves(shape: shape, note: note, cycles: cycles, sampleRate: sampleRate)
        // About two columns per pixel of the plot area: the band's edges stay sharp on dense displays.
        let (envelope, held) = try renderWaveform(shape: shape, note: curves.note, cycles: cycles, sampleRate: sampleRate,
                                                  columns: Int(width * 1.8))
        let peak = Double(max(envelope.maximum.max() ?? 0, -(envelope.minimum.min() ?? 0)))
        let layout = layout(shape: shape, curves: curves, totalSeconds: Double(envelope.totalSamples) / sampleRate, peak: peak)
        return draw(shape: shape, curves: curves, envelope: envelope, heldSeconds: Double(held) / sampleRate,
                    sampleRate: sampleRate, layout: layout)
    }

    public static func draw(shape: Shape, curves: ShapeCurves, envelope: WaveformEnvelope, heldSeconds: Double,
                            sampleRate: Double, layout: Layout) -> String {
        var svg = SVGWriter(width: width, height: height)
        svg.rect(x: 0, y: 0, width: width, height: height, fill: "#ffffff", extra: [("class", "background")])
        let f = layout.frequency, w = layout.waveform
        svg.text("\(shape.name) — \(shape.wave.rawValue), N = \(shape.fidelity), \(format(shape.duration)) s per cycle",
                 x: f.area.x, y: 26, size: 17, extra: [("class", "title"), ("font-weight", "bold")])
        if !shape.description.isEmpty {
            svg.text(shape.description, x: f.area.x, y: 46, size: 12, fill: "#555", extra: [("class", "subtitle")])
        }

        // Frequency curve.
        f.drawBackground(into: &svg)
        svg.beginGroup([("clip-path", "url(#\(f.clipID))")])
        for k in 1..<max(1, curves.cycles) {
            let x = f.px(Double(k) * curves.cycleSeconds)
            svg.line(x1: x, y1: f.area.y, x2: x, y2: f.area.maxY, stroke: "#bbbbbb", extra: [("stroke-dasharray", "4 3"), ("class", "cycle-boundary")])
        }
        let transposed = curves.note != shape.rootNote
        if transposed {
            svg.polyline(curves.asDrawn.map { (f.px($0.time), f.py($0.frequency)) }, stroke: "#9a9a9a", strokeWidth: 1.2,
                         extra: [("stroke-dasharray", "6 4"), ("class", "curve root")])
        }
        svg.polyline(curves.played.map { (f.px($0.time), f.py($0.frequency)) }, stroke: "#1f5fbf", strokeWidth: 2,
                     extra: [("class", "curve played")])
        svg.endGroup()
        // Dots outside the clip: a point on the edge of the plot stays a whole dot.
        for p in curves.drawn {
            svg.circle(cx: f.px(p.time), cy: f.py(p.frequency), r: 3.5, fill: "#e8720c", stroke: "#ffffff",
                       extra: [("class", "point drawn"), ("data-time", "\(p.time)"), ("data-frequency", "\(p.frequency)")])
        }
        f.drawAxes(into: &svg)
        var items: [(Swatch, String)] = [(.dot("#e8720c"), "drawn points"),
                                         (.line("#1f5fbf"), "played (userIFCurve, N = \(curves.fidelity))")]
        if transposed {
            items[1].1 = "played (N = \(curves.fidelity), ×\(format(curves.ratio, decimals: 3)) for note \(curves.note))"
            items.append((.dashed("#9a9a9a"), "as drawn (root \(shape.rootNote))"))
        }
        legend(into: &svg, right: f.area.maxX, y: f.area.y - 14, items: items)

        // Waveform.
        w.drawBackground(into: &svg)
        svg.beginGroup([("clip-path", "url(#\(w.clipID))")])
        svg.line(x1: w.area.x, y1: w.py(0), x2: w.area.maxX, y2: w.py(0), stroke: "#999999", extra: [("class", "zero")])
        let colour = "#2a7a3b"
        let secondsPerColumn = Double(envelope.totalSamples) / Double(envelope.columns) / sampleRate
        if envelope.isExact {
            let points = (0..<envelope.columns).map { (w.px(Double($0) / sampleRate), w.py(Double(envelope.maximum[$0]))) }
            svg.polyline(points, stroke: colour, strokeWidth: 1.2, extra: [("class", "waveform"), ("data-mode", "samples")])
        } else {
            // The band between each column's min and max: top edge left to right, bottom edge back.
            var d = ""
            for c in 0..<envelope.columns {
                let x = w.px((Double(c) + 0.5) * secondsPerColumn)
                d += (c == 0 ? "M" : "L") + SVGWriter.number(x) + " " + SVGWriter.number(w.py(Double(envelope.maximum[c]))) + " "
            }
            for c in stride(from: envelope.columns - 1, through: 0, by: -1) {
                let x = w.px((Double(c) + 0.5) * secondsPerColumn)
                d += "L" + SVGWriter.number(x) + " " + SVGWriter.number(w.py(Double(envelope.minimum[c]))) + " "
            }
            svg.element("path", [("d", d + "Z"), ("fill", colour), ("stroke", colour), ("stroke-width", "0.6"),
                                 ("stroke-linejoin", "round"), ("class", "waveform"), ("data-mode", "envelope")])
        }
        let off = w.px(heldSeconds)
        svg.line(x1: off, y1: w.area.y, x2: off, y2: w.area.maxY, stroke: "#b03030",
                 extra: [("stroke-dasharray", "5 4"), ("class", "note-off")])
        svg.endGroup()
        w.drawAxes(into: &svg)
        let cycleText = curves.cycles == 1 ? "1 cycle" : "\(curves.cycles) cycles"
        legend(into: &svg, right: w.area.maxX, y: w.area.y - 14, items: [
            (.line(colour), envelope.isExact ? "every sample" : "min/max per column"),
            (.dashed("#b03030"), "note off after \(cycleText)"),
            (.none, "note \(curves.note), \(Int(sampleRate)) Hz"),
        ])
        return svg.render()
    }

    enum Swatch { case dot(String), line(String), dashed(String), none }

    /// A one-line legend right-aligned at `right`, laid out from the estimated text widths.
    static func legend(into svg: inout SVGWriter, right: Double, y: Double, items: [(Swatch, String)]) {
        let size = 11.0
        var x = right
        svg.beginGroup([("class", "legend")])
        for (swatch, label) in items.reversed() {
            x -= Axis.labelWidth(label, fontSize: size)
            svg.text(label, x: x, y: y + 4, size: size, fill: "#333")
            switch swatch {
            case .dot(let c): svg.circle(cx: x - 10, cy: y, r: 3.5, fill: c); x -= 18
            case .line(let c): svg.line(x1: x - 24, y1: y, x2: x - 6, y2: y, stroke: c, strokeWidth: 2); x -= 28
            case .dashed(let c):
                svg.line(x1: x - 24, y1: y, x2: x - 6, y2: y, stroke: c, strokeWidth: 1.5, extra: [("stroke-dasharray", "5 4")])
                x -= 28
            case .none: break
            }
            x -= 16
        }
        svg.endGroup()
    }

    static func format(_ v: Double, decimals: Int = 3) -> String {
        var s = String(format: "%.\(decimals)f", v)
        while s.contains("."), s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
}
