import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// No tuning, bend or transposition can stop the instrument: a key whose pitch leaves what can be
/// played is silent (and said so at load), the others sound, and every sample stays finite.
@Suite("Hostile tunings and bends: silent where nothing can be played, never a trap")
struct HostileTuningTests {
    static let rate = Bench.rate
    /// Legal Scala files that once trapped the render: one 2/1 per key (key 127 near 4e22 Hz), a
    /// step of 999999 cents, a 400-digit ratio.
    static let octavePerKey = "! o\no\n 1\n 2/1\n"
    static let hugeCents = "! c\nc\n 1\n 999999.0\n"
    static let longRatio = "! r\nr\n 2\n " + String(repeating: "9", count: 400) + "/3\n 2/1\n"

    /// A steady 110 Hz sine drawn on key 45: key k plays 110 · ratio(k, 45) Hz.
    static let drone = Bench.tone(110, rootNote: 45, release: 0.002)

    /// Every key of the keyboard, one after another, each held 40 ms: the left channel, and
    /// where each key's stretch lies.
    static func everyKey(_ tuning: Tuning, shape: Shape = drone, messages: [MIDIMessage] = [],
                         voices: Int = 4) throws -> (samples: [Float], stretch: (Int) -> Range<Int>) {
        var config = EngineConfiguration(sampleRate: rate, voices: voices)
        config.tuning = tuning
        let engine = Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
        let hold = Bench.seconds(0.04), gap = Bench.seconds(0.01)
        var timed: [(frame: Int, message: MIDIMessage)] = messages.map { (0, $0) }
        for key in 0..<128 {
            timed.append(((hold + gap) * key, .on(UInt8(key))))
            timed.append(((hold + gap) * key + hold, .off(UInt8(key))))
        }
        let x = Bench.play(engine, timed, frames: (hold + gap) * 128)
        // The middle of each note, clear of its attack and release.
        return (x, { key in ((hold + gap) * key + hold / 4)..<((hold + gap) * key + hold) })
    }

    @Test("a legal scale that puts keys out of range renders: those keys are silent, the others sound, every sample is finite",
          arguments: [("one 2/1 per key", octavePerKey), ("a 999999-cent step", hugeCents), ("a 400-digit ratio", longRatio)])
    func outOfRangeKeysAreSilent(name: String, text: String) throws {
        let tuning = Tuning(scale: try ScalaScale.parse(text, file: "x.scl"))
        let silent = tuning.silentKeys(for: Self.drone, sampleRate: Self.rate)
        #expect(!silent.isEmpty, "\(name): every key claimed playable")
        let (x, stretch) = try Self.everyKey(tuning)
        #expect(x.allSatisfy { $0.isFinite && abs($0) <= 1 }, "\(name): a sample is not finite or beyond full scale")
        var sounding = 0
        for key in 0..<128 {
            let level = Signal.rms(x, in: stretch(key))
            if silent.all.contains(key) {
                // Nothing but the output DC blocker's slow tail after the keys before: no step
                // between samples the size of any wave's.
                let jump = Signal.maxJump(x, in: stretch(key)).jump
                #expect(jump < 1e-5, "\(name): key \(key) was said to be silent but sounds (steps of \(jump))")
            } else if let ratio = tuning.ratio(note: key, root: 45), 110 * ratio > 20, 110 * ratio < 20_000 {
                // An audible pitch: the key sounds at it.
                #expect(level > 0.05, "\(name): key \(key) at \(110 * ratio) Hz is silent")
                sounding += 1
            }
        }
        // The root plays the shape as drawn in every one of these scales.
        #expect(sounding >= 1, "\(name): no key sounded")
    }

