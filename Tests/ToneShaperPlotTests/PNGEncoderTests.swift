import Foundation
import Testing
@testable import ToneShaperPlot

@Suite("PNG encoder")
struct PNGEncoderTests {
    /// 300 × 300 = 90,300 raw bytes: more than one stored block (65,535 max).
    func testImage() -> (width: Int, height: Int, pixels: [UInt8]) {
        let w = 300, h = 300
        return (w, h, (0..<(w * h)).map { UInt8(($0 % w + 3 * ($0 / w)) & 0xFF) })
    }

    @Test("the file has the PNG signature, an indexed 8-bit IHDR, and chunks in the order IHDR PLTE IDAT IEND")
    func structure() throws {
        let img = testImage()
        let png = try PNGChunks(PNGEncoder.encodeIndexed(width: img.width, height: img.height, pixels: img.pixels,
                                                         palette: ColorMap.palette))
        #expect(png.chunks.map(\.type) == ["IHDR", "PLTE", "IDAT", "IEND"])
        let h = try #require(png.header)
        #expect(h.width == 300 && h.height == 300 && h.bitDepth == 8 && h.colorType == 3)
        #expect(png.first("IHDR")!.data[10...12] == [0, 0, 0])  // deflate, adaptive filtering, no interlace
        #expect(png.first("PLTE")!.data.count == 256 * 3)
        #expect(png.first("IEND")!.data.isEmpty)
    }

    @Test("every chunk's CRC matches a bit-by-bit CRC-32 computed here")
    func crcs() throws {
        let img = testImage()
        let png = try PNGChunks(PNGEncoder.encodeIndexed(width: img.width, height: img.height, pixels: img.pixels,
                                                         palette: ColorMap.palette))
        for chunk in png.chunks { #expect(chunk.crcMatches, "\(chunk.type)") }
    }

    @Test("inflating the stored blocks gives back filter byte 0 plus the pixels of every row, Adler-32 checked")
    func roundTrip() throws {
        let img = testImage()
        let png = try PNGChunks(PNGEncoder.encodeIndexed(width: img.width, height: img.height, pixels: img.pixels,
                                                         palette: ColorMap.palette))
        let rows = try png.indexedPixels()
        #expect(rows.count == img.height)
        #expect(rows.flatMap { $0 } == img.pixels)
    }

    @Test("checksums agree with published check values")
    func checkValues() {
        #expect(PNGEncoder.crc32(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(PNGEncoder.adler32(Array("Wikipedia".utf8)) == 0x11E6_0398)
        #expect(PNGEncoder.crc32([]) == 0 && PNGEncoder.adler32([]) == 1)
    }

    @Test("Adler-32 stays right past the 5552-byte overflow boundary")
    func longAdler() {
        let bytes = [UInt8](repeating: 0xFF, count: 100_000)
        var a = 1, b = 0
        for x in bytes { a = (a + Int(x)) % 65_521; b = (b + a) % 65_521 }
        #expect(PNGEncoder.adler32(bytes) == UInt32(b) << 16 | UInt32(a))
    }

    @Test("base64 agrees with Foundation for every length remainder")
    func base64() {
        var rng = SeededRandom(seed: 9)
        for count in [0, 1, 2, 3, 4, 5, 100, 1001] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(PNGEncoder.base64(bytes) == Data(bytes).base64EncodedString())
        }
    }

    static let pythonZlib: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", "import zlib"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    @Test("Python's zlib decompresses the IDAT stream to the same bytes (when python3 is installed)",
          .enabled(if: pythonZlib))
    func pythonInflate() throws {
        let img = testImage()
        let bytes = PNGEncoder.encodeIndexed(width: img.width, height: img.height, pixels: img.pixels, palette: ColorMap.palette)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-plot-\(UUID().uuidString).png")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let script = """
            import sys, zlib, struct
            d = open(sys.argv[1], 'rb').read()
            i, idat = 8, b''
            while i < len(d):
                n, = struct.unpack('>I', d[i:i+4]); t = d[i+4:i+8]
                if t == b'IDAT': idat += d[i+8:i+8+n]
                i += 12 + n
            raw = zlib.decompress(idat)
            print(len(raw), zlib.crc32(raw))
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, url.path]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        var raw: [UInt8] = []
        for y in 0..<img.height { raw.append(0); raw += img.pixels[(y * img.width)..<((y + 1) * img.width)] }
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(raw.count) \(referenceCRC32(raw))")
    }
}
