import AllocationCounter
import CJACK
import Foundation
import Synchronization
import TestSupport
import Testing
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperJACK
@testable import ToneShaperJACKLive
import ToneShaperLive
import ToneShaperMIDI

/// A JACK client of the test's own that keeps what reaches its input port, cycle after cycle, in
/// memory allocated before it starts (no allocation on JACK's thread). Lives as long as the test process.
final class PortCapture: @unchecked Sendable {
    let client: JACKClient
    let port: OpaquePointer
    let samples: UnsafeMutablePointer<Float>
    let capacity: Int
    let count = Atomic<Int>(0)
    /// JACK frame time of the first captured sample, + 1 (0: not yet).
    let firstFrame = Atomic<Int64>(0)

    init(server: DummyServer, seconds: Int) throws {
        client = try server.client("capture")
        guard let port = jack_port_register(client.handle, "in", JACKPortType.audio, UInt(JackPortIsInput.rawValue), 0) else {
            throw JACKError("cannot register the capture port")
        }
        self.port = port
        capacity = 48_000 * seconds
        samples = .allocate(capacity: capacity)
        samples.initialize(repeating: 0, count: capacity)
        try client.setProcess { [self] frames in
            if firstFrame.load(ordering: .relaxed) == 0 {
                firstFrame.store(Int64(jack_last_frame_time(client.handle)) + 1, ordering: .relaxed)
            }
            guard let buffer = jack_port_get_buffer(port, frames) else { return 0 }
            let input = buffer.assumingMemoryBound(to: Float.self)
            let at = count.load(ordering: .relaxed)
            let n = min(Int(frames), capacity - at)
            if n > 0 { (samples + at).update(from: input, count: n) }
            count.store(at + max(0, n), ordering: .releasing)
            return 0
        }
        try client.activate()
    }

    /// The captured samples that were session frames `range` of a player whose first cycle was at JACK frame `start`.
    func sessionFrames(_ range: Range<Int64>, start: UInt32) -> [Float] {
        let shift = Int64(start) - (firstFrame.load(ordering: .relaxed) - 1)
        let have = count.load(ordering: .acquiring)
        let lower = Int(max(0, range.lowerBound + shift)), upper = Int(min(Int64(have), range.upperBound + shift))
        guard lower < upper else { return [] }
        return Array(UnsafeBufferPointer(start: samples + lower, count: upper - lower))
    }
}

extension RealJACKServer {
    @Suite("A change of the JACK graph's sample rate is followed")
    struct JACKRateChangeTests {
        /// A4 as a pure sine: its pitch in the ports' output says which rate the engine renders at.
        static func a440(_ rate: Int) -> Engine {
            try! ShapeExport.engine(for: .constant(440), sampleRate: Double(rate), voices: 4)
        }

        static func waitFor(_ condition: () -> Bool, seconds: Double = 20) {
            let deadline = Date().addingTimeInterval(seconds)
            while !condition() && Date() < deadline { usleep(5_000) }
        }

        @Test("the sample-rate callback's new engine at 44100 Hz on a 48000 Hz server plays A4 at 440·48000/44100 Hz from the next cycle; the note sounding at the change is cut; --record is finalised at the change with what was played at 48000 Hz; --record-midi keeps every event's time at 48000 Hz")
        func rateFollowed() throws {
            let server = try DummyServer()
            defer { server.stop() }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jack-rate-\(getpid())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let capture = try PortCapture(server: server, seconds: 6)
            defer { capture.client.close() }

            let client = try server.client("ToneShaper")
            #expect(client.sampleRate == 48_000)
            let takePath = folder.appendingPathComponent("take.wav").path
            let recorder = try AudioRecorder(path: takePath, format: .wav32Float, sampleRate: client.sampleRate, channels: 2)
            // A4 from frame 0; the rate changes at about 0.5 s; A4 again at session frame 60000, then to 100000.
            let secondNote: Int64 = 60_000, end: Int64 = 100_000
            let notes = [TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 69, velocity: 100)),
                         TimedMIDIMessage(frame: secondNote, message: .noteOn(channel: 0, note: 69, velocity: 100))]
            let player = try JACKPlayer(client: client, instrument: Instrument(engine: Self.a440(48_000)), source: .performance(notes, endFrame: end),
                                        recorder: recorder, recordMIDI: true, rebuild: { Instrument(engine: Self.a440($0)) })
            try player.start()
            try player.connect(midiSources: [], playback: ["capture:in"])

