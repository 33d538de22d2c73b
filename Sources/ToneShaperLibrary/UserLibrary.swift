import Foundation
import ToneShaperCore

/// The musician's own shapes: one JSON file per shape in `$XDG_DATA_HOME/toneshaper/presets`
/// (default `~/.local/share/toneshaper/presets`), the place the XDG base-directory spec gives
/// to user data. The editor saves here; the built-in Presets folder is never written.
public struct UserLibrary: Sendable {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    /// The folder the environment names: an absolute `XDG_DATA_HOME` (the spec ignores a relative
    /// one), else `HOME/.local/share`; `TONESHAPER_USER_PRESETS` overrides both.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> UserLibrary {
        if let override = environment["TONESHAPER_USER_PRESETS"], !override.isEmpty { return UserLibrary(directory: override) }
        var data = environment["XDG_DATA_HOME"] ?? ""
        if !data.hasPrefix("/") {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            data = (home as NSString).appendingPathComponent(".local/share")
        }
        return UserLibrary(directory: (data as NSString).appendingPathComponent("toneshaper/presets"))
    }

    /// The library name for what was typed: a name ending in `.json` is the file's name, so
    /// "ok.json" is the shape "ok", kept as ok.json (not ok.json.json, which no menu reopens as typed).
    public static func libraryName(_ name: String) -> String {
        guard name.count > 5, name.lowercased().hasSuffix(".json") else { return name }
        return String(name.dropLast(5))
    }

    /// Where a shape of this name is kept.
    public func path(for name: String) -> String { (directory as NSString).appendingPathComponent(name + ".json") }

    /// A name that is also a safe file name: letters, digits, space, `-`, `_`, `.`, `+`, `#`, not
    /// starting with a dot, 1…64 characters. Checked before anything is written.
    public static func checkName(_ name: String) throws(ShapeError) {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: " -_.+#"))
        guard !name.isEmpty, name.count <= 64, !name.hasPrefix("."), name.trimmingCharacters(in: .whitespaces) == name,
              name.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            throw ShapeError(file: nil, field: "name", value: "'\(name)'",
                             reason: "a saved shape's name is 1-64 letters, digits, spaces or - _ . + # (not starting with a dot)")
        }
    }

    /// Validates and writes the shape as `NAME.json`: to a temporary file in the same folder first,
    /// then renamed over the old one, so a crash or a full disk never leaves a half-written shape.
    @discardableResult
    public func save(_ shape: Shape) throws -> String {
        var shape = shape
        shape.name = Self.libraryName(shape.name)
        try Self.checkName(shape.name)
        try shape.validate()
        let data = try ShapeFile.encode(shape)
        // The file must read back as the same shape: what is saved is exactly what plays.
        let reread = try ShapeFile.decode(data, fallbackName: shape.name)
        guard reread == shape else { throw LibraryError("\(shape.name): the saved form does not read back as the same shape") }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw LibraryError("\(directory): cannot create the user library (\(error.localizedDescription))")
        }
        let target = path(for: shape.name)
        let temporary = (directory as NSString).appendingPathComponent(".\(shape.name).\(getpid()).tmp")
        guard FileManager.default.createFile(atPath: temporary, contents: data + Data("\n".utf8)) else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw LibraryError("\(temporary): cannot be written (\(String(cString: strerror(errno))))")
        }
        guard rename(temporary, target) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(atPath: temporary)
            throw LibraryError("\(target): cannot be written (\(reason))")
        }
        return target
    }
}
