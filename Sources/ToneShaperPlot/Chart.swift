/// A rectangle in SVG user units (pixels), y growing downward.
public struct PlotRect: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public func contains(x px: Double, y py: Double, tolerance: Double = 0.01) -> Bool {
        px >= x - tolerance && px <= maxX + tolerance && py >= y - tolerance && py <= maxY + tolerance
    }
}

/// One chart: a plot area with two axes, drawn in two passes around the data.
///
/// Background and grid go under the data, frame/ticks/labels over it, so a dense waveform never
/// hides an axis. Elements carry `class` names ("plot-area", "tick-label x", …) so tests and
/// stylesheets can find them.
public struct Chart: Sendable {
    public var id: String
    public var title: String
    public var area: PlotRect
    public var xAxis: Axis
    public var yAxis: Axis
    public var fontSize: Double = 11

    public init(id: String, title: String, area: PlotRect, xAxis: Axis, yAxis: Axis) {
        self.id = id; self.title = title; self.area = area; self.xAxis = xAxis; self.yAxis = yAxis
    }

    /// Horizontal pixel of an x value.
    public func px(_ value: Double) -> Double { area.x + xAxis.fraction(value) * area.width }
    /// Vertical pixel of a y value (up is larger).
    public func py(_ value: Double) -> Double { area.maxY - yAxis.fraction(value) * area.height }

    public var clipID: String { "\(id)-clip" }

    /// Plot-area background and grid lines (first pass).
    public func drawBackground(into svg: inout SVGWriter, fill: String = "#ffffff", grid: Bool = true) {
        svg.clipRect(id: clipID, x: area.x, y: area.y, width: area.width, height: area.height)
        svg.rect(x: area.x, y: area.y, width: area.width, height: area.height, fill: fill,
                 extra: [("class", "plot-area"), ("data-chart", id)])
        guard grid else { return }
        svg.beginGroup([("class", "grid"), ("data-chart", id), ("stroke", "#e4e4e4"), ("stroke-width", "1")])
        for t in xAxis.ticks { let x = px(t); svg.element("line", [("x1", SVGWriter.number(x)), ("y1", SVGWriter.number(area.y)), ("x2", SVGWriter.number(x)), ("y2", SVGWriter.number(area.maxY))]) }
        for t in yAxis.ticks { let y = py(t); svg.element("line", [("x1", SVGWriter.number(area.x)), ("y1", SVGWriter.number(y)), ("x2", SVGWriter.number(area.maxX)), ("y2", SVGWriter.number(y))]) }
        svg.endGroup()
    }

    /// Frame, ticks, tick labels, axis titles and chart title (second pass, over the data).
    public func drawAxes(into svg: inout SVGWriter) {
        svg.rect(x: area.x, y: area.y, width: area.width, height: area.height, stroke: "#444", strokeWidth: 1,
                 extra: [("class", "frame")])
        let tick = 5.0
        svg.beginGroup([("class", "ticks"), ("stroke", "#444"), ("stroke-width", "1")])
        for t in xAxis.ticks {
            let x = px(t)
            svg.element("line", [("x1", SVGWriter.number(x)), ("y1", SVGWriter.number(area.maxY)),
                                 ("x2", SVGWriter.number(x)), ("y2", SVGWriter.number(area.maxY + tick))])
        }
        for t in yAxis.ticks {
            let y = py(t)
            svg.element("line", [("x1", SVGWriter.number(area.x - tick)), ("y1", SVGWriter.number(y)),
                                 ("x2", SVGWriter.number(area.x)), ("y2", SVGWriter.number(y))])
        }
        svg.endGroup()
        for (t, label) in zip(xAxis.ticks, xAxis.labels) {
            svg.text(label, x: px(t), y: area.maxY + tick + fontSize + 2, anchor: .middle, size: fontSize,
                     extra: [("class", "tick-label x"), ("data-chart", id), ("data-value", "\(t)")])
        }
        for (t, label) in zip(yAxis.ticks, yAxis.labels) {
            svg.text(label, x: area.x - tick - 3, y: py(t) + fontSize * 0.35, anchor: .end, size: fontSize,
                     extra: [("class", "tick-label y"), ("data-chart", id), ("data-value", "\(t)")])
        }
        svg.text(xAxis.title, x: area.x + area.width / 2, y: area.maxY + tick + 2 * fontSize + 12, anchor: .middle,
                 size: fontSize + 1, extra: [("class", "axis-title x"), ("data-chart", id)])
        let widest = yAxis.labels.map { Axis.labelWidth($0, fontSize: fontSize) }.max() ?? 0
        let titleX = area.x - tick - 3 - widest - 10
        svg.text(yAxis.title, x: titleX, y: area.y + area.height / 2, anchor: .middle, size: fontSize + 1, rotate: -90,
                 extra: [("class", "axis-title y"), ("data-chart", id)])
        svg.text(title, x: area.x, y: area.y - 10, anchor: .start, size: fontSize + 3,
                 extra: [("class", "chart-title"), ("data-chart", id), ("font-weight", "bold")])
    }

    /// Room a y axis needs left of the plot area for its labels and rotated title.
    public static func leftMargin(for labels: [String], fontSize: Double = 11) -> Double {
        let widest = labels.map { Axis.labelWidth($0, fontSize: fontSize) }.max() ?? 0
        return 5 + 3 + widest + 10 + fontSize + 14
    }
}
