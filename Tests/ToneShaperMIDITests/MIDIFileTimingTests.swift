import Testing
@testable import ToneShaperMIDI

@Suite("From ticks to sample frames")
struct MIDIFileTimingTests {
    static let tempo60: [UInt8] = [0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40]   // 1,000,000 µs per quarter

    @Test("without a tempo event a quarter note lasts 0.5 s (120 bpm)")
    func defaultTempo() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x83, 0x60, 0x90, 0x3C, 0x40,   // tick 480
            0x83, 0x60, 0x80, 0x3C, 0x40,   // tick 960
        ] + SMFBytes.endOfTrack]))
        #expect(file.fileMessages(sampleRate: 48_000).map(\.frame) == [24_000, 48_000])
        #expect(file.durationSeconds == 1.0)
    }

    @Test("a change from 120 to 60 bpm at tick 960 doubles the length of the ticks after it only")
    func tempoChangeMidFile() throws {
        // 480 ticks per quarter. Ticks 0..960 at 0.5 s per quarter: tick 480 = 0.5 s, tick 960 = 1 s.
        // From tick 960 at 1 s per quarter: tick 1200 = 1.5 s, tick 1440 = 2 s, tick 1920 = 3 s.
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x83, 0x60, 0x90, 0x3C, 0x40,        // 480
            0x83, 0x60] + Self.tempo60 + [       // 960: 60 bpm
            0x00, 0x90, 0x3E, 0x40,              // 960
            0x81, 0x70, 0x90, 0x40, 0x40,        // 1200
            0x81, 0x70, 0x90, 0x41, 0x40,        // 1440
            0x83, 0x60, 0xFF, 0x2F, 0x00,        // 1920
        ]]))
        #expect(file.fileMessages(sampleRate: 48_000).map(\.frame) == [24_000, 48_000, 72_000, 96_000])
        #expect(file.fileMessages(sampleRate: 44_100).map(\.frame) == [22_050, 44_100, 66_150, 88_200])
        #expect(file.durationSeconds == 3.0)
    }

    @Test("in format 1 a tempo event in any track changes the time of every track")
    func tempoMapMergedAcrossTracks() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 96, tracks: [
            [0x00, 0x90, 0x30, 0x40, 0x81, 0x40, 0x90, 0x31, 0x40] + SMFBytes.endOfTrack,   // ticks 0, 192
            [0x60] + Self.tempo60 + SMFBytes.endOfTrack,                                    // tick 96: 60 bpm
        ]))
        // tick 96 = 0.5 s, then 1 s per quarter: tick 192 = 1.5 s.
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [0, 1_500])
    }

    @Test("two tempo events at the same tick: the later one in track then file order wins")
    func sameTickTempoEvents() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 96, tracks: [
            [0x00, 0xFF, 0x51, 0x03, 0x03, 0xD0, 0x90] + SMFBytes.endOfTrack,   // 250000 (240 bpm) at 0
            [0x00] + Self.tempo60 + [0x60, 0x90, 0x30, 0x40] + SMFBytes.endOfTrack,
        ]))
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [1_000])
    }

    @Test("a tempo event longer than 3 bytes is read from its first 3, as mido reads it")
    func longTempoEvent() throws {
        // 4 bytes: 0F 42 40 (60 bpm) then a stray 0x99.
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x00, 0xFF, 0x51, 0x04, 0x0F, 0x42, 0x40, 0x99,
            0x83, 0x60, 0x90, 0x3C, 0x40,        // tick 480
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events.first?.kind == .tempo(microsecondsPerQuarter: 1_000_000))
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [1_000])
    }

    @Test("a tempo event shorter than 3 bytes is kept raw and changes nothing")
    func shortTempoEvent() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x00, 0xFF, 0x51, 0x02, 0x0F, 0x42,
            0x00, 0xFF, 0x51, 0x00,
            0x83, 0x60, 0x90, 0x3C, 0x40,        // tick 480: 0.5 s at the default 120 bpm
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events.prefix(2).map(\.kind) == [.meta(type: 0x51, data: [0x0F, 0x42]), .meta(type: 0x51, data: [])])
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [500])
        #expect(file.durationSeconds == 0.5)
    }

    @Test("a tempo of 0 is ignored: the tempo before it stays, and time keeps moving")
    func zeroTempo() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 480, tracks: [[
            0x00] + Self.tempo60 + [             // 60 bpm
            0x83, 0x60, 0xFF, 0x51, 0x03, 0x00, 0x00, 0x00,   // tick 480: tempo 0
            0x00, 0x90, 0x3C, 0x40,              // tick 480 = 1 s
            0x83, 0x60, 0x80, 0x3C, 0x40,        // tick 960 = 2 s, still 60 bpm
        ] + SMFBytes.endOfTrack]))
        #expect(file.tracks[0].events[1] == .init(tick: 480, kind: .tempo(microsecondsPerQuarter: 0)))
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [1_000, 2_000])
        #expect(file.durationSeconds == 2)
    }

    @Test("a tempo of 0 at the same tick as another tempo does not replace it")
    func zeroTempoAtSameTick() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 96, tracks: [
            [0x00] + Self.tempo60 + SMFBytes.endOfTrack,
            [0x00, 0xFF, 0x51, 0x03, 0x00, 0x00, 0x00, 0x60, 0x90, 0x30, 0x40] + SMFBytes.endOfTrack,
        ]))
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [1_000])
    }

    @Test("a format 0 file with three tracks plays them together through one tempo map, as format 1")
    func formatZeroWithSeveralTracks() throws {
        let bytes = SMFBytes.header(format: 0, tracks: 3, division: 96)
            + SMFBytes.track([0x60] + Self.tempo60 + SMFBytes.endOfTrack)                          // tick 96: 60 bpm
            + SMFBytes.track([0x00, 0x90, 0x30, 0x40, 0x81, 0x40, 0x80, 0x30, 0x40] + SMFBytes.endOfTrack)   // 0, 192
            + SMFBytes.track([0x60, 0x91, 0x31, 0x40, 0x60, 0x81, 0x31, 0x40] + SMFBytes.endOfTrack)         // 96, 192
        let file = try MIDIFile.parse(bytes)
        #expect(file.format == .singleTrack && file.tracks.count == 3)
        // tick 96 = 0.5 s, then 1 s per quarter: tick 192 = 1.5 s.
        let timed = file.fileMessages(sampleRate: 1_000)
        #expect(timed.map(\.frame) == [0, 500, 1_500, 1_500])
        #expect(timed.map(\.message) == [
            .noteOn(channel: 0, note: 0x30, velocity: 0x40), .noteOn(channel: 1, note: 0x31, velocity: 0x40),
            .noteOff(channel: 0, note: 0x30, velocity: 0x40), .noteOff(channel: 1, note: 0x31, velocity: 0x40),
        ])
        #expect(file.durationSeconds == 1.5)
        #expect(try MIDIFile.parse(SMFBytes.header(format: 0, tracks: 0, division: 96)).tracks.isEmpty)
    }

    @Test("tracks merge in time order; equal ticks keep track order, then file order")
    func mergeOrder() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 480, tracks: [
            [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + SMFBytes.endOfTrack,
            [0x00, 0x90, 0x01, 0x01, 0x83, 0x60, 0x90, 0x04, 0x04, 0x00, 0x80, 0x04, 0x00] + SMFBytes.endOfTrack,
            [0x00, 0x91, 0x02, 0x02, 0x81, 0x70, 0x91, 0x03, 0x03, 0x81, 0x70, 0x91, 0x05, 0x05] + SMFBytes.endOfTrack,
        ]))
        let timed = file.fileMessages(sampleRate: 48_000)
        #expect(timed.map(\.message) == [
            .noteOn(channel: 0, note: 1, velocity: 1),    // track 1, tick 0
            .noteOn(channel: 1, note: 2, velocity: 2),    // track 2, tick 0
            .noteOn(channel: 1, note: 3, velocity: 3),    // track 2, tick 240
            .noteOn(channel: 0, note: 4, velocity: 4),    // track 1, tick 480
            .noteOff(channel: 0, note: 4, velocity: 0),   // track 1, tick 480, after the note-on
            .noteOn(channel: 1, note: 5, velocity: 5),    // track 2, tick 480
        ])
        #expect(timed.map(\.frame) == [0, 0, 12_000, 24_000, 24_000, 24_000])
    }

    @Test("SMPTE division: 25 fps × 40 ticks is one tick per millisecond, and tempo events do not apply")
    func smpteDivision() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 0xE728, tracks: [
            [0x00] + Self.tempo60 + [0x8B, 0x5C, 0x90, 0x3C, 0x40] + SMFBytes.endOfTrack,   // tick 1500
        ]))
        #expect(file.fileMessages(sampleRate: 44_100).map(\.frame) == [66_150])
        #expect(file.durationSeconds == 1.5)
    }

    @Test("SMPTE 29 means 29.97 drop-frame: 30 frames take 1.001 s")
    func smpteDropFrame() throws {
        // 29 fps (0xE3), 100 ticks per frame: tick 30000 = 300 frames = 10.01 s.
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 0xE364, tracks: [
            [0x81, 0xEA, 0x30, 0x90, 0x3C, 0x40] + SMFBytes.endOfTrack,
        ]))
        #expect(file.fileMessages(sampleRate: 48_000).map(\.frame) == [480_480])
    }

    @Test("format 2 plays its tracks one after another, each through its own tempo")
    func formatTwoSequential() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 2, division: 480, tracks: [
            // 60 bpm: note at tick 480 = 1 s, ends at tick 960 = 2 s.
            [0x00] + Self.tempo60 + [0x83, 0x60, 0x90, 0x30, 0x40, 0x83, 0x60, 0xFF, 0x2F, 0x00],
            // default 120 bpm: note at tick 0 and 480, starting where the first track ended.
            [0x00, 0x90, 0x31, 0x40, 0x83, 0x60, 0x90, 0x32, 0x40] + SMFBytes.endOfTrack,
        ]))
        #expect(file.fileMessages(sampleRate: 1_000).map(\.frame) == [1_000, 2_000, 2_500])
        #expect(file.durationSeconds == 2.5)
    }

    @Test("duration is the time of the latest event in any track, end of track included")
    func duration() throws {
        let file = try MIDIFile.parse(SMFBytes.file(format: 1, division: 480, tracks: [
            [0x00, 0x90, 0x30, 0x40, 0x87, 0x40, 0xFF, 0x2F, 0x00],   // EOT at 960 = 1 s
            [0x8F, 0x00, 0xFF, 0x2F, 0x00],                           // EOT at 1920 = 2 s
        ]))
        #expect(file.durationSeconds == 2.0)
        #expect(try MIDIFile.parse(SMFBytes.file(format: 1, tracks: [])).durationSeconds == 0)
    }

    @Test("absurd ticks saturate the frame instead of trapping")
    func saturatingFrames() throws {
        // Slowest tempo, 1 tick per quarter, two maximal deltas: about 9e3 s per tick.
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, division: 1, tracks: [[
            0x00, 0xFF, 0x51, 0x03, 0xFF, 0xFF, 0xFF,
            0xFF, 0xFF, 0xFF, 0x7F, 0x90, 0x3C, 0x40,
        ] + Array(repeating: [0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0x01, 0x00], count: 1_000).flatMap { $0 }
          + [0x00, 0x90, 0x3C, 0x00]]))
        let frames = file.fileMessages(sampleRate: 1e12).map(\.frame)
        #expect(frames == [Int64.max, Int64.max])
        #expect(sampleFrame(atSeconds: .nan, sampleRate: 1) == Int64.max)
    }

    /// Division 1, tempo 0xFFFFFF, then 20,000 note events each 0x0FFFFFFF ticks after the last:
    /// about 9e13 s, which at 192 kHz is more frames than an Int holds.
    static func hugeFile(events: Int) -> [UInt8] {
        let delta: [UInt8] = [0xFF, 0xFF, 0xFF, 0x7F]
        var body: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0xFF, 0xFF, 0xFF, 0x00, 0x90, 0x3C, 0x40]
        for i in 1..<events { body += delta + [0x3C, i.isMultiple(of: 2) ? 0x00 : 0x40] }   // on, on, off, ..., on
        return SMFBytes.file(format: 0, division: 1, tracks: [body + delta + [0xFF, 0x2F, 0x00]])
    }

    @Test("a performance longer than an Int of frames: durationSeconds is huge, finite and exact, and nothing traps")
    func performanceTooLongForFrames() throws {
        let file = try MIDIFile.parse(Self.hugeFile(events: 20_000))
        let ticks = 20_000 * 0x0FFF_FFFF    // the last note at 19,999 deltas, End of Track one more
        #expect(file.tracks[0].lastTick == ticks)
        let exact = Double(ticks) * 16.777215   // seconds: ticks × 0xFFFFFF µs
        let duration = file.durationSeconds
        #expect(duration.isFinite && abs(duration - exact) <= exact * 1e-15)
        #expect(duration > 9e13 && duration * 192_000 > Double(Int.max))

        // At 48 kHz every frame still fits: the first delta lands on the exact frame, ±1 for rounding.
        let at48k = file.timedMessages(sampleRate: 48_000)
        let firstDeltaFrames = 0x0FFF_FFFF * 0xFF_FFFF * 6 / 125   // ticks × µs per tick × 48000 / 1e6
        #expect(abs(at48k[1].frame - Int64(firstDeltaFrames)) <= 1)
        // At 192 kHz the later frames saturate instead of trapping, order is kept, and the note
        // left on by the last event is closed at the (saturated) end.
        let at192k = file.timedMessages(sampleRate: 192_000)
        #expect(at192k.count == 20_000 + 1)
        #expect(zip(at192k, at192k.dropFirst()).allSatisfy { $0.frame <= $1.frame })
        #expect(at192k.last == TimedMIDIMessage(frame: Int64.max, message: .noteOff(channel: 0, note: 0x3C, velocity: 64)))
        #expect(at192k.filter { $0.frame == Int64.max }.count > 1_000)
    }

    @Test("ticks near Int.max convert to finite seconds")
    func clockAtExtremeTicks() {
        let clock = TickClock(division: .ticksPerQuarterNote(1),
                              tempoChanges: [(tick: 0, microsecondsPerQuarter: 0xFF_FFFF), (tick: Int.max - 1, microsecondsPerQuarter: 1)])
        #expect(clock.seconds(atTick: Int.max).isFinite)
        #expect(clock.seconds(atTick: Int.max - 1) > 1.5e20)   // 2^63 ticks of 16.8 s, the last one 1 µs
        #expect(TickClock(division: .smpte(framesPerSecond: 29, ticksPerFrame: 1), tempoChanges: []).seconds(atTick: Int.max).isFinite)
    }
}
