import Foundation
import ToneShaperCore

/// Finds the folders that ship with the instrument (Presets/, Mappings/, Examples/).
///
/// In order: an environment override, an installed layout next to the binary
/// (bin/../share/toneshaper/NAME), then the source checkout this binary was built from.
enum Resources {
    static func directory(_ name: String, environment variable: String) throws -> String {
        let fm = FileManager.default
        if let override = ProcessInfo.processInfo.environment[variable], !override.isEmpty {
            guard fm.fileExists(atPath: override) else { throw CLIError("\(variable)=\(override): no such folder") }
            return override
        }
        var candidates: [String] = []
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(exe.appendingPathComponent("../share/toneshaper/\(name)").standardized.path)
        // Sources/toneshaper/Resources.swift → repository root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(name).path)
        candidates.append(fm.currentDirectoryPath + "/" + name)
        for c in candidates {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: c, isDirectory: &isDir), isDir.boolValue { return c }
        }
        throw CLIError("cannot find the \(name) folder (looked in \(candidates.joined(separator: ", "))); set \(variable)")
    }

    static func presetLibrary(directory: String? = nil) throws -> PresetLibrary {
        let dir = try directory ?? Self.directory("Presets", environment: "TONESHAPER_PRESETS")
        return try PresetLibrary.load(directory: dir)
    }

    static func controllerMap(path: String?) throws -> ControllerMap {
        let file = try path ?? (Self.directory("Mappings", environment: "TONESHAPER_MAPPINGS") + "/default.map")
        return try ControllerMapFile.load(path: file)
    }

    /// A preset by name, or by program number; the error lists what exists.
    static func shape(_ nameOrProgram: String, in library: PresetLibrary) throws -> Shape {
        if let s = library.shape(named: nameOrProgram) { return s }
        if let p = Int(nameOrProgram), let s = library.shape(program: p) { return s }
        if nameOrProgram.hasSuffix(".json"), FileManager.default.fileExists(atPath: nameOrProgram) {
            return try ShapeFile.load(path: nameOrProgram)
        }
        throw CLIError("unknown preset '\(nameOrProgram)' (try: \(library.shapes.map(\.name).joined(separator: ", ")))")
    }
}
