import Foundation
import Testing
@testable import ToneShaperCore

/// Every reader of a user's file refuses one larger than any real file of its kind before decoding it.
@Suite("Size bounds on files")
struct FileBoundTests {
    static func temporary(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-bound-\(UUID().uuidString)-\(name)").path
    }

    @Test("a shape file over 2 MB is refused before it is decoded, naming the file and the bound")
    func largeShape() throws {
        // A well-formed shape of 200,000 points (over 4 MB): decoding it first would take several times that.
        let points = (0..<200_000).map { "[\(Double($0) / 200_000), 440.0]" }.joined(separator: ", ")
        let path = Self.temporary("big.json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let json = Data("{\"duration\": 1, \"points\": [\(points), [1, 440]]}".utf8)
        try #require(json.count > ShapeFile.maximumFileBytes)
        try json.write(to: URL(fileURLWithPath: path))
        do {
            _ = try ShapeFile.load(path: path)
            Issue.record("accepted")
        } catch {
            #expect(error.description == "\(path): is larger than 2 MB, more than any shape needs; not read")
        }
        #expect(throws: ShapeError.self) { try ShapeFile.decode(Data(repeating: 0x20, count: ShapeFile.maximumFileBytes + 1)) }
    }

    @Test("a device that never ends (/dev/zero) is refused at the bound, for tunings, maps and shapes alike")
    func endlessFile() throws {
        #expect(BoundedRead.Failure.tooLarge(limit: 1 << 20).description == "is larger than 1 MB")
        #expect(throws: BoundedRead.Failure.tooLarge(limit: 1 << 20)) { try BoundedRead.contents(of: "/dev/zero", limit: 1 << 20) }
        do { _ = try ScalaScale.load(path: "/dev/zero"); Issue.record("accepted") } catch {
            #expect(error.description == "/dev/zero: is larger than 1 MB; not a tuning file")
        }
        do { _ = try ControllerMapFile.load(path: "/dev/zero"); Issue.record("accepted") } catch {
            #expect(error.description == "/dev/zero: is larger than 1 MB; not a controller mapping")
        }
        do { _ = try ShapeFile.load(path: "/dev/zero"); Issue.record("accepted") } catch {
            #expect(error.description.contains("is larger than 2 MB"))
        }
        // What fits is read whole, and a missing file says why.
        let empty = try BoundedRead.contents(of: "/dev/null", limit: 10)
        #expect(empty.isEmpty)
        #expect(BoundedRead.Failure.unreadable(reason: "No such file or directory").description == "cannot be read (No such file or directory)")
        #expect(throws: BoundedRead.Failure.unreadable(reason: "No such file or directory")) {
            try BoundedRead.contents(of: "/nonexistent/x", limit: 10)
        }
    }
}
