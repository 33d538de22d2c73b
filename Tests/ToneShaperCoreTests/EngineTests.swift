import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore
import ToneShaperInstrument

@Suite("Engine: sample accuracy, pitch bend, programs, echo, controllers, clipping")
struct EngineTests {
    @Test("a note-on at offset k starts at frame k: silence before, the sine's first non-zero sample at k + 1",
          arguments: [0, 1, 37, 127, 128, 129, 300])
    func sampleAccurateNoteOn(k: Int) throws {
        let e = try Bench.engine([Bench.tone(440)])
        let out = e.render(frames: 512, events: [EngineEvent(offset: k, .on(69))])
        let left = Signal.left(out)
        // Nothing before frame k; at k the phase and the gain both start at 0.
        #expect(left[0...k].allSatisfy { $0 == 0 }, "sound before frame \(k)")
        #expect(left[k + 1] != 0, "no sound at frame \(k + 1)")
        // The same note at offset 0 of a render call made k frames later is the same signal, shifted by k.
        let e2 = try Bench.engine([Bench.tone(440)])
        _ = e2.render(frames: k)
        let later = Signal.left(e2.render(frames: 512 - k, events: [EngineEvent(offset: 0, .on(69))]))
        #expect(Array(left[k...]) == later)
    }

    @Test("events split the block wherever they fall: a note-off at offset k of a call ends exactly there")
    func sampleAccurateNoteOff() throws {
        let shape = Bench.tone(440, release: 0)
        let a = try Bench.engine([shape])
        let b = try Bench.engine([shape])
        let x = Signal.left(a.render(frames: 1000, events: [EngineEvent(offset: 0, .on(69)), EngineEvent(offset: 611, .off(69))]))
        let y = Signal.left(b.render(frames: 611, events: [EngineEvent(offset: 0, .on(69))]))
        // Identical up to the note-off …
        #expect(Array(x[0..<611]) == y)
        // … then released within the engine's shortest ramp (≤ 1 ms) and silent (below −60 dBFS) after it.
        #expect(Signal.peak(x, in: 700..<1000) < 1e-3)
        #expect(Signal.peak(x, in: 611..<620) > 0)
    }

    static func performance() -> [(frame: Int, message: MIDIMessage)] {
        [(3, .on(69)), (517, .on(76, 90)), (1000, .pitchBend(channel: 0, value: 3000)), (1001, .cc(7, 90)),
         (2000, .programChange(channel: 0, program: 1)), (4099, .off(69)), (4100, .on(72, 50)),
         (5003, .pitchBend(channel: 0, value: -2000)), (7777, .on(76, 0)), (8191, .cc(64, 127)), (9001, .off(72)),
         (9500, .on(81)), (10_001, .cc(64, 0)), (10_002, .cc(120, 0))]
    }

    @Test("the output is identical sample for sample whatever the block size (64, 100, 512, 1, 4096)")
    func blockSizeIndependence() throws {
        let shapes = [Bench.tone(440, wave: .bandLimitedSawtooth), Bench.tone(220, wave: .squareFourier, program: 1)]
        var outputs: [[Float]] = []
        for block in [64, 100, 512, 1, 4096] {
            let e = try Bench.engine(shapes)
            let timed = Self.performance().map { TimedMIDIMessage(frame: Int64($0.frame), message: $0.message) }
            outputs.append(OfflineRenderer(engine: e, blockFrames: block).renderAll(timed, totalFrames: 12_000))
        }
        #expect(Signal.peak(outputs[0]) > 0.1)
        for i in 1..<outputs.count {
            #expect(outputs[i].count == outputs[0].count)
            let firstDifference = zip(outputs[i], outputs[0]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDifference == nil, "block size #\(i) differs from 64 at interleaved sample \(firstDifference ?? -1)")
        }
    }

