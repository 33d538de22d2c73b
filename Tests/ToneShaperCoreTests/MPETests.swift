import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore
import ToneShaperInstrument

/// MIDI Polyphonic Expression (MMA RP-053), measured on rendered samples.
///
/// Two notes of one render are told apart honestly by panning their member channels hard left
/// and hard right (CC 10 through the map: equal-power pan puts each wholly on its own side), or,
/// for two notes on one channel, by their frequencies (two octaves apart, read with a Goertzel
/// filter).
@Suite("MPE: zones, per-note bend, pressure and timbre, the manager speaking for its zone")
struct MPETests {
    static let rate = Bench.rate
    /// A steady A4: key 69 plays 440 Hz, so a bend reads straight off the measured frequency.
    static let a440 = Bench.tone(440)

    static func engine(_ shapes: [Shape] = [a440], zones: MPEZones = .off, map: ControllerMap = .standard) throws -> Engine {
        var config = EngineConfiguration(sampleRate: rate, voices: 16)
        config.mpe = zones
        return Engine(library: try PresetLibrary(shapes: shapes), configuration: config, controllerMap: map)
    }

    /// The shipped Mappings/mpe.map.
    static func mpeMap() throws -> ControllerMap {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Mappings/mpe.map").path
        return try ControllerMapFile.load(path: file)
    }

    /// Renders timed messages; returns both sides.
    static func stereo(_ engine: Engine, _ messages: [(frame: Int, message: MIDIMessage)], seconds: Double)
        -> (left: [Float], right: [Float]) {
        let timed = messages.map { TimedMIDIMessage(frame: Int64($0.frame), message: $0.message) }
        let out = OfflineRenderer(engine: engine).renderAll(timed, totalFrames: Bench.seconds(seconds))
        return (stride(from: 0, to: out.count, by: 2).map { out[$0] }, stride(from: 1, to: out.count, by: 2).map { out[$0] })
    }

    /// Channel (0-based) panned hard left / hard right, so its notes sound on that side alone.
    static func left(_ channel: UInt8) -> MIDIMessage { .cc(10, 0, channel: channel) }
    static func right(_ channel: UInt8) -> MIDIMessage { .cc(10, 127, channel: channel) }

    static func bend(_ value: Int16, channel: UInt8) -> MIDIMessage { .pitchBend(channel: channel, value: value) }
    /// The semitones a bend value means at a range.
    static func semitones(_ value: Int16, range: Double) -> Double { Double(value) / 8192 * range }
    static func hz(_ semitones: Double) -> Double { 440 * pow(2, semitones / 12) }

    static func frequency(_ x: [Float], from: Double, to: Double) throws -> Double {
        try #require(Signal.frequency(x, sampleRate: rate, in: Bench.seconds(from)..<Bench.seconds(to)))
    }

    static func expectFrequency(_ x: [Float], from: Double, to: Double, is expected: Double, _ what: String) throws {
        let f = try frequency(x, from: from, to: to)
        #expect(abs(f / expected - 1) < 2e-5, "\(what): \(f) Hz, expected \(expected) Hz")
    }

    /// RPN `number` set to `value` on a channel: CC 101, CC 100, then data entry CC 6.
    static func rpn(_ number: UInt8, _ value: UInt8, channel: UInt8) -> [MIDIMessage] {
        [.cc(101, 0, channel: channel), .cc(100, number, channel: channel), .cc(6, value, channel: channel)]
    }

    // MARK: - Per-note pitch

    @Test("two notes on two member channels, bent +7 and −5 semitones at the members' ±48, each land on their own frequency")
    func oppositeBends() throws {
        let e = try Self.engine(zones: MPEZones(lower: 15, upper: 0))
        let up: Int16 = 1195, down: Int16 = -853  // +7.002 and −4.998 semitones at ±48
        let (l, r) = Self.stereo(e, [(0, Self.left(1)), (0, Self.right(2)),
                                     (0, Self.bend(up, channel: 1)), (0, Self.bend(down, channel: 2)),
                                     (0, .on(69, channel: 1)), (0, .on(69, channel: 2))], seconds: 0.5)
        try Self.expectFrequency(l, from: 0.05, to: 0.5, is: Self.hz(Self.semitones(up, range: 48)), "note bent up")
        try Self.expectFrequency(r, from: 0.05, to: 0.5, is: Self.hz(Self.semitones(down, range: 48)), "note bent down")
        // Each side holds one note: nothing of the other's frequency leaks into it.
        let n = Bench.seconds(0.4)
        let leak = Signal.amplitude(l, at: Self.hz(Self.semitones(down, range: 48)), sampleRate: Self.rate, in: Bench.seconds(0.05)..<n)
        #expect(leak < 1e-4, "left side carries \(leak) of the right note")
    }

