import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

@Suite("Voices: transposition, looping, velocity and the note life cycle")
struct VoiceTests {
    @Test("a note plays the shape transposed by 2^((note − root)/12)", arguments: [(60, 72), (60, 53), (45, 57), (45, 38), (69, 70)])
    func transposition(root: Int, note: Int) throws {
        let shape = Bench.tone(261.63, rootNote: root)
        let x = try Bench.note(shape, note: UInt8(note), seconds: 0.2)
        let f = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.02)..<Bench.seconds(0.19)))
        let expected = 261.63 * pow(2, Double(note - root) / 12)
        #expect(abs(f / expected - 1) < 0.001, "root \(root) note \(note): \(f) Hz, expected \(expected) Hz")
    }

    @Test("a held note loops its shape: the frequency trajectory of every cycle equals the first")
    func loopsWhileHeld() throws {
        // A 0.1 s shape with a distinctive curve: up fast, down slowly.
        let shape = Shape(name: "loop", points: [.init(time: 0, frequency: 300), .init(time: 0.03, frequency: 900),
                                                 .init(time: 0.1, frequency: 450)],
                          duration: 0.1, minFrequency: 20, maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 1000)
        let x = try Bench.note(shape, seconds: 0.4)
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        var compared = 0
        for t in stride(from: 0.01, through: 0.09, by: 0.005) {
            let first = try #require(Signal.frequency(at: t, track: track))
            for cycle in 1...3 {
                let later = try #require(Signal.frequency(at: t + 0.1 * Double(cycle), track: track))
                #expect(abs(later / first - 1) < 0.01, "t = \(t): cycle \(cycle + 1) \(later) Hz vs cycle 1 \(first) Hz")
                compared += 1
            }
        }
        #expect(compared == 51)
        // And the first cycle is the drawn curve: 900 Hz near 0.03 s, 300 → 900 rising, 675 halfway down.
        let top = try #require(Signal.frequency(at: 0.03, track: track))
        #expect(top > 850 && top <= 905, "top \(top)")
        let rising = try #require(Signal.frequency(at: 0.015, track: track))
        #expect(abs(rising - 600) < 20, "rising \(rising)")
        let falling = try #require(Signal.frequency(at: 0.065, track: track))
        #expect(abs(falling - 675) < 20, "falling \(falling)")
    }

    @Test("a pass is exactly S = ⌊duration·rate⌋ samples: after each one the shape restarts at its first point, u = 0",
          arguments: [0.01, 0.0123, 0.00909375, 0.1, 0.333, 1.0, 2.7])
    func passIsExactlySSamples(duration: Double) {
        let rate = 48_000.0
        let shape = Shape(name: "sweep", points: [.init(time: 0, frequency: 100), .init(time: duration, frequency: 1000)],
                          duration: duration, minFrequency: 100, maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 1000)
        let table = PresetTable([shape])
        defer { table.deallocate() }
        var slot = ShapeSlot(pointCapacity: table.maxPoints)
        defer { slot.deallocate() }
        slot.load(0, from: table, sampleRate: rate)
        let block = 256
        let scratch = VoiceScratch(capacity: block)
        defer { scratch.deallocate() }
        var voice = Voice()
        voice.stage = .playing
        voice.noteRatio = 1
        voice.frequency = 100
        voice.ramp(to: 1, samples: 0)
        var bus = [Float](repeating: 0, count: block)
        let samples = Int(duration * rate)
        var done = 0
        for pass in 1...3 {
            // Render up to the end of this pass in blocks that do not line up with it.
            while done < pass * samples {
                let count = min(block - 8, pass * samples - done)
                bus.withUnsafeMutableBufferPointer { out in
                    withUnsafeMutablePointer(to: &slot) { s in
                        voice.render(count: count, intoPeriod: done & 7, slot: s, ratio: 1, halfStep: 0.5 / rate, scratch: scratch,
                                     tables: BandLimitedTables.shared.everyWave, nyquistReciprocal: 2 / rate, into: out.baseAddress!)
                    }
                }
                done += count
            }
            #expect(voice.position == 0, "after pass \(pass) of \(samples) samples the shape is at u = \(voice.position)")
            #expect(voice.frequency == 100, "after pass \(pass): \(voice.frequency) Hz")
        }
    }

    @Test("velocity follows a square law: velocity 64 plays (64/127)² as loud as 127", arguments: [64, 32, 100])
    func velocityCurve(velocity: Int) throws {
        let shape = Bench.tone(440)
        let loud = try Bench.note(shape, velocity: 127, seconds: 0.1)
        let soft = try Bench.note(shape, velocity: UInt8(velocity), seconds: 0.1)
        let window = Bench.seconds(0.02)..<Bench.seconds(0.1)
        let ratio = Double(Signal.peak(soft, in: window) / Signal.peak(loud, in: window))
        let expected = pow(Double(velocity) / 127, 2)
        #expect(abs(ratio / expected - 1) < 0.03, "velocity \(velocity): ratio \(ratio), expected \(expected)")
    }

    @Test("a note-on with velocity 0 is a note-off")
    func velocityZeroReleases() throws {
        let e = try Bench.engine([Bench.tone(440, release: 0.05)])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.1), .on(69, 0))], frames: Bench.seconds(0.3))
        #expect(Signal.peak(x, in: Bench.seconds(0.05)..<Bench.seconds(0.1)) > 0.1)
        #expect(Signal.peak(x, in: Bench.seconds(0.2)..<Bench.seconds(0.3)) < 1e-4)
        #expect(e.activeVoiceCount == 0)
    }

    @Test("a release that crosses the loop point fades on: a decaying shape does not swell back after note-off",
          arguments: [AmplitudeEnvelope.linearDecay, .exponentialDecay(rate: 20)])
    func releaseOnlyFalls(envelope: AmplitudeEnvelope) throws {
        // A 0.1 s pass whose level decays within the pass; the key goes up 10 ms before the loop
        // point, and the 80 ms release runs on well into the next pass.
        var shape = Bench.tone(1000, release: 0.08, duration: 0.1)
        shape.envelope = envelope
        let e = try Bench.engine([shape])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.09), .off(69))], frames: Bench.seconds(0.2))
        // While held, each pass starts loud again (the shape's own envelope).
        let endOfFirstPass = Signal.peak(x, in: Bench.seconds(0.085)..<Bench.seconds(0.09))
        let held = Signal.peak(x, in: Bench.seconds(0.005)..<Bench.seconds(0.01))
        #expect(held > 2 * endOfFirstPass)
        // After note-off, the level in every 2 ms window (two cycles) is no higher than the one before.
        let window = Bench.seconds(0.002)
        var previous = Signal.peak(x, in: Bench.seconds(0.09)..<(Bench.seconds(0.09) + window))
        var start = Bench.seconds(0.09) + window
        while start + window <= Bench.seconds(0.17) {
            let level = Signal.peak(x, in: start..<(start + window))
            #expect(level <= previous * 1.01 + 1e-6, "at \(Double(start) / Bench.rate) s: \(level) after \(previous)")
            previous = level
            start += window
        }
        #expect(previous < 0.1 * endOfFirstPass)
    }

    @Test("the sustain pedal (CC 64) holds released notes until it goes up")
    func sustainPedal() throws {
        let e = try Bench.engine([Bench.tone(440, release: 0.05)])
        let x = Bench.play(e, [(0, .cc(64, 127)), (10, .on(69)), (Bench.seconds(0.1), .off(69)),
                               (Bench.seconds(0.4), .cc(64, 0))], frames: Bench.seconds(0.6))
        let held = Signal.peak(x, in: Bench.seconds(0.05)..<Bench.seconds(0.1))
        #expect(held > 0.1)
        // Key up at 0.1 s, pedal still down: the note sounds on at full level.
        #expect(Signal.peak(x, in: Bench.seconds(0.3)..<Bench.seconds(0.4)) > 0.95 * held)
        // Pedal up at 0.4 s: released, silent once the 50 ms release is over.
        #expect(Signal.peak(x, in: Bench.seconds(0.5)..<Bench.seconds(0.6)) < 1e-4)
        // A note whose key is still down when the pedal goes up keeps sounding.
        let e2 = try Bench.engine([Bench.tone(440, release: 0.05)])
        let y = Bench.play(e2, [(0, .cc(64, 127)), (10, .on(69)), (Bench.seconds(0.2), .cc(64, 0))], frames: Bench.seconds(0.4))
        #expect(Signal.peak(y, in: Bench.seconds(0.3)..<Bench.seconds(0.4)) > 0.95 * held)
    }

    @Test("all notes off (CC 123) releases every note of the channel, and only of that channel")
    func allNotesOff() throws {
        let e = try Bench.engine([Bench.tone(440, release: 0.05)])
        let x = Bench.play(e, [(0, .on(69)), (0, .on(72)), (0, .on(76, 127, channel: 1)), (Bench.seconds(0.1), .cc(123, 0))],
                           frames: Bench.seconds(0.3))
        let window = Bench.seconds(0.2)..<Bench.seconds(0.3)
        #expect(Signal.amplitude(x, at: 440, sampleRate: Bench.rate, in: window) < 1e-3)
        #expect(Signal.amplitude(x, at: Bench.equalTempered(72, root: 69, frequency: 440), sampleRate: Bench.rate, in: window) < 1e-3)
        #expect(Signal.amplitude(x, at: Bench.equalTempered(76, root: 69, frequency: 440), sampleRate: Bench.rate, in: window) > 0.1)
        #expect(e.activeVoiceCount == 1)
    }

    @Test("the default configuration has a pool of 32 voices: 32 notes sound together, a 33rd steals")
    func defaultPool() throws {
        #expect(EngineConfiguration().voices == 32)
        let e = try Bench.engine([Bench.tone(440, amplitude: 0.02)])
        var events = (0..<32).map { (frame: $0, message: MIDIMessage.on(UInt8(40 + $0), 20)) }
        _ = Bench.play(e, events, frames: 256)
        #expect(e.activeVoiceCount == 32)
        #expect(e.stolenVoices == 0)
        events = [(0, .on(100, 20))]
        _ = Bench.play(e, events, frames: 256)
        #expect(e.stolenVoices == 1)
        #expect(e.activeVoiceCount == 32)
    }

    @Test("the same key again retriggers its voice instead of taking a second one")
    func retriggerSameKey() throws {
        let e = try Bench.engine([Bench.tone(440)], voices: 1)
        let x = Bench.play(e, [(0, .on(69, 60)), (Bench.seconds(0.05), .on(69, 120)), (Bench.seconds(0.1), .on(69, 90))],
                           frames: Bench.seconds(0.2))
        #expect(e.activeVoiceCount == 1)
        #expect(e.stolenVoices == 0)
        // The retriggered note takes the new velocity.
        let last = Signal.peak(x, in: Bench.seconds(0.15)..<Bench.seconds(0.2))
        let first = Signal.peak(x, in: Bench.seconds(0.02)..<Bench.seconds(0.05))
        #expect(abs(Double(last / first) - pow(90.0 / 60, 2)) < 0.05 * pow(90.0 / 60, 2))
        let many = try Bench.engine([Bench.tone(440)])
        _ = Bench.play(many, [(0, .on(69)), (100, .on(69)), (200, .on(69)), (300, .on(69))], frames: 1000)
        #expect(many.activeVoiceCount == 1)
    }

    static func noteFrequency(_ n: Int) -> Double { Bench.equalTempered(n, root: 69, frequency: 440) }

    /// Component amplitudes of each note in a window.
    static func levels(_ x: [Float], notes: [Int], from t0: Double, to t1: Double) -> [Int: Double] {
        var r: [Int: Double] = [:]
        for n in notes { r[n] = Signal.amplitude(x, at: noteFrequency(n), sampleRate: Bench.rate, in: Bench.seconds(t0)..<Bench.seconds(t1)) }
        return r
    }

    @Test("a full pool of 4 steals the oldest released voice first")
    func stealsOldestReleased() throws {
        let e = try Bench.engine([Bench.tone(440, amplitude: 0.3, release: 1.0)], voices: 4)
        let x = Bench.play(e, [(0, .on(60)), (100, .on(64)), (200, .on(67)), (300, .on(71)),
                               (Bench.seconds(0.10), .off(71)), (Bench.seconds(0.12), .off(60)),
                               (Bench.seconds(0.20), .on(74))], frames: Bench.seconds(0.35))
        let before = Self.levels(x, notes: [60, 64, 67, 71, 74], from: 0.14, to: 0.2)
        let after = Self.levels(x, notes: [60, 64, 67, 71, 74], from: 0.25, to: 0.35)
        let full = before[64]!
        #expect(full > 0.05)
        // Both released notes were still sounding (long release) before the fifth note …
        #expect(before[71]! > 0.5 * full && before[60]! > 0.5 * full)
        // … which took the voice of the note released first (71); 60 goes on fading, the held ones stay.
        #expect(after[71]! < 0.02 * full, "71 should have been stolen: \(after)")
        #expect(after[60]! > 0.3 * full, "60 should still be releasing: \(after)")
        #expect(after[64]! > 0.9 * full && after[67]! > 0.9 * full, "held notes: \(after)")
        #expect(after[74]! > 0.9 * full, "new note: \(after)")
        #expect(e.stolenVoices == 1)
        #expect(e.activeVoiceCount == 4)
    }

    @Test("with every voice held, a full pool of 4 steals the oldest held note")
    func stealsOldestHeld() throws {
        let e = try Bench.engine([Bench.tone(440, amplitude: 0.3, release: 0.02)], voices: 4)
        // 64 starts first and finishes, so the pool's first voice is free and 72 reuses it: 72 is the newest
        // note on the lowest voice, 60 is the oldest note still held.
        let x = Bench.play(e, [(0, .on(64)), (100, .on(60)), (200, .on(67)), (300, .on(71)),
                               (Bench.seconds(0.05), .off(64)), (Bench.seconds(0.15), .on(72)),
                               (Bench.seconds(0.20), .on(74))], frames: Bench.seconds(0.35))
        let before = Self.levels(x, notes: [60, 67, 71, 72], from: 0.16, to: 0.2)
        let after = Self.levels(x, notes: [60, 67, 71, 72, 74], from: 0.25, to: 0.35)
        let full = before[67]!
        #expect(before[60]! > 0.9 * full && before[72]! > 0.9 * full)
        #expect(after[60]! < 0.02 * full, "60 (oldest held) should have been stolen: \(after)")
        #expect(after[72]! > 0.9 * full && after[67]! > 0.9 * full && after[71]! > 0.9 * full, "\(after)")
        #expect(after[74]! > 0.9 * full, "\(after)")
        #expect(e.stolenVoices == 1)
    }
}