    /// A sweep crosses level after level, each blended only across the top of its band: a block
    /// reads one level when none of its groups blends and both when one does, so block sizes put
    /// that choice in different places, and a group that does not blend must read the same either way.
    @Test("a band-limited sweep through many levels and their blends is identical sample for sample at block sizes 64, 1, 7, 100, 512, 4096")
    func blendedSweepBlockSizeIndependence() throws {
        let shapes = BandLimitedTables.waves.enumerated().map { program, wave in
            Shape(name: "sweep \(program)", program: program,
                  points: [.init(time: 0, frequency: 150), .init(time: 0.12, frequency: 9000), .init(time: 0.25, frequency: 700)],
                  duration: 0.25, minFrequency: 20, maxFrequency: 10_000, wave: wave, amplitude: 0.5)
        }
        let events: [(frame: Int, message: MIDIMessage)] = [
            (0, .on(69)), (0, .programChange(channel: 1, program: 1)), (0, .programChange(channel: 2, program: 2)),
            (0, .programChange(channel: 3, program: 2)), (5, .noteOn(channel: 1, note: 64, velocity: 100)),
            (333, .noteOn(channel: 2, note: 57, velocity: 90)), (1001, .noteOn(channel: 3, note: 81, velocity: 80)),
            (7000, .pitchBend(channel: 0, value: 5000)), (11_000, .off(69)),
        ]
        var outputs: [[Float]] = []
        for block in [64, 1, 7, 100, 512, 4096] {
            let e = try Bench.engine(shapes)
            let timed = events.map { TimedMIDIMessage(frame: Int64($0.frame), message: $0.message) }
            outputs.append(OfflineRenderer(engine: e, blockFrames: block).renderAll(timed, totalFrames: 12_000))
        }
        #expect(Signal.peak(outputs[0]) > 0.1)
        for i in 1..<outputs.count {
            let firstDifference = zip(outputs[i], outputs[0]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDifference == nil, "block size #\(i) differs from 64 at interleaved sample \(firstDifference ?? -1)")
        }
    }

    @Test("knob glides (duration CC 71, fidelity CC 74, echo CC 91/94, pan CC 10, mod wheel) are block-size independent too")
    func glideBlockSizeIndependence() throws {
        let shape = Shape(name: "sweep", points: [.init(time: 0, frequency: 200), .init(time: 0.1, frequency: 800),
                                                  .init(time: 0.3, frequency: 300)],
                          duration: 0.3, minFrequency: 20, maxFrequency: 1000, wave: .sine, amplitude: 0.5)
        let events: [(frame: Int, message: MIDIMessage)] = [
            (0, .on(69)), (2000, .cc(71, 40)), (5000, .cc(74, 20)), (6000, .cc(91, 80)), (6001, .cc(94, 30)),
            (7000, .cc(1, 90)), (8000, .cc(10, 10)), (9000, .off(69)),
        ]
        var outputs: [[Float]] = []
        for block in [64, 100, 512] {
            let e = try Bench.engine([shape])
            outputs.append(Bench.play(e, events, frames: 12_000, blockFrames: block))
        }
        for i in 1..<outputs.count {
            let firstDifference = zip(outputs[i], outputs[0]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDifference == nil, "block size #\(i) differs from 64 first at frame \(firstDifference ?? -1)")
        }
    }

