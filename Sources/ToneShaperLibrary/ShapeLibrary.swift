import Foundation
import ToneShaperCore

/// Every shape a command can play, and where each came from: the built-in Presets folder, the
/// user's library (a user shape with a built-in's name replaces it), and shape files named on
/// the command line (always their own content, never a same-named library shape).
///
/// One resolver for every command (`render`, `play`, `render-shape`, `plot`, `edit`), so a name,
/// a program number or a FILE.json means the same thing everywhere.
public struct ShapeLibrary: Sendable {
    public enum Source: String, Sendable {
        case builtIn = "built-in"
        case user
        case file
    }

    public struct Entry: Sendable {
        public var shape: Shape
        public var source: Source
        /// The file it was read from.
        public var path: String
        /// A user shape that replaced a built-in of the same name.
        public var overrides: Bool
        /// False when another shape took its program number (it is then played by name only).
        public var answersToProgram: Bool
    }

    /// The library's shapes in program order, then files added by `resolve`.
    public private(set) var entries: [Entry]
    /// How many of `entries` are the library's (the rest were named by file).
    public private(set) var libraryCount: Int
    /// One line for each override, program clash or unreadable user file, to say once.
    public private(set) var notes: [String]
    public let userLibrary: UserLibrary

    /// Reads the built-in folder (a bad built-in file is an error) and the user's library (a bad
    /// user file is skipped with a note: one broken file must not silence the instrument).
    public static func load(builtIn: String, user: UserLibrary) throws -> ShapeLibrary {
        var entries: [Entry] = []
        for (shape, path) in try readFolder(builtIn, skipBad: nil) {
            entries.append(Entry(shape: shape, source: .builtIn, path: path, overrides: false, answersToProgram: true))
        }
        guard !entries.isEmpty else { throw LibraryError("\(builtIn): holds no .json presets") }
        var notes: [String] = []
        var userShapes: [(Shape, String)] = []
        if FileManager.default.fileExists(atPath: user.directory) {
            userShapes = try readFolder(user.directory, skipBad: { notes.append("skipping user shape \($0)") })
        }
        for (shape, path) in userShapes {
            if let i = entries.firstIndex(where: { $0.shape.name == shape.name }) {
                if entries[i].source == .user {
                    notes.append("user shapes \(entries[i].path) and \(path) are both named '\(shape.name)'; using the first")
                    continue
                }
                notes.append("user shape '\(shape.name)' (\(path)) overrides the built-in")
                entries[i] = Entry(shape: shape, source: .user, path: path, overrides: true, answersToProgram: true)
            } else {
                entries.append(Entry(shape: shape, source: .user, path: path, overrides: false, answersToProgram: true))
            }
        }
        // Program numbers: a user shape's is honoured; when two shapes claim one, the user's wins
        // over a built-in's (the first user file by name over a later one), and the other is then
        // played by name only.
        var owner: [Int: Int] = [:]
        let order = entries.indices.sorted { (entries[$0].source == .user ? 0 : 1, $0) < (entries[$1].source == .user ? 0 : 1, $1) }
        for i in order {
            let program = entries[i].shape.program
            if let winner = owner[program] {
                entries[i].answersToProgram = false
                notes.append("program \(program): \(entries[winner].source.rawValue) shape '\(entries[winner].shape.name)' keeps it; \(entries[i].source.rawValue) shape '\(entries[i].shape.name)' is played by name only")
            } else {
                owner[program] = i
            }
        }
        // Shapes that answer to a program first, in program order, then those played by name only:
        // the order an engine's presets take, so an entry's index is its preset index.
        entries.sort { ($0.answersToProgram ? 0 : 1, $0.shape.program, $0.shape.name) < ($1.answersToProgram ? 0 : 1, $1.shape.program, $1.shape.name) }
        return ShapeLibrary(entries: entries, libraryCount: entries.count, notes: notes, userLibrary: user)
    }

    /// The standard places: the shipped Presets folder (or `TONESHAPER_PRESETS`) and the user's library.
    public static func standard(builtIn: String? = nil) throws -> ShapeLibrary {
        try load(builtIn: builtIn ?? InstallLayout.builtInPresets(), user: .standard())
    }

    /// Every `.json` in `folder`, sorted by file name.
    static func readFolder(_ folder: String, skipBad: ((ShapeError) -> Void)?) throws -> [(Shape, String)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw LibraryError("\(folder): cannot be listed")
        }
        var shapes: [(Shape, String)] = []
        for name in names.sorted() where name.hasSuffix(".json") && !name.hasPrefix(".") {
            let path = (folder as NSString).appendingPathComponent(name)
            do {
                shapes.append((try ShapeFile.load(path: path), path))
            } catch {
                guard let skipBad else { throw error }
                skipBad(error)
            }
        }
        return shapes
    }

    /// A library entry by name, or by the program number it answers to.
    public func entry(named name: String) -> Entry? { entries[..<libraryCount].first { $0.shape.name == name } }
    public func entry(program: Int) -> Entry? { index(program: program).map { entries[$0] } }
    /// The library entry a program change to `program` selects.
    public func index(program: Int) -> Int? {
        entries[..<libraryCount].firstIndex { $0.answersToProgram && $0.shape.program == program }
    }

    /// What `--preset SPEC` names: a shape file (SPEC ends in `.json` or holds a `/`), else a
    /// library name, else a program number. A file is added as an entry of its own. Returns the
    /// entry's index.
    public mutating func resolve(_ spec: String) throws -> Int {
        if spec.hasSuffix(".json") || spec.contains("/") {
            let path = (spec as NSString).standardizingPath
            if let i = entries[libraryCount...].firstIndex(where: { $0.path == path }) { return i }
            guard FileManager.default.fileExists(atPath: path) else {
                throw LibraryError("shape file '\(spec)': no such file")
            }
            let shape = try ShapeFile.load(path: path)
            entries.append(Entry(shape: shape, source: .file, path: path, overrides: false, answersToProgram: false))
            return entries.count - 1
        }
        if let i = entries[..<libraryCount].firstIndex(where: { $0.shape.name == spec }) { return i }
        if let p = Int(spec), let i = index(program: p) { return i }
        let names = entries[..<libraryCount].map(\.shape.name).joined(separator: ", ")
        throw LibraryError("unknown preset '\(spec)' (try: \(names), or a shape .json file)")
    }

    /// The shapes for an engine, in `entries` order, so an entry's index is its preset index;
    /// only those that answer to a program take part in program changes.
    public func presetLibrary() throws -> PresetLibrary {
        let listed = entries.prefix { $0.answersToProgram }
        return try PresetLibrary(shapes: listed.map(\.shape), unlisted: entries[listed.count...].map(\.shape))
    }
}
