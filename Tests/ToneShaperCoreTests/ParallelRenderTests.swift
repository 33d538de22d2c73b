import AllocationCounter
import Foundation
import Testing
import TestSupport
import ToneShaperMIDI
@testable import ToneShaperCore
import ToneShaperInstrument

@Suite("Rendering on several threads: the same samples, whatever the number")
struct ParallelRenderTests {
    /// 16 channels of shifting chords over every wave, with program changes, echo, pan, bends,
    /// pedal and a pool small enough that notes steal voices.
    static func performance(seconds: Double, seed: UInt64) -> [TimedMIDIMessage] {
        var random = SplitMix64(seed: seed)
        var messages: [TimedMIDIMessage] = []
        let waves = WaveType.allCases.count
        let beat = 9_600  // 0.2 s
        for step in 0..<Int(seconds * 48_000) / beat {
            for channel in UInt8(0)..<16 where random.next(below: 3) != 0 {
                let at = Int64(step * beat + random.next(below: beat / 2))
                func send(_ message: MIDIMessage) { messages.append(TimedMIDIMessage(frame: at, message: message)) }
                if random.next(below: 4) == 0 { send(.programChange(channel: channel, program: UInt8(random.next(below: waves)))) }
                send(.controlChange(channel: channel, controller: 10, value: UInt8(random.next(below: 128))))
                if random.next(below: 3) == 0 { send(.controlChange(channel: channel, controller: 91, value: UInt8(random.next(below: 90)))) }
                send(.pitchBend(channel: channel, value: Int16(random.next(below: 16_000) - 8000)))
                if random.next(below: 5) == 0 { send(.controlChange(channel: channel, controller: 64, value: random.next(below: 2) == 0 ? 127 : 0)) }
                send(.controlChange(channel: channel, controller: 123, value: 0))
                for _ in 0..<(1 + random.next(below: 4)) {
                    send(.noteOn(channel: channel, note: UInt8(36 + random.next(below: 48)), velocity: UInt8(40 + random.next(below: 87))))
                }
            }
        }
        return messages.inFrameOrder()
    }

    static func render(threads: Int, _ messages: [TimedMIDIMessage], frames: Int) throws
        -> (samples: [Float], stolen: Int, helped: Int, prefixed: Int) {
        var config = EngineConfiguration(sampleRate: 48_000, voices: 48)
        config.threads = threads
        config.helpersJoinEveryBlock = true  // every block shared, however light (see the configuration)
        let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
        let samples = OfflineRenderer(engine: engine, blockFrames: 512).renderAll(messages, totalFrames: frames)
        return (samples, engine.stolenVoices, engine.helperShares, engine.shareCounters.prefixDone.load(ordering: .relaxed))
    }

    @Test("1, 2 and 3 threads render a dense 16-channel performance to the same bits")
    func sameBits() throws {
        let messages = Self.performance(seconds: 1.6, seed: 11)
        let frames = 2 * 48_000
        let one = try Self.render(threads: 1, messages, frames: frames)
        #expect(one.stolen > 0)
        #expect(Signal.peak(one.samples) > 0.05)
        for threads in [2, 3] {
            let many = try Self.render(threads: threads, messages, frames: frames)
            // The helpers really rendered: joining every block, they claimed more than one part per block on average.
            #expect(many.helped >= frames / 128, "\(threads) threads: helpers rendered \(many.helped) parts")
            // The mix was cut in two: the first run's planes summed apart, the sum carried on by another item.
            #expect(many.prefixed > 100, "\(threads) threads: the last prefixed span was \(many.prefixed)")
            let differing = zip(one.samples, many.samples).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(many.samples.count == one.samples.count && differing == 0, "\(threads) threads: \(differing) samples differ")
        }
    }

    @Test("parts running their own control ticks through 16-period spans give the bits of the whole tick, a period at a time, steals included")
    func spansEqualWholeTicks() throws {
        let messages = Self.performance(seconds: 1.2, seed: 7)
        let frames = 72_000
        func render(threads: Int, wholeTicks: Bool) throws -> (samples: [Float], stolen: Int) {
            var config = EngineConfiguration(sampleRate: 48_000, voices: 48)
            config.threads = threads
            let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
            engine.wholeTicks = wholeTicks
            let samples = OfflineRenderer(engine: engine, blockFrames: 8192).renderAll(messages, totalFrames: frames)
            return (samples, engine.stolenVoices)
        }
        let reference = try render(threads: 1, wholeTicks: true)
        #expect(reference.stolen > 0)
        #expect(Signal.peak(reference.samples) > 0.05)
        for threads in [1, 2] {
            let spans = try render(threads: threads, wholeTicks: false)
            let differing = zip(reference.samples, spans.samples).filter { $0.bitPattern != $1.bitPattern }.count
            #expect(spans.samples.count == reference.samples.count && differing == 0, "\(threads) threads: \(differing) samples differ")
        }
    }

