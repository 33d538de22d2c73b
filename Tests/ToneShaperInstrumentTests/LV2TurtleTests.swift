import EngineFixtures
import Foundation
import Testing
import ToneShaperInstrument

/// packaging/lv2's .ttl files are what LV2Turtle writes from the parameter table and Presets/:
/// a control added to the table, or a shape to the library, without them fails here.
@Suite("The LV2 bundle's description")
struct LV2TurtleTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("packaging/lv2")

    @Test("manifest.ttl, toneshaper.ttl and presets.ttl are generated from the table and the shipped shapes")
    func upToDate() throws {
        let names = Array(Fixtures.library.shapes[..<Fixtures.library.listedCount].map(\.name))
        let files = ["manifest.ttl": LV2Turtle.manifest(shapeNames: names),
                     "toneshaper.ttl": LV2Turtle.plugin(shapeNames: names),
                     "presets.ttl": LV2Turtle.presets(shapeNames: names)]
        for (name, text) in files.sorted(by: { $0.key < $1.key }) {
            let url = Self.folder.appendingPathComponent(name)
            if ProcessInfo.processInfo.environment["TONESHAPER_WRITE_LV2"] == "1" {
                try text.write(to: url, atomically: true, encoding: .utf8)
            }
            let onDisk = try String(contentsOf: url, encoding: .utf8)
            #expect(onDisk == text, "packaging/lv2/\(name) differs from LV2Turtle's: TONESHAPER_WRITE_LV2=1 swift test --filter LV2Turtle")
        }
        let plugin = LV2Turtle.plugin(shapeNames: names)
        for row in InstrumentParameter.table {
            #expect(plugin.contains("lv2:index \(LV2Turtle.port(of: row)) ; lv2:symbol \"\(row.symbol)\""))
        }
        for name in names { #expect(plugin.contains("rdfs:label \"\(name)\"")) }
    }
}

@Suite("README's list of the plugin's controls")
struct ReadmeControlsTests {
    @Test("is InstrumentParameter.markdownTable, the table the ports are made from")
    func readmeTable() throws {
        let url = LV2TurtleTests.folder.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        var readme = try String(contentsOf: url, encoding: .utf8)
        let begin = "<!-- plugin controls: generated from InstrumentParameter.table -->\n", end = "\n<!-- end of plugin controls -->"
        if ProcessInfo.processInfo.environment["TONESHAPER_WRITE_LV2"] == "1",
           let a = readme.range(of: begin), let b = readme.range(of: end, range: a.upperBound..<readme.endIndex) {
            readme.replaceSubrange(a.upperBound..<b.lowerBound, with: InstrumentParameter.markdownTable)
            try readme.write(to: url, atomically: true, encoding: .utf8)
        }
        #expect(readme.contains(begin + InstrumentParameter.markdownTable + end),
                "README's plugin controls differ from the table: TONESHAPER_WRITE_LV2=1 swift test --filter ReadmeControls")
    }
}
