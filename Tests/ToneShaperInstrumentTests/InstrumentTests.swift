import AllocationCounter
import EngineFixtures
import Foundation
import Testing
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// The front door a plugin host drives: blocks of any size with events at their frames play what
/// `toneshaper render` plays, and nothing in `process` allocates.
@Suite("The instrument as a plugin host drives it")
struct InstrumentTests {
    static let rate = 48_000.0

    /// Examples/demo.mid's messages at their frames, and render's length for it (2 s of tail).
    static func demo() throws -> (messages: [TimedMIDIMessage], frames: Int) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/demo.mid").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        let file = try MIDIFile.parse([UInt8](data))
        return (file.timedMessages(sampleRate: rate).inFrameOrder(), Int(((file.durationSeconds + 2) * rate).rounded()))
    }

    /// What `toneshaper render` does with the messages at its default gain (−6 dB) and voices (32).
    static func offlineRender(_ messages: [TimedMIDIMessage], frames: Int, channelPreset: Int = 0) -> [Float] {
        var config = EngineConfiguration(sampleRate: rate, voices: 32)
        config.masterGain = pow(10, -6.0 / 20)
        config.channelPresets = Array(repeating: channelPreset, count: 16)
        return OfflineRenderer(engine: Engine(library: Fixtures.library, configuration: config))
            .renderAll(messages, totalFrames: frames)
    }

    static func event(_ m: TimedMIDIMessage, at frame: Int) -> InstrumentEvent {
        let b = m.message.bytes
        return InstrumentEvent(frame: frame, .midi(b[0], b.count > 1 ? b[1] : 0, b.count > 2 ? b[2] : 0))
    }

    /// Plays the messages through `process` in blocks of `block` frames; returns L, R interleaved.
    static func played(_ messages: [TimedMIDIMessage], frames: Int, block: Int,
                       extra: [Int: [InstrumentEvent]] = [:]) -> [Float] {
        let instrument = Instrument(library: Fixtures.library, sampleRate: rate)
        var left = [Float](repeating: 0, count: block), right = left
        var out: [Float] = []
        out.reserveCapacity(2 * frames)
        var next = 0
        var start = 0
        while start < frames {
            let count = min(block, frames - start)
            var events = extra[start] ?? []
            while next < messages.count && messages[next].frame < Int64(start + count) {
                events.append(event(messages[next], at: Int(messages[next].frame) - start))
                next += 1
            }
            events.sort { $0.frame < $1.frame }
            events.withUnsafeBufferPointer { ev in
                left.withUnsafeMutableBufferPointer { l in
                    right.withUnsafeMutableBufferPointer { r in
                        instrument.process(frames: count, events: ev, left: l.baseAddress!, right: r.baseAddress!)
                    }
                }
            }
            for i in 0..<count { out.append(left[i]); out.append(right[i]) }
            start += count
        }
        return out
    }

    static func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
        zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }.map { $0.offset / 2 }
    }

    @Test("demo.mid played in host blocks of 32, 256 and 1024 frames is `render`'s output sample for sample",
          arguments: [32, 256, 1024])
    func demoInBlocks(block: Int) throws {
        let (messages, frames) = try Self.demo()
        let reference = Self.offlineRender(messages, frames: frames)
        let output = Self.played(messages, frames: frames, block: block)
        #expect(output.count == reference.count)
        #expect(Self.firstDifference(output, reference) == nil)
        #expect(reference.contains { abs($0) > 0.05 })  // the demo is heard, not silence equal to silence
    }

    @Test("a control moved at a frame is heard from that frame: before it the output is unchanged")
    func parameterAtFrame() throws {
        let note = [TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 60, velocity: 100))]
        let amplitude = try #require(InstrumentParameter.table.first { $0.parameter == .amplitude })
        for block in [32, 256] {
            let moved = Self.played(note, frames: 2048, block: block,
                                    extra: [1024: [InstrumentEvent(frame: 0, .parameter(id: amplitude.id, value: 0.05))]])
            let still = Self.played(note, frames: 2048, block: block)
            #expect(Self.firstDifference(moved, still) == 1024)
            // ramped as a controller ramps it (20 ms), then quieter than the unmoved note
            let peakMoved = (1024 + 1000..<2048).map { abs(moved[2 * $0]) }.max()!
            let peakStill = (1024 + 1000..<2048).map { abs(still[2 * $0]) }.max()!
            #expect(peakMoved < peakStill / 4)
        }
    }

    @Test("a shape chosen by index plays what starting every channel on that preset plays")
    func shapeByIndex() throws {
        let instrument = Instrument(library: Fixtures.library, sampleRate: Self.rate)
        #expect(instrument.shapeNames.count == Fixtures.library.listedCount)
        let index = 2
        let note = [TimedMIDIMessage(frame: 10, message: .noteOn(channel: 0, note: 64, velocity: 90))]
        let chosen = Self.played(note, frames: 4096, block: 256,
                                 extra: [0: [InstrumentEvent(frame: 0, .shape(index))]])
        let reference = Self.offlineRender(note, frames: 4096, channelPreset: index)
        let onFirst = Self.offlineRender(note, frames: 4096)
        #expect(Self.firstDifference(chosen, reference) == nil)
        #expect(Self.firstDifference(chosen, onFirst) != nil)
    }

    @Test("process allocates nothing: notes, controls, shapes, bends, long blocks split into chunks")
    func noAllocation() throws {
        let instrument = Instrument(library: Fixtures.library, sampleRate: Self.rate, chunkFrames: 256)
        let frames = 1000
        let left = UnsafeMutablePointer<Float>.allocate(capacity: frames), right = UnsafeMutablePointer<Float>.allocate(capacity: frames)
        defer { left.deallocate(); right.deallocate() }
        let events = UnsafeMutablePointer<InstrumentEvent>.allocate(capacity: 64)
        defer { events.deallocate() }
        for i in 0..<40 {  // 40 controls of 16 engine events each: more than one engine call holds
            events[i] = InstrumentEvent(frame: i * 20, .parameter(id: i % InstrumentParameter.table.count, value: 0.3))
        }
        events[40] = InstrumentEvent(frame: 801, .midi(0x90, 60, 100))
        events[41] = InstrumentEvent(frame: 802, .midi(0xE0, 0, 80))
        events[42] = InstrumentEvent(frame: 803, .shape(1))
        events[43] = InstrumentEvent(frame: 900, .midi(0xF8, 0, 0))  // a clock byte: ignored
        allocation_counter_start()
        for _ in 0..<20 {
            instrument.process(frames: frames, events: UnsafeBufferPointer(start: events, count: 44), left: left, right: right)
        }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0)
        #expect((0..<frames).contains { left[$0] != 0 })
    }

    @Test("the parameter table: the mapping file's controls, defaults in range, normalised values round-trip")
    func table() {
        let table = InstrumentParameter.table
        #expect(table.map(\.id) == Array(0..<table.count))
        #expect(Set(table.map(\.parameter)).count == table.count)
        for row in table {
            #expect(row.parameter.limits.contains(row.range.lowerBound) && row.parameter.limits.contains(row.range.upperBound))
            #expect(row.range.contains(row.defaultValue), "\(row.name)")
            #expect(abs(row.value(normalised: row.normalised(row.defaultValue)) - row.defaultValue) < 1e-9 * max(1, row.defaultValue))
            #expect(row.value(normalised: 0) == row.range.lowerBound && row.value(normalised: 1) == row.range.upperBound)
        }
        #expect(table.first { $0.parameter == .waveType }?.choices.count == WaveType.count)
    }
}

