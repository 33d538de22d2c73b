import Foundation
import Testing
import ToneShaperCore
@testable import ToneShaperPlot

@Suite("SVG output")
struct SVGTests {
    /// How a reader maps positions to values on one axis of one chart: tick labels paired, in
    /// order, with the grid lines they label.
    func axisMapping(_ nodes: [SVGNode], chart: String, axis: String) -> (pixelToValue: (Double) -> Double, labels: [SVGNode]) {
        let labels = nodes.filter { $0.name == "text" && $0.hasClass("tick-label") && $0.hasClass(axis) && $0.chart == chart }
        let grid = nodes.filter { $0.name == "line" && $0.chart == chart && $0.ancestors.contains { $0["class"] == "grid" } }
        let lines = axis == "y" ? grid.filter { $0.double("y1") == $0.double("y2") }.map { $0.double("y1")! }
                                : grid.filter { $0.double("x1") == $0.double("x2") }.map { $0.double("x1")! }
        precondition(lines.count == labels.count, "\(chart) \(axis): \(lines.count) grid lines, \(labels.count) labels")
        let fit = fitLine(zip(lines, labels).map { ($0, Double($1.text)!) })
        return ({ fit.a + fit.b * $0 }, labels)
    }

    func plotArea(_ nodes: [SVGNode], chart: String) throws -> PlotRect {
        let r = try #require(nodes.first { $0.name == "rect" && $0.hasClass("plot-area") && $0.chart == chart })
        return PlotRect(x: r.double("x")!, y: r.double("y")!, width: r.double("width")!, height: r.double("height")!)
    }

