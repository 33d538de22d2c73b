import AllocationCounter
import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// A preallocated performance: every render call gets its events through an UnsafeBufferPointer.
private final class Performance {
    let blocks: Int
    let frames: Int
    let events: UnsafeMutablePointer<EngineEvent>
    let counts: UnsafeMutablePointer<Int>
    let capacity = 16
    let output: UnsafeMutablePointer<Float>

    init(blocks: Int, frames: Int, script: (Int) -> [EngineEvent]) {
        self.blocks = blocks
        self.frames = frames
        events = .allocate(capacity: blocks * capacity)
        counts = .allocate(capacity: blocks)
        output = .allocate(capacity: 2 * frames)
        output.initialize(repeating: 0, count: 2 * frames)
        for b in 0..<blocks {
            let list = script(b).sorted { $0.offset < $1.offset }
            precondition(list.count <= capacity)
            counts[b] = list.count
            (events + b * capacity).initialize(from: list, count: list.count)
        }
    }

    deinit { events.deallocate(); counts.deallocate(); output.deallocate() }

    /// Renders every block; returns how many allocations the calling thread made meanwhile.
    func renderCountingAllocations(_ engine: Engine) -> Int64 {
        allocation_counter_start()
        for b in 0..<blocks {
            engine.render(frames: frames, events: UnsafeBufferPointer(start: events + b * capacity, count: counts[b]), into: output)
        }
        return allocation_counter_stop()
    }
}

@Suite("The render path allocates nothing")
struct AllocationTests {
    /// One preset of every wave type, with echo on most of them.
    static func everyWave() -> [Shape] {
        WaveType.allCases.enumerated().map { i, wave in
            var s = Shape(name: "wave-\(wave.rawValue)", program: i,
                          points: [.init(time: 0, frequency: 200), .init(time: 0.05, frequency: 900), .init(time: 0.3, frequency: 300)],
                          duration: 0.3, minFrequency: 20, maxFrequency: 1000, wave: wave, amplitude: 0.3,
                          envelope: i % 3 == 0 ? .linearDecay : (i % 3 == 1 ? .exponentialDecay(rate: 4) : .constant),
                          fidelity: 200 + 50 * i, fourierTerms: 12, release: 0.02)
            s.echo = Shape.Echo(delay: 0.05 + 0.01 * Double(i), volume: i == 0 ? 0 : 0.4)
            return s
        }
    }

    /// Notes on and off, every wave via program changes, controllers through the map, bend, pedal, steals.
    static func script(block b: Int, frames: Int) -> [EngineEvent] {
        let waves = WaveType.allCases.count
        let ch = UInt8(b % 3)
        var e: [EngineEvent] = [
            EngineEvent(offset: 0, .programChange(channel: ch, program: UInt8(b % waves))),
            EngineEvent(offset: 1, .on(UInt8(48 + (b * 7) % 36), UInt8(40 + b % 80), channel: ch)),
            EngineEvent(offset: frames / 3, .pitchBend(channel: ch, value: Int16((b * 997) % 16_000 - 8000))),
            EngineEvent(offset: frames / 2, .cc(74, UInt8((b * 13) % 128), channel: ch)),
            EngineEvent(offset: frames / 2 + 1, .cc(71, UInt8((b * 29) % 128), channel: ch)),
            EngineEvent(offset: frames / 2 + 2, .cc(91, UInt8((b * 17) % 100), channel: ch)),
            EngineEvent(offset: frames / 2 + 3, .cc(7, UInt8(60 + b % 60), channel: ch)),
            EngineEvent(offset: frames - 5, .off(UInt8(48 + ((b + 20) * 7) % 36), channel: ch)),
        ]
        if b % 5 == 0 { e.append(EngineEvent(offset: 7, .cc(64, b % 10 == 0 ? 127 : 0, channel: ch))) }
        if b % 7 == 0 { e.append(EngineEvent(offset: 9, .cc(1, UInt8(b % 128), channel: ch))) }
        if b % 11 == 0 { e.append(EngineEvent(offset: 11, .cc(120, 0, channel: ch))) }
        if b % 13 == 0 { e.append(EngineEvent(offset: 13, .cc(123, 0, channel: ch))) }
        if b % 17 == 0 { e.append(EngineEvent(offset: 15, .cc(121, 0, channel: ch))) }
        if b % 19 == 0 { e.append(EngineEvent(offset: 17, .cc(94, UInt8(b % 128), channel: ch))) }
        return e
    }