    @Test("one 2/1 per key: keys 45...50 play 110 Hz up to 3520 Hz; from key 65 (above 102.4 MHz) the sine is silent, a band-limited wave from key 53 (above Nyquist)")
    func octavePerKeyMeasured() throws {
        let tuning = Tuning(scale: try ScalaScale.parse(Self.octavePerKey))
        let silent = tuning.silentKeys(for: Self.drone, sampleRate: Self.rate)
        // 110 · 2^19 Hz is 57.7 MHz, 110 · 2^20 Hz 115 MHz.
        #expect(silent.tooHigh == Array(65...127))
        // A band-limited wave has nothing left once its lowest frequency passes Nyquist: 110 · 2^8 = 28160 Hz.
        var saw = Self.drone
        saw.wave = .bandLimitedSawtooth
        #expect(tuning.silentKeys(for: saw, sampleRate: Self.rate).tooHigh == Array(53...127))
        #expect(tuning.silentKeysNote(label: "tuning o.scl", shapes: [saw], sampleRate: Self.rate)
                == "tuning o.scl: keys 0-4, 53-127 stay silent with shape '\(saw.name)' (0-4 over 40 octaves below its root; 53-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz)")
        #expect(silent.tooLow == Array(0...4))  // more than 40 octaves below key 45
        let (x, stretch) = try Self.everyKey(tuning)
        for key in 45...50 {
            let f = try #require(Signal.frequency(x, sampleRate: Self.rate, in: stretch(key)), "key \(key)")
            let expected = 110 * pow(2, Double(key - 45))
            // (A semitone is 6 %: within 0.5 % is the octave a key; zero crossings over a few periods
            // of 110 Hz, beside the DC blocker's tail, read no closer.)
            #expect(abs(f / expected - 1) < 5e-3, "key \(key): \(f) Hz, expected \(expected)")
        }
        // The sine aliases above Nyquist, as the naive waves do, up to the ceiling; past it, nothing.
        for key in 53...64 { #expect(Signal.rms(x, in: stretch(key)) > 0.01, "key \(key)") }
        for key in 65...127 { #expect(Signal.maxJump(x, in: stretch(key)).jump < 1e-5, "key \(key)") }
        #expect(tuning.silentKeysNote(label: "tuning o.scl", shapes: [Self.drone], sampleRate: Self.rate)
                == "tuning o.scl: keys 0-4, 65-127 stay silent with shape '\(Self.drone.name)' (0-4 over 40 octaves below its root; 65-127 above 102.4 MHz, the highest a voice plays)")
    }

    @Test("bend range × MPE bend × tuning at their extremes: every product stays finite and bounded, every sample finite")
    func extremeBends() throws {
        // RPN 0 at its largest (127.99 semitones) on a member and on its manager, both bent fully up,
        // then fully down, on the highest and the lowest key of a tuning that already spans ±60 octaves,
        // with vibrato at its deepest, for a shape at the 100 kHz limit and one at 1 Hz.
        let tuning = Tuning(scale: try ScalaScale.parse(Self.octavePerKey))
        for shape in [Bench.tone(100_000, rootNote: 60), Bench.tone(1, wave: .bandLimitedSawtooth, rootNote: 60),
                      Bench.tone(440, wave: .sawtoothFourier, rootNote: 60)] {
            var config = EngineConfiguration(sampleRate: Self.rate, voices: 8)
            config.tuning = tuning
            config.mpe = try MPEZones(lower: 15, upper: 0)
            let engine = Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
            var messages: [(frame: Int, message: MIDIMessage)] = []
            for channel: UInt8 in [0, 1] {
                messages += MPETests.rpn(0, 127, channel: channel).map { (0, $0) }
                messages.append((0, .cc(38, 99, channel: channel)))
                messages.append((0, .cc(1, 127, channel: channel)))  // vibrato through the standard map
            }
            // Members play; the manager (channel 0) bends the whole zone.
            for (i, key) in [UInt8(60), 61, 0, 127, 5, 100].enumerated() {
                messages.append((100 * i, .on(key, channel: 1)))
            }
            messages.append((1000, .pitchBend(channel: 0, value: 8191)))
            messages.append((1000, .pitchBend(channel: 1, value: 8191)))
            messages.append((6000, .pitchBend(channel: 0, value: -8192)))
            messages.append((6000, .pitchBend(channel: 1, value: -8192)))
            let x = Bench.play(engine, messages, frames: 12_000)
            #expect(x.allSatisfy { $0.isFinite && abs($0) <= 1 }, "\(shape.name): a sample is not finite")
            for i in 0..<engine.voiceCount where engine.voices[i].stage != .idle {
                let v = engine.voices[i]
                #expect(v.frequency.isFinite && abs(v.frequency) <= PlayableRange.ceiling, "\(shape.name): voice at \(v.frequency) Hz")
                #expect(v.frequencyRatio >= PlayableRange.lowestRatio && v.frequencyRatio * shape.maxFrequency <= PlayableRange.ceiling * (1 + 1e-12))
                #expect(v.phase.isFinite)
            }
        }
    }