@Suite("The instrument's state as bytes")
struct InstrumentStateTests {
    /// One note on channel 4, played through `instrument` in blocks of 256; L, R interleaved.
    static func note(_ instrument: Instrument, first: [InstrumentEvent] = []) -> [Float] {
        var out: [Float] = []
        var left = [Float](repeating: 0, count: 256), right = left
        for block in 0..<40 {
            var events = block == 0 ? first : []
            if block == 0 { events.append(InstrumentEvent(frame: 5, .midi(0x93, 60, 100))) }
            if block == 30 { events.append(InstrumentEvent(frame: 0, .midi(0x83, 60, 0))) }
            events.withUnsafeBufferPointer { ev in
                instrument.process(frames: 256, events: ev, left: &left, right: &right)
            }
            for i in 0..<256 { out.append(left[i]); out.append(right[i]) }
        }
        return out
    }

    @Test("restored where the bundle's shape of that name and index differs, it plays the shape it was saved with")
    func restoredElsewhere() throws {
        let glideBass = try #require(Fixtures.library.index(named: "glide-bass"))
        let saved = Instrument(library: Fixtures.library, sampleRate: InstrumentTests.rate)
        let played = Self.note(saved, first: [InstrumentEvent(frame: 0, .shape(glideBass))])
        let bytes = try saved.state()

        var shapes = Fixtures.library.shapes
        shapes[glideBass].duration *= 3  // another machine's glide-bass
        let elsewhere = try PresetLibrary(shapes: shapes)
        let restored = try Instrument(state: bytes, library: elsewhere, sampleRate: InstrumentTests.rate)
        #expect(InstrumentTests.firstDifference(Self.note(restored), played) == nil)
        // and that machine's own glide-bass does sound different
        let chosenThere = Self.note(Instrument(library: elsewhere, sampleRate: InstrumentTests.rate),
                                    first: [InstrumentEvent(frame: 0, .shape(glideBass))])
        #expect(InstrumentTests.firstDifference(chosenThere, played) != nil)
        #expect(played.contains { abs($0) > 0.01 })
    }

    @Test("a state that is not one is refused in one line, and a restored instrument saves the same bytes again")
    func refusedAndStable() throws {
        #expect(throws: StateError.self) { try Instrument(state: Array("{\"format\": 1}".utf8), library: Fixtures.library, sampleRate: 48_000) }
        let bytes = try Instrument(library: Fixtures.library, sampleRate: 48_000).state()
        let again = try Instrument(state: bytes, library: Fixtures.library, sampleRate: 48_000).state()
        #expect(again == bytes)
    }
}
