import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// A temporary folder that removes itself.
final class TemporaryFolder {
    let path: String
    init() throws {
        path = (NSTemporaryDirectory() as NSString).appendingPathComponent("toneshaper-core-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }

    func write(_ name: String, _ text: String) throws -> String {
        let file = (path as NSString).appendingPathComponent(name)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }
}

/// A valid shape file with one field replaced (or removed when `value` is nil).
private func shapeJSON(replacing field: String? = nil, with value: String? = nil) -> String {
    var fields: [(String, String)] = [
        ("name", "\"test-shape\""),
        ("duration", "1.0"),
        ("minFrequency", "20"),
        ("maxFrequency", "880"),
        ("points", "[[0, 110], [0.5, 440], [1.0, 220]]"),
        ("wave", "\"sine\""),
        ("amplitude", "0.5"),
        ("fidelity", "1000"),
        ("rootNote", "69"),
    ]
    if let field {
        if let i = fields.firstIndex(where: { $0.0 == field }) {
            if let value { fields[i].1 = value } else { fields.remove(at: i) }
        } else if let value {
            fields.append((field, value))
        }
    }
    return "{\n" + fields.map { "  \"\($0.0)\": \($0.1)" }.joined(separator: ",\n") + "\n}\n"
}

@Suite("Shape files: valid presets load, invalid ones are rejected with file, field and value")
struct ShapeFileTests {
    @Test("a valid file loads with its fields")
    func validFileLoads() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("ok.json", shapeJSON())
        let shape = try ShapeFile.load(path: path)
        #expect(shape.name == "test-shape")
        #expect(shape.points.map(\.frequency) == [110, 440, 220])
        #expect(shape.points.map(\.time) == [0, 0.5, 1])
        #expect(shape.duration == 1)
        #expect(shape.fidelity == 1000)
        #expect(shape.wave == .sine)
    }

    @Test("encoding a shape and decoding it gives the same shape")
    func roundTrip() throws {
        var shape = Bench.tone(330, wave: .bandLimitedSquare)
        shape.envelope = .exponentialDecay(rate: 3)
        shape.echo = Shape.Echo(delay: 0.3, volume: 0.25)
        shape.fidelity = 77
        let decoded = try ShapeFile.decode(try ShapeFile.encode(shape))
        #expect(decoded == shape)
    }

    struct Invalid: Sendable, CustomTestStringConvertible {
        let label: String
        let field: String
        let replacement: String?
        /// What the message must name: the field and the offending value.
        let mustName: [String]
        var testDescription: String { label }
    }

    static let invalidCases: [Invalid] = [
        Invalid(label: "unknown wave type", field: "wave", replacement: "\"sawtoth\"", mustName: ["wave", "sawtoth"]),
        Invalid(label: "fewer than 2 points", field: "points", replacement: "[[0, 110]]", mustName: ["points", "1"]),
        Invalid(label: "no points at all", field: "points", replacement: "[]", mustName: ["points", "0"]),
        Invalid(label: "times not increasing", field: "points", replacement: "[[0, 110], [0.6, 440], [0.4, 220], [1, 110]]",
                mustName: ["points[2].time", "0.4"]),
        Invalid(label: "repeated time", field: "points", replacement: "[[0, 110], [0.5, 440], [0.5, 220], [1, 110]]",
                mustName: ["points[2].time", "0.5"]),
        Invalid(label: "frequency above the range", field: "points", replacement: "[[0, 110], [0.5, 5000], [1, 220]]",
                mustName: ["points[1].frequency", "5000"]),
        Invalid(label: "frequency below the range", field: "points", replacement: "[[0, 110], [0.5, 10], [1, 220]]",
                mustName: ["points[1].frequency", "10"]),
        Invalid(label: "frequency zero", field: "points", replacement: "[[0, 110], [0.5, 0], [1, 220]]",
                mustName: ["points[1].frequency", "0"]),
        Invalid(label: "frequency negative", field: "points", replacement: "[[0, 110], [0.5, -440], [1, 220]]",
                mustName: ["points[1].frequency", "-440"]),
        Invalid(label: "duration zero", field: "duration", replacement: "0", mustName: ["duration", "0"]),
        Invalid(label: "duration negative", field: "duration", replacement: "-2.5", mustName: ["duration", "-2.5"]),
        Invalid(label: "fidelity zero", field: "fidelity", replacement: "0", mustName: ["fidelity", "0"]),
        Invalid(label: "fidelity negative", field: "fidelity", replacement: "-3", mustName: ["fidelity", "-3"]),
        Invalid(label: "minFrequency ≤ 0", field: "minFrequency", replacement: "0", mustName: ["minFrequency", "0"]),
        Invalid(label: "point that is not a pair", field: "points", replacement: "[[0, 110], [0.5], [1, 220]]",
                mustName: ["points[1]", "0.5"]),
        Invalid(label: "duration missing", field: "duration", replacement: nil, mustName: ["duration", "missing"]),
        Invalid(label: "duration of the wrong type", field: "duration", replacement: "\"long\"", mustName: ["duration", "long"]),
        Invalid(label: "fidelity of the wrong type", field: "fidelity", replacement: "12.5", mustName: ["fidelity", "12.5"]),
    ]

    @Test("an invalid file is rejected with an error naming the file, the field and the value", arguments: invalidCases)
    func invalidFile(_ c: Invalid) throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("bad-\(c.field).json", shapeJSON(replacing: c.field, with: c.replacement))
        do {
            let shape = try ShapeFile.load(path: path)
            Issue.record("\(c.label): accepted as \(shape)")
        } catch {
            let message = String(describing: error)
            #expect(message.contains(path), "\(c.label): '\(message)' does not name the file")
            for word in c.mustName {
                #expect(message.contains(word), "\(c.label): '\(message)' does not name '\(word)'")
            }
            #expect(!message.contains("\n"), "\(c.label): the message should be one line: '\(message)'")
        }
    }

