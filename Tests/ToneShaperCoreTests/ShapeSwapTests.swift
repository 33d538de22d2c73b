import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// Editing while playing: an edited shape swapped into a running engine is heard at once, at the
/// note's place in the shape, with the phase running on (no click).
@Suite("Swapping an edited shape into a playing engine")
struct ShapeSwapTests {
    static let rate = Bench.rate

    /// Renders `frames` frames, left channel.
    static func render(_ engine: Engine, _ frames: Int, _ events: [EngineEvent] = []) -> [Float] {
        Signal.left(engine.render(frames: frames, events: events))
    }

    static func swapEngine(_ shape: Shape, voices: Int = 4) throws -> Engine {
        var config = EngineConfiguration(sampleRate: rate, voices: voices)
        config.pointCapacity = Shape.maximumPoints
        return Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
    }

    @Test("a held note changes to the edited frequency within the block, without a click")
    func heldNoteFollowsTheEdit() throws {
        let engine = try Self.swapEngine(Bench.tone(220, amplitude: 0.8))
        let half = Bench.seconds(0.3)
        var out = Self.render(engine, half, [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 127))])
        let previous = engine.replaceShape(0, with: ShapeData(Bench.tone(330, amplitude: 0.8)))
        #expect(previous == nil)  // the library's own data is not the caller's to free
        out += Self.render(engine, half)

        let before = try #require(Signal.frequency(out, sampleRate: Self.rate, in: (half - 4800)..<half))
        let after = try #require(Signal.frequency(out, sampleRate: Self.rate, in: half..<(half + 2400)))  // the first 50 ms
        #expect(abs(before - 220) < 0.5)
        #expect(abs(after - 330) < 0.5)
        // Phase continuous: the largest sample-to-sample step across the change is no larger than a
        // 330 Hz sine's own steepest step (a phase jump would show up as a step up to 2 × 0.8·gain).
        let steepest = Signal.maxJump(out, in: (half + 2400)..<(half + 7200)).jump
        let atChange = Signal.maxJump(out, in: (half - 48)..<(half + 48)).jump
        #expect(atChange <= steepest * 1.05, "step \(atChange) at the change, \(steepest) steady")
    }

    @Test("the swap takes every setting: wave, amplitude, root note; the swapped-out data comes back to be freed")
    func settingsAndOwnership() throws {
        let engine = try Self.swapEngine(Bench.tone(220, amplitude: 0.5))
        let block = Bench.seconds(0.2)
        let start = Self.render(engine, block, [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 127))])
        var edited = Bench.tone(220, wave: .bandLimitedSquare, amplitude: 0.25, rootNote: 57)  // an octave up at key 69
        edited.points = [.init(time: 0, frequency: 200), .init(time: 1, frequency: 240)]
        edited.minFrequency = 200; edited.maxFrequency = 240
        let first = ShapeData(edited)
        #expect(engine.replaceShape(0, with: first) == nil)
        let after = Self.render(engine, block)
        // Root 57 under key 69 doubles the curve; the pass runs 200 → 240 Hz, so at ~0.3 s of a 1 s
        // pass the note is near 2 × 212 Hz.
        let f = try #require(Signal.frequency(after, sampleRate: Self.rate, in: (block / 2)..<block))
        #expect(f > 2 * 200 && f < 2 * 240, "measured \(f) Hz")
        // The square's level is set by the new amplitude (ramped): its peak is below the sine's.
        #expect(Signal.peak(after, in: (block / 2)..<block) < Signal.peak(start, in: (block / 2)..<block))
        let second = ShapeData(Bench.tone(300))
        let returned = try #require(engine.replaceShape(0, with: second))
        #expect(returned.info == first.info)
        returned.deallocate()
    }

    @Test("a shape as large as the slots allow swaps in; the engine frees what it holds")
    func largestShape() throws {
        let engine = try Self.swapEngine(Bench.tone(220))
        #expect(engine.pointCapacity == Shape.maximumPoints)
        var big = Bench.tone(440)
        big.points = (0..<Shape.maximumPoints).map { .init(time: Double($0) / Double(Shape.maximumPoints - 1), frequency: 400 + Double($0 % 7) * 10) }
        big.minFrequency = 400; big.maxFrequency = 460; big.fidelity = 100_000
        try big.validate()
        _ = engine.replaceShape(0, with: ShapeData(big))
        let out = Self.render(engine, Bench.seconds(0.2), [EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 127))])
        let f = try #require(Signal.frequency(out, sampleRate: Self.rate, in: 2400..<9600))
        #expect(f > 400 && f < 460)
    }
}
