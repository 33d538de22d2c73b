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

    static func controllerMap(path: String?) throws -> ControllerMap {
        let file = try path ?? (InstallLayout.folder("Mappings", environment: "TONESHAPER_MAPPINGS") + "/default.map")
        return try ControllerMapFile.load(path: file)
    }

    /// One shape: a library name, a program number, or a shape file.
    static func shape(_ spec: String) throws -> Shape {
        var library = try shapeLibrary()
        let index = try library.resolve(spec)  // may add the file: index only after it returns
        return library.entries[index].shape
    }
}
