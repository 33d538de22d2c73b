import Foundation

/// The `plot --spectrum FILE` picture: a spectrogram with time and frequency axes and a dBFS colour bar.
///
/// The cells are an indexed-colour PNG embedded as a data URI: one byte per cell instead of a
/// `<rect>` element each, so even a 512 × 256 grid stays a few hundred kilobytes.
public enum SpectrogramPlot {
    public static let width = 960.0
    public static let height = 560.0

    public struct Options: Sendable {
        public var title: String
        public var logFrequency = false
        /// Lowest frequency on a logarithmic axis.
        public var lowestFrequency = 20.0
        /// Level drawn black; anything quieter is clamped.
        public var floor: Float = -120
        /// Level drawn brightest.
        public var ceiling: Float = 0
        public var maxColumns = 512
        public var maxRows = 256
        public init(title: String) { self.title = title }
    }

    /// Mixes interleaved channels to mono by averaging, so a centred source keeps its level.
    public static func mixToMono(_ interleaved: [Float], channels: Int) -> [Float] {
        precondition(channels >= 1)
        if channels == 1 { return interleaved }
        let frames = interleaved.count / channels
        var mono = [Float](repeating: 0, count: frames)
        let scale = 1 / Float(channels)
        interleaved.withUnsafeBufferPointer { s in
            for f in 0..<frames {
                var sum: Float = 0
                for c in 0..<channels { sum += s[f * channels + c] }
                mono[f] = sum * scale
            }
        }
        return mono
    }

    public static func svg(_ spectrogram: Spectrogram, options: Options) -> String {
        precondition(options.ceiling > options.floor)
        let top = 50.0, bottom = 58.0, right = 118.0
        let plotHeight = height - top - bottom
        let nyquist = spectrogram.nyquist
        let fAxis: Axis
        let scale: Spectrogram.FrequencyScale
        if options.logFrequency && options.lowestFrequency < nyquist {
            fAxis = Axis.logarithmic(lower: options.lowestFrequency, upper: nyquist, title: "frequency (Hz)",
                                     length: plotHeight, horizontal: false)
            scale = .logarithmic(lowest: options.lowestFrequency)
        } else {
            let step = NiceNumbers.step(lower: 0, upper: nyquist, maxCount: Int(plotHeight / 30))
            let ticks = NiceNumbers.multiples(of: step, in: 0, nyquist)
            fAxis = Axis(lower: 0, upper: nyquist, scale: .linear, ticks: ticks,
                         labels: ticks.map { NiceNumbers.label($0, step: step) }, title: "frequency (Hz)")
            scale = .linear
        }
        let left = Chart.leftMargin(for: fAxis.labels)
        let plotWidth = width - left - right
        let duration = max(spectrogram.duration, 1 / spectrogram.sampleRate)
        let tAxis = Axis.linear(lower: 0, upper: duration, title: "time (s)", length: plotWidth, horizontal: true, expand: false)
        let chart = Chart(id: "spectrogram", title: options.title,
                          area: PlotRect(x: left, y: top, width: plotWidth, height: plotHeight), xAxis: tAxis, yAxis: fAxis)

        var svg = SVGWriter(width: width, height: height)
        svg.rect(x: 0, y: 0, width: width, height: height, fill: "#ffffff", extra: [("class", "background")])
        chart.drawBackground(into: &svg, fill: ColorMap.palette[0].hex, grid: false)

        let grid = spectrogram.grid(columns: options.maxColumns, rows: options.maxRows, frequencyScale: scale)
        var pixels = [UInt8](repeating: 0, count: grid.columns * grid.rows)
        for r in 0..<grid.rows {
            let y = grid.rows - 1 - r  // PNG rows run top-down, frequencies bottom-up
            for c in 0..<grid.columns {
                pixels[y * grid.columns + c] = ColorMap.index(level: grid.value(column: c, row: r),
                                                              floor: options.floor, ceiling: options.ceiling)
            }
        }
        let png = PNGEncoder.encodeIndexed(width: grid.columns, height: grid.rows, pixels: pixels, palette: ColorMap.palette)
        // The image spans the grid's own time and frequency extent; the clip trims the half-hop overhang.
        let x0 = chart.px(grid.timeEdges.first!), x1 = chart.px(grid.timeEdges.last!)
        let yTop = chart.py(grid.frequencyEdges.last!), yBottom = chart.py(grid.frequencyEdges.first!)
        svg.beginGroup([("clip-path", "url(#\(chart.clipID))")])
        svg.element("image", [
            ("x", SVGWriter.number(x0)), ("y", SVGWriter.number(yTop)),
            ("width", SVGWriter.number(x1 - x0)), ("height", SVGWriter.number(yBottom - yTop)),
            ("preserveAspectRatio", "none"), ("style", "image-rendering:pixelated"),
            ("class", "spectrogram-cells"), ("data-columns", "\(grid.columns)"), ("data-rows", "\(grid.rows)"),
            ("href", "data:image/png;base64," + PNGEncoder.base64(png)),
        ])
        svg.endGroup()
        chart.drawAxes(into: &svg)
        svg.text("\(spectrogram.fftSize)-point Hann FFT, hop \(spectrogram.hop) (\(Int(100 - 100 * Double(spectrogram.hop) / Double(spectrogram.fftSize)))% overlap), "
                 + "\(Int(spectrogram.sampleRate)) Hz", x: chart.area.maxX, y: chart.area.y - 10, anchor: .end, size: 11,
                 fill: "#555", extra: [("class", "analysis")])
        drawColorBar(into: &svg, x: chart.area.maxX + 22, y: chart.area.y, height: chart.area.height,
                     floor: options.floor, ceiling: options.ceiling)
        return svg.render()
    }