    /// Between events a part's voices render several control periods in one call when the ticks in
    /// between will do what they would a period at a time; whatever a tick changes for them — a
    /// duration or fidelity glide, vibrato, freeing a voice whose release has ended — must stop the
    /// run (or end it before that), or the sound would differ from a period at a time.
    @Test("voices running on through several periods between events give the bits of a period at a time, through glides of duration and fidelity, vibrato, attacks and releases")
    func voicesRunOnAsPeriods() throws {
        var messages: [TimedMIDIMessage] = []
        func at(_ seconds: Double, _ message: MIDIMessage) { messages.append(TimedMIDIMessage(frame: Int64(seconds * 48_000), message: message)) }
        let waves = WaveType.allCases.count
        for c in 0..<UInt8(waves) {
            let t = 0.013 * Double(c)  // the channels' events apart, so spans between them are long and many
            at(t, .programChange(channel: c, program: c))
            at(t, .controlChange(channel: c, controller: 91, value: 40))
            for n in [48, 55, 64] as [UInt8] { at(t, .noteOn(channel: c, note: n + c, velocity: 100)) }
            at(0.30 + t, .controlChange(channel: c, controller: 71, value: 90))    // duration glides
            at(0.55 + t, .controlChange(channel: c, controller: 74, value: 20))    // fidelity glides
            at(0.80 + t, .controlChange(channel: c, controller: 1, value: 100))    // vibrato
            at(1.05 + t, .controlChange(channel: c, controller: 1, value: 0))
            at(1.10 + t, .controlChange(channel: c, controller: 72, value: 100))   // a long release
            at(1.15 + t, .noteOff(channel: c, note: 55 + c, velocity: 64))
            at(1.40 + t, .noteOn(channel: c, note: 60 + c, velocity: 90))
            for n in [48, 60, 64] as [UInt8] { at(1.70 + t, .noteOff(channel: c, note: n + c, velocity: 64)) }
            // A short release that ends a few periods on, and the key struck again before the tick
            // after its end: a period at a time, the voice is still releasing then (and is struck
            // again, its phase carried on); freed early, it would start afresh.
            at(1.75 + t, .controlChange(channel: c, controller: 72, value: 0))  // release 5 ms: 240 frames
            at(1.80 + t, .noteOn(channel: c, note: 70 + c, velocity: 100))
            let off = 1.85 + t + 10 / 48_000
            at(off, .noteOff(channel: c, note: 70 + c, velocity: 64))
            at(off + 260 / 48_000, .noteOn(channel: c, note: 70 + c, velocity: 100))
        }
        // A part turned all but silent for a while (its tail then below the quiet threshold).
        at(0.20, .controlChange(channel: 1, controller: 7, value: 0))
        at(0.45, .controlChange(channel: 1, controller: 7, value: 110))
        messages = messages.inFrameOrder()
        let frames = 2 * 48_000 + 9_600
        func render(threads: Int, wholeTicks: Bool, period: Int, block: Int) throws -> [Float] {
            var config = EngineConfiguration(sampleRate: 48_000, voices: 64)
            config.threads = threads
            config.maxBlock = period
            let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
            engine.wholeTicks = wholeTicks
            return OfflineRenderer(engine: engine, blockFrames: block).renderAll(messages, totalFrames: frames)
        }
        for period in [128, 64] {
            let reference = try render(threads: 1, wholeTicks: true, period: period, block: 4096)
            #expect(Signal.peak(reference) > 0.05)
            // Render calls of other sizes start runs mid-period.
            for (threads, block) in [(1, 4096), (2, 1000), (3, 333)] {
                let spans = try render(threads: threads, wholeTicks: false, period: period, block: block)
                let differing = zip(reference, spans).filter { $0.bitPattern != $1.bitPattern }.count
                #expect(spans.count == reference.count && differing == 0,
                        "\(period)-frame periods, \(threads) threads, \(block)-frame calls: \(differing) samples differ")
            }
        }
    }

    @Test("with helpers, the output reaches the sink span by span, in order, with the same samples, and a sink's error ends the render")
    func sinkAlongside() throws {
        let messages = Self.performance(seconds: 1, seed: 3)
        func engine(threads: Int) throws -> Engine {
            var config = EngineConfiguration(sampleRate: 48_000, voices: 48)
            config.threads = threads
            return Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
        }
        func collect(threads: Int) throws -> (samples: [Float], sizes: [Int]) {
            var samples: [Float] = [], sizes: [Int] = []
            OfflineRenderer(engine: try engine(threads: threads), blockFrames: 1000).render(messages, totalFrames: 48_500) {
                samples.append(contentsOf: $0)
                sizes.append($0.count)
            }
            return (samples, sizes)
        }
        let one = try collect(threads: 1), two = try collect(threads: 2)
        // A stretch per span: cut at events and block ends, never longer than a block.
        #expect(one.samples.count == 2 * 48_500)
        #expect(one.sizes.count > 49 && one.sizes.allSatisfy { $0 > 0 && $0 <= 2000 && $0 % 2 == 0 })
        #expect(two.sizes == one.sizes)
        #expect(Signal.peak(one.samples) > 0.05)
        #expect(zip(one.samples, two.samples).allSatisfy { $0.bitPattern == $1.bitPattern })

        struct DiskFull: Error {}
        let failing = try engine(threads: 2)
        var calls = 0, delivered = 0
        #expect(throws: DiskFull.self) {
            try OfflineRenderer(engine: failing, blockFrames: 1000).render(messages, totalFrames: 48_000) { (stretch) throws(DiskFull) in
                calls += 1
                delivered += stretch.count / 2
                if calls == 3 { throw DiskFull() }
            }
        }
        // The third stretch's write failed: the sink heard nothing more, and the render stopped at
        // the end of the block it was in (the next block's first span, mastering it, at most).
        #expect(calls == 3)
        #expect(failing.frame >= delivered && failing.frame <= delivered + 2000, "stopped at \(failing.frame), \(delivered) frames delivered")
    }

    @Test("each thread keeps the parts it had from span to span, and the lists split the voices evenly")
    func partsStayWithTheirThread() throws {
        // The dense benchmark's pattern: 16 channels of four-note chords, one channel changing its
        // chord every 1/16 s (its old notes release while the new ones start: that part is heavier for a while).
        var messages: [TimedMIDIMessage] = []
        let bars = 6, step = 3_000
        var changes = 0
        for bar in 0..<bars {
            for c in UInt8(0)..<16 {
                let at = Int64((bar * 16 + Int(c)) * step)
                let root = UInt8(40 + Int(c) + 3 * (bar % 2))
                if bar > 0 {
                    let old = UInt8(40 + Int(c) + 3 * ((bar - 1) % 2))
                    for i in UInt8(0)..<4 { messages.append(TimedMIDIMessage(frame: at, message: .noteOff(channel: c, note: old + 4 * i, velocity: 64))) }
                }
                for i in UInt8(0)..<4 { messages.append(TimedMIDIMessage(frame: at, message: .noteOn(channel: c, note: root + 4 * i, velocity: 100))) }
                changes += 1
            }
        }
        var config = EngineConfiguration(sampleRate: 48_000, voices: 128)
        config.threads = 2
        let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
        let block = 512
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * block)
        defer { output.deallocate() }
        var moves = 0, checked = 0, next = 0
        var owners = (0..<16).map { engine.runOwner(of: $0) }
        for b in 0..<(bars * 16 * step / block) {
            var events: [EngineEvent] = []
            while next < messages.count && messages[next].frame < Int64((b + 1) * block) {
                events.append(EngineEvent(offset: Int(messages[next].frame) - b * block, messages[next].message))
                next += 1
            }
            events.withUnsafeBufferPointer { engine.render(frames: block, events: $0, into: output) }
            let now = (0..<16).map { engine.runOwner(of: $0) }
            moves += zip(owners, now).filter { $0 != $1 }.count
            owners = now
            // The next span's lists: each thread's parts weigh the same, to within the heaviest part.
            engine.listParts()
            var loads = [0, 0], heaviest = 0
            for t in 0..<2 {
                let list = engine.shareLists + t * Engine.shareListStride
                for k in 0..<list[0] where list[1 + k] < 16 {
                    let weight = engine.partVoiceCount[list[1 + k]] + 1
                    loads[t] += weight
                    heaviest = max(heaviest, weight)
                }
            }
            if engine.partOrderCount == 16 {
                #expect(abs(loads[0] - loads[1]) <= heaviest, "block \(b): loads \(loads)")
                checked += 1
            }
        }
        #expect(checked > 100)
        // A chord change makes one part heavier, then lighter again: at most a part or two changes
        // thread for it (dealt anew each span, about half of them would).
        #expect(moves <= 2 * changes, "\(moves) parts changed thread over \(changes) chord changes")
    }

    @Test("what threads write side by side — voices, parts, buses — sits on cache lines of its own")
    func cacheLines() throws {
        #expect(MemoryLayout<Voice>.stride % 64 == 0, "a voice is \(MemoryLayout<Voice>.stride) bytes")
        #expect(MemoryLayout<Part>.stride % 64 == 0, "a part is \(MemoryLayout<Part>.stride) bytes")
        // What the engine's thread reads of every voice and part at every span is on their first
        // line; what the render loop writes is not.
        for (name, offset) in [("stage", MemoryLayout<Voice>.offset(of: \Voice.stage)), ("part", MemoryLayout<Voice>.offset(of: \Voice.part)),
                               ("pendingPart", MemoryLayout<Voice>.offset(of: \Voice.pendingPart)),
                               ("Part.audible", MemoryLayout<Part>.offset(of: \Part.audible))] {
            #expect(offset.map { $0 < 64 } == true, "\(name) at \(offset.map(String.init) ?? "?")")
        }
        for (name, offset) in [("phase", MemoryLayout<Voice>.offset(of: \Voice.phase)), ("gain", MemoryLayout<Voice>.offset(of: \Voice.gain)),
                               ("steps", MemoryLayout<Voice>.offset(of: \Voice.steps)), ("blendLevel", MemoryLayout<Voice>.offset(of: \Voice.blendLevel)),
                               ("noise", MemoryLayout<Voice>.offset(of: \Voice.noise)), ("segment", MemoryLayout<Voice>.offset(of: \Voice.segment)),
                               ("Part.ratio", MemoryLayout<Part>.offset(of: \Part.ratio)), ("Part.panFromLeft", MemoryLayout<Part>.offset(of: \Part.panFromLeft)),
                               ("Part.amplitude", MemoryLayout<Part>.offset(of: \Part.amplitude)), ("Part.quietFrames", MemoryLayout<Part>.offset(of: \Part.quietFrames))] {
            #expect(offset.map { $0 >= 64 } == true, "\(name) at \(offset.map(String.init) ?? "?")")
        }
        var config = EngineConfiguration(sampleRate: 48_000, voices: 48)
        config.threads = 2
        let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
        for (name, address) in [("voices", UInt(bitPattern: engine.voices)), ("parts", UInt(bitPattern: engine.parts)),
                                ("buses", UInt(bitPattern: engine.buses))] {
            #expect(address % 64 == 0, "\(name) start at \(address)")
        }
        #expect((engine.maxBlock * MemoryLayout<Float>.stride) % 64 == 0)
    }

    @Test("with a helper thread, the engine's thread allocates nothing, and neither does the helper's share of a block")
    func parallelAllocatesNothing() throws {
        var config = EngineConfiguration(sampleRate: 48_000, voices: 48)
        config.threads = 2
        config.helpersJoinEveryBlock = true
        let engine = Engine(library: try PresetLibrary(shapes: AllocationTests.everyWave()), configuration: config)
        // The first second warms up (every wave's code path has run once), the next is counted.
        let messages = Self.performance(seconds: 2, seed: 5)
        let frames = 256
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { output.deallocate() }
        let blocks = 2 * 48_000 / frames
        let events = UnsafeMutablePointer<EngineEvent>.allocate(capacity: messages.count)
        defer { events.deallocate() }
        var ranges: [Range<Int>] = []
        var next = 0
        for b in 0..<blocks {
            let start = next
            while next < messages.count && messages[next].frame < Int64((b + 1) * frames) {
                (events + next).initialize(to: EngineEvent(offset: Int(messages[next].frame) - b * frames, messages[next].message))
                next += 1
            }
            ranges.append(start..<next)
        }
        func block(_ b: Int) {
            engine.render(frames: frames, events: UnsafeBufferPointer(start: events + ranges[b].lowerBound, count: ranges[b].count), into: output)
        }
        for b in 0..<(blocks / 2) { block(b) }
        allocation_counter_start()
        for b in (blocks / 2)..<blocks { block(b) }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0)
        #expect(engine.activeVoiceCount > 0)
        #expect(engine.helperShares > 0)

        // A helper's share, run on this (counted) thread after the engine has listed the parts: it claims them all.
        engine.jobCount = 128
        engine.jobIntoPeriod = 0
        engine.listParts()
        #expect(engine.partOrderCount > 0)
        let before = engine.helperShares
        allocation_counter_start()
        engine.renderShare(1)
        #expect(allocation_counter_stop() == 0)
        #expect(engine.helperShares == before + engine.partOrderCount)
    }
}
