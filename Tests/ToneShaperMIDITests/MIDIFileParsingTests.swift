import Testing
@testable import ToneShaperMIDI

@Suite("Reading Standard MIDI Files")
struct MIDIFileParsingTests {
    @Test("a format 0 file yields its header fields and every event at its absolute tick")
    func formatZero() throws {
        let bytes = SMFBytes.file(format: 0, division: 96, tracks: [[
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,   // tempo 500000
            0x00, 0xC1, 0x05,                           // program 5, channel 1
            0x10, 0x91, 0x3C, 0x64,                     // +16: note on C4 vel 100
            0x60, 0x81, 0x3C, 0x40,                     // +96: note off
            0x00, 0xFF, 0x2F, 0x00,
        ]])
        let file = try MIDIFile.parse(bytes)
        #expect(file.format == .singleTrack)
        #expect(file.division == .ticksPerQuarterNote(96))
        #expect(file.tracks.count == 1)
        #expect(file.tracks[0].events == [
            .init(tick: 0, kind: .tempo(microsecondsPerQuarter: 500_000)),
            .init(tick: 0, kind: .channel(.programChange(channel: 1, program: 5))),
            .init(tick: 16, kind: .channel(.noteOn(channel: 1, note: 60, velocity: 100))),
            .init(tick: 112, kind: .channel(.noteOff(channel: 1, note: 60, velocity: 64))),
            .init(tick: 112, kind: .endOfTrack),
        ])
    }

    @Test("a format 1 file keeps its tracks apart, each with its own ticks")
    func formatOne() throws {
        let bytes = SMFBytes.file(format: 1, division: 480, tracks: [
            [0x00, 0xFF, 0x03, 0x03, 0x41, 0x42, 0x43] + SMFBytes.endOfTrack,     // name "ABC"
            [0x83, 0x60, 0x90, 0x40, 0x50, 0x00, 0xFF, 0x2F, 0x00],             // +480 note on
            [0x81, 0x70, 0xB2, 0x07, 0x64] + SMFBytes.endOfTrack,               // +240 CC 7 ch 2
        ])
        let file = try MIDIFile.parse(bytes)
        #expect(file.format == .simultaneousTracks)
        #expect(file.tracks.count == 3)
        #expect(file.tracks[0].events.first == .init(tick: 0, kind: .meta(type: 0x03, data: Array("ABC".utf8))))
        #expect(file.tracks[1].events == [
            .init(tick: 480, kind: .channel(.noteOn(channel: 0, note: 0x40, velocity: 0x50))),
            .init(tick: 480, kind: .endOfTrack),
        ])
        #expect(channelMessages(file.tracks[2]) == [.controlChange(channel: 2, controller: 7, value: 100)])
        #expect(file.tracks[2].lastTick == 240)
    }

    @Test("running status reuses the last channel status for 2-byte and 1-byte messages")
    func runningStatus() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0x90, 0x3C, 0x40,
            0x00, 0x40, 0x41,          // running note on
            0x0A, 0x3C, 0x00,          // running note on, velocity 0
            0x00, 0xC3, 0x07,
            0x00, 0x08,                // running program change: one data byte
            0x00, 0xE0, 0x00, 0x40,
            0x05, 0x7F, 0x7F,          // running pitch bend: maximum
        ] + SMFBytes.endOfTrack]))
        #expect(channelMessages(file.tracks[0]) == [
            .noteOn(channel: 0, note: 60, velocity: 64),
            .noteOn(channel: 0, note: 64, velocity: 65),
            .noteOff(channel: 0, note: 60, velocity: 64),
            .programChange(channel: 3, program: 7),
            .programChange(channel: 3, program: 8),
            .pitchBend(channel: 0, value: 0),
            .pitchBend(channel: 0, value: 8191),
        ])
        #expect(file.tracks[0].events.map(\.tick) == [0, 0, 10, 10, 10, 10, 15, 15])
    }

    @Test("a note-on with velocity 0 reads as a note-off, with or without running status")
    func velocityZeroIsNoteOff() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0x95, 0x45, 0x00,
            0x00, 0x95, 0x45, 0x01,
            0x00, 0x45, 0x00,
        ] + SMFBytes.endOfTrack]))
        #expect(channelMessages(file.tracks[0]) == [
            .noteOff(channel: 5, note: 0x45, velocity: 64),
            .noteOn(channel: 5, note: 0x45, velocity: 1),
            .noteOff(channel: 5, note: 0x45, velocity: 64),
        ])
    }

    @Test("running status continues across a meta, a sysex and an escape event, as mido reads it")
    func runningStatusAcrossMetaAndSysex() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0x90, 0x3C, 0x40,
            0x00, 0xFF, 0x06, 0x00,          // marker
            0x00, 0x3E, 0x41,                // data bytes: still 0x90
            0x00, 0xF0, 0x01, 0xF7,          // sysex
            0x00, 0x3F, 0x42,
            0x00, 0xF7, 0x01, 0xF8,          // escape
            0x00, 0x40, 0x43,
            0x00, 0xC5, 0x01,
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,
            0x00, 0x02,                      // a 1-byte message continues too: program 2 on channel 5
        ] + SMFBytes.endOfTrack]))
        #expect(channelMessages(file.tracks[0]) == [
            .noteOn(channel: 0, note: 0x3C, velocity: 0x40), .noteOn(channel: 0, note: 0x3E, velocity: 0x41),
            .noteOn(channel: 0, note: 0x3F, velocity: 0x42), .noteOn(channel: 0, note: 0x40, velocity: 0x43),
            .programChange(channel: 5, program: 1), .programChange(channel: 5, program: 2),
        ])
        #expect(file.tracks[0].eventCount == 11)
    }

    @Test("the pattern of freedink-data's 104.mid reads: notes under running status 0x92 around an empty text event")
    func freedink104Pattern() throws {
        // Bytes 0x1B38...0x1B4B of track 4 of that file: note on, delta 240, empty text, two more notes.
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 480, tracks: [[
            0x00, 0x92, 0x2D, 0x64, 0x81, 0x70, 0xFF, 0x01, 0x00, 0x00, 0x3D, 0x64, 0x00, 0x39, 0x64,
            0x81, 0x70, 0x82, 0x2D, 0x7F,
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events.filter { if case .channel = $0.kind { true } else { false } }.map(\.tick) == [0, 240, 240, 480])
        #expect(channelMessages(file.tracks[0]) == [
            .noteOn(channel: 2, note: 0x2D, velocity: 0x64), .noteOn(channel: 2, note: 0x3D, velocity: 0x64),
            .noteOn(channel: 2, note: 0x39, velocity: 0x64), .noteOff(channel: 2, note: 0x2D, velocity: 0x7F),
        ])
    }

    @Test("a data byte with no channel status before it in its track is still refused")
    func runningStatusNeedsAChannelStatus() {
        let afterMetaOnly = SMFBytes.file(format: 0, tracks: [[0x00, 0xFF, 0x06, 0x00, 0x00, 0x3E, 0x40] + SMFBytes.endOfTrack])
        let afterSysexOnly = SMFBytes.file(format: 0, tracks: [[0x00, 0xF0, 0x01, 0xF7, 0x00, 0x3E, 0x40] + SMFBytes.endOfTrack])
        for bytes in [afterMetaOnly, afterSysexOnly] {
            #expect(parseError(bytes)?.message == "data byte 0x3E without running status in track 1")
        }
    }

    @Test("F0 sysex and F7 escape events keep their payload bytes")
    func sysexEvents() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7,
            0x00, 0xF0, 0x02, 0x43, 0x12,          // first packet of a split sysex
            0x20, 0xF7, 0x02, 0x00, 0xF7,          // its continuation
            0x00, 0xF7, 0x01, 0xFA,                // an escaped real-time byte
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events.map(\.kind) == [
            .sysex(data: [0x7E, 0x7F, 0x09, 0x01, 0xF7]),
            .sysex(data: [0x43, 0x12]),
            .sysexEscape(data: [0x00, 0xF7]),
            .sysexEscape(data: [0xFA]),
            .endOfTrack,
        ])
        #expect(file.tracks[0].events[2].tick == 32)
    }

    @Test("chunks of unknown type are skipped wherever they appear, and a longer MThd is accepted")
    func unknownChunksSkipped() throws {
        var bytes = Array("MThd".utf8) + [0, 0, 0, 8, 0, 1, 0, 2, 0x01, 0xE0, 0xAA, 0xBB]
        bytes += SMFBytes.chunk("XFIH", [1, 2, 3, 0xFF, 0x90])
        bytes += SMFBytes.track([0x00, 0x90, 0x30, 0x30] + SMFBytes.endOfTrack)
        bytes += SMFBytes.chunk("XFKM", [])
        bytes += SMFBytes.track([0x00, 0x91, 0x31, 0x31] + SMFBytes.endOfTrack)
        let file = try MIDIFile.parse(bytes)
        #expect(file.division == .ticksPerQuarterNote(480))
        #expect(file.tracks.map(channelMessages) == [
            [.noteOn(channel: 0, note: 0x30, velocity: 0x30)],
            [.noteOn(channel: 1, note: 0x31, velocity: 0x31)],
        ])
    }

    @Test("bytes after End of Track, and after the last declared track, are ignored")
    func trailingBytesIgnored() throws {
        let bytes = SMFBytes.file(format: 0, tracks: [SMFBytes.endOfTrack + [0x00, 0xF4, 0x99]]) + [0xDE, 0xAD]
        let file = try MIDIFile.parse(bytes)
        #expect(file.tracks[0].events == [.init(tick: 0, kind: .endOfTrack)])
    }

    @Test("a track without End of Track ends at its last event; an empty track has no events")
    func missingEndOfTrack() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, tracks: [[0x40, 0xB0, 0x40, 0x7F], []]))
        #expect(file.tracks[0].events == [.init(tick: 64, kind: .channel(.controlChange(channel: 0, controller: 64, value: 127)))])
        #expect(file.tracks[1].events.isEmpty)
        #expect(file.tracks[0].lastTick == 64)
    }

    @Test("meta events other than tempo and end of track are kept raw, including zero-length ones")
    func otherMetaEvents() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0xFF, 0x58, 0x04, 0x04, 0x02, 0x18, 0x08,   // time signature 4/4
            0x00, 0xFF, 0x01, 0x00,                           // empty text
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events.map(\.kind) == [
            .meta(type: 0x58, data: [4, 2, 24, 8]), .meta(type: 0x01, data: []), .endOfTrack,
        ])
    }

    @Test("format 2 and SMPTE division are read, not rejected")
    func formatTwoAndSMPTE() throws {
        let bytes = SMFBytes.file(format: 2, division: 0xE728, tracks: [SMFBytes.endOfTrack, SMFBytes.endOfTrack])
        let file = try MIDIFile.parse(bytes)
        #expect(file.format == .sequentialTracks)
        #expect(file.division == .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        #expect(file.tracks.count == 2)
    }

    @Test("every channel-voice kind decodes from the file with its channel")
    func allChannelKinds() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0x8F, 0x01, 0x02, 0x00, 0x9E, 0x03, 0x04, 0x00, 0xAD, 0x05, 0x06, 0x00, 0xBC, 0x07, 0x08,
            0x00, 0xCB, 0x09, 0x00, 0xDA, 0x0A, 0x00, 0xE9, 0x00, 0x00,
        ] + SMFBytes.endOfTrack]))
        #expect(channelMessages(file.tracks[0]) == [
            .noteOff(channel: 15, note: 1, velocity: 2), .noteOn(channel: 14, note: 3, velocity: 4),
            .polyPressure(channel: 13, note: 5, pressure: 6), .controlChange(channel: 12, controller: 7, value: 8),
            .programChange(channel: 11, program: 9), .channelPressure(channel: 10, pressure: 10),
            .pitchBend(channel: 9, value: -8192),
        ])
    }
}
