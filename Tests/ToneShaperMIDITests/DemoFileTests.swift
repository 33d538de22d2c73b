import Foundation
import Testing
@testable import ToneShaperMIDI

/// Examples/demo.mid is the instrument's showcase: these checks hold it to what
/// Examples/README.md promises, so regenerating it cannot silently drop a feature.
@Suite("The demo performance")
struct DemoFileTests {
    static let sampleRate = 48_000.0

    static func load() throws -> MIDIFile {
        let path = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Examples/demo.mid").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        return try MIDIFile.parse([UInt8](data))
    }

    @Test("is a 24-second format 1 file at 120 bpm with a conductor track and three instrument tracks")
    func shape() throws {
        let file = try Self.load()
        #expect(file.format == .simultaneousTracks)
        #expect(file.division == .ticksPerQuarterNote(480))
        #expect(file.tracks.count == 4)
        #expect(file.tracks[0].events.contains { $0.kind == .tempo(microsecondsPerQuarter: 500_000) })
        #expect(file.durationSeconds == 24)
        #expect(channelMessages(file.tracks[0]).isEmpty)
    }

    @Test("picks programs 0, 2 and 8 on channels 0, 1 and 2 before each channel's first note")
    func programs() throws {
        let timed = try Self.load().timedMessages(sampleRate: Self.sampleRate)
        var programBeforeNotes: [UInt8: UInt8] = [:]
        var playing = Set<UInt8>()
        for event in timed {
            switch event.message {
            case .programChange(let c, let p) where !playing.contains(c): programBeforeNotes[c] = p
            case .noteOn(let c, _, _): playing.insert(c)
            default: break
            }
        }
        #expect(programBeforeNotes == [0: 0, 1: 2, 2: 8])
        #expect(playing == [0, 1, 2])
    }

    @Test("plays chords of 3 to 6 notes and peaks at 10 to 12 sounding notes, pedal included; none is left hanging")
    func polyphony() throws {
        var sounding = Set<[UInt8]>()       // [channel, note] held by a key or by the pedal
        var pedalHeld = Set<[UInt8]>()      // released keys the pedal keeps sounding
        var pedalDown = Set<UInt8>()
        var peak = 0
        var chordSizes = Set<Int>()
        let file = try Self.load()
        // The file's own messages: the demo must end everything itself, nothing closed for it.
        let timed = file.fileMessages(sampleRate: Self.sampleRate)
        #expect(file.timedMessages(sampleRate: Self.sampleRate).count == timed.count)
        for (_, group) in Dictionary(grouping: timed, by: \.frame).sorted(by: { $0.key < $1.key }) {
            var onsPerChannel: [UInt8: Int] = [:]
            for event in group {
                switch event.message {
                case .noteOn(let c, let n, _):
                    sounding.insert([c, n]); pedalHeld.remove([c, n]); onsPerChannel[c, default: 0] += 1
                case .noteOff(let c, let n, _):
                    if pedalDown.contains(c) { pedalHeld.insert([c, n]) } else { sounding.remove([c, n]) }
                case .controlChange(let c, 64, let v):
                    if v >= 64 { pedalDown.insert(c) } else {
                        pedalDown.remove(c)
                        for key in pedalHeld where key[0] == c { sounding.remove(key); pedalHeld.remove(key) }
                    }
                default: break
                }
            }
            peak = max(peak, sounding.count)
            chordSizes.formUnion(onsPerChannel.values)
        }
        #expect((10...12).contains(peak), "peak polyphony \(peak)")
        #expect(chordSizes.isSuperset(of: [3, 4, 5, 6]), "chord sizes \(chordSizes.sorted())")
        #expect(sounding.isEmpty)
    }

    @Test("transposes one phrase: the first four bars of the lead repeat its intervals on four roots")
    func transposition() throws {
        let lead = try Self.load().tracks[1].events.compactMap { event -> Int? in
            if case .channel(.noteOn(_, let n, _)) = event.kind { Int(n) } else { nil }
        }
        let groups = stride(from: 0, to: 32, by: 8).map { Array(lead[$0..<$0 + 8]) }
        let shapes = groups.map { group in group.map { $0 - group[0] } }
        #expect(Set(shapes).count == 1)
        #expect(Set(groups.map { $0[0] }).count == 4)
    }

    @Test("sweeps CC 70, 71, 74 and 7 in many small steps, and uses the sustain pedal")
    func controllerSweeps() throws {
        let timed = try Self.load().timedMessages(sampleRate: Self.sampleRate)
        func values(_ controller: UInt8) -> [UInt8] {
            timed.compactMap { if case .controlChange(_, controller, let v) = $0.message { v } else { nil } }
        }
        for controller: UInt8 in [70, 71, 74] {
            let sweep = values(controller)
            #expect(sweep.count >= 60, "CC \(controller): \(sweep.count) steps")
            #expect(zip(sweep, sweep.dropFirst()).allSatisfy { abs(Int($0) - Int($1)) <= 8 }, "CC \(controller) jumps")
            #expect(Int(sweep.max()!) - Int(sweep.min()!) >= 60, "CC \(controller) range")
        }
        #expect(values(7).count >= 3 * 60)
        #expect(Set(values(64)) == [0, 127])
    }

    @Test("bends channel 0 smoothly to the top of the range and back to centre")
    func pitchBend() throws {
        let bends = try Self.load().timedMessages(sampleRate: Self.sampleRate).compactMap {
            if case .pitchBend(0, let v) = $0.message { Int(v) } else { nil }
        }
        let top = try #require(bends.firstIndex(of: 8191))
        #expect(bends.first == 0 && bends.last == 0)
        #expect(zip(bends[...top], bends[...top].dropFirst()).allSatisfy { $0 <= $1 })
        #expect(zip(bends[top...], bends[top...].dropFirst()).allSatisfy { $0 >= $1 })
        #expect(zip(bends, bends.dropFirst()).allSatisfy { abs($0 - $1) <= 1_000 })
    }
}
