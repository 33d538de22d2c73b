import Foundation
import Testing
@testable import ToneShaperCore

/// A shape file with the given points (written as JSON text) and nothing else to trip on.
private func file(points: String) -> Data {
    Data(#"{"name": "kinds", "duration": 1, "minFrequency": 20, "maxFrequency": 2000, "points": [\#(points)]}"#.utf8)
}

@Suite("Segment kinds in shape files: [time, frequency] or [time, frequency, \"kind\"]")
struct SegmentKindFileTests {
    @Test("a point may name the kind of the segment it begins; a pair is linear, and so is the last point unless it says otherwise")
    func kindsAreRead() throws {
        let shape = try ShapeFile.decode(file(points: #"[0, 110, "exponential"], [0.25, 880, "hold"], [0.5, 440], [0.75, 220, "linear"], [1, 330, "hold"]"#))
        #expect(shape.points.map(\.kind) == [.exponential, .hold, .linear, .linear, .hold])
        #expect(shape.points.map(\.frequency) == [110, 880, 440, 220, 330])
    }

    @Test("a shape with kinds round-trips through the file: written, read back, equal, the last point's kind kept")
    func roundTrip() throws {
        let shape = Shape(name: "kinds", points: [.init(time: 0, frequency: 110, kind: .exponential),
                                                  .init(time: 0.3, frequency: 880, kind: .hold),
                                                  .init(time: 0.6, frequency: 440),
                                                  .init(time: 1, frequency: 220, kind: .exponential)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000)
        let data = try ShapeFile.encode(shape)
        #expect(try ShapeFile.decode(data) == shape)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""exponential""#) && text.contains(#""hold""#))
        #expect(!text.contains(#""linear""#))
    }

    @Test("a point written with \"linear\" is written back as a plain pair, so files without kinds re-save as before")
    func linearIsWrittenAsAPair() throws {
        let explicit = try ShapeFile.decode(file(points: #"[0, 110, "linear"], [0.5, 440, "linear"], [1, 220]"#))
        let plain = try ShapeFile.decode(file(points: "[0, 110], [0.5, 440], [1, 220]"))
        #expect(explicit == plain)
        #expect(try ShapeFile.encode(explicit) == (try ShapeFile.encode(plain)))
        let points = try #require((try JSONSerialization.jsonObject(with: ShapeFile.encode(plain)) as? [String: Any])?["points"] as? [[Double]])
        #expect(points == [[0, 110], [0.5, 440], [1, 220]])
    }

    @Test("every shipped preset re-saves without a kind in its points")
    func presetsKeepTheirPairs() throws {
        let folder = URL(fileURLWithPath: Bench.presetsDirectory)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for name in files {
            let shape = try ShapeFile.load(path: folder.appendingPathComponent(name).path)
            guard shape.points.allSatisfy({ $0.kind == .linear }) else { continue }
            let object = try #require(try JSONSerialization.jsonObject(with: ShapeFile.encode(shape)) as? [String: Any])
            #expect((object["points"] as? [[Double]])?.allSatisfy { $0.count == 2 } == true, "\(name)")
        }
    }

    @Test("a wrong kind, a wrong element or a wrong length is refused in one line naming the point, the element and the value", arguments: [
        (#"[0, 110], [0.5, 440], [0.7, 300], [1, 220, "expo"]"#,
         #"field 'points[3][2]' = "expo": must be "linear", "exponential" or "hold""#),
        (#"[0, 110, "Hold"], [1, 220]"#, #"field 'points[0][2]' = "Hold": must be "linear", "exponential" or "hold""#),
        (#"[0, 110, 2], [1, 220]"#, #"field 'points[0][2]' = 2: must be "linear", "exponential" or "hold""#),
        (#"[0, 110, null], [1, 220]"#, #"field 'points[0][2]' = null: must be "linear", "exponential" or "hold""#),
        (#"[0, 110, ["hold"]], [1, 220]"#, #"field 'points[0][2]' = ["hold"]: must be "linear", "exponential" or "hold""#),
        (#"[0, 110], [1, 220, "hold", "linear"]"#,
         #"field 'points[1]' = [1,220,"hold","linear"]: must be [time, frequency] or [time, frequency, "kind"]"#),
        (#"[0, 110], [0.5]"#, #"field 'points[1]' = [0.5]: must be [time, frequency] or [time, frequency, "kind"]"#),
        (#"["hold", 110, 0], [1, 220]"#, #"field 'points[0][0]' = "hold": wrong type, expected a number"#),
        (#"[0, null], [1, 220]"#, #"field 'points[0][1]' = null: wrong type, expected a number"#),
        (#"[0, 110], 5"#, #"field 'points[1]' = 5: wrong type, expected an array"#),
    ])
    func refused(points: String, message: String) {
        do {
            let shape = try ShapeFile.decode(file(points: points))
            Issue.record("accepted: \(shape.points)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("a hostile kind (a megabyte of text) or point (thousands of elements) is named in a short line")
    func hostileValuesStayShort() {
        let long = String(repeating: "x", count: 1 << 20)
        let many = (0..<5000).map(String.init).joined(separator: ",")
        for points in [#"[0, 110, "\#(long)"], [1, 220]"#, "[0, 110], [\(many)]"] {
            do {
                _ = try ShapeFile.decode(file(points: points))
                Issue.record("accepted")
            } catch {
                #expect(error.description.count < 200, "\(error.description.prefix(300))")
                #expect(error.description.contains("…"))
            }
        }
    }

    @Test("a file names the bad kind with its path, like every other field")
    func namesTheFile() throws {
        let folder = try TemporaryFolder()
        let path = try folder.write("bad-kind.json", String(decoding: file(points: #"[0, 110, "exp"], [1, 220]"#), as: UTF8.self))
        #expect(throws: ShapeError.self) { try ShapeFile.load(path: path) }
        do { _ = try ShapeFile.load(path: path) } catch {
            #expect(error.description == #"\#(path): field 'points[0][2]' = "exp": must be "linear", "exponential" or "hold""#)
        }
    }
}
