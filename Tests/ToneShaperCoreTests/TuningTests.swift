import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// Microtuning: Scala scales and keyboard mappings decide each key's pitch; a shape drawn for its
/// root note plays on key k at the tuning's ratio between k and the root.
@Suite("Tunings: Scala scales and keyboard mappings")
struct TuningTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tunings").path

    /// The frequency a held key plays, measured in the rendered output.
    static func measured(_ tuning: Tuning, note: UInt8, root: Int = 60, base: Double = 261.6255653) throws -> Double? {
        var config = EngineConfiguration(sampleRate: Bench.rate, voices: 2)
        config.tuning = tuning
        let engine = Engine(library: try PresetLibrary(shapes: [Bench.tone(base, rootNote: root)]), configuration: config)
        let x = Bench.play(engine, [(0, .noteOn(channel: 0, note: note, velocity: 127))], frames: Bench.seconds(0.3))
        return Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.05)..<Bench.seconds(0.3))
    }

    @Test("equal temperament is the default and gives exactly 2^((note − root)/12)")
    func equal() {
        #expect(Tuning.equal.ratio(note: 72, root: 60) == 2)
        #expect(Tuning.equal.ratio(note: 69, root: 57) == 2)
        #expect(Tuning.equal.ratio(note: 61, root: 60) == exp2(1.0 / 12))
    }

    @Test("a 19-tone equal scale: each key one 19th of an octave, measured in the output", arguments: [60, 61, 66, 79, 41])
    func nineteen(note: Int) throws {
        let scale = try ScalaScale.load(path: Self.folder + "/19-edo.scl")
        #expect(scale.count == 19 && scale.description == "19 equal divisions of the octave")
        let tuning = Tuning(scale: scale)
        let expected = 261.6255653 * pow(2, Double(note - 60) / 19)
        #expect(abs(tuning.ratio(note: note, root: 60)! - expected / 261.6255653) < 1e-8)  // the file gives cents to 5 decimals
        let f = try #require(try Self.measured(tuning, note: UInt8(note)))
        #expect(abs(f / expected - 1) < 2e-4, "key \(note): \(f) Hz, expected \(expected) Hz")
    }

    static let justRatios: [(Int, Double)] = [(64, 1.25), (67, 1.5), (72, 2), (55, 0.75), (69, 5.0 / 3)]

    @Test("5-limit just intonation lands on its exact ratios: 5/4, 3/2, 2/1, 3/4 a fourth below, 5/3", arguments: justRatios)
    func just(note: Int, ratio: Double) throws {
        let tuning = Tuning(scale: try ScalaScale.load(path: Self.folder + "/ji-5-limit-12.scl"))
        #expect(abs(tuning.ratio(note: note, root: 60)! - ratio) < 1e-12)
        let f = try #require(try Self.measured(tuning, note: UInt8(note)))
        #expect(abs(f / (261.6255653 * ratio) - 1) < 2e-4, "key \(note): \(f) Hz")
    }

    @Test("a keyboard mapping puts a 7-note scale on the white keys; black keys are silent; the octave repeats")
    func whiteKeys() throws {
        let tuning = Tuning(scale: try ScalaScale.load(path: Self.folder + "/ji-major-7.scl"),
                            mapping: try KeyboardMapping.load(path: Self.folder + "/white-keys-7.kbm"))
        #expect(tuning.ratio(note: 62, root: 60) == 9.0 / 8)
        #expect(abs(tuning.ratio(note: 71, root: 60)! - 15.0 / 8) < 1e-12)
        #expect(tuning.ratio(note: 72, root: 60) == 2)
        #expect(abs(tuning.ratio(note: 52, root: 60)! - 5.0 / 8) < 1e-12)
        #expect(tuning.ratio(note: 61, root: 60) == nil)
        #expect(try Self.measured(tuning, note: 61) == nil)  // an unmapped key plays nothing
        let f = try #require(try Self.measured(tuning, note: 65))
        #expect(abs(f / (261.6255653 * 4 / 3) - 1) < 2e-4)
    }

    @Test("a bad scale or mapping is one line naming the file, the line and the value", arguments: [
        ("scale\n 3\n 9/8\n 5/0\n 2/1\n", "x.scl:4: pitch '5/0' is not cents (with a '.') or a ratio a/b of positive whole numbers"),
        ("scale\n three\n", "x.scl:2: note count 'three' must be a whole number 0...4096"),
        ("scale\n 3\n 100.0\n", "x.scl: the scale promises 3 pitches but lists 1"),
        ("! only a comment\n", "x.scl: no note count after the description (line 2)"),
        ("", "x.scl: no note count after the description (line 1)"),
        ("scale\n 1\n -5.0\n", "x.scl: the period (the last pitch) must be above 1/1"),
    ])
    func badScales(text: String, message: String) {
        #expect(throws: TuningError.self) { try ScalaScale.parse(text, file: "x.scl") }
        do { _ = try ScalaScale.parse(text, file: "x.scl") } catch { #expect(error.description == message) }
    }

    @Test("bad mappings", arguments: [
        ("12\n0\n127\n60\n69\nfast\n12\n", "x.kbm:6: reference frequency 'fast' is not a positive frequency"),
        ("12\n0\n200\n60\n69\n440\n12\n", "x.kbm:3: last note 200 is not a MIDI note 0...127"),
        ("2\n0\n127\n60\n69\n440\n2\n0\nq\n", "x.kbm:9: map entry 'q' is not a scale degree or 'x'"),
        ("12\n0\n", "x.kbm: a keyboard mapping needs 7 header values (map size, first note, last note, middle note, reference note, reference frequency, formal octave degree); found 2"),
    ])
    func badMappings(text: String, message: String) {
        do {
            _ = try KeyboardMapping.parse(text, file: "x.kbm")
            Issue.record("accepted")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("CRLF files read like LF files")
    func crlf() throws {
        let text = try String(contentsOfFile: Self.folder + "/ji-5-limit-12.scl", encoding: .utf8)
        #expect(try ScalaScale.parse(text.replacingOccurrences(of: "\n", with: "\r\n")) == (try ScalaScale.parse(text)))
    }
}
