import EngineFixtures
import AllocationCounter
import Foundation
import Testing
import ToneShaperRealtime
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

@Suite("The audio thread's step allocates nothing")
struct LiveAllocationTests {
    /// Events for period `p` (of `frames`): notes, chords past the voice count, mapped controllers,
    /// bend, pedal, program changes, all-notes-off, and all-notes-off on a period's last frame now and then.
    static func events(period p: Int, frames: Int) -> [TimedInstrumentEvent] {
        let start = Int64(p * frames)
        let ch = UInt8(p % 3)
        var e: [TimedInstrumentEvent] = [
            TimedInstrumentEvent(frame: start + 1, .message(.noteOn(channel: ch, note: UInt8(40 + (p * 7) % 48), velocity: UInt8(30 + p % 90)))),
            TimedInstrumentEvent(frame: start + Int64(frames / 4), .message(.controlChange(channel: ch, controller: 74, value: UInt8((p * 13) % 128)))),
            TimedInstrumentEvent(frame: start + Int64(frames / 3), .message(.pitchBend(channel: ch, value: Int16((p * 997) % 16_000 - 8000)))),
            TimedInstrumentEvent(frame: start + Int64(frames / 2), .message(.controlChange(channel: ch, controller: 71, value: UInt8((p * 29) % 128)))),
            TimedInstrumentEvent(frame: start + Int64(frames / 2), .message(.controlChange(channel: ch, controller: 91, value: UInt8((p * 17) % 100)))),
            TimedInstrumentEvent(frame: start + Int64(frames - 3), .message(.noteOff(channel: ch, note: UInt8(40 + ((p + 9) * 7) % 48), velocity: 64))),
        ]
        if p % 5 == 0 { e.append(TimedInstrumentEvent(frame: start + Int64(frames - 2), .message(.controlChange(channel: ch, controller: 64, value: p % 10 == 0 ? 127 : 0)))) }
        if p % 7 == 0 { e.append(TimedInstrumentEvent(frame: start + Int64(frames - 2), .message(.programChange(channel: ch, program: UInt8(p % 13))))) }
        if p % 11 == 0 { e.append(TimedInstrumentEvent(frame: start + Int64(frames - 1), .message(.controlChange(channel: ch, controller: 123, value: 0)))) }
        if p % 37 == 0 { e.append(TimedInstrumentEvent(frame: start + Int64(frames - 1), .message(.controlChange(channel: 0, controller: 123, value: 0)))) }
        if p % 3 == 0 { e.append(TimedInstrumentEvent(frame: max(0, start - 50), .message(.channelPressure(channel: ch, pressure: 3)))) }  // late
        return e
    }

    @Test("pop events, render, write to a capture PCM and capture to the recorder: zero allocations after warm-up")
    func zeroAllocations() throws {
        let folder = try CaptureFolder()
        defer { folder.remove() }
        let pcm = try PCMOutput(device: "capture", periodFrames: 128, configText: folder.configText)
        let recorder = try AudioRecorder(path: folder.path("take.wav"), format: .wav32Float, sampleRate: pcm.sampleRate, channels: 2)
        let session = LiveSession(engine: Fixtures.engine(voices: 8), eventCapacity: 8192, recorder: recorder, recordMIDI: true)
        let input = LiveInput(session: session)
        let frames = pcm.periodFrames
        let warmUp = 40, measured = 400
        for p in 0..<(warmUp + measured) {
            for event in Self.events(period: p, frames: frames) { #expect(input.enqueue(event, patience: 0)) }
        }
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { buffer.deallocate() }

        // The audio thread's loop body, exactly: AudioThread asks the device where it is, calls the
        // render closure (which feeds the device clock and renders), then writes.
        func step() throws {
            let position = pcm.playbackPosition()
            session.observeDevice(delay: position?.delay ?? 0, at: position?.nanoseconds ?? MonotonicClock.nanoseconds())
            session.renderPeriod(into: buffer, frames: frames)
            try pcm.write(buffer, frames: frames)
        }
        for _ in 0..<warmUp { try step() }
        allocation_counter_start()
        var failure: (any Error)?
        for _ in 0..<measured {
            do { try step() } catch { failure = error; break }
        }
        let allocations = allocation_counter_stop()
        #expect(failure == nil)
        #expect(allocations == 0)
        #expect(pcm.playbackPosition() != nil)
        #expect(session.deviceClock.frame(at: MonotonicClock.nanoseconds()) != nil)

        // It really did the work: notes sounded, events were applied and recorded, frames were captured.
        #expect(session.notesPlayed == warmUp + measured)
        #expect(session.lateEvents > 0)
        var played: [TimedMIDIMessage] = []
        session.collectPlayedMIDI(into: &played)
        #expect(played.count > 6 * (warmUp + measured))
        pcm.close()
        let report = try recorder.finish()
        #expect(report.framesWritten == (warmUp + measured) * frames)
        #expect(try folder.capturedFloats().count == 2 * (warmUp + measured) * frames)
    }
}
