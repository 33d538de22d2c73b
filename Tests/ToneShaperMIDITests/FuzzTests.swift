import TestSupport
import Testing
@testable import ToneShaperMIDI

/// Mutations of valid files and plain noise, all from fixed seeds: any input that crashes or
/// hangs the reader is reproducible from the seed and iteration printed by the failing check.
@Suite("Fuzzing the reader")
struct FuzzTests {
    /// Valid files that reach every part of the reader: running status, sysex, escapes, meta,
    /// unknown chunks, tempo maps in several tracks, SMPTE, format 2, and the writer's output;
    /// and the real-world cases it reads leniently: running status across meta and sysex events,
    /// odd tempo events (4, 2 and 0 bytes, tempo 0), format 0 with several tracks, notes left
    /// on by a mid-track End of Track, and a performance too long for an Int of frames.
    static let seeds: [[UInt8]] = {
        let eot = SMFBytes.endOfTrack
        var files: [[UInt8]] = [
            SMFBytes.file(format: 0, division: 96, tracks: [[
                0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xC1, 0x05, 0x10, 0x91, 0x3C, 0x64, 0x00, 0x40, 0x50,
                0x60, 0x3C, 0x00, 0x00, 0xF0, 0x03, 0x43, 0x12, 0xF7, 0x20, 0xF7, 0x01, 0xFA, 0x00, 0xE1, 0x00, 0x40,
                0x81, 0x00, 0xB1, 0x40, 0x7F, 0x00, 0x4A, 0x20, 0x00, 0xD1, 0x30, 0x00, 0xA1, 0x3C, 0x10,
            ] + eot]),
            SMFBytes.file(format: 1, division: 480, tracks: [
                [0x00, 0xFF, 0x03, 0x02, 0x41, 0x42, 0x00, 0xFF, 0x58, 0x04, 0x04, 0x02, 0x18, 0x08,
                 0x83, 0x60, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40] + eot,
                [0x00, 0x90, 0x30, 0x40, 0x81, 0x70, 0x32, 0x40, 0x81, 0x70, 0x30, 0x00, 0x00, 0x32, 0x00] + eot,
                [0x00, 0xFF, 0x51, 0x03, 0x03, 0xD0, 0x90, 0x8F, 0x00, 0xB2, 0x4A, 0x00] + eot,
            ]),
            SMFBytes.file(format: 2, division: 0xE728, tracks: [[0x8B, 0x5C, 0x90, 0x3C, 0x40] + eot, [0x00, 0xC0, 0x01] + eot]),
            SMFBytes.header(format: 1, tracks: 2, division: 960) + SMFBytes.chunk("XFIH", [1, 2, 3])
                + SMFBytes.track([0x00, 0x92, 0x40, 0x40] + eot) + SMFBytes.chunk("JUNK", [])
                + SMFBytes.track([0x00, 0xFF, 0x7F, 0x03, 0x00, 0x00, 0x41] + eot),
        ]
        files.append(MIDIFileWriter.write(MIDIFileWriterTests.performance(count: 40, seed: 99), sampleRate: 48_000))
        files += [
            SMFBytes.file(format: 0, tracks: [[
                0x00, 0x90, 0x3C, 0x40, 0x00, 0xFF, 0x01, 0x00, 0x00, 0x3E, 0x40, 0x00, 0xF0, 0x01, 0xF7,
                0x10, 0x3C, 0x00, 0x00, 0xF7, 0x01, 0xF8, 0x00, 0x3E, 0x00,
            ] + eot]),
            SMFBytes.file(format: 1, division: 96, tracks: [
                [0x00, 0xFF, 0x51, 0x04, 0x0F, 0x42, 0x40, 0x99, 0x10, 0xFF, 0x51, 0x02, 0x07, 0xA1,
                 0x10, 0xFF, 0x51, 0x03, 0x00, 0x00, 0x00, 0x10, 0xFF, 0x51, 0x00] + eot,
                [0x60, 0x90, 0x30, 0x40, 0x60, 0x30, 0x00] + eot,
            ]),
            SMFBytes.header(format: 0, tracks: 3, division: 120) + SMFBytes.track([0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + eot)
                + SMFBytes.track([0x00, 0x90, 0x40, 0x40, 0x78, 0x40, 0x00] + eot) + SMFBytes.track([0x3C, 0xC2, 0x10] + eot),
            SMFBytes.file(format: 1, tracks: [
                [0x00, 0x91, 0x30, 0x40, 0x00, 0x35, 0x40, 0x81, 0x70, 0xFF, 0x2F, 0x00, 0x81, 0x70, 0x30, 0x00, 0x00, 0xF4],
                [0x00, 0xB1, 0x40, 0x7F, 0x83, 0x60, 0x91, 0x24, 0x40] + eot,
            ]),
            MIDIFileTimingTests.hugeFile(events: 40),
        ]
        return files
    }()

    @Test("the seed files are valid, so mutations start from real structure")
    func seedsParse() throws {
        for seed in Self.seeds { _ = try MIDIFile.parse(seed) }
    }

    @Test("24,000 mutated valid files each parse or throw a MIDIFileError, and what parses plays in order")
    func mutatedFiles() {
        var random = SplitMix64(seed: 0x5EED_F11E)
        var outcomes = Outcomes()
        for iteration in 0..<24_000 {
            var bytes = Self.seeds[random.next(below: Self.seeds.count)]
            for _ in 0...random.next(below: 3) {
                Self.mutate(&bytes, &random)
            }
            outcomes.check(bytes, label: "mutation \(iteration)")
        }
        // Both outcomes must really occur, or the mutations are not exercising anything.
        #expect(outcomes.parsed > 1_000)
        #expect(outcomes.rejected > 1_000)
    }

    @Test("8,000 random byte strings, half of them behind a valid header, parse or throw")
    func randomBytes() {
        var random = SplitMix64(seed: 0xB17E5)
        var outcomes = Outcomes()
        for iteration in 0..<8_000 {
            let body = (0..<random.next(below: 200)).map { _ in random.byte() }
            let bytes = iteration.isMultiple(of: 2)
                ? body
                : SMFBytes.header(format: UInt16(random.next(below: 3)), tracks: 1, division: 480)
                    + Array("MTrk".utf8) + [0, 0, 0, UInt8(body.count)] + body
            outcomes.check(bytes, label: "random \(iteration)")
        }
        #expect(outcomes.rejected > 4_000)
    }

    /// One of: byte flip, bit flip, truncation, insertion, deletion, a huge 32-bit length after a
    /// chunk type, a huge VLQ, or a spliced copy of part of the file.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        let position = bytes.isEmpty ? 0 : random.next(below: bytes.count)
        switch random.next(below: 9) {
        case 0 where !bytes.isEmpty:
            bytes[position] = random.byte()
        case 1 where !bytes.isEmpty:
            bytes[position] ^= 1 << UInt8(random.next(below: 8))
        case 2:
            bytes.removeLast(bytes.count - position)
        case 3:
            bytes.insert(contentsOf: (0...random.next(below: 4)).map { _ in random.byte() }, at: position)
        case 4 where !bytes.isEmpty:
            bytes.removeSubrange(position..<min(bytes.count, position + 1 + random.next(below: 6)))
        case 5:
            // Set the length field of a chunk (MThd, MTrk or unknown) to something huge.
            let starts = chunkStarts(bytes)
            guard let start = starts.isEmpty ? nil : starts[random.next(below: starts.count)],
                  start + 8 <= bytes.count else { return }
            let huge: [UInt32] = [0xFFFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, UInt32(bytes.count - start - 7), UInt32(truncatingIfNeeded: random.next())]
            let value = huge[random.next(below: huge.count)]
            for k in 0..<4 { bytes[start + 4 + k] = UInt8(truncatingIfNeeded: value >> (24 - 8 * k)) }
        case 6:
            let vlq: [[UInt8]] = [[0xFF, 0xFF, 0xFF, 0x7F], [0x80, 0x80, 0x80, 0x80, 0x00], [0xFF, 0xFF, 0xFF, 0xFF]]
            let chosen = vlq[random.next(below: vlq.count)]
            bytes.replaceSubrange(position..<min(bytes.count, position + chosen.count), with: chosen)
        case 7 where !bytes.isEmpty:
            let from = random.next(below: bytes.count)
            let piece = bytes[from..<min(bytes.count, from + 1 + random.next(below: 16))]
            bytes.insert(contentsOf: piece, at: position)
        default:
            if position < bytes.count { bytes[position] = [0x00, 0x7F, 0x80, 0xF0, 0xF7, 0xFF][random.next(below: 6)] }
        }
    }

