import AllocationCounter
import Foundation
import Testing
import ToneShaperRealtime
import ToneShaperALSA
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

@Suite("The audio thread's step allocates nothing")
struct LiveAllocationTests {
    /// Events for period `p` (of `frames`): notes, chords past the voice count, mapped controllers,
    /// bend, pedal, program changes, all-notes-off, and all-notes-off on a period's last frame now and then.
    static func events(period p: Int, frames: Int) -> [TimedEngineEvent] {
        let start = Int64(p * frames)
        let ch = UInt8(p % 3)
        var e: [TimedEngineEvent] = [
            TimedEngineEvent(frame: start + 1, .midi(.noteOn(channel: ch, note: UInt8(40 + (p * 7) % 48), velocity: UInt8(30 + p % 90)))),
            TimedEngineEvent(frame: start + Int64(frames / 4), .midi(.controlChange(channel: ch, controller: 74, value: UInt8((p * 13) % 128)))),
            TimedEngineEvent(frame: start + Int64(frames / 3), .midi(.pitchBend(channel: ch, value: Int16((p * 997) % 16_000 - 8000)))),
            TimedEngineEvent(frame: start + Int64(frames / 2), .midi(.controlChange(channel: ch, controller: 71, value: UInt8((p * 29) % 128)))),
            TimedEngineEvent(frame: start + Int64(frames / 2), .midi(.controlChange(channel: ch, controller: 91, value: UInt8((p * 17) % 100)))),
            TimedEngineEvent(frame: start + Int64(frames - 3), .midi(.noteOff(channel: ch, note: UInt8(40 + ((p + 9) * 7) % 48), velocity: 64))),
        ]
        if p % 5 == 0 { e.append(TimedEngineEvent(frame: start + Int64(frames - 2), .midi(.controlChange(channel: ch, controller: 64, value: p % 10 == 0 ? 127 : 0)))) }
        if p % 7 == 0 { e.append(TimedEngineEvent(frame: start + Int64(frames - 2), .midi(.programChange(channel: ch, program: UInt8(p % 13))))) }
        if p % 11 == 0 { e.append(TimedEngineEvent(frame: start + Int64(frames - 1), .midi(.controlChange(channel: ch, controller: 123, value: 0)))) }
        if p % 37 == 0 { e.append(TimedEngineEvent(frame: start + Int64(frames - 1), .midi(.controlChange(channel: 0, controller: 123, value: 0)))) }
        if p % 3 == 0 { e.append(TimedEngineEvent(frame: max(0, start - 50), .midi(.channelPressure(channel: ch, pressure: 3)))) }  // late
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

@Suite("Editing while playing: the shape swap allocates nothing on the audio thread")
struct ShapeSwapAllocationTests {
    /// Edits as the editor sends them: other points, waves, envelopes, fidelity, up to the most points a shape may have.
    static func edit(_ k: Int) -> Shape {
        let count = k % 9 == 0 ? Shape.maximumPoints : 2 + k % 12
        let waves = WaveType.allCases
        var points: [Shape.Point] = []
        for i in 0..<count {
            let frequency = 150 + Double((i * 37 + k * 11) % 500)
            points.append(Shape.Point(time: Double(i) / Double(count - 1), frequency: frequency))
        }
        let envelope: AmplitudeEnvelope = k % 3 == 0 ? .linearDecay : (k % 3 == 1 ? .exponentialDecay(rate: 3) : .constant)
        var s = Shape(name: "edit-\(k)", points: points, duration: 0.2 + Double(k % 5) * 0.1, minFrequency: 100, maxFrequency: 700, wave: waves[k % waves.count],
            amplitude: 0.3, envelope: envelope,
            fidelity: 10 + (k * 97) % 5000, fourierTerms: 1 + k % 40, rootNote: 60 + k % 12)
        s.echo = Shape.Echo(delay: 0.05 + 0.01 * Double(k % 7), volume: k % 2 == 0 ? 0.3 : 0)
        return s
    }

    @Test("offer edits from the control side, render periods on the audio side: zero allocations while rendering, every edit heard")
    func swapWithoutAllocation() throws {
        var config = EngineConfiguration(sampleRate: 48_000, voices: 8)
        config.pointCapacity = Shape.maximumPoints
        config.channelPresets = Array(repeating: 0, count: 16)
        let engine = Engine(library: try PresetLibrary(shapes: [Self.edit(1)]), configuration: config)
        let session = LiveSession(engine: engine, eventCapacity: 1024)
        let input = LiveInput(session: session)
        let frames = 128
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        defer { buffer.deallocate() }
        for note in [57, 60, 64, 69] as [UInt8] {
            #expect(input.enqueue(TimedEngineEvent(frame: 0, .midi(.noteOn(channel: 0, note: note, velocity: 100))), patience: 0))
        }
        // Warm-up: one round of every wave × envelope combination, so the debug build's lazily made
        // type metadata exists before counting (as the other allocation tests warm up).
        for k in 0..<66 {
            #expect(session.offerShape(Self.edit(k), preset: 0))
            session.renderPeriod(into: buffer, frames: frames)
        }
        var allocations: Int64 = 0
        var heard = 0
        let edits = 120
        for k in 66..<(66 + edits) {
            #expect(session.offerShape(Self.edit(k), preset: 0))  // control side: builds the data (allocates)
            allocation_counter_start()
            session.renderPeriod(into: buffer, frames: frames)      // audio side: swaps it in
            session.renderPeriod(into: buffer, frames: frames)
            allocations += allocation_counter_stop()
            var peak: Float = 0
            for i in 0..<(2 * frames) { peak = max(peak, abs(buffer[i])) }
            if peak > 0 { heard += 1 }
        }
        #expect(allocations == 0)
        #expect(heard == edits)
        session.reclaimShapes()
    }
}