@Suite("No clicks: every gain change is a ramp and the phase never jumps")
struct ClickTests {
    /// 187.5 Hz has a period of exactly 256 samples at 48 kHz: a note started at frame 0 is at a crest on
    /// every frame ≡ 64 (mod 256), where an unramped cut or restart would jump by the full amplitude.
    static let f = 187.5
    static func crest(_ period: Int) -> Int { 64 + 256 * period }

    struct Scenario: Sendable, CustomTestStringConvertible {
        let label: String
        let voices: Int
        /// Highest frequency that sounds, as a ratio to 187.5 Hz.
        let topRatio: Double
        /// Loudest amplitude as a multiple of one velocity-127 note.
        let loudness: Double
        let events: @Sendable () -> [(frame: Int, message: MIDIMessage)]
        var testDescription: String { label }
    }

    static let scenarios: [Scenario] = [
        Scenario(label: "note on and note off", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69)), (crest(40), .off(69))]
        },
        Scenario(label: "retrigger of the same key", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69, 64)), (crest(30), .on(69, 127)), (crest(60), .on(69, 40))]
        },
        Scenario(label: "steal of the only voice", voices: 1, topRatio: pow(2, 3.0 / 12), loudness: 1) {
            [(0, .on(69)), (crest(40), .on(72))]
        },
        Scenario(label: "all sound off (CC 120)", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69)), (crest(40), .cc(120, 0))]
        },
        Scenario(label: "all notes off (CC 123)", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69)), (crest(40), .cc(123, 0))]
        },
        Scenario(label: "velocity-0 note-on", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69)), (crest(40), .on(69, 0))]
        },
        Scenario(label: "sustain pedal up", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .cc(64, 127)), (0, .on(69)), (crest(10), .off(69)), (crest(40), .cc(64, 0))]
        },
        Scenario(label: "pitch bend up and down mid-note", voices: 8, topRatio: pow(2, 2.0 / 12), loudness: 1) {
            [(0, .on(69)), (crest(20), .pitchBend(channel: 0, value: 8191)), (crest(30) + 17, .pitchBend(channel: 0, value: -8192)),
             (crest(40) + 5, .pitchBend(channel: 0, value: 0))]
        },
        Scenario(label: "volume (CC 7) from full to zero and back", voices: 8, topRatio: 1, loudness: 2) {
            [(0, .on(69)), (crest(20), .cc(7, 0)), (crest(40), .cc(7, 127))]
        },
        Scenario(label: "duration (CC 71) and fidelity (CC 74) turned mid-note", voices: 8, topRatio: 1, loudness: 1) {
            [(0, .on(69)), (crest(20), .cc(71, 0)), (crest(30), .cc(71, 127)), (crest(40), .cc(74, 0))]
        },
        Scenario(label: "two notes stolen in a pool of 2", voices: 2, topRatio: pow(2, 7.0 / 12), loudness: 2) {
            [(0, .on(69)), (0, .on(64)), (crest(30), .on(76)), (crest(31), .on(71))]
        },
    ]

    @Test("no sample-to-sample jump beyond the sine's own slope 2π·f·A/rate (plus a ≥ 0.5 ms ramp)", arguments: scenarios)
    func clickFree(_ s: Scenario) throws {
        let shape = Bench.tone(Self.f, amplitude: 0.5, attack: 0.005, release: 0.05)
        // The loudness of one sustained velocity-127 note, measured.
        let reference = try Bench.note(shape, seconds: 0.1)
        let a = Double(Signal.peak(reference, in: Bench.seconds(0.05)..<Bench.seconds(0.1)))
        #expect(a > 0.1)
        let e = try Bench.engine([shape], voices: s.voices)
        let x = Bench.play(e, s.events(), frames: Bench.seconds(0.4))
        let amplitude = a * s.loudness
        let bound = amplitude * (2 * Double.pi * Self.f * s.topRatio / Bench.rate + 1 / (0.0005 * Bench.rate)) + 1e-4
        // The test can fail: an unramped change at a crest would jump by about the full amplitude.
        #expect(bound < 0.2 * amplitude)
        let (jump, at) = Signal.maxJump(x)
        #expect(Double(jump) <= bound, "\(s.label): jump \(jump) at frame \(at) exceeds \(bound)")
    }

    @Test("a sweeping shape stays continuous when its duration is changed mid-note (the phase never jumps)")
    func durationChangeOnSweep() throws {
        let shape = Shape(name: "sweep", points: [.init(time: 0, frequency: 100), .init(time: 0.25, frequency: 300),
                                                  .init(time: 0.5, frequency: 100)],
                          duration: 0.5, minFrequency: 20, maxFrequency: 400, wave: .sine, amplitude: 0.5)
        let e = try Bench.engine([shape])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.1), .cc(71, 10)), (Bench.seconds(0.2), .cc(71, 120)),
                               (Bench.seconds(0.3), .cc(74, 3))], frames: Bench.seconds(0.45))
        let a = Double(Signal.peak(x, in: Bench.seconds(0.02)..<Bench.seconds(0.1)))
        let bound = a * (2 * Double.pi * 300 / Bench.rate + 1 / (0.0005 * Bench.rate)) + 1e-4
        let (jump, at) = Signal.maxJump(x)
        #expect(Double(jump) <= bound, "jump \(jump) at frame \(at) exceeds \(bound)")
    }
}