    /// Offsets of "MThd", "MTrk" and other 4-letter chunk types found in the bytes.
    static func chunkStarts(_ bytes: [UInt8]) -> [Int] {
        guard bytes.count >= 8 else { return [] }
        return (0...(bytes.count - 8)).filter { i in
            bytes[i] == 0x4D && bytes[i + 1] == 0x54 || (bytes[i] == 0x58 || bytes[i] == 0x4A) && bytes[i + 1] >= 0x41
        }
    }
}

/// Parses one input and checks what must hold whatever the input was.
struct Outcomes {
    var parsed = 0
    var rejected = 0

    mutating func check(_ bytes: [UInt8], label: String) {
        do {
            let file = try MIDIFile.parse(bytes)
            parsed += 1
            let duration = file.durationSeconds
            #expect(duration >= 0 && duration.isFinite, "bad duration: \(label)")
            // 1e12 Hz makes the frames of long files saturate: that must not trap either.
            for sampleRate in [48_000.0, 1e12] {
                let timed = file.timedMessages(sampleRate: sampleRate)
                let frames = timed.map(\.frame)
                #expect(zip(frames, frames.dropFirst()).allSatisfy { $0 <= $1 }, "frames out of order: \(label)")
                #expect(frames.allSatisfy { $0 >= 0 }, "negative frame: \(label)")
                let end = sampleFrame(atSeconds: duration, sampleRate: sampleRate)
                #expect(frames.allSatisfy { $0 <= end }, "a message after the end: \(label)")
                #expect(Self.soundingAtEnd(timed).isEmpty, "left sounding: \(label)")
            }
            let events = file.tracks.reduce(0) { $0 + $1.eventCount }
            #expect(events <= bytes.count / 2, "more events than 2 bytes each: \(label)")
        } catch let error as MIDIFileError {
            rejected += 1
            #expect((0...bytes.count).contains(error.offset), "offset outside the file: \(label): \(error)")
        } catch {
            Issue.record("not a MIDIFileError: \(label): \(error)")
        }
    }

