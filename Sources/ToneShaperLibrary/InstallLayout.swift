import Foundation

/// Finds the folders that ship with the instrument (Presets/, Mappings/, Examples/).
///
/// In order: an environment override, an installed layout next to the binary
/// (PREFIX/bin/../share/toneshaper/NAME, what install.sh makes), then the source checkout this
/// binary was built from, then the current folder.
public enum InstallLayout {
    public static func folder(_ name: String, environment variable: String) throws(LibraryError) -> String {
        let fm = FileManager.default
        if let override = ProcessInfo.processInfo.environment[variable], !override.isEmpty {
            guard fm.fileExists(atPath: override) else { throw LibraryError("\(variable)=\(override): no such folder") }
            return override
        }
        var candidates: [String] = []
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(exe.appendingPathComponent("../share/toneshaper/\(name)").standardized.path)
        // Sources/ToneShaperLibrary/InstallLayout.swift → repository root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(name).path)
        candidates.append(fm.currentDirectoryPath + "/" + name)
        for c in candidates {
            var isDir: ObjCBool = false
            if fm.fileExists(atPath: c, isDirectory: &isDir), isDir.boolValue { return c }
        }
        throw LibraryError("cannot find the \(name) folder (looked in \(candidates.joined(separator: ", "))); set \(variable)")
    }

    /// The built-in shapes: `TONESHAPER_PRESETS`, or the shipped Presets folder.
    public static func builtInPresets() throws(LibraryError) -> String {
        try folder("Presets", environment: "TONESHAPER_PRESETS")
    }
}