    @Test("a manager bend (±2) moves every note of the zone on top of its own bend, continuously")
    func managerBendMovesTheZone() throws {
        let e = try Self.engine(zones: MPEZones(lower: 15, upper: 0))
        let up: Int16 = 1195, down: Int16 = -853, zone: Int16 = 4096  // the manager: +1 semitone
        let at = Bench.seconds(0.3)
        let (l, r) = Self.stereo(e, [(0, Self.left(1)), (0, Self.right(2)),
                                     (0, Self.bend(up, channel: 1)), (0, Self.bend(down, channel: 2)),
                                     (0, .on(69, channel: 1)), (0, .on(69, channel: 2)),
                                     (at, Self.bend(zone, channel: 0))], seconds: 0.6)
        let shift = Self.semitones(zone, range: 2)
        try Self.expectFrequency(l, from: 0.05, to: 0.3, is: Self.hz(Self.semitones(up, range: 48)), "up, before")
        try Self.expectFrequency(r, from: 0.05, to: 0.3, is: Self.hz(Self.semitones(down, range: 48)), "down, before")
        try Self.expectFrequency(l, from: 0.32, to: 0.6, is: Self.hz(Self.semitones(up, range: 48) + shift), "up, after")
        try Self.expectFrequency(r, from: 0.32, to: 0.6, is: Self.hz(Self.semitones(down, range: 48) + shift), "down, after")
        // The phase carries on through the bend: no sample steps further than the higher sine's
        // own steepest step (2π f / rate at its peak).
        let peak = Double(Signal.peak(l, in: Bench.seconds(0.1)..<at))
        let steepest = 2 * Double.pi * Self.hz(Self.semitones(up, range: 48) + shift) / Self.rate * peak
        let jump = Signal.maxJump(l, in: (at - 200)..<(at + 200)).jump
        #expect(Double(jump) <= steepest * 1.01, "a step of \(jump) where the bend lands, the wave's own steepest is \(steepest)")
    }

    // MARK: - Configuration

    @Test("RPN 6 on channel 1 makes a lower zone: its members bend ±48, its manager ±2, a channel past it stays ordinary (±2)")
    func configurationMessage() throws {
        let e = try Self.engine()
        let member: Int16 = 1024, manager: Int16 = 2048, ordinary: Int16 = 4096
        let setup = Self.rpn(6, 3, channel: 0)  // members: channels 2, 3, 4
        let (l, r) = Self.stereo(e, setup.map { (0, $0) } + [
            (1, Self.left(1)), (1, Self.right(4)),
            (1, Self.bend(member, channel: 1)), (1, Self.bend(manager, channel: 0)), (1, Self.bend(ordinary, channel: 4)),
            (1, .on(69, channel: 1)), (1, .on(69, channel: 4)),
        ], seconds: 0.4)
        #expect(e.zones == (try MPEZones(lower: 3, upper: 0)))
        try Self.expectFrequency(l, from: 0.05, to: 0.4, is: Self.hz(Self.semitones(member, range: 48) + Self.semitones(manager, range: 2)),
                                 "member of the new zone")
        try Self.expectFrequency(r, from: 0.05, to: 0.4, is: Self.hz(Self.semitones(ordinary, range: 2)), "channel 5, outside it")
    }

    @Test("RPN 0 on one member sets the bend range of every member of its zone; on the manager, the manager's alone")
    func memberBendRange() throws {
        let e = try Self.engine(zones: MPEZones(lower: 15, upper: 0))
        let setup = Self.rpn(0, 12, channel: 2) + Self.rpn(0, 7, channel: 0)  // members ±12 (sent on channel 3), manager ±7
        let zone: Int16 = 4096, a: Int16 = 4096, b: Int16 = -2048
        let (l, r) = Self.stereo(e, setup.map { (0, $0) } + [
            (1, Self.left(6)), (1, Self.right(9)),
            (1, Self.bend(zone, channel: 0)), (1, Self.bend(a, channel: 6)), (1, Self.bend(b, channel: 9)),
            (1, .on(69, channel: 6)), (1, .on(69, channel: 9)),
        ], seconds: 0.4)
        let shift = Self.semitones(zone, range: 7)
        try Self.expectFrequency(l, from: 0.05, to: 0.4, is: Self.hz(Self.semitones(a, range: 12) + shift), "channel 7")
        try Self.expectFrequency(r, from: 0.05, to: 0.4, is: Self.hz(Self.semitones(b, range: 12) + shift), "channel 10")
    }