    @Test("a phase no Int64 holds has no fraction left: 0, not a trap")
    func fractionOfHugePhase() {
        #expect(fractionalPart(.nan) == 0)
        #expect(fractionalPart(.infinity) == 0)
        #expect(fractionalPart(4e22) == 0)
        #expect(fractionalPart(2.25) == 0.25)
    }

    @Test("a parameter set to NaN is ignored (a NaN duration or fidelity would stop the engine)")
    func notANumberParameter() throws {
        let engine = try Bench.engine([Self.drone])
        var events = [EngineEvent(offset: 0, .noteOn(channel: 0, note: 45, velocity: 100))]
        for parameter in Parameter.allCases { events.append(EngineEvent(offset: 10, .parameter(channel: 0, parameter, .nan))) }
        let x = engine.render(frames: 4800, events: events)
        #expect(x.allSatisfy { $0.isFinite })
        #expect(Signal.rms(Signal.left(x), in: 2400..<4800) > 0.05)
    }

    @Test("the engine's rule and the note agree: a key sounds exactly when the note does not call it silent (19-EDO, 8 kHz, a 3 kHz band-limited shape)")
    func noteMatchesEngine() throws {
        let text = try String(contentsOfFile: TuningTests.folder + "/19-edo.scl", encoding: .utf8)
        let tuning = Tuning(scale: try ScalaScale.parse(text))
        let shape = Bench.tone(3000, wave: .bandLimitedSawtooth, rootNote: 60)
        let silent = tuning.silentKeys(for: shape, sampleRate: 8000)
        // 19 steps an octave: 3000 Hz reaches the 4 kHz Nyquist frequency 8 steps up (key 68).
        #expect(silent.tooHigh == Array(68...127) && silent.tooLow.isEmpty && silent.unpitched.isEmpty)
        var config = EngineConfiguration(sampleRate: 8000, voices: 2)
        config.tuning = tuning
        let engine = Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
        for key in [60, 67, 68, 100] {
            _ = engine.render(frames: 64, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: UInt8(key), velocity: 100))])
            #expect((engine.activeVoiceCount > 0) == !silent.all.contains(key), "key \(key)")
            _ = engine.render(frames: 8000, events: [EngineEvent(offset: 0, .controlChange(channel: 0, controller: 120, value: 0))])
        }
    }
}

/// Scala files as the format allows them: no limit on a number's size, any finite cents.
@Suite("Scala files at the edges of the format")
struct ScalaEdgeTests {
    @Test("a 400-digit ratio is read in the log domain: finite, and exact enough to give 2/1 when divided by its half")
    func longRatio() throws {
        let n = String(repeating: "9", count: 400)
        let scale = try ScalaScale.parse("r\n 1\n \(n)/3\n")
        #expect(abs(scale.log2Ratios[0] - (400 * log2(10.0) - log2(3.0))) < 1e-9)
        let big = "2" + String(repeating: "0", count: 399), half = "1" + String(repeating: "0", count: 399)
        #expect(try ScalaScale.parse("r\n 1\n \(big)/\(half)\n").log2Ratios == [1])
        // Numbers a Double holds keep their exact quotient.
        #expect(try ScalaScale.parse("r\n 2\n 9/8\n 2/1\n").log2Ratios == [log2(9.0 / 8), 1])
    }

