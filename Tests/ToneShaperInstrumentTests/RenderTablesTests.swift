import Testing
@testable import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// A render builds only the band-limited tables its performance can reach (a render of sines builds
/// none), and it builds them before the first block: a program change or a mapped wave-type knob
/// met mid-file sounds as it does with every table built.
@Suite("A render's band-limited tables")
struct RenderTablesTests {
    static let rate = 48_000.0

    /// Preset 0 (program 0) a sine, preset 1 (program 5) a band-limited sawtooth.
    static func library() throws -> PresetLibrary {
        let sine = Shape.constant(440, wave: .sine)
        var saw = Shape.constant(220, wave: .bandLimitedSawtooth)
        saw.program = 5
        return try PresetLibrary(shapes: [sine, saw])
    }

    /// Renders `messages` through an engine reading `tables`, as `toneshaper render` does (only the
    /// channels' start presets' tables at init) or as live play does (every table).
    static func render(_ messages: [TimedMIDIMessage], frames: Int, map: ControllerMap, tables: BandLimitedTables,
                       everyTable: Bool) throws -> [Float] {
        var config = EngineConfiguration(sampleRate: rate, voices: 8)
        config.buildsEveryTable = everyTable
        let engine = Engine(library: try library(), configuration: config, controllerMap: map, tables: tables)
        return OfflineRenderer(engine: engine).renderAll(messages, totalFrames: frames)
    }

    static func at(_ seconds: Double, _ message: MIDIMessage) -> TimedMIDIMessage {
        TimedMIDIMessage(frame: Int64(seconds * rate), message: message)
    }

    static func peak(_ x: [Float], from start: Double, to end: Double) -> Float {
        x[(2 * Int(start * rate))..<(2 * Int(end * rate))].reduce(0) { max($0, abs($1)) }
    }

    @Test("a program change to a sawtooth and a wave-type knob met mid-file play as with every table built; only the waves they reach are built")
    func tablesForWhatThePerformanceReaches() throws {
        // Knob CC 20 on the wave type over 7...8: band-limited square or triangle, nothing else.
        let map = ControllerMap([ControllerAssignment(controller: 20, parameter: .waveType, minimum: 7, maximum: 8)])
        let messages = [
            Self.at(0, .noteOn(channel: 0, note: 69, velocity: 100)),
            Self.at(0.1, .programChange(channel: 1, program: 5)),
            Self.at(0.1, .noteOn(channel: 1, note: 57, velocity: 100)),
            Self.at(0.2, .controlChange(channel: 2, controller: 20, value: 127)),
            Self.at(0.2, .noteOn(channel: 2, note: 81, velocity: 100)),
        ]
        let frames = Int(0.3 * Self.rate)
        let own = BandLimitedTables()
        let rendered = try Self.render(messages, frames: frames, map: map, tables: own, everyTable: false)
        let reference = try Self.render(messages, frames: frames, map: map, tables: .shared, everyTable: true)
        #expect(rendered == reference)
        // The sawtooth and the knob's triangle are heard, not silence equal to silence.
        let sineAlone = Self.peak(reference, from: 0.05, to: 0.1)
        #expect(sineAlone > 0.05)
        #expect(Self.peak(reference, from: 0.15, to: 0.2) > 1.3 * sineAlone)
        #expect(Self.peak(reference, from: 0.25, to: 0.3) > 1.3 * sineAlone)
        #expect(own.isBuilt(.bandLimitedSawtooth) && own.isBuilt(.bandLimitedSquare) && own.isBuilt(.bandLimitedTriangle))

        // The same notes without the knob in the map: the sawtooth's tables alone.
        let sawOnly = BandLimitedTables()
        _ = try Self.render(messages, frames: frames, map: .standard, tables: sawOnly, everyTable: false)
        #expect(sawOnly.isBuilt(.bandLimitedSawtooth))
        #expect(!sawOnly.isBuilt(.bandLimitedSquare) && !sawOnly.isBuilt(.bandLimitedTriangle))
    }

    @Test("a render of sines builds no band-limited table; live play builds all three before its first note")
    func sinesBuildNone() throws {
        let messages = [Self.at(0, .noteOn(channel: 0, note: 69, velocity: 100))]
        let none = BandLimitedTables()
        let sine = try Self.render(messages, frames: 4800, map: .standard, tables: none, everyTable: false)
        #expect(Self.peak(sine, from: 0.05, to: 0.1) > 0.1)
        #expect(![WaveType.bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth].contains { none.isBuilt($0) })
        let live = BandLimitedTables()
        _ = Engine(library: try Self.library(), configuration: EngineConfiguration(sampleRate: Self.rate), controllerMap: .standard,
                   tables: live)
        #expect([WaveType.bandLimitedSquare, .bandLimitedTriangle, .bandLimitedSawtooth].allSatisfy { live.isBuilt($0) })
    }
}
