import TestSupport
import Testing
@testable import ToneShaperMIDI

@Suite("Writing a performance as a MIDI file")
struct MIDIFileWriterTests {
    /// A deterministic little performance touching every message kind, at arbitrary frames.
    static func performance(count: Int, seed: UInt64) -> [TimedMIDIMessage] {
        var random = SplitMix64(seed: seed)
        var frame: Int64 = 0
        return (0..<count).map { _ in
            frame += Int64(random.next(below: 20_000))
            let c = UInt8(random.next(below: 16)), a = UInt8(random.next(below: 128)), b = UInt8(random.next(below: 128))
            let message: MIDIMessage = switch random.next(below: 7) {
            case 0: .noteOn(channel: c, note: a, velocity: max(b, 1))
            case 1: .noteOff(channel: c, note: a, velocity: b)
            case 2: .controlChange(channel: c, controller: a, value: b)
            case 3: .programChange(channel: c, program: a)
            case 4: .pitchBend(channel: c, value: Int16(random.next(below: 16_384)) - 8192)
            case 5: .channelPressure(channel: c, pressure: a)
            default: .polyPressure(channel: c, note: a, pressure: b)
            }
            return TimedMIDIMessage(frame: frame, message: message)
        }
    }

    @Test("the file is format 0 with one track: tempo at tick 0, delta-timed messages, end of track")
    func exactBytes() {
        let bytes = MIDIFileWriter.write([
            TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 60, velocity: 100)),
            TimedMIDIMessage(frame: 24_000, message: .noteOff(channel: 0, note: 60, velocity: 64)),
        ], sampleRate: 48_000)
        #expect(bytes == Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x03, 0xC0]
                + Array("MTrk".utf8) + [0, 0, 0, 20,
                                        0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,
                                        0x00, 0x90, 60, 100,
                                        0x87, 0x40, 0x80, 60, 64,
                                        0x00, 0xFF, 0x2F, 0x00])
    }

    @Test("at a sample-exact resolution, written then parsed gives the same messages at the same frames",
          arguments: [44_100.0, 48_000.0])
    func exactRoundTrip(sampleRate: Double) throws {
        let events = Self.performance(count: 2_000, seed: 7)
        let ticksPerQuarter = try #require(MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: sampleRate))
        let bytes = MIDIFileWriter.write(events, sampleRate: sampleRate, ticksPerQuarter: ticksPerQuarter)
        let back = try MIDIFile.parse(bytes).fileMessages(sampleRate: sampleRate)
        #expect(back == events)
    }

    @Test("at the default 960 ticks per quarter, frames come back within half a tick (12.5 frames at 48 kHz)")
    func defaultResolutionRoundTrip() throws {
        let events = Self.performance(count: 2_000, seed: 11)
        let back = try MIDIFile.parse(MIDIFileWriter.write(events, sampleRate: 48_000)).fileMessages(sampleRate: 48_000)
        #expect(back.map(\.message) == events.map(\.message))
        let worst = zip(back, events).map { abs($0.frame - $1.frame) }.max() ?? 0
        #expect(worst <= 13)
        #expect(worst > 1)   // the default resolution really is coarser than a frame
    }

    @Test("another tempo and resolution round-trip within ±1 frame")
    func otherTempo() throws {
        let events = Self.performance(count: 500, seed: 3)
        let bytes = MIDIFileWriter.write(events, sampleRate: 22_050, ticksPerQuarter: 24_000,
                                         tempoMicrosecondsPerQuarter: 1_000_000)
        let back = try MIDIFile.parse(bytes).fileMessages(sampleRate: 22_050)
        #expect(back.map(\.message) == events.map(\.message))
        #expect(zip(back, events).allSatisfy { abs($0.frame - $1.frame) <= 1 })
    }

    @Test("unsorted input is written in frame order, equal frames in input order")
    func sortsStably() throws {
        let a = MIDIMessage.noteOn(channel: 0, note: 1, velocity: 1)
        let b = MIDIMessage.noteOff(channel: 0, note: 1, velocity: 0)
        let c = MIDIMessage.controlChange(channel: 2, controller: 64, value: 127)
        let events = [TimedMIDIMessage(frame: 48_000, message: c), TimedMIDIMessage(frame: 0, message: a),
                      TimedMIDIMessage(frame: 0, message: b)]
        let back = try MIDIFile.parse(MIDIFileWriter.write(events, sampleRate: 48_000, ticksPerQuarter: 24_000))
            .fileMessages(sampleRate: 48_000)
        #expect(back.map(\.message) == [a, b, c])
        #expect(back.map(\.frame) == [0, 0, 48_000])
    }

    @Test("a gap longer than one delta time can hold is carried by empty text events")
    func hugeGap() throws {
        // 960 ticks per quarter at 120 bpm is 1920 ticks/s; 0x0FFFFFFF ticks is about 139,810 s.
        let frame: Int64 = 300_000 * 1_000   // 300,000 s at 1 kHz: needs three deltas
        let events = [TimedMIDIMessage(frame: 0, message: .programChange(channel: 0, program: 1)),
                      TimedMIDIMessage(frame: frame, message: .programChange(channel: 0, program: 2))]
        let file = try MIDIFile.parse(MIDIFileWriter.write(events, sampleRate: 1_000))
        #expect(file.fileMessages(sampleRate: 1_000) == events)
        #expect(file.tracks[0].events.filter { $0.kind == .meta(type: 0x01, data: []) }.count == 2)
    }

    @Test("negative frames go to tick 0 and out-of-range values are clamped into valid MIDI")
    func sanitising() throws {
        let events = [
            TimedMIDIMessage(frame: -500, message: .noteOn(channel: 17, note: 200, velocity: 128)),
            TimedMIDIMessage(frame: 10, message: .pitchBend(channel: 3, value: 12_000)),
            TimedMIDIMessage(frame: 20, message: .pitchBend(channel: 3, value: -9_000)),
        ]
        let back = try MIDIFile.parse(MIDIFileWriter.write(events, sampleRate: 48_000, ticksPerQuarter: 24_000))
            .fileMessages(sampleRate: 48_000)
        #expect(back == [
            TimedMIDIMessage(frame: 0, message: .noteOn(channel: 1, note: 127, velocity: 127)),
            TimedMIDIMessage(frame: 10, message: .pitchBend(channel: 3, value: 8191)),
            TimedMIDIMessage(frame: 20, message: .pitchBend(channel: 3, value: -8192)),
        ])
    }

    @Test("no events still makes a valid file with a tempo and an end of track")
    func empty() throws {
        let file = try MIDIFile.parse(MIDIFileWriter.write([], sampleRate: 48_000))
        #expect(file.format == .singleTrack)
        #expect(file.tracks[0].events.map(\.kind) == [.tempo(microsecondsPerQuarter: 500_000), .endOfTrack])
    }

    @Test("sample-exact resolution is the tick rate that reaches the sample rate, when 15 bits allow it")
    func sampleExactResolution() {
        #expect(MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: 44_100) == 22_050)
        #expect(MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: 48_000) == 24_000)
        #expect(MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: 96_000) == nil)
        #expect(MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: 96_000, tempoMicrosecondsPerQuarter: 250_000) == 24_000)
    }
}
