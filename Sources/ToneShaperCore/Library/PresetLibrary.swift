import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The shapes an engine can play: the library's, ordered by program number, then any shapes
/// given by file (reached by index only, so their program numbers never clash with the library's).
public struct PresetLibrary: Sendable {
    public private(set) var shapes: [Shape]
    /// `shapes[..<listedCount]` answer to program changes; the rest were named by file.
    public let listedCount: Int

    public init(shapes: [Shape], unlisted: [Shape] = []) throws(ShapeError) {
        var seen: [Int: String] = [:]
        for s in shapes {
            if let other = seen[s.program] {
                throw ShapeError(file: nil, field: "program", value: "\(s.program)",
                                 reason: "used by both '\(other)' and '\(s.name)'")
            }
            seen[s.program] = s.name
        }
        self.shapes = shapes.sorted { $0.program < $1.program } + unlisted
        listedCount = shapes.count
    }

    /// Loads every `.json` file in `directory`; the first bad file stops loading with its error.
    public static func load(directory: String) throws(ShapeError) -> PresetLibrary {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            throw ShapeError(file: directory, field: "(directory)", value: "", reason: "cannot be listed")
        }
        var shapes: [Shape] = []
        for name in names.sorted() where name.hasSuffix(".json") {
            shapes.append(try ShapeFile.load(path: directory.hasSuffix("/") ? directory + name : directory + "/" + name))
        }
        guard !shapes.isEmpty else {
            throw ShapeError(file: directory, field: "(directory)", value: "", reason: "holds no .json presets")
        }
        return try PresetLibrary(shapes: shapes)
    }

    public func shape(named name: String) -> Shape? { index(named: name).map { shapes[$0] } }
    public func shape(program: Int) -> Shape? { index(program: program).map { shapes[$0] } }
    public func index(named name: String) -> Int? { shapes[..<listedCount].firstIndex { $0.name == name } }
    public func index(program: Int) -> Int? { shapes[..<listedCount].firstIndex { $0.program == program } }
}
