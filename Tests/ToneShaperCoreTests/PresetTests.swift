import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore
import ToneShaperInstrument

@Suite("The built-in presets")
struct PresetTests {
    static func library() throws -> PresetLibrary { try PresetLibrary.load(directory: Bench.presetsDirectory) }

    static var presetFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: Bench.presetsDirectory)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test("every file in Presets/ loads, and the library holds one shape per file with distinct programs")
    func allLoad() throws {
        let files = Self.presetFiles
        #expect(files.count >= 10)
        for f in files {
            let shape = try ShapeFile.load(path: (Bench.presetsDirectory as NSString).appendingPathComponent(f))
            #expect(shape.points.count >= 2, "\(f)")
        }
        let lib = try Self.library()
        #expect(lib.shapes.count == files.count)
        #expect(Set(lib.shapes.map(\.program)).count == lib.shapes.count)
        #expect(lib.shapes.map(\.program) == lib.shapes.map(\.program).sorted())
        // Every wave family of the article and the band-limited extension is represented.
        let waves = Set(lib.shapes.map(\.wave))
        #expect(waves.contains(.sine) && waves.contains(where: \.isFourierSeries) && waves.contains(where: \.isBandLimited))
    }

    @Test("each preset, exported at its root note through the offline renderer, sounds and never clips",
          arguments: presetFiles)
    func rendersCleanly(file: String) throws {
        let lib = try Self.library()
        let shape = try ShapeFile.load(path: (Bench.presetsDirectory as NSString).appendingPathComponent(file))
        let index = try #require(lib.index(named: shape.name))
        var config = EngineConfiguration(sampleRate: Bench.rate)
        config.channelPresets = Array(repeating: index, count: 16)
        let engine = Engine(library: lib, configuration: config)
        // One cycle, capped so the long presets stay quick in a debug build.
        let performance = ShapeExport.performance(of: shape, cycles: 1, note: UInt8(shape.rootNote), sampleRate: Bench.rate)
        let frames = min(performance.frames, Bench.seconds(6))
        let out = OfflineRenderer(engine: engine, blockFrames: 512).renderAll(performance.messages, totalFrames: frames)
        #expect(out.count == 2 * frames)
        #expect(engine.clippedSamples == 0, "\(file): \(engine.clippedSamples) clipped samples")
        let left = Signal.left(out)
        let peak = Signal.peak(out)
        #expect(peak < 1, "\(file): peak \(peak)")
        #expect(peak > 0.02, "\(file): peak \(peak), practically silent")
        let held = min(Int(shape.duration * Bench.rate), frames)
        #expect(Signal.rms(left, in: 0..<held) > 0.005, "\(file): rms \(Signal.rms(left, in: 0..<held))")
        #expect(out.allSatisfy { $0.isFinite })
        // After the note and its release (and echo) have died away the engine is quiet again.
        if performance.frames <= Bench.seconds(6) {
            let lastTenMs = max(0, frames - Bench.seconds(0.01))..<frames
            #expect(Signal.peak(left, in: lastTenMs) < 0.01, "\(file): the export ends at \(left.last ?? 0), not in silence")
        }
    }

    @Test("a program change selects each preset by its program number")
    func programNumbersSelect() throws {
        let lib = try Self.library()
        for shape in lib.shapes {
            #expect(lib.shape(program: shape.program)?.name == shape.name)
        }
    }
}