    @Test("after a warm-up, thousands of frames of notes, controllers, bends and program changes over every wave type allocate nothing")
    func renderAllocatesNothing() throws {
        let engine = try Bench.engine(Self.everyWave(), voices: 8)
        let frames = 256
        let warmUp = Performance(blocks: 20, frames: frames) { Self.script(block: $0, frames: frames) }
        _ = warmUp.renderCountingAllocations(engine)
        let performance = Performance(blocks: 120, frames: frames) { Self.script(block: $0 + 20, frames: frames) }
        let allocations = performance.renderCountingAllocations(engine)
        #expect(allocations == 0, "\(allocations) allocations while rendering \(120 * frames) frames")
        // It really played: voices were stolen (8-voice pool) and there is signal in the last block.
        #expect(engine.stolenVoices > 0)
        var peak: Float = 0
        for i in 0..<(2 * frames) { peak = max(peak, abs(performance.output[i])) }
        #expect(peak > 0.01)
    }

    /// Between events a part's voices render several control periods in one call (`Engine.voiceRun`),
    /// the echo's reads for them asked for first: held notes of every wave in long blocks, a note
    /// released and another struck now and then, so runs also stop short of releases' ends. (The
    /// script above goes the other way: a glide, vibrato or a steal in almost every block.)
    @Test("held notes of every wave rendered several control periods at a time, releases ending among them, allocate nothing")
    func voiceRunsAllocateNothing() throws {
        let engine = try Bench.engine(Self.everyWave(), voices: 64)
        let waves = WaveType.allCases.count
        let frames = 2048
        let script: (Int) -> [EngineEvent] = { b in
            if b == 0 { return (0..<waves).map { EngineEvent(offset: $0, .programChange(channel: UInt8($0), program: UInt8($0))) } }
            if b == 1 { return (0..<waves).map { EngineEvent(offset: $0, .on(UInt8(48 + 5 * $0), 100, channel: UInt8($0))) } }
            // Block b strikes a note; block b + 5 releases it (its release ends a few periods on).
            var e = [EngineEvent(offset: 1800, .on(UInt8(60 + b % 12), 90, channel: UInt8(b % waves)))]
            if b >= 7 { e.append(EngineEvent(offset: 300, .off(UInt8(60 + (b - 5) % 12), channel: UInt8((b - 5) % waves)))) }
            return e
        }
        let warmUp = Performance(blocks: 6, frames: frames, script: script)
        _ = warmUp.renderCountingAllocations(engine)
        let performance = Performance(blocks: 24, frames: frames) { script($0 + 6) }
        let allocations = performance.renderCountingAllocations(engine)
        #expect(allocations == 0, "\(allocations) allocations while rendering \(24 * frames) frames")
        var peak: Float = 0
        for i in 0..<(2 * frames) { peak = max(peak, abs(performance.output[i])) }
        #expect(peak > 0.01)
    }

