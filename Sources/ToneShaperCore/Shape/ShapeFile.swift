import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads and writes shapes as human-readable JSON, one preset per file.
///
/// Decoding goes through a loose mirror of the format first, so every problem can be reported
/// with the file, the field and the offending value instead of a generic decoding error.
public enum ShapeFile {
    /// The on-disk form. Points are `[time, frequency]` pairs, the way one would write them by hand,
    /// or `[time, frequency, "kind"]` triples for a segment that is not linear (see `SegmentKind`).
    struct Document: Codable {
        var name: String?
        var description: String?
        // Integers are read as numbers and checked here, so "fidelity": 12.5 is reported by name.
        var program: Double?
        var duration: Double?
        var minFrequency: Double?
        var maxFrequency: Double?
        var points: [PointDocument]?
        var wave: String?
        var amplitude: Double?
        var envelope: AmplitudeEnvelope?
        var echo: EchoDocument?
        var fidelity: Double?
        var fourierTerms: Double?
        var rootNote: Double?
        var attack: Double?
        var release: Double?
    }
    struct EchoDocument: Codable { var delay: Double; var volume: Double }

    /// One point as written: its elements read loosely (number, text, anything else) so that a
    /// wrong one is reported by its index and value rather than as a decoding failure.
    struct PointDocument: Codable {
        enum Element: Codable {
            case number(Double), text(String), other
            init(from decoder: any Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let n = try? c.decode(Double.self) { self = .number(n) }
                else if let t = try? c.decode(String.self) { self = .text(t) }
                else { self = .other }
            }
            func encode(to encoder: any Encoder) throws {
                var c = encoder.singleValueContainer()
                switch self {
                case .number(let n): try c.encode(n)
                case .text(let t): try c.encode(t)
                case .other: try c.encodeNil()
                }
            }
        }
        var elements: [Element]
        init(elements: [Element]) { self.elements = elements }
        /// Written as `[time, frequency]`, with the kind only when it is not linear: every file
        /// without kinds re-saves byte for byte as before.
        init(_ p: Shape.Point) {
            elements = [.number(p.time), .number(p.frequency)]
            if p.kind != .linear { elements.append(.text(p.kind.rawValue)) }
        }
        init(from decoder: any Decoder) throws { elements = try decoder.singleValueContainer().decode([Element].self) }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.singleValueContainer()
            try c.encode(elements)
        }
    }

    /// The largest shape file read: a shape of `Shape.maximumPoints` points, pretty-printed, is
    /// about 250 KB, and the editor takes at most 2 MB. A larger file is refused before it is
    /// decoded (JSON decoding takes several times the file's size in memory).
    public static let maximumFileBytes = 2 << 20

    public static func load(path: String) throws(ShapeError) -> Shape {
        let bytes: [UInt8]
        do {
            bytes = try BoundedRead.contents(of: path, limit: maximumFileBytes)
        } catch {
            throw ShapeError(file: path, field: "(file)", value: "", reason: error.description(tooLarge: ", more than any shape needs; not read"))
        }
        let fallbackName = baseName(path)
        return try decode(Data(bytes), file: path, fallbackName: fallbackName)
    }

    /// A path's last component without its extension ("/a/b/siren.json" → "siren"; ".json" stays).
    static func baseName(_ path: String) -> String {
        var name = Substring(path)
        while name.count > 1, name.hasSuffix("/") { name = name.dropLast() }
        if let slash = name.lastIndex(of: "/"), name.index(after: slash) < name.endIndex { name = name[name.index(after: slash)...] }
        if let dot = name.lastIndex(of: "."), dot > name.startIndex { name = name[..<dot] }
        return String(name)
    }

    public static func decode(_ data: Data, file: String? = nil, fallbackName: String = "shape") throws(ShapeError) -> Shape {
        guard data.count <= maximumFileBytes else {
            throw ShapeError(file: file, field: "(file)", value: "\(data.count) bytes",
                             reason: "is larger than \(BoundedRead.size(maximumFileBytes)), more than any shape needs; not decoded")
        }
        let doc: Document
        do {
            doc = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            throw describe(error, file: file, data: data)
        } catch {
            throw ShapeError(file: file, field: "(file)", value: "", reason: "\(error)")
        }
        try refuseNulls(data, file: file)
        return try shape(from: doc, file: file, fallbackName: fallbackName, data: data)
    }

    /// The shape a decoded document describes, validated; errors name `file` and the field (with
    /// `fieldPrefix` before it, for a shape inside another document: "shapes[2]."). `data` is the
    /// JSON it was decoded from, the shape at `dataPath` in it, for quoting a wrong point as written.
    static func shape(from doc: Document, file: String?, fallbackName: String, fieldPrefix: String = "",
                      data: Data, dataPath: [String] = []) throws(ShapeError) -> Shape {
        do {
            return try build(from: doc, file: file, fallbackName: fallbackName, data: data, dataPath: dataPath)
        } catch {
            var e = error
            if !fieldPrefix.isEmpty && e.field != "(file)" { e.field = fieldPrefix + e.field }
            throw e
        }
    }

    private static func build(from doc: Document, file: String?, fallbackName: String, data: Data,
                              dataPath: [String]) throws(ShapeError) -> Shape {
        func missing(_ field: String) -> ShapeError {
            ShapeError(file: file, field: field, value: "(missing)", reason: "is required")
        }
        guard let duration = doc.duration else { throw missing("duration") }
        guard let rawPoints = doc.points else { throw missing("points") }
        var points: [Shape.Point] = []
        for (i, raw) in rawPoints.enumerated() {
            points.append(try point(raw.elements, index: i, file: file, data: data, dataPath: dataPath))
        }
        func integer(_ value: Double?, _ field: String, default fallback: Int) throws(ShapeError) -> Int {
            guard let value else { return fallback }
            guard value == value.rounded(), abs(value) < 1e9 else {
                throw ShapeError(file: file, field: field, value: "\(value)", reason: "must be a whole number")
            }
            return Int(value)
        }
        let program = try integer(doc.program, "program", default: 0)
        let fidelity = try integer(doc.fidelity, "fidelity", default: 1000)
        let fourierTerms = try integer(doc.fourierTerms, "fourierTerms", default: 10)
        let rootNote = try integer(doc.rootNote, "rootNote", default: 69)
        let waveName = doc.wave ?? "sine"
        guard let wave = WaveType(rawValue: waveName) else {
            throw ShapeError(file: file, field: "wave", value: "'\(waveName)'",
                             reason: "unknown wave type (expected one of \(WaveType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let freqs = points.map(\.frequency)
        let shape = Shape(
            name: doc.name ?? fallbackName, description: doc.description ?? "", program: program,
            points: points, duration: duration,
            minFrequency: doc.minFrequency ?? (freqs.min() ?? 1), maxFrequency: doc.maxFrequency ?? (freqs.max() ?? 1),
            wave: wave, amplitude: doc.amplitude ?? 0.5, envelope: doc.envelope ?? .constant,
            echo: doc.echo.map { Shape.Echo(delay: $0.delay, volume: $0.volume) } ?? .off,
            fidelity: fidelity, fourierTerms: fourierTerms, rootNote: rootNote,
            attack: doc.attack ?? 0.005, release: doc.release ?? 0.05)
        do {
            try shape.validate()
        } catch {
            var e = error
            e.file = file
            throw e
        }
        return shape
    }

    /// A field written as `null` is refused by name, as the editor's page refuses an emptied box:
    /// the decoder would read it as absent and give the default, so `"attack": null` played with
    /// 5 ms while the page said it had no value. A field left out still takes its default.
    static func refuseNulls(_ data: Data, file: String?) throws(ShapeError) {
        let bytes = [UInt8](data)
        guard JSONText.mentionsNull(bytes) else { return }
        try refuseNulls(bytes, at: [], file: file)
    }

    /// The same, on the shape at `path` inside a larger document (an instrument state's
    /// "shapes"), with `fieldPrefix` before the field named.
    static func refuseNulls(_ bytes: [UInt8], at path: [String], file: String?, fieldPrefix: String = "") throws(ShapeError) {
        guard let object = JSONText.value(at: path, in: bytes), let members = JSONText.members(bytes, object) else { return }
        var nulls = members.filter { JSONText.isNull(bytes, $0.value) }.map(\.key)
        for parent in ["echo", "envelope"] {
            guard let inner = members.last(where: { $0.key == parent }), let innerMembers = JSONText.members(bytes, inner.value) else { continue }
            nulls += innerMembers.filter { JSONText.isNull(bytes, $0.value) }.map { "\(parent).\($0.key)" }
        }
        guard let field = nulls.sorted().first else { return }
        throw ShapeError(file: file, field: fieldPrefix + field, value: "null",
                         reason: "is empty; give a value (a file may leave the field out for its default)")
    }

    public static func encode(_ shape: Shape) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(document(shape))
    }

    /// The on-disk form of a shape (also what a saved instrument state embeds).
    static func document(_ shape: Shape) -> Document {
        Document(
            name: shape.name, description: shape.description, program: Double(shape.program), duration: shape.duration,
            minFrequency: shape.minFrequency, maxFrequency: shape.maxFrequency,
            points: shape.points.map(PointDocument.init), wave: shape.wave.rawValue,
            amplitude: shape.amplitude, envelope: shape.envelope,
            echo: EchoDocument(delay: shape.echo.delay, volume: shape.echo.volume), fidelity: Double(shape.fidelity),
            fourierTerms: Double(shape.fourierTerms), rootNote: Double(shape.rootNote), attack: shape.attack, release: shape.release)
    }

    /// Point `index` from its elements: `[time, frequency]` or `[time, frequency, "kind"]`; a wrong
    /// element is named by its place (`points[3][2]`) and its value as written.
    static func point(_ e: [PointDocument.Element], index i: Int, file: String?, data: Data,
                      dataPath: [String] = []) throws(ShapeError) -> Shape.Point {
        func written(_ keys: [Int]) -> String { jsonText(data, dataPath + ["points", "\(i)"] + keys.map { "\($0)" }) }
        guard e.count == 2 || e.count == 3 else {
            throw ShapeError(file: file, field: "points[\(i)]", value: written([]),
                             reason: "must be [time, frequency] or [time, frequency, \"kind\"]")
        }
        var numbers: [Double] = []
        for j in 0..<2 {
            guard case .number(let n) = e[j] else {
                throw ShapeError(file: file, field: "points[\(i)][\(j)]", value: written([j]),
                                 reason: "wrong type, expected a number")
            }
            numbers.append(n)
        }
        var kind = SegmentKind.linear
        if e.count == 3 {
            guard case .text(let name) = e[2], let k = SegmentKind(rawValue: name) else {
                throw ShapeError(file: file, field: "points[\(i)][2]", value: written([2]), reason: SegmentKind.rule)
            }
            kind = k
        }
        return Shape.Point(time: numbers[0], frequency: numbers[1], kind: kind)
    }

    /// The value at `path` (object keys, or array indices as digits) as compact JSON text: `"expo"`,
    /// `0.5`, `null`, `[1,2,3]`; cut after 60 characters, so a hostile value keeps the line short.
    static func jsonText(_ data: Data, _ path: [String]) -> String {
        let bytes = [UInt8](data)
        guard JSONText.value(at: [], in: bytes) != nil else { return "(unreadable)" }
        guard let range = JSONText.value(at: path, in: bytes) else { return "(missing)" }
        let written = JSONText.compact(bytes, range)
        return written.count > 60 ? written.prefix(60) + "…" : written
    }

    /// Turns Foundation's decoding error into "field 'x' = …: reason".
    static func describe(_ error: DecodingError, file: String?, data: Data) -> ShapeError {
        /// The offending value as written in the file, found by walking the coding path.
        func rawValue(_ keys: [CodingKey]) -> String {
            let bytes = [UInt8](data)
            guard let range = JSONText.value(at: keys.map { $0.intValue.map(String.init) ?? $0.stringValue }, in: bytes) else { return "(wrong type)" }
            if let string = JSONText.string(bytes, range) { return "'\(string)'" }
            return JSONText.compact(bytes, range)
        }
        func path(_ keys: [CodingKey]) -> String {
            var s = ""
            for k in keys {
                if let i = k.intValue { s += "[\(i)]" } else { s += s.isEmpty ? k.stringValue : ".\(k.stringValue)" }
            }
            return s.isEmpty ? "(file)" : s
        }
        switch error {
        case .typeMismatch(let type, let ctx):
            return ShapeError(file: file, field: path(ctx.codingPath), value: rawValue(ctx.codingPath),
                              reason: "wrong type, expected \(type == Double.self ? "a number" : "\(type)".hasPrefix("Array<") ? "an array" : "\(type)")")
        case .valueNotFound(let type, let ctx):
            return ShapeError(file: file, field: path(ctx.codingPath), value: "null", reason: "expected \(type)")
        case .keyNotFound(let key, let ctx):
            return ShapeError(file: file, field: path(ctx.codingPath + [key]), value: "(missing)", reason: "is required")
        case .dataCorrupted(let ctx):
            return ShapeError(file: file, field: path(ctx.codingPath), value: "(invalid)",
                              reason: ctx.debugDescription.isEmpty ? "not valid JSON" : ctx.debugDescription)
        @unknown default:
            return ShapeError(file: file, field: "(file)", value: "", reason: "\(error)")
        }
    }
}
