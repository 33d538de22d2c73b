import AllocationCounter
import CJACK
import EngineFixtures
import Foundation
import Synchronization
import Testing
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperJACK
@testable import ToneShaperJACKLive
import ToneShaperLive
import ToneShaperMIDI

/// A jackd of the test's own (dummy driver, no real time, a name no other test uses), stopped at the end.
final class DummyServer {
    let name: String
    private let process = Process()

    init() throws {
        name = "ts-swift-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        process.executableURL = URL(fileURLWithPath: "/usr/bin/jackd")
        process.arguments = ["-n", name, "-r", "-d", "dummy", "-r", "48000", "-p", "256"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// A client on this server, once it answers (it takes a moment to start).
    func client(_ clientName: String) throws -> JACKClient {
        var lastError: (any Error)?
        for _ in 0..<100 {
            do { return try JACKClient(name: clientName, server: name) } catch { lastError = error }
            usleep(50_000)
        }
        throw lastError!
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}

/// What the callbacks report to the test thread.
final class Tally: @unchecked Sendable {
    let cycles = Atomic<Int>(0)
    let measured = Atomic<Int>(0)
    let allocations = Atomic<Int>(0)
    let largest = Atomic<Int>(0)
    let smallest = Atomic<Int>(Int.max)
}

extension RealJACKServer {
    @Suite("JACK's process callback allocates nothing")
    struct JACKAllocationTests {
        @Test("MIDI read from the port, applied at its frame, rendered, split to two ports and recorded: zero allocations, buffer size changed twice mid-play")
        func zeroAllocations() throws {
            let server = try DummyServer()
            defer { server.stop() }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jack-alloc-\(getpid())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }

            // A sender of the test's own: every cycle a note on at a moving frame, the previous note off,
            // a mapped controller, a bend; now and then the pedal, a program change, all-notes-off.
            let sender = try server.client("sender")
            guard let out = jack_port_register(sender.handle, "out", JACKPortType.midi, UInt(JackPortIsOutput.rawValue), 0) else {
                Issue.record("cannot register the sender's port"); return
            }
            let sent = Atomic<Int>(0)
            let senderCycles = Tally()
            try sender.setProcess { frames in
                let c = senderCycles.cycles.add(1, ordering: .relaxed).newValue
                guard let buffer = jack_port_get_buffer(out, frames) else { return 0 }
                jack_midi_clear_buffer(buffer)
                let n = Int(frames)
                func put(_ offset: Int, _ bytes: [UInt8]) {
                    if jack_midi_event_write(buffer, UInt32(min(n - 1, offset)), bytes, bytes.count) == 0 { sent.add(1, ordering: .relaxed) }
                }
                let ch = UInt8(c % 3)
                put(1, [0x80 | ch, UInt8(40 + ((c + 47) * 7) % 48), 64])
                put((c * 37) % n, [0x90 | ch, UInt8(40 + (c * 7) % 48), UInt8(30 + c % 90)])
                put((c * 37) % n + 1, [0xB0 | ch, 74, UInt8((c * 13) % 128)])
                put(n / 2, [0xE0 | ch, UInt8(c % 128), UInt8((c / 3) % 128)])
                if c % 5 == 0 { put(n - 2, [0xB0 | ch, 64, c % 10 == 0 ? 127 : 0]) }
                if c % 7 == 0 { put(n - 2, [0xC0 | ch, UInt8(c % 13)]) }
                if c % 11 == 0 { put(n - 1, [0xB0 | ch, 123, 0]) }
                if c % 13 == 0 { put(n - 1, [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]) }  // SysEx: ignored
                return 0
            }
            try sender.activate()

            let client = try server.client("ToneShaper")
            let recorder = try AudioRecorder(path: folder.appendingPathComponent("take.wav").path, format: .wav32Float,
                                             sampleRate: client.sampleRate, channels: 2)
            let player = try JACKPlayer(client: client, instrument: Instrument(engine: Fixtures.engine(voices: 8)), source: .live, recorder: recorder, recordMIDI: true)
            let processor = player.processor
            let tally = Tally()
            let warmUp = 40
            // The player's own callbacks, with the process one measured by the counter on JACK's thread.
            try client.setProcess { frames in
                let cycle = tally.cycles.add(1, ordering: .relaxed).newValue
                guard cycle > warmUp else { return processor.process(frames) }
                allocation_counter_start()
                let result = processor.process(frames)
                let count = allocation_counter_stop()
                tally.allocations.add(Int(count), ordering: .relaxed)
                tally.measured.add(1, ordering: .relaxed)
                tally.largest.store(max(tally.largest.load(ordering: .relaxed), Int(frames)), ordering: .relaxed)
                tally.smallest.store(min(tally.smallest.load(ordering: .relaxed), Int(frames)), ordering: .relaxed)
                return result
            }
            try client.setBufferSizeChange { processor.bufferSizeChanged($0) }
            try client.setXrun { processor.xrun() }
            try client.activate()
            try player.connect(midiSources: ["sender:out"], playback: [])

            func play(until cycles: Int) {
                let deadline = Date().addingTimeInterval(20)
                while tally.cycles.load(ordering: .relaxed) < cycles && Date() < deadline {
                    player.poll()
                    usleep(5_000)
                }
            }
            play(until: warmUp + 100)
            #expect(jack_set_buffer_size(client.handle, 128) == 0)
            play(until: warmUp + 250)
            #expect(jack_set_buffer_size(client.handle, 1024) == 0)
            play(until: warmUp + 330)
            let summary = player.stop()
            sender.close()

            #expect(tally.measured.load(ordering: .relaxed) >= 300)
            #expect(tally.allocations.load(ordering: .relaxed) == 0)
            // Both changes reached the callback: it rendered 128-frame and 1024-frame cycles.
            #expect(tally.smallest.load(ordering: .relaxed) == 128)
            #expect(tally.largest.load(ordering: .relaxed) == 1024)
            // It really did the work: notes from the port sounded, were recorded, and every frame reached the file.
            #expect(summary.notesPlayed > 300)
            #expect(summary.playedMIDI.count > 4 * 300)
            #expect(summary.droppedEvents == 0)
            #expect(summary.lateEvents == 0)
            #expect(summary.recording?.framesWritten == Int(summary.framesRendered))
            #expect(summary.framesRendered > 300 * 128)
        }

        @Test("a JACK MIDI event becomes the channel message it spells; system messages and cut-off ones are left out")
        func decoding() {
            func decode(_ bytes: [UInt8]) -> MIDIMessage? { bytes.withUnsafeBufferPointer { JACKProcessor.decode($0) } }
            #expect(decode([0x91, 60, 100]) == .noteOn(channel: 1, note: 60, velocity: 100))
            #expect(decode([0x90, 60, 0]) == .noteOff(channel: 0, note: 60, velocity: 64))
            #expect(decode([0xC3, 5]) == .programChange(channel: 3, program: 5))
            #expect(decode([0xEF, 0, 64]) == .pitchBend(channel: 15, value: 0))
            #expect(decode([0x90, 60]) == nil)
            #expect(decode([0xF0, 0x7E, 0xF7]) == nil)
            #expect(decode([0xF8]) == nil)
            #expect(decode([]) == nil)
            #expect(decode([0x90, 200, 1]) == nil)
        }
    }
}