            Self.waitFor { player.session.framesRendered >= 24_000 }
            // What JACK's sample-rate callback does when the graph changes rate (jackd itself cannot).
            let calledAt = player.session.framesRendered
            _ = player.processor.sampleRateChanged(44_100)
            var followed: [JACKPlayer.Notice] = []
            Self.waitFor({
                followed += player.poll().filter { if case .sampleRateFollowed = $0 { true } else { false } }
                return !followed.isEmpty
            }, seconds: 3)
            // The control thread reads settings (a session's save) from the instrument it built last,
            // never through the session, whose reference the audio thread swaps.
            #expect(player.rig.instrument.engine.sampleRate == 44_100)
            Self.waitFor { player.poll(); return player.isFinished }
            let summary = player.stop()

            // Where the new engine took over (if the change was not followed: where it was asked for, so the sound is still measured).
            var swapFrame = calledAt + 512
            var recording: String?
            if case .sampleRateFollowed(let from, let to, let frame, let line)? = followed.first {
                #expect(from == 48_000 && to == 44_100)
                (swapFrame, recording) = (frame, line)
            } else {
                Issue.record("the change was not followed")
            }
            #expect(swapFrame >= 24_000 && swapFrame < secondNote - 10_000)
            #expect(recording?.contains("take.wav finalised at 48000 Hz with \(swapFrame) frames") == true)

            // The ports' output, measured at the server's rate.
            guard let start = player.startFrameTime else { Issue.record("no first cycle"); return }
            let margin: Int64 = 2048
            let before = capture.sessionFrames(margin..<(swapFrame - margin), start: start)
            let gap = capture.sessionFrames((swapFrame + margin)..<(secondNote - margin), start: start)
            let after = capture.sessionFrames((secondNote + margin)..<(end - margin), start: start)
            #expect(before.count > 10_000 && gap.count > 10_000 && after.count > 30_000)
            let beforeHz = ZeroCrossings.frequency(before, rate: 48_000) ?? 0
            let afterHz = ZeroCrossings.frequency(after, rate: 48_000) ?? 0
            #expect(abs(beforeHz - 440) < 0.5, "before the change: \(beforeHz) Hz")
            #expect(abs(afterHz - 440 * 48_000 / 44_100) < 0.5, "after the change: \(afterHz) Hz, want \(440.0 * 48_000 / 44_100)")
            #expect(gap.map(abs).max() ?? 1 < 1e-6, "the note held across the change is cut")

            // The file holds exactly what was played at 48000 Hz, and nothing rendered at 44100 Hz.
            #expect(summary.recording?.framesWritten == Int(swapFrame))
            let file = try AudioFileReader.read(path: takePath)
            #expect(file.sampleRate == 48_000 && file.frames == Int(swapFrame))
            let fileHz = ZeroCrossings.frequency(file.channel(0), rate: 48_000, in: 2048..<(Int(swapFrame) - 2048)) ?? 0
            #expect(abs(fileHz - 440) < 0.5)