    @Test("MPE allocates nothing: zones from RPN 6, member notes with their own bend, pressure, CC 74 and poly pressure, the manager's bend, program, pedal and all-notes-off")
    func mpeAllocatesNothing() throws {
        let map = try ControllerMapFile.parse("""
            pressure amplitude 0 1
            polypressure amplitude 0 1
            cc 74 fidelity 1 2000 exponential
            cc 64 sustain 0 1
            cc 7 volume 0 1
            """)
        let engine = try Bench.engine(Self.everyWave(), voices: 8, controllerMap: map)
        let frames = 256
        let waves = WaveType.allCases.count
        let script: (Int) -> [EngineEvent] = { b in
            let member = UInt8(1 + b % 6), key = UInt8(48 + (b * 7) % 36)
            var e: [EngineEvent] = [
                EngineEvent(offset: 0, .pitchBend(channel: member, value: Int16((b * 331) % 16_000 - 8000))),
                EngineEvent(offset: 1, .channelPressure(channel: member, pressure: UInt8((b * 17) % 128))),
                EngineEvent(offset: 2, .cc(74, UInt8((b * 13) % 128), channel: member)),
                EngineEvent(offset: 3, .on(key, UInt8(40 + b % 80), channel: member)),
                EngineEvent(offset: frames / 4, .polyPressure(channel: member, note: key, pressure: UInt8((b * 23) % 128))),
                EngineEvent(offset: frames / 3, .pitchBend(channel: 0, value: Int16((b * 997) % 16_000 - 8000))),
                EngineEvent(offset: frames / 2, .channelPressure(channel: member, pressure: UInt8((b * 29) % 128))),
                EngineEvent(offset: frames - 5, .off(UInt8(48 + ((b + 20) * 7) % 36), channel: UInt8(1 + (b + 3) % 6))),
            ]
            // RPN 6 (the zone: 6...13 members) and RPN 0 on a member (all members' range), in turn.
            if b % 8 == 0 || b % 8 == 4 {
                let (channel, rpn, value): (UInt8, UInt8, UInt8) = b % 8 == 0 ? (0, 6, UInt8(6 + b % 8)) : (member, 0, UInt8(12 + b % 37))
                e += [EngineEvent(offset: 10, .cc(101, 0, channel: channel)), EngineEvent(offset: 11, .cc(100, rpn, channel: channel)),
                      EngineEvent(offset: 12, .cc(6, value, channel: channel))]
            }
            if b % 5 == 0 { e.append(EngineEvent(offset: 5, .programChange(channel: 0, program: UInt8(b % waves)))) }
            if b % 6 == 0 { e.append(EngineEvent(offset: 7, .cc(64, b % 12 == 0 ? 127 : 0, channel: 0))) }
            if b % 9 == 0 { e.append(EngineEvent(offset: 9, .cc(123, 0, channel: 0))) }
            return e
        }
        _ = Performance(blocks: 20, frames: frames, script: script).renderCountingAllocations(engine)
        let performance = Performance(blocks: 120, frames: frames) { script($0 + 20) }
        let allocations = performance.renderCountingAllocations(engine)
        #expect(allocations == 0, "\(allocations) allocations while rendering \(120 * frames) frames")
        #expect(engine.zones.isOn)
        var peak: Float = 0
        for i in 0..<(2 * frames) { peak = max(peak, abs(performance.output[i])) }
        #expect(peak > 0.01)
    }

    @Test("the allocation counter itself sees an allocation (so a zero above means something)")
    func counterWorks() {
        allocation_counter_start()
        let p = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
        let n = allocation_counter_stop()
        p.deallocate()
        #expect(n >= 1)
    }

    @Test("parameter events sent directly (wave type, attack, release, pan, bend range) allocate nothing")
    func directParametersAllocateNothing() throws {
        let engine = try Bench.engine(Self.everyWave(), voices: 8)
        let frames = 256
        let script: (Int) -> [EngineEvent] = { b in
            [EngineEvent(offset: 0, .parameter(channel: 0, .waveType, Double(b % WaveType.allCases.count))),
             EngineEvent(offset: 1, .on(UInt8(50 + b % 30))),
             EngineEvent(offset: 2, .parameter(channel: 0, .attack, 0.001 * Double(b % 10))),
             EngineEvent(offset: 3, .parameter(channel: 0, .release, 0.01 * Double(b % 10))),
             EngineEvent(offset: 4, .parameter(channel: 0, .pan, Double(b % 21) / 10 - 1)),
             EngineEvent(offset: 5, .parameter(channel: 0, .pitchBendRange, Double(b % 24))),
             EngineEvent(offset: 100, .off(UInt8(50 + (b + 25) % 30))),
             EngineEvent(offset: 200, .cc(123, 0))]
        }
        _ = Performance(blocks: 12, frames: frames, script: script).renderCountingAllocations(engine)
        let allocations = Performance(blocks: 60, frames: frames) { script($0 + 12) }.renderCountingAllocations(engine)
        #expect(allocations == 0, "\(allocations) allocations")
    }
}
