import Testing
@testable import ToneShaperMIDI

/// Whatever a file leaves on, the performance read from it ends with nothing sounding.
@Suite("No note is left hanging at the end")
struct HeldNotesTests {
    static let eot = SMFBytes.endOfTrack

    @Test("a note never turned off gets a note-off at the end of the performance, after everything else")
    func unclosedNote() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x00, 0x90, 0x3C, 0x40,
            0x00, 0x90, 0x40, 0x40,
            0x83, 0x60, 0x80, 0x40, 0x00,          // tick 480: only E4 ends
            0x83, 0x60, 0xFF, 0x2F, 0x00,          // end of track at tick 960 = 1 s
        ]]))
        #expect(file.timedMessages(sampleRate: 1_000) == [
            TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 0x3C, velocity: 0x40)),
            TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 0x40, velocity: 0x40)),
            TimedMIDIMessage(frame: 500, message: .noteOff(channel: 0, note: 0x40, velocity: 0)),
            TimedMIDIMessage(frame: 1_000, message: .noteOff(channel: 0, note: 0x3C, velocity: 64)),
        ])
        #expect(file.durationSeconds == 1)
    }

    @Test("notes whose note-offs come after a mid-track End of Track are closed at the performance's end")
    func notesCutByEndOfTrack() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 480, tracks: [
            [0x00, 0x91, 0x30, 0x40, 0x00, 0x35, 0x40, 0x81, 0x70, 0xFF, 0x2F, 0x00,   // EOT at tick 240
             0x81, 0x70, 0x30, 0x00, 0x00, 0x35, 0x00],                             // ignored: after EOT
            [0x87, 0x40, 0x92, 0x24, 0x40, 0x00, 0x24, 0x00] + Self.eot,             // tick 960 = 1 s
        ]))
        #expect(file.tracks[0].eventCount == 3)
        let timed = file.timedMessages(sampleRate: 1_000)
        #expect(timed.suffix(2) == [
            TimedMIDIMessage(frame: 1_000, message: .noteOff(channel: 1, note: 0x30, velocity: 64)),
            TimedMIDIMessage(frame: 1_000, message: .noteOff(channel: 1, note: 0x35, velocity: 64)),
        ])
        #expect(timed.count == 6)
    }

    @Test("keys close low to high and channel by channel, each channel's held pedal released after its keys")
    func closingOrder() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0xB3, 0x40, 0x7F,                // pedal down on channel 3
            0x00, 0x93, 0x50, 0x40, 0x00, 0x20, 0x40,
            0x00, 0x80, 0x10, 0x00,                // a note-off for a key never on: nothing to close
            0x00, 0x90, 0x7F, 0x40,
            0x00, 0xB5, 0x40, 0x40,                // pedal down on channel 5 (64 counts as down)
        ] + Self.eot]))
        #expect(file.timedMessages(sampleRate: 1_000).suffix(5).map(\.message) == [
            .noteOff(channel: 0, note: 0x7F, velocity: 64),
            .noteOff(channel: 3, note: 0x20, velocity: 64), .noteOff(channel: 3, note: 0x50, velocity: 64),
            .controlChange(channel: 3, controller: 64, value: 0),
            .controlChange(channel: 5, controller: 64, value: 0),
        ])
    }

    @Test("note-offs, velocity-0 note-ons, All Notes Off, All Sound Off, pedal up and Reset All Controllers end what they end")
    func whatEndsANote() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0x90, 0x3C, 0x40, 0x00, 0x80, 0x3C, 0x00,        // note-off
            0x00, 0x90, 0x3D, 0x40, 0x00, 0x3D, 0x00,              // note-on velocity 0
            0x00, 0x91, 0x3C, 0x40, 0x00, 0x3D, 0x40, 0x00, 0xB1, 0x7B, 0x00,   // All Notes Off on channel 1
            0x00, 0x92, 0x3C, 0x40, 0x00, 0xB2, 0x78, 0x00,        // All Sound Off on channel 2
            0x00, 0x93, 0x3C, 0x40, 0x00, 0xB3, 0x7F, 0x00,        // Poly Mode On implies All Notes Off
            0x00, 0xB4, 0x40, 0x7F, 0x00, 0x40, 0x3F,              // pedal down then up (63)
            0x00, 0xB5, 0x40, 0x7F, 0x00, 0x79, 0x00,              // pedal down then Reset All Controllers
            0x00, 0xB6, 0x7B, 0x00, 0x00, 0x96, 0x3C, 0x40,        // All Notes Off before the note: it stays on
        ] + Self.eot]))
        let timed = file.timedMessages(sampleRate: 1_000)
        #expect(timed.last?.message == .noteOff(channel: 6, note: 0x3C, velocity: 64))
        #expect(timed.count == 17 + 1)   // 17 from the file, 1 closing
    }

    @Test("a file that ends everything itself gets nothing added")
    func nothingAdded() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [[
            0x00, 0xB0, 0x40, 0x7F, 0x00, 0x90, 0x3C, 0x40, 0x10, 0x80, 0x3C, 0x40, 0x10, 0xB0, 0x40, 0x00,
        ] + Self.eot]))
        #expect(file.timedMessages(sampleRate: 1_000).count == 4)
    }

    @Test("format 2 closes once, at the end of its last pattern")
    func formatTwo() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 2, division: 480, tracks: [
            [0x00, 0x90, 0x30, 0x40, 0x83, 0x60, 0xFF, 0x2F, 0x00],   // 0.5 s, note left on
            [0x83, 0x60, 0xFF, 0x2F, 0x00],                           // another 0.5 s
        ]))
        #expect(file.timedMessages(sampleRate: 1_000).last == TimedMIDIMessage(frame: 1_000, message: .noteOff(channel: 0, note: 0x30, velocity: 64)))
    }
}