    @Test("zones follow the spec: lower from channel 1 up, upper from 16 down; the newest configuration shrinks the other zone; 0 turns one off")
    func zoneLayout() throws {
        var z = MPEZones.off
        z.configure(lower: true, members: 7)
        z.configure(lower: false, members: 7)
        #expect(z.lowerMembers == 7 && z.upperMembers == 7)
        #expect(z.zone(managedBy: 0) == 0...7 && z.zone(managedBy: 15) == 8...15)
        #expect(z.manager(ofMember: 7) == 0 && z.manager(ofMember: 8) == 15 && z.manager(ofMember: 0) == nil)
        z.configure(lower: true, members: 10)  // channels 2...11: the upper zone keeps 12...15
        #expect(z.lowerMembers == 10 && z.upperMembers == 4)
        z.configure(lower: false, members: 14)  // nothing left for the lower zone
        #expect(z.lowerMembers == 0 && z.upperMembers == 14)
        #expect(z.zone(managedBy: 0) == nil && z.manager(ofMember: 1) == 15)
        z.configure(lower: true, members: 15)  // every channel: channel 16 becomes a member
        #expect(z.lowerMembers == 15 && z.upperMembers == 0 && z.manager(ofMember: 15) == 0)
        z.configure(lower: true, members: 0)
        #expect(z == .off)

        // The same through the engine's MIDI input, and the shrunk zone's channels keep working.
        let e = try Self.engine(zones: MPEZones(lower: 7, upper: 0))
        _ = Self.stereo(e, Self.rpn(6, 12, channel: 15).map { (0, $0) }, seconds: 0.01)
        #expect(e.zones.lowerMembers == 2 && e.zones.upperMembers == 12)
        #expect(e.parts[3].manager == 15 && e.parts[3].bendRange == 48 && e.parts[15].bendRange == 2)
        #expect(e.parts[2].manager == 0)
        // RPN 6 on any other channel is not a Configuration Message.
        _ = Self.stereo(e, Self.rpn(6, 5, channel: 4).map { (0, $0) }, seconds: 0.01)
        #expect(e.zones.lowerMembers == 2 && e.zones.upperMembers == 12)
    }

    @Test("--mpe reads lower, upper, lower:N, lower:N,upper:M and off; anything else is refused naming the value",
          arguments: [("lower", 15, 0), ("upper", 0, 15), ("lower:7,upper:7", 7, 7), ("upper:3", 0, 3), ("off", 0, 0),
                      ("Lower:5, upper:9", 5, 9)])
    func option(text: String, lower: Int, upper: Int) throws {
        #expect(try MPEZones(parsing: text) == MPEZones(lower: lower, upper: upper))
    }

    @Test("bad --mpe values name what is wrong",
          arguments: [("middle", "'middle'"), ("lower:x", "'x'"), ("lower:16", "lower:16"), ("lower,upper", "overlap"),
                      ("lower:8,upper:7", "overlap"), ("lower:3,lower:4", "'lower:3,lower:4'")])
    func badOption(text: String, named: String) {
        do {
            _ = try MPEZones(parsing: text)
            Issue.record("'\(text)' was accepted")
        } catch {
            #expect(error.description.contains(named), "\(error)")
        }
    }

    // MARK: - Per-note expression through the map