    @Test("the shape plot is well-formed XML with both charts' axis titles and their units")
    func shapePlotTitles() throws {
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: peakShape(), sampleRate: 8000))
        #expect(nodes.first?.name == "svg")
        func titles(_ axis: String, _ chart: String) -> [String] {
            nodes.filter { $0.hasClass("axis-title") && $0.hasClass(axis) && $0.chart == chart }.map(\.text)
        }
        #expect(titles("x", "frequency") == ["time (s)"])
        #expect(titles("y", "frequency") == ["frequency (Hz)"])
        #expect(titles("x", "waveform") == ["time (s)"])
        #expect(titles("y", "waveform") == ["amplitude"])
    }

    @Test("tick labels increase along every axis and sit next to their grid lines")
    func tickLabelsIncrease() throws {
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: peakShape(), cycles: 2, sampleRate: 8000))
        for chart in ["frequency", "waveform"] {
            for axis in ["x", "y"] {
                let labels = nodes.filter { $0.hasClass("tick-label") && $0.hasClass(axis) && $0.chart == chart }
                let values = labels.map { Double($0.text)! }
                #expect(values.count >= 3, "\(chart) \(axis)")
                #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "\(chart) \(axis): \(values)")
                // Larger values further right on x, further up on y.
                let positions = labels.map { $0.double(axis)! }
                let ordered = axis == "x" ? zip(positions, positions.dropFirst()).allSatisfy { $0 < $1 }
                                          : zip(positions, positions.dropFirst()).allSatisfy { $0 > $1 }
                #expect(ordered, "\(chart) \(axis) label positions \(positions)")
            }
        }
    }

    @Test("the played polyline stays inside the plot area, and its highest point reads 440 Hz at 0.5 s on the axes")
    func curveFollowsInput() throws {
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: peakShape(), sampleRate: 8000))
        let area = try plotArea(nodes, chart: "frequency")
        let line = try #require(nodes.first { $0.name == "polyline" && $0.hasClass("played") })
        let points = polylinePoints(line.attributes["points"]!)
        #expect(points.count == 3)
        for p in points { #expect(area.contains(x: p.x, y: p.y), "\(p) outside \(area)") }
        let frequency = axisMapping(nodes, chart: "frequency", axis: "y").pixelToValue
        let time = axisMapping(nodes, chart: "frequency", axis: "x").pixelToValue
        let top = points.min { $0.y < $1.y }!
        #expect(abs(frequency(top.y) - 440) < 1, "highest point reads \(frequency(top.y)) Hz")
        #expect(abs(time(top.x) - 0.5) < 0.005, "at \(time(top.x)) s")
        #expect(abs(frequency(points[0].y) - 30) < 1 && abs(frequency(points[2].y) - 50) < 1)
        // One dot per drawn point, on the curve at the root note.
        let dots = nodes.filter { $0.name == "circle" && $0.hasClass("drawn") }
        #expect(dots.count == 3)
        #expect(abs(frequency(dots[1].double("cy")!) - 440) < 1)
    }

    @Test("transposed an octave up, the played curve's top reads 880 Hz and the root curve is drawn dashed")
    func transposedCurve() throws {
        let shape = peakShape()
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: shape, note: shape.rootNote + 12, sampleRate: 8000))
        let frequency = axisMapping(nodes, chart: "frequency", axis: "y").pixelToValue
        let played = polylinePoints(nodes.first { $0.hasClass("played") }!.attributes["points"]!)
        let root = polylinePoints(try #require(nodes.first { $0.hasClass("root") }).attributes["points"]!)
        #expect(abs(frequency(played.map(\.y).min()!) - 880) < 2)
        #expect(abs(frequency(root.map(\.y).min()!) - 440) < 2)
    }

    @Test("a long render is drawn as a min/max band inside the plot area that reaches the preset's peak level")
    func waveformEnvelope() throws {
        let shape = peakShape()
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: shape, sampleRate: 8000))
        let area = try plotArea(nodes, chart: "waveform")
        let path = try #require(nodes.first { $0.name == "path" && $0.hasClass("waveform") })
        #expect(path.attributes["data-mode"] == "envelope")
        let points = pathPoints(path.attributes["d"]!)
        #expect(points.count > 1000 && points.count <= 2 * Int(ShapePlot.width * 1.8))
        for p in points { #expect(area.contains(x: p.x, y: p.y), "\(p) outside \(area)") }
        let amplitude = axisMapping(nodes, chart: "waveform", axis: "y").pixelToValue
        let peak = points.map { abs(amplitude($0.y)) }.max()!
        let rendered = try ShapePlot.renderWaveform(shape: shape, note: shape.rootNote, cycles: 1, sampleRate: 8000, columns: 10)
        let expected = Double(max(rendered.envelope.maximum.max()!, -rendered.envelope.minimum.min()!))
        #expect(abs(peak - expected) < 0.005, "band reaches \(peak), render peaks at \(expected)")
    }

    @Test("a very short render is drawn sample by sample")
    func waveformSamples() throws {
        let shape = Shape(name: "blip", points: [.init(time: 0, frequency: 100), .init(time: 0.01, frequency: 200)],
                          duration: 0.01, minFrequency: 100, maxFrequency: 200, release: 0)
        // At 1 kHz the held pass and the export's tail (release + 1 s) fit in fewer samples than columns.
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: shape, sampleRate: 1000))
        let line = try #require(nodes.first { $0.name == "polyline" && $0.hasClass("waveform") })
        #expect(line.attributes["data-mode"] == "samples")
        let frames = ShapeExport.performance(of: shape, cycles: 1, note: UInt8(shape.rootNote), sampleRate: 1000).frames
        #expect(polylinePoints(line.attributes["points"]!).count == frames)
    }

    @Test("names with XML metacharacters are escaped, not breaking the document")
    func escaping() throws {
        var shape = peakShape()
        shape.name = "a<b & \"c\" 'd'>"
        shape.description = "5 > 3 & 2 < 4"
        let nodes = try FlatXMLParser.parse(try ShapePlot.svg(shape: shape, sampleRate: 8000))
        #expect(nodes.contains { $0.hasClass("title") && $0.text.hasPrefix("a<b & \"c\" 'd'>") })
        #expect(nodes.contains { $0.hasClass("subtitle") && $0.text == "5 > 3 & 2 < 4" })
    }

    @Test("the spectrogram SVG has time and frequency axes, a dBFS colour bar, and an embedded PNG whose brightest row is 1 kHz")
    func spectrogramSVG() throws {
        let rate = 48_000.0
        let s = Spectrogram(samples: sineWave(1000, amplitude: 0.5, count: 96_000, rate: rate), sampleRate: rate)
        var options = SpectrogramPlot.Options(title: "test")
        options.maxColumns = 60
        options.maxRows = 128
        let nodes = try FlatXMLParser.parse(SpectrogramPlot.svg(s, options: options))
        #expect(nodes.contains { $0.hasClass("axis-title") && $0.hasClass("x") && $0.text == "time (s)" })
        #expect(nodes.contains { $0.hasClass("axis-title") && $0.hasClass("y") && $0.text == "frequency (Hz)" })
        #expect(nodes.contains { $0.hasClass("axis-title") && $0.hasClass("colorbar") && $0.text.contains("dBFS") })
        let bar = nodes.filter { $0.hasClass("colorbar") && $0.hasClass("tick-label") }.map { Double($0.text)! }
        #expect(bar.first == -120 && bar.last == 0 && zip(bar, bar.dropFirst()).allSatisfy { $0 < $1 })
        let yLabels = nodes.filter { $0.hasClass("tick-label") && $0.hasClass("y") }.map { Double($0.text)! }
        #expect(yLabels.first == 0 && yLabels.last! <= 24_000 && yLabels.last! >= 20_000)

        let image = try #require(nodes.first { $0.name == "image" && $0.hasClass("spectrogram-cells") })
        let href = image.attributes["href"]!
        #expect(href.hasPrefix("data:image/png;base64,"))
        let data = try #require(Data(base64Encoded: String(href.dropFirst("data:image/png;base64,".count))))
        let png = try PNGChunks([UInt8](data))
        #expect(png.chunks.allSatisfy { $0.crcMatches })
        let header = try #require(png.header)
        #expect(header.width == 60 && header.height == 128)
        let rows = try png.indexedPixels()
        let column = 30
        let brightest = (0..<header.height).max { rows[$0][column] < rows[$1][column] }!
        // Rows run top-down from Nyquist; convert to the frequency band that row covers.
        let band = 24_000.0 / 128
        let low = Double(header.height - 1 - brightest) * band
        #expect(low <= 1000 && 1000 < low + band, "brightest row covers \(low)…\(low + band) Hz")
        // The image is placed so its bottom edge is 0 Hz and its top Nyquist on the axis.
        let area = try plotArea(nodes, chart: "spectrogram")
        #expect(abs(image.double("y")! - area.y) < 0.02 && abs(image.double("y")! + image.double("height")! - area.maxY) < 0.02)
    }
}