    @Test("what the format forbids or cannot mean is one line naming the file, line and value", arguments: [
        ("s\n 2\n 0/5\n 2/1\n", "x.scl:3: pitch '0/5' is not cents (with a '.') or a ratio a/b of positive whole numbers"),
        ("s\n 2\n -3/2\n 2/1\n", "x.scl:3: pitch '-3/2' is not cents (with a '.') or a ratio a/b of positive whole numbers"),
        ("s\n 1\n 1.0e999\n", "x.scl:3: pitch '1.0e999' is not a finite number of cents"),
        ("s\n 1\n nan.\n", "x.scl:3: pitch 'nan.' is not a finite number of cents"),
    ])
    func refused(text: String, message: String) {
        do {
            _ = try ScalaScale.parse(text, file: "x.scl")
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("a mapping's numbers too large for any key or scale are one line, never a trap", arguments: [
        ("12\n0\n1e300\n60\n69\n440\n12\n", "x.kbm:3: last note 1e300 is not a MIDI note 0...127"),
        ("0\n0\n127\n60\n69\n440\n1e300\n", "x.kbm:7: formal octave degree 1e300 is above 100000, beyond any scale"),
    ])
    func hugeMappingNumbers(text: String, message: String) {
        do {
            _ = try KeyboardMapping.parse(text, file: "x.kbm")
            Issue.record("accepted")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test("a scale of no notes is legal Scala: every key plays the implied 1/1, with or without a mapping")
    func noNotes() throws {
        let scale = try ScalaScale.parse("! empty\nonly 1/1\n 0\n")
        #expect(scale.count == 0)
        for tuning in [Tuning(scale: scale), Tuning(scale: scale, mapping: try KeyboardMapping.parse("1\n0\n127\n60\n69\n440\n0\n0\n"))] {
            #expect(tuning.ratio(note: 0, root: 60) == 1 && tuning.ratio(note: 127, root: 60) == 1)
            let f = try #require(try TuningTests.measured(tuning, note: 100))
            #expect(abs(f / 261.6255653 - 1) < 2e-4, "\(f) Hz")
        }
    }

    @Test("a huge cents value is a legal scale: it loads, and the keys it sends to infinity are named at load")
    func hugeCents() throws {
        let tuning = Tuning(scale: try ScalaScale.parse("c\n 1\n 999999.0\n"))
        let silent = tuning.silentKeys(for: Bench.tone(440, rootNote: 60), sampleRate: 48_000)
        // Key 60 is the scale's 1/1 and the shape's root; every other key is hundreds of octaves away.
        #expect(silent.all == Array(0...59) + Array(61...127))
        // And so the engine plays: the root sounds, its neighbours (one and two steps away) do not.
        var config = EngineConfiguration(sampleRate: 48_000, voices: 4)
        config.tuning = tuning
        let engine = Engine(library: try PresetLibrary(shapes: [Bench.tone(440, rootNote: 60, release: 0.002)]), configuration: config)
        for (key, sounds) in [(60, true), (61, false), (127, false), (0, false)] {
            let x = Signal.left(engine.render(frames: 4800, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: UInt8(key), velocity: 100))]))
            #expect(x.allSatisfy { $0.isFinite })
            #expect((Signal.rms(x, in: 2400..<4800) > 0.01) == sounds, "key \(key)")
            _ = engine.render(frames: 4800, events: [EngineEvent(offset: 0, .controlChange(channel: 0, controller: 120, value: 0))])
        }
    }
}
