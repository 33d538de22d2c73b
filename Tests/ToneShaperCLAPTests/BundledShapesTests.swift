import EngineFixtures
import Foundation
import Testing
import ToneShaperCore
import ToneShaperInstrument

/// toneshaper.clap is one file: the shipped shapes are compiled into it from a generated source,
/// which must be Presets/ as it is now (a shape added or edited without regenerating fails here).
@Suite("The shapes inside toneshaper.clap")
struct BundledShapesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func presetFiles() throws -> [(name: String, text: String)] {
        let folder = root.appendingPathComponent("Presets")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted().map {
            (String($0.dropLast(5)), try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8))
        }
    }

    @Test("Sources/ToneShaperCLAP/BundledShapes.swift is generated from Presets/*.json")
    func upToDate() throws {
        let text = BundledShapes.source(files: try Self.presetFiles())
        let url = Self.root.appendingPathComponent("Sources/ToneShaperCLAP/BundledShapes.swift")
        if ProcessInfo.processInfo.environment["TONESHAPER_WRITE_CLAP"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let onDisk = try String(contentsOf: url, encoding: .utf8)
        #expect(onDisk == text, "BundledShapes.swift differs from Presets/: TONESHAPER_WRITE_CLAP=1 swift test --filter BundledShapes")
    }

    @Test("the texts make the library the Presets folder makes, shape for shape")
    func sameLibrary() throws {
        let library = try BundledShapes.library(try Self.presetFiles())
        #expect(library.shapes.count == Fixtures.library.shapes.count)
        #expect(library.shapes == Fixtures.library.shapes)
    }
}