    /// Keys still down or held by a pedal after the messages: a plain model of the MIDI rules
    /// (note-off or velocity-0 note-on ends a key; CC 120 and 123...127 a channel's keys; a pedal
    /// is CC 64 ≥ 64 until CC 64 < 64 or CC 121 and holds the keys released under it).
    static func soundingAtEnd(_ timed: [TimedMIDIMessage]) -> Set<[UInt8]> {
        var down = Set<[UInt8]>(), pedal = Set<UInt8>(), sustained = Set<[UInt8]>()
        func pedalUp(_ c: UInt8) { pedal.remove(c); sustained = sustained.filter { $0[0] != c } }
        for message in timed.map(\.message) {
            switch message {
            case .noteOn(let c, let n, let v) where v > 0: down.insert([c, n])
            case .noteOn(let c, let n, _), .noteOff(let c, let n, _):
                if down.remove([c, n]) != nil, pedal.contains(c) { sustained.insert([c, n]) }
            case .controlChange(let c, 64, let v): if v >= 64 { pedal.insert(c) } else { pedalUp(c) }
            case .controlChange(let c, 121, _): pedalUp(c)
            case .controlChange(let c, let cc, _) where cc == 120 || cc >= 123:
                down = down.filter { $0[0] != c }
            default: break
            }
        }
        return down.union(sustained)
    }
}