    /// A vertical bar of the colour scale with dBFS ticks, so colours read as levels.
    static func drawColorBar(into svg: inout SVGWriter, x: Double, y: Double, height: Double, floor: Float, ceiling: Float) {
        let barWidth = 16.0
        // A 1 × 256 PNG of the palette, brightest on top: seamless, unlike stacked rects.
        let bar = PNGEncoder.encodeIndexed(width: 1, height: 256, pixels: (0..<256).map { UInt8(255 - $0) },
                                           palette: ColorMap.palette)
        svg.beginGroup([("class", "colorbar")])
        svg.element("image", [("x", SVGWriter.number(x)), ("y", SVGWriter.number(y)), ("width", SVGWriter.number(barWidth)),
                              ("height", SVGWriter.number(height)), ("preserveAspectRatio", "none"),
                              ("href", "data:image/png;base64," + PNGEncoder.base64(bar))])
        svg.rect(x: x, y: y, width: barWidth, height: height, stroke: "#444")
        let axis = Axis.linear(lower: Double(floor), upper: Double(ceiling), title: "level (dBFS)", length: height,
                               horizontal: false, expand: false)
        for (t, label) in zip(axis.ticks, axis.labels) {
            let ty = y + height * (1 - axis.fraction(t))
            svg.line(x1: x + barWidth, y1: ty, x2: x + barWidth + 4, y2: ty, stroke: "#444")
            svg.text(label, x: x + barWidth + 7, y: ty + 4, size: 11,
                     extra: [("class", "tick-label colorbar"), ("data-value", "\(t)")])
        }
        let widest = axis.labels.map { Axis.labelWidth($0, fontSize: 11) }.max() ?? 0
        // Rotated like the y-axis title; the glyphs hang left of this baseline.
        let titleX = x + barWidth + 7 + widest + 22
        svg.text(axis.title, x: titleX, y: y + height / 2, anchor: .middle, size: 12, rotate: -90,
                 extra: [("class", "axis-title colorbar")])
        svg.endGroup()
    }
}
