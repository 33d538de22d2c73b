import Foundation

/// The built-in shape library: every `*.json` in a presets folder, ordered by program number.
public struct PresetLibrary: Sendable {
    public private(set) var shapes: [Shape]

    public init(shapes: [Shape]) throws(ShapeError) {
        var seen: [Int: String] = [:]
        for s in shapes {
            if let other = seen[s.program] {
                throw ShapeError(file: nil, field: "program", value: "\(s.program)",
                                 reason: "used by both '\(other)' and '\(s.name)'")
            }
            seen[s.program] = s.name
        }
        self.shapes = shapes.sorted { $0.program < $1.program }
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
            shapes.append(try ShapeFile.load(path: (directory as NSString).appendingPathComponent(name)))
        }
        guard !shapes.isEmpty else {
            throw ShapeError(file: directory, field: "(directory)", value: "", reason: "holds no .json presets")
        }
        return try PresetLibrary(shapes: shapes)
    }

    public func shape(named name: String) -> Shape? { shapes.first { $0.name == name } }
    public func shape(program: Int) -> Shape? { shapes.first { $0.program == program } }
    public func index(named name: String) -> Int? { shapes.firstIndex { $0.name == name } }
    public func index(program: Int) -> Int? { shapes.firstIndex { $0.program == program } }
}