            // --record-midi (written at 48000 Hz): the second A4 at the time it sounded, 60000 frames of
            // which those after the change were frames at 44100 Hz.
            let expected = swapFrame + Int64((Double(secondNote - swapFrame) * 48_000 / 44_100).rounded())
            #expect(summary.playedMIDI.map(\.frame) == [0, expected])
        }

        @Test("the knobs stay where they were set across a rate change: CC 7 turned down at 48000 Hz, the instrument rebuilt at 44100 Hz plays its next A4 at that volume, not at the volume it starts with")
        func controlsKeptAcrossTheChange() throws {
            let server = try DummyServer()
            defer { server.stop() }
            let capture = try PortCapture(server: server, seconds: 6)
            defer { capture.client.close() }
            let client = try server.client("ToneShaper")
            // Volume (CC 7) to 32 of 127, A4 from frame 0; the rate changes at about 0.5 s; A4 again at 60000.
            let secondNote: Int64 = 60_000, end: Int64 = 100_000
            let notes = [TimedMIDIMessage(frame: 0, message: .controlChange(channel: 0, controller: 7, value: 32)),
                         TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 69, velocity: 100)),
                         TimedMIDIMessage(frame: secondNote, message: .noteOn(channel: 0, note: 69, velocity: 100))]
            let player = try JACKPlayer(client: client, instrument: Instrument(engine: Self.a440(48_000)),
                                        source: .performance(notes, endFrame: end), rebuild: { Instrument(engine: Self.a440($0)) })
            try player.start()
            try player.connect(midiSources: [], playback: ["capture:in"])
            Self.waitFor { player.poll(); return player.session.framesRendered >= 24_000 }
            _ = player.processor.sampleRateChanged(44_100)
            var swapFrame: Int64?
            Self.waitFor({
                for case .sampleRateFollowed(_, _, let frame, _) in player.poll() { swapFrame = frame }
                return swapFrame != nil
            }, seconds: 3)
            Self.waitFor { player.poll(); return player.isFinished }
            _ = player.stop()

            guard let swapFrame, let start = player.startFrameTime else { Issue.record("the change was not followed"); return }
            #expect(swapFrame >= 24_000 && swapFrame < secondNote - 10_000)
            let margin: Int64 = 2048
            let before = capture.sessionFrames(margin..<(swapFrame - margin), start: start)
            let after = capture.sessionFrames((secondNote + margin)..<(end - margin), start: start)
            #expect(before.count > 10_000 && after.count > 30_000)
            func rms(_ x: [Float]) -> Double { (x.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot() }
            // A sine's RMS does not depend on its pitch: the same volume gives the same level at either rate.
            #expect(rms(before) > 0.01)
            #expect(abs(rms(after) / rms(before) - 1) < 0.02, "before the change \(rms(before)), after \(rms(after))")
        }

        @Test("the process callback allocates nothing across two rate changes (48000 → 44100 → 48000 Hz) with notes sounding")
        func zeroAllocationsAcrossTheSwap() throws {
            let server = try DummyServer()
            defer { server.stop() }
            let client = try server.client("ToneShaper")
            var notes: [TimedMIDIMessage] = []
            for k in 0..<200 {
                notes.append(TimedMIDIMessage(frame: Int64(k) * 1_000, message: .noteOn(channel: 0, note: UInt8(57 + k % 24), velocity: 90)))
                notes.append(TimedMIDIMessage(frame: Int64(k) * 1_000 + 1_900, message: .noteOff(channel: 0, note: UInt8(57 + k % 24), velocity: 0)))
            }
            notes.sort { $0.frame < $1.frame }
            let player = try JACKPlayer(client: client, instrument: Instrument(engine: Self.a440(48_000)), source: .performance(notes, endFrame: 300_000),
                                        recordMIDI: true, rebuild: { Instrument(engine: Self.a440($0)) })
            let processor = player.processor
            let tally = Tally()
            let warmUp = 20
            player.rig.prime()
            try client.setProcess { frames in
                let cycle = tally.cycles.add(1, ordering: .relaxed).newValue
                guard cycle > warmUp else { return processor.process(frames) }
                allocation_counter_start()
                let result = processor.process(frames)
                tally.allocations.add(Int(allocation_counter_stop()), ordering: .relaxed)
                tally.measured.add(1, ordering: .relaxed)
                return result
            }
            try client.activate()
            player.rig.startFeeding()

            var followed: [Int] = []
            func play(cycles: Int) {
                let target = tally.cycles.load(ordering: .relaxed) + cycles
                Self.waitFor {
                    for case .sampleRateFollowed(_, let to, _, _) in player.poll() { followed.append(to) }
                    return tally.cycles.load(ordering: .relaxed) >= target
                }
            }
            play(cycles: warmUp + 100)
            _ = processor.sampleRateChanged(44_100)
            play(cycles: 150)
            _ = processor.sampleRateChanged(48_000)
            play(cycles: 150)
            let summary = player.stop()

            #expect(followed == [44_100, 48_000])
            #expect(tally.measured.load(ordering: .relaxed) >= 300)
            #expect(tally.allocations.load(ordering: .relaxed) == 0)
            #expect(summary.notesPlayed > 80)
        }
    }
}
