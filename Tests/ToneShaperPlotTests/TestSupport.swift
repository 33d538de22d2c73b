import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import ToneShaperCore

/// Seeded xorshift64* so a failing random test can be replayed exactly.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x1234_5678 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// A sine of `frequency` Hz, `amplitude` peak, `count` samples at `rate`.
func sineWave(_ frequency: Double, amplitude: Double, count: Int, rate: Double, startingAt start: Int = 0) -> [Float] {
    (0..<count).map { i in
        i < start ? 0 : Float(amplitude * sin(2 * Double.pi * frequency * Double(i - start) / rate))
    }
}

/// One parsed SVG element: name, attributes, direct text, and the chain of enclosing elements' attributes.
struct SVGNode {
    var name: String
    var attributes: [String: String]
    var text: String
    /// Attributes of every ancestor, innermost first (to find the `data-chart` of a group).
    var ancestors: [[String: String]]

    func double(_ key: String) -> Double? { attributes[key].flatMap(Double.init) }
    func hasClass(_ name: String) -> Bool { (attributes["class"] ?? "").split(separator: " ").contains { $0 == name } }
    /// `data-chart` on the element itself or on the nearest enclosing group that has one.
    var chart: String? { attributes["data-chart"] ?? ancestors.lazy.compactMap { $0["data-chart"] }.first }
}

/// Parses XML with Foundation's XMLParser and flattens it into document order; throws if malformed.
final class FlatXMLParser: NSObject, XMLParserDelegate {
    private(set) var elements: [SVGNode] = []
    private var stack: [Int] = []

    static func parse(_ text: String) throws -> [SVGNode] {
        let parser = XMLParser(data: Data(text.utf8))
        let delegate = FlatXMLParser()
        parser.delegate = delegate
        guard parser.parse() else {
            throw parser.parserError ?? NSError(domain: "FlatXMLParser", code: 1)
        }
        return delegate.elements
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        let ancestors = stack.reversed().map { elements[$0].attributes }
        elements.append(SVGNode(name: elementName, attributes: attributeDict, text: "", ancestors: ancestors))
        stack.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let top = stack.last { elements[top].text += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        stack.removeLast()
    }
}

/// "x1,y1 x2,y2 …" → points.
func polylinePoints(_ attribute: String) -> [(x: Double, y: Double)] {
    attribute.split(separator: " ").map { pair in
        let xy = pair.split(separator: ",").map { Double($0)! }
        return (xy[0], xy[1])
    }
}

/// The numbers in an SVG path's `d` (M/L commands with absolute coordinates), as points.
func pathPoints(_ d: String) -> [(x: Double, y: Double)] {
    let numbers = d.split(whereSeparator: { " MLZ".contains($0) }).compactMap { Double($0) }
    return stride(from: 0, to: numbers.count - 1, by: 2).map { (numbers[$0], numbers[$0 + 1]) }
}

/// Least-squares line v = a + b·p through (pixel, value) pairs: how a reader maps a position to a value.
func fitLine(_ pairs: [(pixel: Double, value: Double)]) -> (a: Double, b: Double) {
    let n = Double(pairs.count)
    let mp = pairs.map(\.pixel).reduce(0, +) / n, mv = pairs.map(\.value).reduce(0, +) / n
    let sxy = pairs.map { ($0.pixel - mp) * ($0.value - mv) }.reduce(0, +)
    let sxx = pairs.map { ($0.pixel - mp) * ($0.pixel - mp) }.reduce(0, +)
    let b = sxy / sxx
    return (mv - b * mp, b)
}

/// A test's own inflate for zlib streams made only of stored blocks (what PNGEncoder writes).
/// Checks the header and the Adler-32 trailer with an independent implementation.
func inflateStored(_ stream: [UInt8]) throws -> [UInt8] {
    struct Bad: Error { let reason: String }
    guard stream.count >= 6 else { throw Bad(reason: "too short") }
    guard stream[0] & 0x0F == 8, (UInt16(stream[0]) << 8 | UInt16(stream[1])) % 31 == 0 else { throw Bad(reason: "bad zlib header") }
    var i = 2
    var out: [UInt8] = []
    while true {
        guard i + 5 <= stream.count else { throw Bad(reason: "truncated block header") }
        let header = stream[i]
        guard header & 0b110 == 0 else { throw Bad(reason: "not a stored block") }
        let len = Int(stream[i + 1]) | Int(stream[i + 2]) << 8
        let nlen = Int(stream[i + 3]) | Int(stream[i + 4]) << 8
        guard len ^ 0xFFFF == nlen else { throw Bad(reason: "LEN/NLEN mismatch") }
        i += 5
        guard i + len <= stream.count else { throw Bad(reason: "truncated block") }
        out += stream[i..<(i + len)]
        i += len
        if header & 1 == 1 { break }
    }
    guard i + 4 == stream.count else { throw Bad(reason: "trailing bytes") }
    var a = 1, b = 0
    for byte in out { a = (a + Int(byte)) % 65_521; b = (b + a) % 65_521 }
    let expected = UInt32(b) << 16 | UInt32(a)
    let stored = UInt32(stream[i]) << 24 | UInt32(stream[i + 1]) << 16 | UInt32(stream[i + 2]) << 8 | UInt32(stream[i + 3])
    guard stored == expected else { throw Bad(reason: "Adler-32 mismatch") }
    return out
}

/// Bit-at-a-time CRC-32 (no table), independent of the encoder's table-driven one.
func referenceCRC32(_ bytes: [UInt8]) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = (crc >> 1) ^ (crc & 1 == 1 ? 0xEDB8_8320 : 0) }
    }
    return ~crc
}

