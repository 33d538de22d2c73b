import Testing
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

/// The editor's playhead: the audio thread says where each sounding note is in its pass.
@Suite("Where the sounding notes are in their pass")
struct PlayheadTests {
    /// A half-second glide at 48 kHz: a pass is ⌊0.5 · 48 000⌋ = 24 000 frames.
    static func session(voices: Int = 4) throws -> LiveSession {
        let shape = Shape(name: "glide", points: [.init(time: 0, frequency: 220), .init(time: 0.5, frequency: 440)],
                          duration: 0.5, minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: 1000,
                          attack: 0.005, release: 0.05)
        return LiveSession(engine: try ShapeExport.engine(for: shape, sampleRate: 48_000, voices: voices))
    }

    static func run(_ session: LiveSession, periods: Int, frames: Int = 128) {
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { buffer.deallocate() }
        for _ in 0..<periods { session.renderPeriod(into: buffer, frames: frames) }
    }

    @Test("a note shows up at frames / pass frames, wraps into its next pass, is marked released, then leaves")
    func noteFollowsItsPass() throws {
        let session = try Self.session()
        let input = LiveInput(session: session)
        #expect(session.playheads.read().places.isEmpty)
        _ = input.enqueue(TimedInstrumentEvent(frame: 0, .message(.noteOn(channel: 2, note: 64, velocity: 100))))

        Self.run(session, periods: 100)  // 12 800 frames into a 24 000-frame pass
        var (places, frame) = session.playheads.read()
        #expect(frame == 12_800)
        #expect(places.count == 1)
        let first = try #require(places.first)
        #expect(first.note == 64 && first.channel == 2 && !first.released)
        #expect(abs(first.pass - 12_800.0 / 24_000) < 1e-9, "\(first.pass)")

        Self.run(session, periods: 150)  // 32 000 frames: 8 000 into the second pass
        (places, frame) = session.playheads.read()
        #expect(frame == 32_000)
        let second = try #require(places.first)
        #expect(second.voice == first.voice)
        #expect(abs(second.pass - 8_000.0 / 24_000) < 1e-9, "\(second.pass)")

        _ = input.enqueue(TimedInstrumentEvent(frame: session.framesRendered, .message(.noteOff(channel: 2, note: 64, velocity: 64))))
        Self.run(session, periods: 1)
        let releasing = try #require(session.playheads.read().places.first)
        #expect(releasing.released)
        #expect(abs(releasing.pass - 8_128.0 / 24_000) < 1e-9)

        Self.run(session, periods: 40)  // 107 ms: past the 50 ms release
        #expect(session.playheads.read().places.isEmpty)
    }

    @Test("two notes started a quarter pass apart are each where their own pass is")
    func eachVoiceHasItsOwnPlace() throws {
        let session = try Self.session()
        let input = LiveInput(session: session)
        _ = input.enqueue(TimedInstrumentEvent(frame: 0, .message(.noteOn(channel: 0, note: 60, velocity: 100))))
        _ = input.enqueue(TimedInstrumentEvent(frame: 6_000, .message(.noteOn(channel: 0, note: 67, velocity: 100))))
        Self.run(session, periods: 125)  // 16 000 frames
        let places = session.playheads.read().places.sorted { $0.note < $1.note }
        #expect(places.map(\.note) == [60, 67])
        #expect(abs(places[0].pass - 16_000.0 / 24_000) < 1e-9)
        #expect(abs(places[1].pass - 10_000.0 / 24_000) < 1e-9)
    }
}

@Suite("The playhead board between the audio thread and the editor")
struct PlayheadBoardTests {
    @Test("a reader on another thread never sees half of one publication and half of the next")
    func readsAreWhole() async throws {
        let board = PlayheadBoard(capacity: 16)
        let writing = Task.detached {
            let places = UnsafeMutablePointer<VoicePlace>.allocate(capacity: 16)
            defer { places.deallocate() }
            // Publication k: (k mod 16) + 1 places, each saying k in every field it has.
            for k in 1...200_000 {
                let n = k % 16 + 1
                for i in 0..<n {
                    places[i] = VoicePlace(voice: k, channel: k % 16, note: UInt8(k % 128), released: k % 2 == 1,
                                           pass: Double(k) / 1e6)
                }
                board.publish(places, count: n, at: Int64(k))
            }
        }
        var reads = 0, torn = 0
        while reads < 20_000 {
            let (places, frame) = board.read()
            reads += 1
            guard frame > 0 else { continue }
            let k = Int(frame)
            let whole = places.count == k % 16 + 1 && places.allSatisfy {
                $0.voice == k && $0.channel == k % 16 && Int($0.note) == k % 128 && $0.released == (k % 2 == 1)
                    && $0.pass == Double(k) / 1e6
            }
            if !whole { torn += 1 }
        }
        await writing.value
        #expect(torn == 0, "\(torn) of \(reads) reads mixed two publications")
        let (last, frame) = board.read()
        #expect(frame == 200_000 && last.count == 200_000 % 16 + 1)
    }
}
