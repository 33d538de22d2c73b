import Testing
@testable import ToneShaperPlot

@Suite("Spectrogram as a PNG: the picture read back pixel by pixel")
struct RasterSpectrogramTests {
    /// 1 kHz for the first second, 5 kHz for the second, at 48 kHz.
    static func picture() throws -> (rows: [[UInt8]], width: Int, height: Int) {
        let rate = 48_000.0
        let first = sineWave(1000, amplitude: 0.5, count: 48_000, rate: rate)
        let second = sineWave(5000, amplitude: 0.5, count: 48_000, rate: rate)
        let analysis = Spectrogram(samples: first + second, sampleRate: rate)
        let png = try PNGChunks(SpectrogramPlot.png(analysis, options: .init(title: "two tones")))
        let header = try #require(png.header)
        return (try png.indexedPixels(), header.width, header.height)
    }

    /// Columns (or rows) where at least `minimum` pixels have the frame ink: the frame's sides.
    static func lines(_ rows: [[UInt8]], vertical: Bool, minimum: Int) -> [Int] {
        let ink = Raster.Ink.frame.rawValue
        let count = vertical ? rows[0].count : rows.count
        return (0..<count).filter { i in
            (vertical ? rows.map { $0[i] } : rows[i]).filter { $0 == ink }.count >= minimum
        }
    }

    @Test("an indexed 960 × 560 PNG: a framed plot area, tones at the height of their frequency on a 0–24 kHz axis, at their time")
    func tonesWhereTheAxesSay() throws {
        let (rows, width, height) = try Self.picture()
        #expect(width == 960 && height == 560)
        let verticals = Self.lines(rows, vertical: true, minimum: 300)
        let horizontals = Self.lines(rows, vertical: false, minimum: 500)
        try #require(verticals.count >= 2 && horizontals.count >= 2, "frame not found: \(verticals) \(horizontals)")
        // Inside the frame: the plot area (the colour bar's frame lies further right).
        let left = verticals[0] + 1, right = verticals[1] - 1
        let top = horizontals.first! + 1, bottom = horizontals.last! - 1
        #expect(right - left > 600 && bottom - top > 400)
        // The brightest pixel of a column a quarter and three quarters across: 1 kHz, then 5 kHz.
        func brightestRow(atFraction u: Double) -> Int {
            let x = left + Int(u * Double(right - left))
            return (top...bottom).max { rows[$0][x] < rows[$1][x] }!
        }
        func frequency(ofRow y: Int) -> Double { 24_000 * Double(bottom - y) / Double(bottom - top) }
        let low = frequency(ofRow: brightestRow(atFraction: 0.25))
        let high = frequency(ofRow: brightestRow(atFraction: 0.75))
        let rowHz = 24_000 / Double(bottom - top)
        #expect(abs(low - 1000) <= 2 * rowHz, "1 kHz drawn at \(low) Hz")
        #expect(abs(high - 5000) <= 2 * rowHz, "5 kHz drawn at \(high) Hz")
        // Cells are level colours (below the inks); the tones are the brightest of them.
        #expect(rows[top...bottom].allSatisfy { $0[left...right].allSatisfy { $0 < UInt8(Raster.levels) } })
    }

    @Test("labels are drawn in text ink left of the frequency axis, under the time axis, above as the title, and beside the colour bar")
    func labelsAroundThePlot() throws {
        let (rows, _, _) = try Self.picture()
        let verticals = Self.lines(rows, vertical: true, minimum: 300)
        let horizontals = Self.lines(rows, vertical: false, minimum: 500)
        let left = verticals[0], top = horizontals.first!, bottom = horizontals.last!
        let text = Raster.Ink.text.rawValue
        func inked(_ ys: Range<Int>, _ xs: Range<Int>) -> Int { ys.reduce(0) { sum, y in sum + xs.filter { rows[y][$0] == text }.count } }
        #expect(inked(top..<bottom, 0..<left) > 100, "frequency tick labels and title")
        #expect(inked((bottom + 1)..<rows.count, left..<verticals[1]) > 100, "time tick labels and title")
        #expect(inked(0..<top, 0..<rows[0].count) > 50, "chart title")
        #expect(inked(top..<bottom, verticals.last!..<rows[0].count) > 100, "colour bar labels and title")
    }
}
