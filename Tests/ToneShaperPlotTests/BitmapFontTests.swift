import Testing
@testable import ToneShaperPlot

@Suite("Bitmap font for raster charts")
struct BitmapFontTests {
    static let printable = (33...126).map { Character(Unicode.Scalar(UInt8($0))) }

    @Test("every printable character but space lights pixels, within five columns; space lights none")
    func glyphsAreDrawn() {
        for c in Self.printable {
            let rows = BitmapFont.rows(of: c)
            #expect(rows.count == 7 && rows.contains { $0 != 0 }, "\(c)")
            #expect(rows.allSatisfy { $0 & ~0x1F == 0 }, "\(c) uses a sixth column")
        }
        #expect(BitmapFont.rows(of: " ").allSatisfy { $0 == 0 })
    }

    @Test("no two characters share a glyph, so every label reads one way")
    func glyphsDiffer() {
        var seen: [[UInt8]: Character] = [:]
        for c in Self.printable {
            let rows = BitmapFont.rows(of: c)
            #expect(seen[rows] == nil, "\(c) looks like \(seen[rows].map(String.init) ?? "")")
            seen[rows] = c
        }
    }

    @Test("width and pixels scale together; an unknown character draws as '?'")
    func scaling() {
        #expect(BitmapFont.width(of: "24000") == 5 * 6 - 1)
        #expect(BitmapFont.width(of: "24000", scale: 2) == 2 * (5 * 6 - 1))
        #expect(BitmapFont.width(of: "") == 0)
        var one = 0, two = 0, maxX = 0
        BitmapFont.forEachPixel(of: "time (s)") { x, _ in one += 1; maxX = max(maxX, x) }
        BitmapFont.forEachPixel(of: "time (s)", scale: 2) { _, _ in two += 1 }
        #expect(two == 4 * one && one > 0)
        #expect(maxX < BitmapFont.width(of: "time (s)"))
        #expect(BitmapFont.rows(of: "é") == BitmapFont.rows(of: "?"))
    }
}