/// A parsed PNG: its chunks in order, each with its CRC checked.
struct PNGChunks {
    struct Chunk { var type: String; var data: [UInt8]; var crcMatches: Bool }
    var chunks: [Chunk]

    init(_ bytes: [UInt8]) throws {
        struct Bad: Error { let reason: String }
        guard bytes.count >= 8, Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] else {
            throw Bad(reason: "no PNG signature")
        }
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        }
        var i = 8
        chunks = []
        while i < bytes.count {
            guard i + 12 <= bytes.count else { throw Bad(reason: "truncated chunk") }
            let length = Int(u32(i))
            guard i + 12 + length <= bytes.count else { throw Bad(reason: "chunk overruns file") }
            let typeAndData = Array(bytes[(i + 4)..<(i + 8 + length)])
            let type = String(decoding: typeAndData[0..<4], as: UTF8.self)
            chunks.append(Chunk(type: type, data: Array(typeAndData[4...]),
                                crcMatches: referenceCRC32(typeAndData) == u32(i + 8 + length)))
            i += 12 + length
        }
    }

    func first(_ type: String) -> Chunk? { chunks.first { $0.type == type } }

    /// Width, height, bit depth, colour type from IHDR.
    var header: (width: Int, height: Int, bitDepth: UInt8, colorType: UInt8)? {
        guard let d = first("IHDR")?.data, d.count == 13 else { return nil }
        let w = Int(d[0]) << 24 | Int(d[1]) << 16 | Int(d[2]) << 8 | Int(d[3])
        let h = Int(d[4]) << 24 | Int(d[5]) << 16 | Int(d[6]) << 8 | Int(d[7])
        return (w, h, d[8], d[9])
    }

    /// Palette indices, top row first, after undoing filter type 0 (the only one the encoder uses).
    func indexedPixels() throws -> [[UInt8]] {
        struct Bad: Error { let reason: String }
        guard let h = header else { throw Bad(reason: "no IHDR") }
        let raw = try inflateStored(chunks.filter { $0.type == "IDAT" }.flatMap(\.data))
        guard raw.count == (h.width + 1) * h.height else { throw Bad(reason: "wrong decompressed size \(raw.count)") }
        return try (0..<h.height).map { y in
            let row = Array(raw[(y * (h.width + 1))..<((y + 1) * (h.width + 1))])
            guard row[0] == 0 else { throw Bad(reason: "unexpected filter \(row[0])") }
            return Array(row.dropFirst())
        }
    }
}

/// The 30 → 440 → 50 Hz curve of the article's figure, one second.
func peakShape(fidelity: Int = 1000) -> Shape {
    Shape(name: "peak", points: [.init(time: 0, frequency: 30), .init(time: 0.5, frequency: 440), .init(time: 1, frequency: 50)],
          duration: 1, minFrequency: 20, maxFrequency: 880, wave: .sine, amplitude: 0.5, fidelity: fidelity)
}
