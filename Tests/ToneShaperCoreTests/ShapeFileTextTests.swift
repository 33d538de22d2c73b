import Foundation
import Testing
@testable import ToneShaperCore

/// What a refused shape file's one line quotes is the file's own text, found without Foundation's
/// JSONSerialization (the core links FoundationEssentials only): the same lines as before for the
/// files people write, and no crash or unbounded work for the files nobody should.
@Suite("A shape file's errors quote what the file says")
struct ShapeFileTextTests {
    static func shapeText(_ fields: String) -> String {
        #"{"name": "quoted", "duration": 1, "minFrequency": 20, "maxFrequency": 2000, "points": [[0, 110], [1, 220]]\#(fields)}"#
    }

    static func refusal(_ text: String) -> String? {
        do {
            _ = try ShapeFile.decode(Data(text.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test("a null under a key written with escapes (\"\\u0061ttack\") is refused by the field's name, as under the plain key")
    func escapedKeyNull() {
        let plain = Self.refusal(Self.shapeText(#", "attack": null"#))
        let escaped = Self.refusal(Self.shapeText(#", "\u0061ttack": null"#))
        #expect(plain?.hasPrefix("field 'attack' = null: is empty") == true, "\(plain ?? "accepted")")
        #expect(escaped == plain)
        // Inside "echo", and beside a string holding the word null, which is no null.
        let inner = Self.refusal(Self.shapeText(#", "description": "null and void", "echo": {"delay": null, "volume": 0.5}"#))
        #expect(inner?.hasPrefix("field 'echo.delay' = null") == true, "\(inner ?? "accepted")")
        #expect(Self.refusal(Self.shapeText(#", "description": "null and void""#)) == nil)
    }

    @Test("a wrong value written over several lines is quoted on one, as compact JSON, strings as written")
    func multiLineValue() {
        let text = """
        {"name": "quoted", "duration": 1, "minFrequency": 20, "maxFrequency": 2000,
         "points": [[0, 110],
                    [ 1,
                      220 , "hold" ,
                      "a \\"quoted\\" name" ]]}
        """
        #expect(Self.refusal(text) == #"field 'points[1]' = [1,220,"hold","a \"quoted\" name"]: must be [time, frequency] or [time, frequency, "kind"]"#)
        let typed = Self.refusal(Self.shapeText(#", "wave": ["saw\ttooth"]"#))
        #expect(typed?.contains(#"field 'wave' = ["saw\ttooth"]"#) == true, "\(typed ?? "accepted")")
        let word = Self.refusal(Self.shapeText(#", "duration": "a \u00e9 long""#).replacingOccurrences(of: #""duration": 1, "#, with: ""))
        #expect(word?.hasPrefix("field 'duration' = 'a é long': wrong type") == true, "\(word ?? "accepted")")
    }

    @Test("a value nested 100,000 arrays deep is refused in one line, not followed down the stack")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        for text in [Self.shapeText(#", "wave": \#(deep)"#), #"{"name": "deep", "points": \#(deep)}"#, deep] {
            let line = Self.refusal(text)
            #expect(line != nil && !line!.contains("\n") && line!.count < 400, "\(line?.prefix(200) ?? "accepted")")
        }
    }

    @Test("a file's own name names a shape that has none: the last path component without its extension")
    func fallbackName() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-name-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let nameless = #"{"duration": 1, "minFrequency": 20, "maxFrequency": 2000, "points": [[0, 110], [1, 220]]}"#
        for (file, name) in [("my.bright.shape.json", "my.bright.shape"), ("plain.json", "plain"), (".hidden", ".hidden"), ("no-extension", "no-extension")] {
            let path = folder.appendingPathComponent(file).path
            try Data(nameless.utf8).write(to: URL(fileURLWithPath: path))
            #expect(try ShapeFile.load(path: path).name == name, "\(file)")
        }
    }
}
