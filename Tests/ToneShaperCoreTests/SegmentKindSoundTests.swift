import AllocationCounter
import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

/// What each segment kind sounds like, measured on rendered audio (rising zero crossings), not
/// re-computed from a formula the engine shares.
@Suite("Segment kinds as the engine plays them")
struct SegmentKindSoundTests {
    /// A one-second glide from 110 to 880 Hz (three octaves) of the given kind, sine, at N = 1000.
    static func glide(_ kind: SegmentKind, fidelity: Int = 1000) -> Shape {
        Shape(name: "glide-\(kind)", points: [.init(time: 0, frequency: 110, kind: kind), .init(time: 1, frequency: 880)],
              duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: fidelity, rootNote: 69)
    }

    /// The frequency heard at each of `times` (seconds) while the shape's root note is held one pass.
    static func heard(_ shape: Shape, at times: [Double]) throws -> [Double] {
        let samples = try Bench.note(shape, seconds: shape.duration)
        let track = Signal.frequencyTrack(samples, sampleRate: Bench.rate)
        return times.map { Signal.frequency(at: $0, track: track) ?? .nan }
    }

    @Test("an exponential 110 → 880 Hz glide rises by equal semitones in equal times: 185, 311 and 523 Hz at a quarter, half and three quarters")
    func exponentialGlide() throws {
        let heard = try Self.heard(Self.glide(.exponential), at: [0.25, 0.5, 0.75])
        for (f, expected) in zip(heard, [184.997, 311.127, 523.251]) {
            #expect(abs(f - expected) < 1, "heard \(f) Hz, expected \(expected)")
        }
    }

    @Test("the same points linear (the article's segment) glide in equal Hz: 302.5, 495 and 687.5 Hz")
    func linearGlide() throws {
        let heard = try Self.heard(Self.glide(.linear), at: [0.25, 0.5, 0.75])
        for (f, expected) in zip(heard, [302.5, 495, 687.5]) {
            #expect(abs(f - expected) < 1, "heard \(f) Hz, expected \(expected)")
        }
    }

    @Test("a hold stays at its point's frequency until the next point's time, then jumps to it")
    func hold() throws {
        let shape = Shape(name: "holds", points: [.init(time: 0, frequency: 220, kind: .hold), .init(time: 0.5, frequency: 440, kind: .hold),
                                                  .init(time: 1, frequency: 330)],
                          duration: 1, minFrequency: 20, maxFrequency: 2000, fidelity: 1000)
        let samples = try Bench.note(shape, seconds: 1)
        let track = Signal.frequencyTrack(samples, sampleRate: Bench.rate)
        let first = track.filter { $0.time > 0.02 && $0.time < 0.49 }, second = track.filter { $0.time > 0.51 && $0.time < 0.98 }
        #expect(first.count > 90 && second.count > 200)
        #expect(first.allSatisfy { abs($0.frequency - 220) < 0.1 }, "\(first.map(\.frequency).min()!)…\(first.map(\.frequency).max()!)")
        #expect(second.allSatisfy { abs($0.frequency - 440) < 0.1 }, "\(second.map(\.frequency).min()!)…\(second.map(\.frequency).max()!)")
        // The step: the period that straddles 0.5 s is the only one between the two levels.
        let jump = try #require(track.firstIndex { $0.frequency > 221 })
        #expect(abs(track[jump].time - 0.5) < 0.003, "the step came at \(track[jump].time) s")
        #expect(track[jump + 1].frequency > 439.9)
    }

    @Test("fidelity N coarsens the drawn curve: at N = 2 an exponential 110 → 880 Hz glide is two straight lines through 311 Hz")
    func coarseExponential() throws {
        let heard = try Self.heard(Self.glide(.exponential, fidelity: 2), at: [0.25, 0.5, 0.75])
        // Halfway along each straight piece: (110 + 311.13)/2 and (311.13 + 880)/2.
        for (f, expected) in zip(heard, [210.56, 311.13, 595.56]) {
            #expect(abs(f - expected) < 1.5, "heard \(f) Hz, expected \(expected)")
        }
    }

    @Test("a hold and a glide down an octave read the same in every block size and on two threads")
    func blockSizeInvariant() throws {
        let shape = Shape(name: "mixed", points: [.init(time: 0, frequency: 440, kind: .exponential), .init(time: 0.2, frequency: 220, kind: .hold),
                                                  .init(time: 0.3, frequency: 660), .init(time: 0.45, frequency: 330)],
                          duration: 0.45, minFrequency: 20, maxFrequency: 2000, fidelity: 5000)
        let messages: [(frame: Int, message: MIDIMessage)] = [(0, .on(60)), (30_000, .on(67)), (50_000, .off(60))]
        var outputs: [[Float]] = []
        for (block, threads) in [(512, 1), (37, 1), (256, 2)] {
            var config = EngineConfiguration(sampleRate: Bench.rate, voices: 8)
            config.threads = threads
            let engine = Engine(library: try PresetLibrary(shapes: [shape]), configuration: config)
            outputs.append(Bench.play(engine, messages, frames: 60_000, blockFrames: block))
        }
        #expect(outputs[0] == outputs[1] && outputs[0] == outputs[2])
        #expect(Signal.peak(outputs[0]) > 0.1)
    }

    @Test("turning fidelity up to a million and down again over exponential and hold segments allocates nothing on the render path")
    func fidelitySweepAllocatesNothing() throws {
        // A siren between 20 Hz and 16 kHz: every segment asks for many pieces at a high N.
        var siren: [Shape.Point] = []
        for i in 0...64 {
            let kind: SegmentKind = i % 3 == 0 ? .hold : .exponential
            siren.append(Shape.Point(time: Double(i) / 64, frequency: i % 2 == 0 ? 20 : 16_000, kind: kind))
        }
        let shapes = [Self.glide(.exponential),
                      Shape(name: "siren", program: 1, points: siren, duration: 1, minFrequency: 20, maxFrequency: 16_000)]
        let engine = try Bench.engine(shapes, voices: 4)
        let frames = 256
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { output.deallocate() }
        // Two events a block at most, laid out before counting starts.
        let blocks = 200
        let events = UnsafeMutablePointer<EngineEvent>.allocate(capacity: 2 * blocks)
        let counts = UnsafeMutablePointer<Int>.allocate(capacity: blocks)
        defer { events.deallocate(); counts.deallocate() }
        for b in 0..<blocks {
            var e: [EngineEvent] = []
            if b % 50 == 0 { e.append(EngineEvent(offset: 0, .programChange(channel: 0, program: UInt8(b / 50 % 2)))) }
            if b % 50 == 1 { e.append(EngineEvent(offset: 0, .on(57 + UInt8(b % 12)))) }
            // Up three decades and back: the curve is rebuilt in place at every whole N it passes.
            e.append(EngineEvent(offset: 3, .parameter(channel: 0, .fidelity, [1_000_000, 3, 400_000, 17][b / 10 % 4])))
            (events + 2 * b).initialize(from: e, count: e.count)
            counts[b] = e.count
        }
        for b in 0..<20 { engine.render(frames: frames, events: UnsafeBufferPointer(start: events + 2 * b, count: counts[b]), into: output) }
        allocation_counter_start()
        for b in 20..<blocks {
            engine.render(frames: frames, events: UnsafeBufferPointer(start: events + 2 * b, count: counts[b]), into: output)
        }
        let allocations = allocation_counter_stop()
        #expect(allocations == 0, "\(allocations) allocations")
        #expect(engine.activeVoiceCount > 0)
    }
}
