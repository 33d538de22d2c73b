import Foundation

/// Finds the folders that ship with the instrument (Presets, Mappings, Tunings, Examples, the editor
/// page) from where the running program really is, never from a path compiled into it: an installed
/// binary must work with its source clone gone, and a copy of a checkout must not read the original.
///
/// In order: an environment override (`TONESHAPER_PRESETS`, …), then PREFIX/share/toneshaper/NAME
/// for a program in PREFIX/bin (what install.sh and the Debian package make), then, for a program
/// running from a SwiftPM build folder (`<checkout>/.build…/…`), that checkout's own folder.
public enum InstallLayout {
    /// One shipped folder: its name in an installed prefix and in a source checkout, and the
    /// environment variable that overrides both.
    public struct Shipped: Sendable {
        public let installedName: String
        public let checkoutPath: String
        public let environmentVariable: String
        /// A file the folder must hold to count as found (the page's index.html), if any.
        public let requiredFile: String?
        /// What a missing folder is called in the error.
        public let description: String

        init(_ name: String, checkoutPath: String? = nil, environmentVariable: String, requiredFile: String? = nil, description: String? = nil) {
            installedName = name
            self.checkoutPath = checkoutPath ?? name
            self.environmentVariable = environmentVariable
            self.requiredFile = requiredFile
            self.description = description ?? "the \(name) folder"
        }

        public static let presets = Shipped("Presets", environmentVariable: "TONESHAPER_PRESETS")
        public static let mappings = Shipped("Mappings", environmentVariable: "TONESHAPER_MAPPINGS")
        public static let tunings = Shipped("Tunings", environmentVariable: "TONESHAPER_TUNINGS")
        public static let examples = Shipped("Examples", environmentVariable: "TONESHAPER_EXAMPLES")
        public static let editorPage = Shipped("editor", checkoutPath: "Sources/ToneShaperEditor/Page", environmentVariable: "TONESHAPER_EDITOR_PAGE",
                                               requiredFile: "index.html", description: "the editor page")
    }

    /// The running program's real path: the kernel's `/proc/self/exe`, symlinks resolved, so a
    /// `toneshaper` started from PATH or through a link is found where its file is.
    public static let executable: String? = {
        var buffer = [CChar](repeating: 0, count: 4097)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Where `shipped` may be for a program whose real path is `executable`, in the order looked at.
    public static func candidates(_ shipped: Shipped, executable: String?) -> [String] {
        guard let executable, executable.hasPrefix("/") else { return [] }
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        var found = [folder.deletingLastPathComponent().appendingPathComponent("share/toneshaper/\(shipped.installedName)").path]
        if let checkout = checkout(containing: folder) {
            found.append(checkout.appendingPathComponent(shipped.checkoutPath).path)
        }
        return found
    }

    /// The source checkout a SwiftPM-built program runs from: the folder holding the nearest
    /// `.build…` folder above it, when that folder has a Package.swift. Nil for anything else.
    static func checkout(containing folder: URL) -> URL? {
        var current = folder
        while current.pathComponents.count > 1 {
            if current.lastPathComponent.hasPrefix(".build") {
                let root = current.deletingLastPathComponent()
                return FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) ? root : nil
            }
            current = current.deletingLastPathComponent()
        }
        return nil
    }

    /// The shipped folder, or one line saying where it was looked for and how to point at it.
    public static func folder(_ shipped: Shipped, executable: String? = InstallLayout.executable) throws(LibraryError) -> String {
        let variable = shipped.environmentVariable
        if let override = ProcessInfo.processInfo.environment[variable], !override.isEmpty {
            guard isFolder(override, holding: shipped.requiredFile) else {
                throw LibraryError("\(variable)=\(override): no such folder" + (shipped.requiredFile.map { " with \($0) in it" } ?? ""))
            }
            return override
        }
        let places = candidates(shipped, executable: executable)
        if let found = places.first(where: { isFolder($0, holding: shipped.requiredFile) }) { return found }
        let looked = places.isEmpty ? "the program's own path is unknown" : "looked in " + places.joined(separator: ", ")
        throw LibraryError("cannot find \(shipped.description) (\(looked)); set \(variable)")
    }

    static func isFolder(_ path: String, holding file: String?) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return false }
        return file.map { FileManager.default.fileExists(atPath: path + "/" + $0) } ?? true
    }

    /// The built-in shapes: `TONESHAPER_PRESETS`, or the shipped Presets folder.
    public static func builtInPresets() throws(LibraryError) -> String {
        try folder(.presets)
    }

    /// The names of the files with extension `ext` in a shipped folder, without it, sorted (for
    /// shell completion); empty when the folder cannot be found.
    public static func names(in shipped: Shipped, ext: String) -> [String] {
        guard let path = try? folder(shipped),
              let files = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        return files.filter { $0.hasSuffix("." + ext) }.map { String($0.dropLast(ext.count + 1)) }.sorted()
    }
}
