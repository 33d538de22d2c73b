import ToneShaperCore
import FoundationEssentials

/// The shipped shapes inside a plugin's own code: a CLAP is one file that must play the same
/// wherever a host finds it, with no Presets folder beside it. `source` writes
/// Sources/ToneShaperCLAP/BundledShapes.swift from Presets/ (a test keeps the two in step).
public enum BundledShapes {
    /// A Swift source declaring `bundledShapeFiles`: each file's name without `.json` and its
    /// text, verbatim, in name order.
    public static func source(files: [(name: String, text: String)]) -> String {
        var out = """
        // Generated from Presets/*.json by BundledShapes.source; do not edit.
        // Regenerate: TONESHAPER_WRITE_CLAP=1 swift test --filter BundledShapes

        /// The shipped shapes (Presets/*.json): file name without .json, and the file's text.
        let bundledShapeFiles: [(name: String, text: String)] = [

        """
        for file in files.sorted(by: { $0.name < $1.name }) {
            var hashes = "#"
            while file.text.contains("\"" + hashes) { hashes += "#" }  // no quote then hashes ends the literal early
            out += "    (\"\(file.name)\", \(hashes)\"\"\"\n\(file.text)\n\"\"\"\(hashes)),\n"
        }
        out += "]\n"
        return out
    }

    /// The library those texts make, decoded as `PresetLibrary.load` decodes files (a file's
    /// name is the fallback for a shape without one).
    public static func library(_ files: [(name: String, text: String)]) throws(ShapeError) -> PresetLibrary {
        var shapes: [Shape] = []
        for file in files {
            shapes.append(try ShapeFile.decode(Data(file.text.utf8), file: file.name + ".json", fallbackName: file.name))
        }
        return try PresetLibrary(shapes: shapes)
    }
}
