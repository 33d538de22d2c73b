import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// Controls of single notes (a plugin host's note expressions), on the engine itself.
@Suite("Note controls: single notes released, choked and given their own fidelity")
struct NoteControlTests {
    static func engine(voices: Int = 16) throws -> Engine {
        Engine(library: try PresetLibrary(shapes: [Bench.tone(440)]), configuration: EngineConfiguration(sampleRate: Bench.rate, voices: voices))
    }

    static func peak(_ out: [Float]) -> Float { out.reduce(0) { max($0, abs($1)) } }

    @Test("a release naming every note is a note-off for each: the sustain pedal still holds them, without it they fade")
    func releaseEveryNote() throws {
        for pedal in [true, false] {
            let engine = try Self.engine()
            var events = [EngineEvent(offset: 0, .noteOn(channel: 2, note: 60, velocity: 100)),
                          EngineEvent(offset: 0, .noteOn(channel: 5, note: 67, velocity: 100))]
            if pedal {
                events.append(EngineEvent(offset: 0, .controlChange(channel: 2, controller: 64, value: 127)))
                events.append(EngineEvent(offset: 0, .controlChange(channel: 5, controller: 64, value: 127)))
            }
            events.append(EngineEvent(offset: 4800, .note(NoteControl(.release, channel: -1, key: -1))))
            _ = engine.render(frames: 9600, events: events)
            let after = engine.render(frames: 9600)
            #expect((Self.peak(after) > 0.05) == pedal, pedal ? "the pedal let go of them" : "they still sound")
            #expect(engine.isSounding(part: 2, note: 60) == pedal)
        }
    }

    @Test("a choke stops the note it names within a few milliseconds, and only that note")
    func choke() throws {
        let engine = try Self.engine()
        _ = engine.render(frames: 4800, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 100)),
                                                   EngineEvent(offset: 0, .noteOn(channel: 0, note: 81, velocity: 100))])
        _ = engine.render(frames: 480, events: [EngineEvent(offset: 0, .note(NoteControl(.choke, channel: 0, key: 69)))])
        #expect(!engine.isSounding(part: 0, note: 69))
        #expect(engine.isSounding(part: 0, note: 81))
    }

    @Test("every voice on a fidelity of its own, then a shape chosen on every channel and new notes: the slot pool still serves")
    func privateSlotsKeepThePoolWhole() throws {
        let shapes = [Bench.tone(440, program: 0), Bench.tone(330, program: 1)]
        let engine = Engine(library: try PresetLibrary(shapes: shapes), configuration: EngineConfiguration(sampleRate: Bench.rate, voices: 8))
        var events: [EngineEvent] = []
        for k in 0..<8 { events.append(EngineEvent(offset: 0, .noteOn(channel: UInt8(k % 3), note: UInt8(60 + k), velocity: 90))) }
        for k in 0..<8 { events.append(EngineEvent(offset: 10, .note(NoteControl(.fidelity, channel: k % 3, key: 60 + k, value: Double(5 + k))))) }
        _ = engine.render(frames: 4800, events: events)
        #expect(engine.activeVoiceCount == 8)
        var more: [EngineEvent] = []
        for c in 0..<16 { more.append(EngineEvent(offset: 0, .programChange(channel: UInt8(c), program: 1))) }
        for k in 0..<8 { more.append(EngineEvent(offset: 100, .noteOn(channel: UInt8(k), note: UInt8(50 + k), velocity: 90))) }
        let out = engine.render(frames: 9600, events: more)
        #expect(Self.peak(out) > 0.05)
        #expect(out.allSatisfy { $0.isFinite })
    }
}
