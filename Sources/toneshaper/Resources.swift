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
        func shipped() throws -> String { try InstallLayout.folder("Mappings", environment: "TONESHAPER_MAPPINGS") }
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
