import ArgumentParser
import Foundation
import ToneShaperCore
import ToneShaperLibrary

/// The shipped and user files a command reads: shapes through the one `ShapeLibrary` resolver,
/// controller maps from the shipped Mappings folder unless named.
enum Resources {
    /// The built-in and user shapes; what the library has to say (overrides, clashes, skipped
    /// files) is printed once, on stderr.
    static func shapeLibrary(builtIn: String? = nil) throws -> ShapeLibrary {
        let library = try ShapeLibrary.standard(builtIn: builtIn)
        for note in library.notes { FileHandle.standardError.write(Data("toneshaper: note: \(note)\n".utf8)) }
        return library
    }

    /// A mapping file as given, or a shipped one by name ("mpe" → Mappings/mpe.map), so an
    /// installed instrument finds it too; without one, Mappings/default.map.
    static func controllerMap(path: String?) throws -> ControllerMap {
        func shipped() throws -> String { try InstallLayout.folder(.mappings) }
        guard let path else { return try ControllerMapFile.load(path: shipped() + "/default.map") }
        if !path.contains("/"), !FileManager.default.fileExists(atPath: path), let folder = try? shipped() {
            let named = folder + "/" + (path.hasSuffix(".map") ? path : path + ".map")
            if FileManager.default.fileExists(atPath: named) { return try ControllerMapFile.load(path: named) }
        }
        return try ControllerMapFile.load(path: path)
    }

    /// One shape: a library name, a program number, or a shape file.
    static func shape(_ spec: String) throws -> Shape {
        var library = try shapeLibrary()
        let index = try library.resolve(spec)  // may add the file: index only after it returns
        return library.entries[index].shape
    }
}

/// What the shells offer after a preset, tuning or mapping option: the names the program itself
/// would accept (asked of the program at completion time, so your own shapes and an installed
/// prefix's folders are included), then matching files, since a path is accepted too.
extension CompletionKind {
    /// Built-in and user shape names, and .json files.
    static var shapeNames: CompletionKind {
        .custom { _, _, prefix in
            let names = (try? ShapeLibrary.standard())?.entries.map(\.shape.name) ?? []
            return Array(Set(names)).sorted() + Completion.files(prefix, ext: "json")
        }
    }

    /// Scala scales in the shipped Tunings folder (by name), and .scl files.
    static var tuningNames: CompletionKind {
        .custom { _, _, prefix in InstallLayout.names(in: .tunings, ext: "scl") + Completion.files(prefix, ext: "scl") }
    }

    /// Keyboard mappings in the shipped Tunings folder (by name), and .kbm files.
    static var keymapNames: CompletionKind {
        .custom { _, _, prefix in InstallLayout.names(in: .tunings, ext: "kbm") + Completion.files(prefix, ext: "kbm") }
    }

    /// Controller maps in the shipped Mappings folder (by name), and .map files.
    static var mappingNames: CompletionKind {
        .custom { _, _, prefix in InstallLayout.names(in: .mappings, ext: "map") + Completion.files(prefix, ext: "map") }
    }
}

enum Completion {
    /// Files with extension `ext` and folders whose path starts with `prefix`, as typed (a folder
    /// ends in "/" so the shell goes on into it). Nothing for an empty word, where names come first.
    static func files(_ prefix: String, ext: String) -> [String] {
        guard !prefix.isEmpty else { return [] }
        let slash = prefix.lastIndex(of: "/")
        let typedFolder = slash.map { String(prefix[...$0]) } ?? ""
        let start = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
        let folder = typedFolder.isEmpty ? "." : (typedFolder as NSString).expandingTildeInPath
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return entries.filter { $0.hasPrefix(start) && !($0.hasPrefix(".") && !start.hasPrefix(".")) }.sorted().compactMap { name in
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder)
            if isFolder.boolValue { return typedFolder + name + "/" }
            return name.hasSuffix("." + ext) ? typedFolder + name : nil
        }
    }
}