    @Test("pitch bend multiplies the frequency by 2^(bend·range/12), default range ±2 semitones",
          arguments: [8191, -8192, 4096, -2048])
    func pitchBend(value: Int) throws {
        let e = try Bench.engine([Bench.tone(440)])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.1), .pitchBend(channel: 0, value: Int16(value)))],
                           frames: Bench.seconds(0.3))
        let before = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.02)..<Bench.seconds(0.1)))
        let after = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.11)..<Bench.seconds(0.3)))
        let ratio = pow(2, Double(value) / 8192 * 2 / 12)
        #expect(abs(before / 440 - 1) < 0.001)
        #expect(abs(after / (440 * ratio) - 1) < 0.001, "bend \(value): \(after) Hz, expected \(440 * ratio)")
    }

    @Test("RPN 0 data entry sets the bend range: 12 semitones makes a full bend an octave")
    func bendRange() throws {
        let e = try Bench.engine([Bench.tone(440)])
        let x = Bench.play(e, [(0, .cc(101, 0)), (0, .cc(100, 0)), (0, .cc(6, 12)), (0, .cc(101, 127)), (0, .cc(100, 127)),
                               (0, .on(69)), (Bench.seconds(0.1), .pitchBend(channel: 0, value: -8192)),
                               (Bench.seconds(0.2), .cc(6, 1))],  // RPN deselected: data entry ignored
                           frames: Bench.seconds(0.3))
        let after = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.11)..<Bench.seconds(0.3)))
        #expect(abs(after / 220 - 1) < 0.001, "\(after) Hz")
        // Reset All Controllers (CC 121) recentres the bend.
        let y = Bench.play(e, [(0, .cc(121, 0))], frames: Bench.seconds(0.1))
        let reset = try #require(Signal.frequency(y, sampleRate: Bench.rate, in: Bench.seconds(0.01)..<Bench.seconds(0.1)))
        #expect(abs(reset / 440 - 1) < 0.001, "\(reset) Hz after reset")
    }

    @Test("program change switches the preset for new notes while a sounding note keeps its shape")
    func programChange() throws {
        // Program 0: a 440 Hz sine; program 1: a 330 Hz band-limited square (odd harmonics).
        let a = Bench.tone(440, program: 0)
        let b = Bench.tone(330, wave: .bandLimitedSquare, program: 1)
        let e = try Bench.engine([a, b])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.1), .programChange(channel: 0, program: 1)),
                               (Bench.seconds(0.1), .on(81))], frames: Bench.seconds(0.3))
        let w = Bench.seconds(0.15)..<Bench.seconds(0.3)
        let amp = { (f: Double) in Signal.amplitude(x, at: f, sampleRate: Bench.rate, in: w) }
        // The old note still plays program 0: 440 Hz sine, no odd harmonics of its own.
        #expect(amp(440) > 0.05)
        #expect(amp(1320) < 0.01 * amp(440), "the held note turned into a square")
        // The new note (an octave above the root) plays program 1: 660 Hz square with its third harmonic.
        #expect(amp(660) > 0.05)
        #expect(abs(amp(1980) / amp(660) - 1.0 / 3) < 0.05, "third harmonic \(amp(1980) / amp(660))")
        // A note of program 0 would have been at 880 Hz.
        #expect(amp(880) < 0.01 * amp(660))
    }

    @Test("a remapped program selects the preset it is mapped to; other programs keep their presets' own numbers")
    func programMap() throws {
        let library = try PresetLibrary(shapes: [Bench.tone(440, program: 0), Bench.tone(330, program: 1), Bench.tone(550, program: 2)])
        var config = EngineConfiguration(sampleRate: Bench.rate, voices: 8)
        config.programPresets = [33: 2, 1: 0]  // GM bass (33) plays the 550 Hz tone; program 1 plays the 440 Hz one
        let e = Engine(library: library, configuration: config)
        let x = Bench.play(e, [(0, .programChange(channel: 0, program: 33)), (0, .on(69)), (Bench.seconds(0.1), .off(69)),
                               (Bench.seconds(0.2), .programChange(channel: 0, program: 1)), (Bench.seconds(0.2), .on(69)),
                               (Bench.seconds(0.3), .off(69)),
                               (Bench.seconds(0.4), .programChange(channel: 0, program: 2)), (Bench.seconds(0.4), .on(69))],
                           frames: Bench.seconds(0.5))
        let heard = { (from: Double) in Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(from + 0.02)..<Bench.seconds(from + 0.09)) }
        #expect(abs(try #require(heard(0)) / 550 - 1) < 0.001)
        #expect(abs(try #require(heard(0.2)) / 440 - 1) < 0.001)
        #expect(abs(try #require(heard(0.4)) / 550 - 1) < 0.001)
    }

    @Test("a held note keeps its shape through two program changes")
    func programChangeTwice() throws {
        let e = try Bench.engine([Bench.tone(440, program: 0), Bench.tone(330, program: 1), Bench.tone(550, program: 2)])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.05), .programChange(channel: 0, program: 1)),
                               (Bench.seconds(0.1), .programChange(channel: 0, program: 2))], frames: Bench.seconds(0.3))
        let f = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.15)..<Bench.seconds(0.3)))
        #expect(abs(f / 440 - 1) < 0.001, "held note now at \(f) Hz")
    }

    @Test("program changes never run out of slots, even with every voice holding a preset no channel has any more")
    func programChangesWithEveryVoiceOnAnOldPreset() throws {
        // 4 voices, each held on its own channel while that channel changes program: 16 current
        // slots plus 4 old ones fill all 20, and one more program change must still find one.
        let e = try Bench.engine([Bench.tone(440, program: 0), Bench.tone(330, program: 1)], voices: 4)
        var events: [(frame: Int, message: MIDIMessage)] = []
        for c: UInt8 in 0..<4 { events += [(0, .on(69, channel: c)), (1, .programChange(channel: c, program: 1))] }
        events += [(Bench.seconds(0.1), .programChange(channel: 0, program: 0)), (Bench.seconds(0.1), .off(69)),
                   (Bench.seconds(0.2), .on(57))]
        let x = Bench.play(e, events, frames: Bench.seconds(0.4))
        // The new note plays program 0 (220 Hz, an octave below its 440 Hz root), the others still 440 Hz.
        let w = Bench.seconds(0.25)..<Bench.seconds(0.4)
        #expect(Signal.amplitude(x, at: 220, sampleRate: Bench.rate, in: w) > 0.02)
        #expect(Signal.amplitude(x, at: 165, sampleRate: Bench.rate, in: w) < 0.001)
    }

    @Test("echo: a short note comes back after the delay, v times as loud, then v² times", arguments: [(0.5, 0.1), (0.3, 0.15)])
    func echo(volume: Double, delay: Double) throws {
        var shape = Bench.tone(600, attack: 0.002, release: 0.002)
        shape.echo = Shape.Echo(delay: delay, volume: volume)
        let e = try Bench.engine([shape])
        let noteLength = 0.03
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(noteLength), .off(69))], frames: Bench.seconds(3 * delay + 0.05))
        let original = Double(Signal.peak(x, in: 0..<Bench.seconds(delay)))
        let first = Double(Signal.peak(x, in: Bench.seconds(delay)..<Bench.seconds(2 * delay)))
        let second = Double(Signal.peak(x, in: Bench.seconds(2 * delay)..<Bench.seconds(3 * delay)))
        #expect(abs(first / original - volume) < 0.05 * volume, "first repeat \(first / original)")
        #expect(abs(second / original - volume * volume) < 0.08 * volume * volume, "second repeat \(second / original)")
        // Silence (below −60 dBFS) between the note and its repeat …
        #expect(Signal.peak(x, in: Bench.seconds(noteLength + 0.005)..<Bench.seconds(delay)) < 1e-3)
        // … and the repeat is the note moved by exactly the delay: its rise crosses 10 % of its peak d·rate frames later.
        let noteRise = try #require(Signal.firstIndex(x, above: Float(0.1 * original)))
        let repeatRise = try #require(Signal.firstIndex(x, above: Float(0.1 * first), from: Bench.seconds(noteLength + 0.005)))
        #expect(abs(repeatRise - noteRise - Bench.seconds(delay)) <= 1, "repeat rises at frame \(repeatRise), note at \(noteRise)")
    }

    @Test("echo volume (CC 91) switches the echo on for a shape without one")
    func echoByController() throws {
        let shape = Bench.tone(600, attack: 0.002, release: 0.002)
        let e = try Bench.engine([shape])
        let target = ControllerMap.standard.assignment(channel: 0, controller: 91)!.value(for: 64)
        let x = Bench.play(e, [(0, .cc(91, 64)), (0, .on(69)), (Bench.seconds(0.03), .off(69))], frames: Bench.seconds(0.4))
        // The shape's echo delay (0.25 s by default) with the knob's volume.
        let original = Double(Signal.peak(x, in: 0..<Bench.seconds(0.1)))
        let repeatPeak = Double(Signal.peak(x, in: Bench.seconds(0.2)..<Bench.seconds(0.35)))
        #expect(abs(repeatPeak / original - target) < 0.05 * target, "repeat \(repeatPeak / original), knob \(target)")
    }

    /// Plays a 187.5 Hz note (a crest every 256 frames) and moves a controller to `value` at a crest.
    static func levelChange(cc: UInt8, value: UInt8) throws -> (before: Double, after: Double, x: [Float], change: Int) {
        let e = try Bench.engine([Bench.tone(187.5, amplitude: 0.5)])
        let change = 64 + 256 * 40
        let x = Bench.play(e, [(0, .on(69)), (change, .cc(cc, value))], frames: Bench.seconds(0.4))
        return (Double(Signal.peak(x, in: Bench.seconds(0.1)..<change)), Double(Signal.peak(x, in: Bench.seconds(0.3)..<Bench.seconds(0.4))),
                x, change)
    }

    @Test("channel volume (CC 7) scales the preset's amplitude; CC 70 sets the amplitude itself")
    func volumeAndAmplitude() throws {
        // CC 7 = 32: the level falls to 32/127 of the preset's, keeping presets' balance.
        let volume = try Self.levelChange(cc: 7, value: 32)
        #expect(abs(volume.after / volume.before - 32.0 / 127) < 0.01, "CC 7 level ratio \(volume.after / volume.before)")
        // CC 70 = 32: amplitude 32/127 instead of the preset's 0.5.
        let amplitude = try Self.levelChange(cc: 70, value: 32)
        #expect(abs(amplitude.after / amplitude.before - (32.0 / 127) / 0.5) < 0.01, "CC 70 level ratio \(amplitude.after / amplitude.before)")
    }

    @Test("volume (CC 7) and amplitude (CC 70) reach their new level through a ramp, not a step", arguments: [7, 70] as [UInt8])
    func amplitudeIsRamped(cc: UInt8) throws {
        let r = try Self.levelChange(cc: cc, value: 0)
        #expect(r.after < 1e-3 * r.before)
        // Ramped: just after the change (at a crest) the level has barely moved …
        #expect(Double(abs(r.x[r.change + 2])) > 0.95 * r.before)
        // … and no sample jumps more than the sine's slope plus a 0.5 ms ramp allows.
        let (jump, at) = Signal.maxJump(r.x, in: r.change - 10..<Bench.seconds(0.4))
        #expect(Double(jump) < r.before * (2 * Double.pi * 187.5 / Bench.rate + 1 / (0.0005 * Bench.rate)), "jump \(jump) at \(at)")
    }

    @Test("duration (CC 71) changes how long one pass of the shape takes")
    func durationByController() throws {
        // 0.2 s pass: 300 Hz for the first half, 600 Hz for the second.
        let shape = Shape(name: "steps", points: [.init(time: 0, frequency: 300), .init(time: 0.1, frequency: 300),
                                                  .init(time: 0.1001, frequency: 600), .init(time: 0.2, frequency: 600)],
                          duration: 0.2, minFrequency: 20, maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 100_000)
        let newDuration = try #require(ControllerMap.standard.assignment(channel: 0, controller: 71)).value(for: 64)
        #expect(newDuration > 0.5 && newDuration < 0.8)
        let e = try Bench.engine([shape])
        // The knob glides while the channel sounds: a short first note lets it settle, the second note is measured.
        let start = 0.3
        let x = Bench.play(e, [(0, .cc(71, 64)), (0, .on(60)), (Bench.seconds(0.15), .off(60)), (Bench.seconds(start), .on(69))],
                           frames: Bench.seconds(start + newDuration))
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        // 0.15 s into the note: the 0.2 s pass would be at 600 Hz, the stretched one is still at 300 Hz.
        let early = try #require(Signal.frequency(at: start + 0.15, track: track))
        #expect(abs(early - 300) < 5, "\(early) Hz")
        // At three quarters of the new pass it plays 600 Hz (the 0.2 s pass would be back at 300 Hz at 0.45 s).
        let late = try #require(Signal.frequency(at: start + 0.45, track: track))
        #expect(abs(late - 600) < 10, "\(late) Hz")
        let quarter = try #require(Signal.frequency(at: start + newDuration / 4, track: track))
        let threeQuarters = try #require(Signal.frequency(at: start + newDuration * 3 / 4, track: track))
        #expect(abs(quarter - 300) < 5 && abs(threeQuarters - 600) < 10, "\(quarter) Hz, \(threeQuarters) Hz")
    }

    /// A 1 s ramp 200 → 800 Hz, so the frequency tells where in the pass a note is.
    static let ramp = Shape(name: "ramp", points: [.init(time: 0, frequency: 200), .init(time: 1, frequency: 800)],
                            duration: 1, minFrequency: 20, maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 1000)

    @Test("turning duration (CC 71) mid-note keeps the note's place in the shape and slows what is left")
    func durationMidNoteKeepsPlace() throws {
        let e = try Bench.engine([Self.ramp])
        let cc = UInt8(92)
        let newDuration = ControllerMap.standard.assignment(channel: 0, controller: 71)!.value(for: cc)
        #expect(newDuration > 1.8 && newDuration < 2.2)
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.5), .cc(71, cc))], frames: Bench.seconds(1.1))
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        let f = try #require(Signal.frequency(at: 1.0, track: track))
        // Half the pass done at 0.5 s; the other half now takes newDuration/2, so at 1.0 s: ≈ ½ + 0.5/newDuration.
        let expected = 200 + 600 * (0.5 + 0.5 / newDuration)
        #expect(abs(f - expected) < 25, "\(f) Hz at 1.0 s, expected about \(expected) Hz")
    }

    @Test("turning fidelity (CC 74) mid-note keeps the note's place in the shape")
    func fidelityMidNoteKeepsPlace() throws {
        let e = try Bench.engine([Self.ramp])
        // About N = 100: the straight ramp quantises to the very same line, only the grid is coarser.
        let cc = UInt8(77)
        let n = ControllerMap.standard.assignment(channel: 0, controller: 74)!.value(for: cc)
        #expect(n > 90 && n < 110)
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(0.5), .cc(74, cc))], frames: Bench.seconds(0.9))
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        for t in [0.6, 0.7, 0.8] {
            let f = try #require(Signal.frequency(at: t, track: track))
            #expect(abs(f - (200 + 600 * t)) < 15, "\(f) Hz at \(t) s, expected \(200 + 600 * t) Hz")
        }
    }

    @Test("fidelity (CC 74) requantises the curve: turned to the minimum, the peak of the article's curve is gone")
    func fidelityByController() throws {
        let shape = Shape(name: "article-curve", points: CurveTests.articleCurve, duration: 1, minFrequency: 20,
                          maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 500)
        let e = try Bench.engine([shape])
        // The knob glides while the channel sounds: a short first note lets it settle, the second note is measured.
        let start = 0.3
        let x = Bench.play(e, [(0, .cc(74, 0)), (0, .on(60)), (Bench.seconds(0.15), .off(60)), (Bench.seconds(start), .on(69))],
                           frames: Bench.seconds(start + 1))
        let track = Signal.frequencyTrack(x, sampleRate: Bench.rate)
        let f = try #require(Signal.frequency(at: start + 0.231, track: track))
        // N = 1: a straight line 54 → 360 Hz, about 125 Hz at 0.231 s instead of the drawn 460 Hz.
        #expect(abs(f - (54 + 306 * 0.231)) < 12, "\(f) Hz")
    }

    @Test("the output is hard-clipped at ±1 and every clipped sample is counted")
    func hardClip() throws {
        let e = try Bench.engine([Bench.tone(110, wave: .square, amplitude: 1)])
        let events = (0..<20).map { (frame: 0, message: MIDIMessage.on(UInt8(45 + $0), 127)) }
        let x = OfflineRenderer(engine: e).renderAll(events.map { TimedMIDIMessage(frame: Int64($0.frame), message: $0.message) },
                                                     totalFrames: Bench.seconds(0.2))
        #expect(x.allSatisfy { abs($0) <= 1 })
        let atLimit = x.filter { abs($0) == 1 }.count
        #expect(atLimit > 0)
        #expect(e.clippedSamples >= atLimit)
        #expect(e.clippedSamples > 1000)
        // A quiet render adds nothing to the count.
        let quiet = try Bench.engine([Bench.tone(440, amplitude: 0.3)])
        _ = Bench.play(quiet, [(0, .on(69))], frames: Bench.seconds(0.1))
        #expect(quiet.clippedSamples == 0)
    }

    @Test("the article's 0…1 sawtooth reaches the output without its mean (1 Hz DC blocker); afterwards the blocker's tail dies away smoothly into exact zeros")
    func dcBlocker() throws {
        let e = try Bench.engine([Bench.tone(110, wave: .sawtooth, amplitude: 0.5, release: 0.01)])
        let x = Bench.play(e, [(0, .on(69)), (Bench.seconds(3), .off(69))], frames: Bench.seconds(7))
        // The wave's mean is half its level; after two seconds the blocker has taken it out.
        let settled = Bench.seconds(2)..<Bench.seconds(3)
        let mean = settled.reduce(0.0) { $0 + Double(x[$1]) } / Double(settled.count)
        let peak = Double(Signal.peak(x, in: settled))
        #expect(peak > 0.05)  // 0.5 × the −6 dB master × the centre pan's 0.71 × the ramp's ±½
        #expect(abs(mean) < 0.01 * peak, "mean \(mean) at peak \(peak)")
        // A 110 Hz ramp keeps its shape (a 1 Hz corner does not tilt it): peak-to-peak is the full level.
        let low = settled.map { x[$0] }.min()!, high = settled.map { x[$0] }.max()!
        #expect(abs(Double(high - low) / (2 * peak) - 1) < 0.05, "peak-to-peak \(high - low), peak \(peak)")
        // After the release the mean that was taken out swings back and returns at 1 Hz: no step on the way.
        let tail = Bench.seconds(3.02)..<Bench.seconds(7)
        let jump = Signal.maxJump(x, in: tail)
        #expect(jump.jump < 1e-4, "a step of \(jump.jump) at \(Double(jump.at) / Bench.rate) s")
        #expect(Signal.peak(x, in: Bench.seconds(3.02)..<Bench.seconds(3.1)) > 0.01)  // the swing is there
        // … and once it is below −140 dBFS the output is exact zeros.
        #expect(x[Bench.seconds(6.5)...].allSatisfy { $0 == 0 })
    }

    @Test("channels are independent parts: a note on channel 2 uses that channel's program and bend")
    func channelsAreIndependent() throws {
        let e = try Bench.engine([Bench.tone(440, program: 0), Bench.tone(300, program: 5)])
        let x = Bench.play(e, [(0, .programChange(channel: 1, program: 5)), (0, .pitchBend(channel: 0, value: 8191)),
                               (0, .on(69, 127, channel: 1))], frames: Bench.seconds(0.2))
        let f = try #require(Signal.frequency(x, sampleRate: Bench.rate, in: Bench.seconds(0.02)..<Bench.seconds(0.2)))
        #expect(abs(f / 300 - 1) < 0.001, "\(f) Hz")
    }
}