    @Test("the shipped Mappings/mpe.map: channel pressure drives amplitude, CC 74 fidelity; both new line forms parse")
    func mpeMapFile() throws {
        let map = try Self.mpeMap()
        #expect(map.assignment(channel: 3, source: .channelPressure)?.parameter == .amplitude)
        #expect(map.assignment(channel: 3, controller: 74)?.parameter == .fidelity)
        #expect(map.assignment(channel: 3, source: .polyPressure) == nil)
        let parsed = try ControllerMapFile.parse("pressure volume 0.1 1 exponential channel 2\npolypressure amplitude 0.2 1\n")
        #expect(parsed.assignment(channel: 1, source: .channelPressure)?.parameter == .volume)
        #expect(parsed.assignment(channel: 0, source: .channelPressure) == nil)
        #expect(parsed.assignment(channel: 9, source: .polyPressure)?.minimum == 0.2)
        #expect(parsed.assignment(channel: 9, controller: 0) == nil)  // not confused with CC 0
        do {
            _ = try ControllerMapFile.parse("pressure 7 amplitude 0 1")
            Issue.record("a pressure line with a controller number was accepted")
        } catch {
            #expect(error.description.contains("unknown parameter '7'"), "\(error)")
        }
    }

    @Test("pressure on a member channel (mpe.map: amplitude) changes its own note's level, ramped, and leaves the other note alone")
    func pressureIsPerNote() throws {
        let at = Bench.seconds(0.2)
        func play(pressing: Bool) throws -> (left: [Float], right: [Float]) {
            let e = try Self.engine(zones: MPEZones(lower: 15, upper: 0), map: Self.mpeMap())
            var events: [(frame: Int, message: MIDIMessage)] = [(0, Self.left(1)), (0, Self.right(2)),
                                                                (0, .on(69, channel: 1)), (0, .on(69, channel: 2))]
            if pressing { events.append((at, .channelPressure(channel: 1, pressure: 32))) }
            return Self.stereo(e, events, seconds: 0.5)
        }
        let pressed = try play(pressing: true), untouched = try play(pressing: false)
        let before = Signal.rms(pressed.left, in: Bench.seconds(0.05)..<at)
        let after = Signal.rms(pressed.left, in: Bench.seconds(0.25)..<Bench.seconds(0.5))
        // The preset's amplitude 0.5 becomes 32/127.
        let expected = (32.0 / 127) / 0.5
        #expect(abs(after / before - expected) < 0.01, "level × \(after / before), expected × \(expected)")
        // No step: the gain moves over the parameter ramp, so no sample jumps more than the sine's own steepest step.
        let steepest = 2 * Double.pi * 440 / Self.rate * Double(Signal.peak(pressed.left, in: Bench.seconds(0.05)..<at))
        #expect(Double(Signal.maxJump(pressed.left, in: (at - 100)..<(at + 2000)).jump) <= steepest * 1.01)
        // The other note is exactly what it is without the pressure.
        let difference = zip(pressed.right, untouched.right).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 1e-6, "the other note changed by up to \(difference)")
        #expect(Signal.rms(pressed.right, in: Bench.seconds(0.25)..<Bench.seconds(0.5)) > 0.1)
    }

    @Test("CC 74 on a member channel (fidelity) coarsens its own note's curve; the other note's stays as drawn")
    func timbreIsPerNote() throws {
        let shape = Shape(name: "article-curve", points: CurveTests.articleCurve, duration: 1, minFrequency: 20,
                          maxFrequency: 1000, wave: .sine, amplitude: 0.5, fidelity: 500)
        let at = Bench.seconds(0.9)
        func play(turning: Bool) throws -> (left: [Float], right: [Float]) {
            let e = try Self.engine([shape], zones: MPEZones(lower: 15, upper: 0), map: Self.mpeMap())
            var events: [(frame: Int, message: MIDIMessage)] = [(0, Self.left(1)), (0, Self.right(2)),
                                                                (0, .on(69, channel: 1)), (0, .on(69, channel: 2))]
            if turning { events.append((at, .cc(74, 0, channel: 1))) }
            return Self.stereo(e, events, seconds: 1.5)
        }
        let turned = try play(turning: true), untouched = try play(turning: false)
        // Second pass (from 1 s): at 0.231 s into it, N = 1 reads the straight line 54 → 360 Hz.
        let left = Signal.frequencyTrack(turned.left, sampleRate: Self.rate)
        let right = Signal.frequencyTrack(turned.right, sampleRate: Self.rate)
        let coarse = try #require(Signal.frequency(at: 1.231, track: left))
        let drawn = try #require(Signal.frequency(at: 1.231, track: right))
        #expect(abs(coarse - (54 + 306 * 0.231)) < 12, "the turned note: \(coarse) Hz")
        #expect(drawn > 430, "the other note: \(drawn) Hz, drawn 460 Hz")
        // In the first pass, before the knob, both notes were the same drawn curve.
        let firstPass = try #require(Signal.frequency(at: 0.231, track: left))
        #expect(firstPass > 430, "\(firstPass) Hz")
        let difference = zip(turned.right, untouched.right).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 1e-6, "the other note changed by up to \(difference)")
    }

    @Test("polyphonic key pressure (polypressure amplitude) sets one note's level among the notes of one channel")
    func polyPressureIsPerVoice() throws {
        let map = try ControllerMapFile.parse("polypressure amplitude 0 1")
        let e = try Self.engine(map: map)  // no MPE: both notes on channel 1
        let at = Bench.seconds(0.2)
        let x = Signal.left(OfflineRenderer(engine: e).renderAll([
            TimedMIDIMessage(frame: 0, message: .on(57)), TimedMIDIMessage(frame: 0, message: .on(81)),
            TimedMIDIMessage(frame: Int64(at), message: .polyPressure(channel: 0, note: 81, pressure: 64)),
        ], totalFrames: Bench.seconds(0.5)))
        let before = Bench.seconds(0.05)..<at, after = Bench.seconds(0.25)..<Bench.seconds(0.5)
        func level(_ f: Double, _ range: Range<Int>) -> Double { Signal.amplitude(x, at: f, sampleRate: Self.rate, in: range) }
        let pressedRatio = level(880, after) / level(880, before)
        let otherRatio = level(220, after) / level(220, before)
        #expect(abs(pressedRatio - 64.0 / 127) < 0.01, "the pressed key's note × \(pressedRatio), expected × \(64.0 / 127)")
        #expect(abs(otherRatio - 1) < 0.005, "the other note × \(otherRatio)")
    }

    // MARK: - The manager speaks for its zone

    @Test("a program change on the manager channel reaches every member; a channel outside the zone keeps its preset")
    func managerProgramChange() throws {
        let e = try Self.engine([Self.a440, Bench.tone(660, program: 1)], zones: MPEZones(lower: 7, upper: 0))
        let (l, r) = Self.stereo(e, [(0, .programChange(channel: 0, program: 1)),
                                     (0, Self.left(7)), (0, Self.right(10)),
                                     (0, .on(69, channel: 7)), (0, .on(69, channel: 10))], seconds: 0.3)
        try Self.expectFrequency(l, from: 0.05, to: 0.3, is: 660, "channel 8, the zone's last member")
        try Self.expectFrequency(r, from: 0.05, to: 0.3, is: 440, "channel 11, outside the zone")
    }

    @Test("the manager's sustain pedal holds the notes of every member; releasing it lets them go")
    func managerSustain() throws {
        let e = try Self.engine(zones: MPEZones(lower: 15, upper: 0))
        let (l, _) = Self.stereo(e, [(0, .cc(64, 127, channel: 0)), (0, .on(69, channel: 4)),
                                     (Bench.seconds(0.1), .off(69, channel: 4)),
                                     (Bench.seconds(0.3), .cc(64, 0, channel: 0))], seconds: 0.5)
        #expect(Signal.rms(l, in: Bench.seconds(0.2)..<Bench.seconds(0.3)) > 0.05, "the note stopped with the pedal down")
        #expect(Signal.peak(l, in: Bench.seconds(0.45)..<Bench.seconds(0.5)) < 1e-4, "the note still sounds after the pedal came up")
    }

    // MARK: - Outside MPE

    @Test("outside MPE nothing changes: channel 2 bends ±2, a program change stays on its channel, unmapped pressure does nothing")
    func ordinaryChannels() throws {
        func play(pressure: Bool) throws -> (left: [Float], right: [Float]) {
            let e = try Self.engine([Self.a440, Bench.tone(660, program: 1)])
            var events: [(frame: Int, message: MIDIMessage)] = [
                (0, .programChange(channel: 0, program: 1)), (0, Self.left(1)), (0, Self.bend(4096, channel: 1)), (0, .on(69, channel: 1)),
            ]
            if pressure {
                events += [(100, .channelPressure(channel: 1, pressure: 10)), (101, .polyPressure(channel: 1, note: 69, pressure: 5))]
            }
            #expect(e.zones == .off)
            return Self.stereo(e, events, seconds: 0.3)
        }
        let plain = try play(pressure: false)
        try Self.expectFrequency(plain.left, from: 0.05, to: 0.3, is: Self.hz(1), "channel 2 bent half way at ±2")
        #expect(try play(pressure: true).left == plain.left)
    }
}
