import TestSupport
import Testing
@testable import ToneShaperMIDI

/// Files of tens of millions of notes exist, so what one event costs is part of the design.
@Suite("Events are stored compactly")
struct CompactStorageTests {
    @Test("a stored event is 8 bytes with no reference, and a timed message at most 16")
    func layout() {
        #expect(MemoryLayout<PackedEvent>.size == 8)
        #expect(MemoryLayout<PackedEvent>.stride == 8)
        #expect(MemoryLayout<TimedMIDIMessage>.stride <= 16)
        #expect(_isPOD(PackedEvent.self) && _isPOD(TimedMIDIMessage.self))
    }

    @Test("meta and sysex payloads share one buffer per track, not one array per event")
    func payloadsPooled() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0xFF, 0x01, 0x02, 0x41, 0x42,     // text "AB"
            0x00, 0xF0, 0x02, 0x7E, 0xF7,           // sysex
            0x00, 0xFF, 0x01, 0x00,                 // empty text
            0x00, 0x90, 0x3C, 0x40,
            0x00, 0xF7, 0x01, 0xFA,                 // escape
        ] + SMFBytes.endOfTrack]))
        let track = file.tracks[0]
        #expect(track.payloadBytes == [0x41, 0x42, 0x7E, 0xF7, 0xFA])
        #expect(track.payloadEnds == [2, 4, 4, 5])
        #expect(track.eventCount == 6 && track.packed.count == 6)
        #expect(track.events.map(\.kind) == [
            .meta(type: 0x01, data: [0x41, 0x42]), .sysex(data: [0x7E, 0xF7]), .meta(type: 0x01, data: []),
            .channel(.noteOn(channel: 0, note: 0x3C, velocity: 0x40)), .sysexEscape(data: [0xFA]), .endOfTrack,
        ])
    }

    @Test("a track built from events gives the same events back, ticks and payloads included")
    func eventsRoundTrip() {
        let events: [MIDIFile.Event] = [
            .init(tick: 0, kind: .tempo(microsecondsPerQuarter: 0xFF_FFFF)),
            .init(tick: 0, kind: .channel(.pitchBend(channel: 15, value: -8192))),
            .init(tick: 7, kind: .meta(type: 0x03, data: Array("lead".utf8))),
            .init(tick: 7, kind: .channel(.programChange(channel: 2, program: 127))),
            .init(tick: 4_000_000_000, kind: .sysex(data: [1, 2, 0xF7])),
            .init(tick: 4_000_000_000 + 0x0FFF_FFFF, kind: .channel(.channelPressure(channel: 3, pressure: 9))),
            .init(tick: 4_000_000_000 + 0x0FFF_FFFF, kind: .endOfTrack),
        ]
        let track = MIDIFile.Track(events: events)
        #expect(track.events == events)
        #expect(track.lastTick == 4_000_000_000 + 0x0FFF_FFFF)
        #expect(track == MIDIFile.Track(events: events))
        var edited = track
        edited.events.removeLast()
        #expect(edited.eventCount == 6 && edited != track)
    }

    @Test("a channel message is kept as its MIDI bytes: out-of-range values clamp, velocity 0 is a note-off")
    func channelMessagesAsWireBytes() {
        let track = MIDIFile.Track(events: [
            .init(tick: 0, kind: .channel(.noteOn(channel: 17, note: 200, velocity: 0))),
            .init(tick: 0, kind: .channel(.pitchBend(channel: 0, value: 9_000))),
        ])
        #expect(track.events.map(\.kind) == [
            .channel(.noteOff(channel: 1, note: 127, velocity: 64)), .channel(.pitchBend(channel: 0, value: 8191)),
        ])
    }

    @Test("merging 40 tracks gives the order of a stable sort by tick, then track, then file order")
    func mergeMatchesStableSort() throws {
        var random = SplitMix64(seed: 40)
        var bodies: [[UInt8]] = []
        var expected: [(tick: Int, track: Int, index: Int, note: UInt8)] = []
        for track in 0..<40 {
            var body: [UInt8] = []
            var tick = 0
            for index in 0..<random.next(below: 60) {
                let delta = [0, 0, 1, 3, 200][random.next(below: 5)]   // many equal ticks across tracks
                tick += delta
                let note = UInt8(random.next(below: 128))
                body += VariableLengthQuantity.encode(delta) + [0x90, note, 0x40]
                if random.next(below: 4) == 0 { body += [0x00, 0xFF, 0x01, 0x00] }   // metas in between
                expected.append((tick, track, index, note))
            }
            bodies.append(body + SMFBytes.endOfTrack)
        }
        expected.sort { ($0.tick, $0.track, $0.index) < ($1.tick, $1.track, $1.index) }
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 1, tracks: bodies))
        let timed = file.fileMessages(sampleRate: 2)   // 1 tick = 0.5 s = 1 frame
        #expect(timed.map(\.message) == expected.map { .noteOn(channel: 0, note: $0.note, velocity: 0x40) })
        #expect(timed.map(\.frame) == expected.map { Int64($0.tick) })
    }

    @Test("the result of timedMessages is allocated once, at its final size")
    func resultReservedOnce() throws {
        // 5,000 appends without a reservation end at a capacity of 8,192 or more; reserved, the
        // capacity is the count plus room for closing every key and pedal (16 × 128 + 16).
        let body = (0..<5_000).flatMap { i -> [UInt8] in [0x01, 0x90, UInt8(i % 128), 0x40] }
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [body + SMFBytes.endOfTrack]))
        let timed = file.timedMessages(sampleRate: 48_000)
        #expect(timed.count >= 5_000)
        #expect(timed.capacity <= 5_000 + 16 * 128 + 16)
    }
}