    @Test("malformed JSON is rejected with an error naming the file")
    func malformedJSON() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("broken.json", "{ \"duration\": 1.0, \"points\": [[0, 110], [1, 220]] ")
        #expect {
            _ = try ShapeFile.load(path: path)
        } throws: { error in
            let message = String(describing: error)
            return message.contains(path) && message.localizedCaseInsensitiveContains("json")
        }
    }

    @Test("a missing file is rejected with an error naming it")
    func missingFile() {
        let path = "/nonexistent/toneshaper/\(UUID().uuidString).json"
        #expect {
            _ = try ShapeFile.load(path: path)
        } throws: { error in String(describing: error).contains(path) }
    }

    @Test("a preset folder with a bad file fails to load, naming that file")
    func libraryNamesTheBadFile() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("a.json", shapeJSON())
        let bad = try folder.write("b.json", shapeJSON(replacing: "wave", with: "\"kazoo\""))
        #expect {
            _ = try PresetLibrary.load(directory: folder.path)
        } throws: { error in
            let m = String(describing: error)
            return m.contains(bad) && m.contains("wave") && m.contains("kazoo")
        }
    }

    @Test("two presets with the same program number are rejected, naming both")
    func duplicateProgram() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("a.json", shapeJSON(replacing: "name", with: "\"first\""))
        _ = try folder.write("b.json", shapeJSON(replacing: "name", with: "\"second\""))
        #expect {
            _ = try PresetLibrary.load(directory: folder.path)
        } throws: { error in
            let m = String(describing: error)
            return m.contains("program") && m.contains("first") && m.contains("second")
        }
    }
}

@Suite("A shape's ranges keep the engine in bounds")
struct ShapeRangeTests {
    static func file(duration: Double = 1, max: Double = 2000, point: Double = 440, points: Int = 2) -> Data {
        let list = (0..<points).map { "[\(Double($0) / Double(points - 1) * duration), \(point)]" }.joined(separator: ",")
        return Data(#"{"duration": \#(duration), "minFrequency": 20, "maxFrequency": \#(max), "points": [\#(list)]}"#.utf8)
    }

    @Test("values no engine can play are refused by the loader, naming field and value")
    func refused() {
        let cases: [(Data, String)] = [
            (Self.file(duration: 1e300), "field 'duration' = 1e+300: must be at most 600.0 seconds"),
            (Self.file(max: 1e300, point: 1e300), "field 'maxFrequency' = 1e+300: must be at most 100000.0 Hz"),
            (Self.file(points: Shape.maximumPoints + 1), "field 'points' = 4097 points: a shape has at most 4096 points"),
        ]
        for (data, message) in cases {
            do {
                _ = try ShapeFile.decode(data)
                Issue.record("accepted: \(message)")
            } catch {
                #expect(error.description == message)
            }
        }
    }

    @Test("the largest values that are accepted still render: ten minutes rising to 100 kHz over 4096 points plays on its root; key 127 takes it past 100 kHz and is silent, not a trap")
    func largestAccepted() throws {
        // 20 Hz rising to 100 kHz: on its root (69) it starts far below Nyquist and ends at the limit.
        let list = (0..<Shape.maximumPoints).map { i in
            "[\(Double(i) / Double(Shape.maximumPoints - 1) * 600), \(20 + Double(i) / Double(Shape.maximumPoints - 1) * 99_980)]"
        }.joined(separator: ",")
        let shape = try ShapeFile.decode(Data(#"{"duration": 600, "minFrequency": 20, "maxFrequency": 100000, "points": [\#(list)]}"#.utf8))
        let engine = try ShapeExport.engine(for: shape, sampleRate: 48_000)
        let root = engine.render(frames: 4_800, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 127))])
        #expect(root.allSatisfy { $0.isFinite })
        #expect(root.contains { $0 != 0 })
        let fresh = try ShapeExport.engine(for: shape, sampleRate: 48_000)
        let top = fresh.render(frames: 4_800, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: 127, velocity: 127))])
        #expect(fresh.activeVoiceCount == 0)
        #expect(top.allSatisfy { $0 == 0 }, "peak \(top.map { abs($0) }.max() ?? 0)")
        // A shape held at 100 kHz has nothing below Nyquist at 48 kHz even on its root: silent too.
        let held = try ShapeExport.engine(for: try ShapeFile.decode(Self.file(duration: 600, max: 100_000, point: 100_000, points: Shape.maximumPoints)),
                                          sampleRate: 48_000)
        _ = held.render(frames: 64, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 127))])
        #expect(held.activeVoiceCount == 0)
    }
}
