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

    @Test("one 2/1 per key: keys 45...52 play 110 Hz up to 14080 Hz; from key 53 (28160 Hz, wholly above Nyquist) every wave is silent, and from key 55 (above 100 kHz) it is named for that too")
    func octavePerKeyMeasured() throws {
        let tuning = Tuning(scale: try ScalaScale.parse(Self.octavePerKey))
        // A sine, a naive and a band-limited wave alike: nothing of the shape is left below Nyquist.
        for wave in [WaveType.sine, .sawtooth, .bandLimitedSawtooth, .squareFourier] {
            var shape = Self.drone
            shape.wave = wave
            let silent = tuning.silentKeys(for: shape, sampleRate: Self.rate)
            #expect(silent.tooLow == Array(0...4), "\(wave)")  // more than 40 octaves below key 45
            // 110 · 2^8 = 28160 Hz is above the 24000 Hz Nyquist frequency; 110 · 2^7 = 14080 Hz is not.
            #expect(silent.aboveNyquist == Array(53...127), "\(wave)")
            // 110 · 2^10 = 112640 Hz is above the 100 kHz ceiling; 110 · 2^9 = 56320 Hz is not.
            #expect(silent.aboveCeiling == Array(55...127), "\(wave)")
            #expect(silent.unpitched.isEmpty && silent.all == Array(0...4) + Array(53...127), "\(wave)")
            #expect(tuning.silentKeysNote(label: "tuning o.scl", shapes: [shape], sampleRate: Self.rate)
                    == "tuning o.scl: keys 0-4, 53-127 stay silent with shape '\(shape.name)' (0-4 over 40 octaves below its root; 53-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 55-127 above 100 kHz, the highest a shape may reach)")
        }
        let (x, stretch) = try Self.everyKey(tuning)
        for key in 45...50 {
            let f = try #require(Signal.frequency(x, sampleRate: Self.rate, in: stretch(key)), "key \(key)")
            let expected = 110 * pow(2, Double(key - 45))
            // (A semitone is 6 %: within 0.5 % is the octave a key; zero crossings over a few periods
            // of 110 Hz, beside the DC blocker's tail, read no closer.)
            #expect(abs(f / expected - 1) < 5e-3, "key \(key): \(f) Hz, expected \(expected)")
        }
        for key in 51...52 { #expect(Signal.rms(x, in: stretch(key)) > 0.1, "key \(key)") }
        // Past Nyquist the sine does not fold back: nothing at all.
        for key in 53...127 { #expect(Signal.maxJump(x, in: stretch(key)).jump < 1e-5, "key \(key)") }
    }

    /// A shape drawn on key 60: `low` Hz held for most of the pass, then a rise to `high` Hz.
    static func riseTo(_ high: Double, from low: Double = 1000, wave: WaveType = .sine) -> Shape {
        var s = Shape(name: "rise-\(Int(high))", points: [Shape.Point(time: 0, frequency: low), Shape.Point(time: 0.9, frequency: low),
                                                          Shape.Point(time: 1, frequency: high)],
                      duration: 1, minFrequency: low, maxFrequency: high, wave: wave, fidelity: 1000, rootNote: 60)
        s.release = 0.002
        return s
    }

    @Test("a key whose shape rises above 100 kHz is silent and named, though most of the shape lies below Nyquist; one semitone lower it plays")
    func ceilingIsTheShapeFilesLimit() throws {
        // 1 kHz rising to 40 kHz, drawn on key 60: key 75 reaches 95.1 kHz, key 76 100.8 kHz. From
        // key 116 the held 1 kHz is 25.4 kHz, above Nyquist as well: those keys are named for both.
        let shape = Self.riseTo(40_000)
        let silent = Tuning.equal.silentKeys(for: shape, sampleRate: Self.rate)
        #expect(silent.aboveCeiling == Array(76...127) && silent.aboveNyquist == Array(116...127) && silent.tooLow.isEmpty)
        #expect(Tuning.equal.silentKeysNote(label: "equal temperament", shapes: [shape], sampleRate: Self.rate)
                == "equal temperament: keys 76-127 stay silent with shape 'rise-40000' (116-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 76-127 above 100 kHz, the highest a shape may reach)")
        // A performance known to play keys 60, 76 and 120 is told of those two alone; one that stays
        // below 76, of nothing.
        #expect(Tuning.equal.silentKeysNote(label: "equal temperament", shapes: [shape], sampleRate: Self.rate, played: [60, 76, 120])
                == "equal temperament: keys 76, 120 stay silent with shape 'rise-40000' (120 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 76, 120 above 100 kHz, the highest a shape may reach)")
        #expect(Tuning.equal.silentKeysNote(label: "equal temperament", shapes: [shape], sampleRate: Self.rate, played: [60, 75]) == nil)
        let engine = try Bench.engine([shape], voices: 2)
        for (key, sounds) in [(75, true), (76, false), (127, false)] {
            let x = Bench.play(engine, [(0, .on(UInt8(key))), (4800, .off(UInt8(key)))], frames: 9600)
            #expect(x.allSatisfy { $0.isFinite })
            // The held 1000 Hz of the pass, transposed (key 75: 2378 Hz).
            #expect((Signal.rms(x, in: 1200..<4800) > 0.1) == sounds, "key \(key)")
        }
    }

    @Test("a bend on a sounding note is held under 100 kHz: a shape rising to 50 kHz bent two octaves up plays one octave up")
    func bendHeldUnderCeiling() throws {
        // Bend range 24 semitones, bent fully up: 1000 Hz would become 3999.7 Hz; the shape's
        // 50 kHz top allows a ratio of 2 at most, so the held part plays 2000 Hz.
        let engine = try Bench.engine([Self.riseTo(50_000)], voices: 2)
        let x = Bench.play(engine, MPETests.rpn(0, 24, channel: 0).map { (0, $0) }
                           + [(0, .pitchBend(channel: 0, value: 8191)), (0, .on(60))], frames: 9600)
        let f = try #require(Signal.frequency(x, sampleRate: Self.rate, in: 2400..<9600))
        #expect(abs(f / 2000 - 1) < 2e-3, "\(f) Hz")
        // Bent down, it follows the bend: nothing caps a ratio below the ceiling.
        let down = Bench.play(try Bench.engine([Self.riseTo(50_000)], voices: 2), MPETests.rpn(0, 24, channel: 0).map { (0, $0) }
                              + [(0, .pitchBend(channel: 0, value: -8192)), (0, .on(60))], frames: 9600)
        let g = try #require(Signal.frequency(down, sampleRate: Self.rate, in: 2400..<9600))
        #expect(abs(g / 250 - 1) < 2e-3, "\(g) Hz")
    }

    @Test("a shape only partly above Nyquist plays (the naive waves aliasing there, the band-limited one dropping it); wholly above it, silent",
          arguments: [WaveType.sine, .sawtooth, .bandLimitedSawtooth])
    func partlyAboveNyquistPlays(wave: WaveType) throws {
        // 12.5 kHz held, rising to 36 kHz over the last tenth of the pass, drawn on key 60: key 66
        // holds 17.7 kHz (clear of the band-limited tables' last quarter octave, which they thin
        // out), key 71 23.6 kHz, key 72 starts at 25 kHz with nothing left below Nyquist.
        let shape = Self.riseTo(36_000, from: 12_500, wave: wave)
        let silent = Tuning.equal.silentKeys(for: shape, sampleRate: Self.rate)
        // 36 kHz · 2^(18/12) = 102 kHz: from key 78 the rise passes the ceiling too.
        #expect(silent.aboveNyquist == Array(72...127) && silent.aboveCeiling == Array(78...127))
        let engine = try Bench.engine([shape], voices: 2)
        #expect(!silent.all.contains(71))
        for (key, sounds) in [(60, true), (66, true), (72, false)] {
            let x = Bench.play(engine, [(0, .on(UInt8(key))), (48_000, .off(UInt8(key)))], frames: 52_800)
            #expect(x.allSatisfy { $0.isFinite })
            // The held part of the pass.
            #expect((Signal.rms(x, in: 24_000..<43_200) > 0.05) == sounds, "key \(key)")
            if key == 60 {
                // On the root the rise passes 24 kHz at 0.949 s: the last 40 ms lie above Nyquist.
                let above = Signal.rms(x, in: 46_100..<48_000)
                #expect(wave.isBandLimited ? above < 0.01 : above > 0.05, "\(wave) above Nyquist: rms \(above)")
            }
        }
    }

    @Test("noise has no pitch to guard: every key up to the 100 kHz ceiling plays it, even with the shape wholly above Nyquist")
    func noiseIgnoresNyquist() throws {
        // 8 kHz drawn on key 69: key 93 is 32 kHz (wholly above Nyquist), key 112 is 95.9 kHz, key 113 is 101.6 kHz.
        let noise = Bench.tone(8000, wave: .noise, release: 0.002)
        let silent = Tuning.equal.silentKeys(for: noise, sampleRate: Self.rate)
        #expect(silent.aboveNyquist.isEmpty && silent.aboveCeiling == Array(113...127))
        #expect(Tuning.equal.silentKeysNote(label: "equal temperament", shapes: [noise], sampleRate: Self.rate)
                == "equal temperament: keys 113-127 stay silent with shape '\(noise.name)' (113-127 above 100 kHz, the highest a shape may reach)")
        let engine = try Bench.engine([noise], voices: 2)
        for (key, sounds) in [(69, true), (93, true), (112, true), (113, false)] {
            let x = Bench.play(engine, [(0, .on(UInt8(key))), (4800, .off(UInt8(key)))], frames: 9600)
            #expect((Signal.rms(x, in: 1200..<4800) > 0.05) == sounds, "key \(key)")
        }
    }

    @Test("bend range × MPE bend × tuning at their extremes: every product stays finite and bounded, every sample finite")
    func extremeBends() throws {
        // RPN 0 at its largest (127.99 semitones) on a member and on its manager, both bent fully up,
        // then fully down, on the highest and the lowest key of a tuning that already spans ±60 octaves,
        // with vibrato at its deepest, for a shape reaching the 100 kHz limit and one at 1 Hz.
        let tuning = Tuning(scale: try ScalaScale.parse(Self.octavePerKey))
        // (A rise to 100 kHz: its held 1 kHz sounds on its root, and no bend may take it higher.)
        for shape in [Self.riseTo(100_000), Bench.tone(1, wave: .bandLimitedSawtooth, rootNote: 60),
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

    @Test("the engine's rule and the note agree: a key sounds exactly when the note does not call it silent (19-EDO, 8 kHz, a 3 kHz shape, every wave)",
          arguments: WaveType.allCases)
    func noteMatchesEngine(wave: WaveType) throws {
        let text = try String(contentsOfFile: TuningTests.folder + "/19-edo.scl", encoding: .utf8)
        let tuning = Tuning(scale: try ScalaScale.parse(text))
        let shape = Bench.tone(3000, wave: wave, rootNote: 60)
        let silent = tuning.silentKeys(for: shape, sampleRate: 8000)
        // 19 steps an octave: 3000 Hz reaches the 4 kHz Nyquist frequency 8 steps up (key 68), for
        // every wave but noise; the 100 kHz ceiling is 97 steps up, off the keyboard.
        #expect(silent.aboveNyquist == (wave == .noise ? [] : Array(68...127)))
        #expect(silent.aboveCeiling.isEmpty && silent.tooLow.isEmpty && silent.unpitched.isEmpty)
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
