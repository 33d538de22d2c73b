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
        var mono = [Float](repeating: 0, count: interleaved.count / channels)
        interleaved.withUnsafeBufferPointer { s in mono.withUnsafeMutableBufferPointer { mixToMono(s, channels: channels, into: $0) } }
        return mono
    }

    /// The same, for a block streamed from a file: `mono` gets one sample per whole frame.
    public static func mixToMono(_ interleaved: UnsafeBufferPointer<Float>, channels: Int, into mono: UnsafeMutableBufferPointer<Float>) {
        precondition(channels >= 1)
        let frames = interleaved.count / channels
        precondition(mono.count >= frames)
        let scale = 1 / Float(channels)
        for f in 0..<frames {
            var sum: Float = 0
            for c in 0..<channels { sum += interleaved[f * channels + c] }
            mono[f] = channels == 1 ? sum : sum * scale
        }
    }

    /// The frequency axis (linear, or logarithmic from `lowestFrequency`) and the matching grid scale.
    static func frequencyAxis(_ spectrogram: Spectrogram, options: Options, length: Double) -> (Axis, Spectrogram.FrequencyScale) {
        let nyquist = spectrogram.nyquist
        if options.logFrequency && options.lowestFrequency < nyquist {
            return (Axis.logarithmic(lower: options.lowestFrequency, upper: nyquist, title: "frequency (Hz)",
                                     length: length, horizontal: false),
                    .logarithmic(lowest: options.lowestFrequency))
        }
        let step = NiceNumbers.step(lower: 0, upper: nyquist, maxCount: Int(length / 30))
        let ticks = NiceNumbers.multiples(of: step, in: 0, nyquist)
        return (Axis(lower: 0, upper: nyquist, scale: .linear, ticks: ticks,
                     labels: ticks.map { NiceNumbers.label($0, step: step) }, title: "frequency (Hz)"), .linear)
    }

    /// The caption naming the analysis.
    static func analysisCaption(_ spectrogram: Spectrogram) -> String {
        "\(spectrogram.fftSize)-point Hann FFT, hop \(spectrogram.analysisHop) "
            + "(\(Int(100 - 100 * Double(spectrogram.analysisHop) / Double(spectrogram.fftSize)))% overlap)"
            + (spectrogram.merged > 1 ? ", \(spectrogram.merged) frames per column (loudest kept)" : "")
            + ", \(Int(spectrogram.sampleRate)) Hz"
    }

    public static func svg(_ spectrogram: Spectrogram, options: Options) -> String {
        precondition(options.ceiling > options.floor)
        let top = 50.0, bottom = 58.0, right = 118.0
        let plotHeight = height - top - bottom
        let (fAxis, scale) = frequencyAxis(spectrogram, options: options, length: plotHeight)
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
        svg.text(analysisCaption(spectrogram), x: chart.area.maxX, y: chart.area.y - 10, anchor: .end, size: 11,
                 fill: "#555", extra: [("class", "analysis")])
        drawColorBar(into: &svg, x: chart.area.maxX + 22, y: chart.area.y, height: chart.area.height,
                     floor: options.floor, ceiling: options.ceiling)
        return svg.render()
    }

    /// The same picture as `svg`, as a PNG: cells scaled to the plot area (nearest cell), frame,
    /// ticks, labels and titles in the 5 × 7 bitmap font, and the dBFS colour bar.
    public static func png(_ spectrogram: Spectrogram, options: Options) -> [UInt8] {
        precondition(options.ceiling > options.floor)
        var image = Raster(width: Int(width), height: Int(height))
        let top = 50, bottom = 58, right = 118, tick = 5
        let plotHeight = image.height - top - bottom
        let (fAxis, scale) = frequencyAxis(spectrogram, options: options, length: Double(plotHeight))
        let widest = fAxis.labels.map { BitmapFont.width(of: $0) }.max() ?? 0
        // Ticks, labels, a gap, the turned title (one glyph high) and a margin.
        let left = tick + 3 + widest + 8 + BitmapFont.glyphHeight + 14
        let plotWidth = image.width - left - right
        let duration = max(spectrogram.duration, 1 / spectrogram.sampleRate)
        let tAxis = Axis.linear(lower: 0, upper: duration, title: "time (s)", length: Double(plotWidth), horizontal: true, expand: false)
        let chart = Chart(id: "spectrogram", title: options.title,
                          area: PlotRect(x: Double(left), y: Double(top), width: Double(plotWidth), height: Double(plotHeight)),
                          xAxis: tAxis, yAxis: fAxis)

        // Cells: each pixel centre looks up the grid cell under it.
        let grid = spectrogram.grid(columns: options.maxColumns, rows: options.maxRows, frequencyScale: scale)
        let x0 = chart.px(grid.timeEdges.first!), x1 = chart.px(grid.timeEdges.last!)
        let yTop = chart.py(grid.frequencyEdges.last!), yBottom = chart.py(grid.frequencyEdges.first!)
        image.fill(x: left, y: top, width: plotWidth, height: plotHeight, Raster.level(0))
        for y in top..<(top + plotHeight) {
            let v = (yBottom - (Double(y) + 0.5)) / (yBottom - yTop)
            guard v >= 0, v < 1 else { continue }
            let row = min(grid.rows - 1, Int(v * Double(grid.rows)))
            for x in left..<(left + plotWidth) {
                let u = (Double(x) + 0.5 - x0) / (x1 - x0)
                guard u >= 0, u < 1 else { continue }
                let column = min(grid.columns - 1, Int(u * Double(grid.columns)))
                image.set(x, y, Raster.level(ColorMap.index(level: grid.value(column: column, row: row),
                                                            floor: options.floor, ceiling: options.ceiling)))
            }
        }

        let frame = Raster.Ink.frame.rawValue
        image.frame(x: left - 1, y: top - 1, width: plotWidth + 2, height: plotHeight + 2, frame)
        let baseline = top + plotHeight
        for (t, label) in zip(tAxis.ticks, tAxis.labels) {
            let x = Int(chart.px(t).rounded())
            image.fill(x: x, y: baseline + 1, width: 1, height: tick, frame)
            image.text(label, x: x, y: baseline + tick + 4, anchor: .middle)
        }
        for (t, label) in zip(fAxis.ticks, fAxis.labels) {
            let y = Int(chart.py(t).rounded())
            image.fill(x: left - 1 - tick, y: y, width: tick, height: 1, frame)
            image.text(label, x: left - tick - 4, y: y - BitmapFont.glyphHeight / 2, anchor: .end)
        }
        image.text(tAxis.title, x: left + plotWidth / 2, y: baseline + tick + 4 + BitmapFont.glyphHeight + 10, anchor: .middle)
        image.verticalText(fAxis.title, centerX: left - tick - 4 - widest - 8 - BitmapFont.glyphHeight / 2,
                           centerY: top + plotHeight / 2)
        image.text(options.title, x: left, y: 12, scale: 2)
        image.text(analysisCaption(spectrogram), x: left + plotWidth, y: top - 14, anchor: .end, Raster.Ink.caption.rawValue)

        // Colour bar, brightest on top, with dBFS ticks.
        let barX = left + plotWidth + 22, barWidth = 16
        for y in top..<(top + plotHeight) {
            let t = 1 - (Double(y - top) + 0.5) / Double(plotHeight)
            image.fill(x: barX, y: y, width: barWidth, height: 1, Raster.level(UInt8((t * 255).rounded())))
        }
        image.frame(x: barX - 1, y: top - 1, width: barWidth + 2, height: plotHeight + 2, frame)
        let levels = Axis.linear(lower: Double(options.floor), upper: Double(options.ceiling), title: "level (dBFS)",
                                 length: Double(plotHeight), horizontal: false, expand: false)
        for (t, label) in zip(levels.ticks, levels.labels) {
            let y = top + Int((Double(plotHeight) * (1 - levels.fraction(t))).rounded())
            image.fill(x: barX + barWidth + 1, y: y, width: 4, height: 1, frame)
            image.text(label, x: barX + barWidth + 8, y: y - BitmapFont.glyphHeight / 2)
        }
        let levelWidth = levels.labels.map { BitmapFont.width(of: $0) }.max() ?? 0
        image.verticalText(levels.title, centerX: barX + barWidth + 8 + levelWidth + 12, centerY: top + plotHeight / 2)
        return image.png()
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
