import Foundation
import Testing
import ToneShaperLibrary

/// Where the shipped folders are found: from the program's real path only, so an installed
/// program never reads a build tree and a checkout's build reads its own checkout.
@Suite("Shipped folders are found from the program's own path")
struct InstallLayoutTests {
    /// A scratch folder standing for a prefix or a checkout.
    static func scratch() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-layout-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    @Test("a program in PREFIX/bin reads PREFIX/share/toneshaper, and nothing else")
    func installedPrefix() throws {
        let prefix = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let presets = prefix.appendingPathComponent("share/toneshaper/Presets").path
        try FileManager.default.createDirectory(atPath: presets, withIntermediateDirectories: true)
        let program = prefix.appendingPathComponent("bin/toneshaper").path
        #expect(InstallLayout.candidates(.presets, executable: program) == [presets])
        #expect(try InstallLayout.folder(.presets, executable: program) == presets)
        #expect(InstallLayout.candidates(.editorPage, executable: program) == [prefix.appendingPathComponent("share/toneshaper/editor").path])
    }

    @Test("a program in a checkout's .build folder reads that checkout, the page from Sources/ToneShaperEditor/Page")
    func checkoutBuild() throws {
        let checkout = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: checkout) }
        try Data().write(to: checkout.appendingPathComponent("Package.swift"))
        let page = checkout.appendingPathComponent("Sources/ToneShaperEditor/Page")
        try FileManager.default.createDirectory(at: page, withIntermediateDirectories: true)
        try Data("<html>".utf8).write(to: page.appendingPathComponent("index.html"))
        let program = checkout.appendingPathComponent(".build/x86_64-unknown-linux-gnu/debug/toneshaper").path
        #expect(try InstallLayout.folder(.editorPage, executable: program) == page.path)
        #expect(InstallLayout.candidates(.tunings, executable: program).last == checkout.appendingPathComponent("Tunings").path)
    }

    @Test("a .build folder without a Package.swift beside it is not a checkout")
    func notACheckout() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("Presets"), withIntermediateDirectories: true)
        let program = folder.appendingPathComponent(".build/debug/toneshaper").path
        #expect(InstallLayout.candidates(.presets, executable: program) == [folder.appendingPathComponent(".build/share/toneshaper/Presets").path])
    }

    @Test("a missing folder is one line naming where it looked and the variable that points elsewhere")
    func missingFolder() throws {
        let prefix = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let program = prefix.appendingPathComponent("bin/toneshaper").path
        #expect(throws: LibraryError("cannot find the editor page (looked in \(prefix.path)/share/toneshaper/editor); set TONESHAPER_EDITOR_PAGE")) {
            try InstallLayout.folder(.editorPage, executable: program)
        }
        // A page folder without its index.html is not the page.
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("share/toneshaper/editor"), withIntermediateDirectories: true)
        #expect(throws: LibraryError.self) { try InstallLayout.folder(.editorPage, executable: program) }
    }
}
