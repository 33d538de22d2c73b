import Foundation
import ToneShaperCore
import ToneShaperMIDI
import EngineFixtures

/// A temporary folder with an alsa-lib configuration defining `capture`: a `file` PCM over `null`,
/// which stores exactly the interleaved frames written through the real snd_pcm_* calls.
/// (The null PCM never blocks, so the audio thread runs as fast as it can render.)
struct CaptureFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("toneshaper-live-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var rawPath: String { url.appendingPathComponent("out.raw").path }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Passed to `PCMOutput(configText:)`, so no environment variable is needed in-process.
    var configText: String { "pcm.capture { type file; slave.pcm \"null\"; file \"\(rawPath)\"; format \"raw\" }\n" }

    /// The captured bytes as host-order (little-endian) floats.
    func capturedFloats() throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: rawPath))
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 4)).map { Float(bitPattern: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) }
        }
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Fixtures {
    /// A short performance that touches what timing must get right: chords on two channels, notes
    /// on odd frames, a program change, controller sweeps through the map (fidelity, duration,
    /// echo), pitch bend, the sustain pedal and a voice steal — written as a Standard MIDI File and
    /// read back, so the frames are the ones a file gives.
    static func performanceFile() throws -> (messages: [TimedMIDIMessage], seconds: Double) {
        var m: [TimedMIDIMessage] = []
        func at(_ frame: Int, _ message: MIDIMessage) { m.append(TimedMIDIMessage(frame: Int64(frame), message: message)) }
        at(0, .programChange(channel: 1, program: 2))
        at(0, .controlChange(channel: 0, controller: 91, value: 40))
        for (i, note) in [60, 64, 67, 71].enumerated() {
            at(1_000 + 7 * i, .noteOn(channel: 0, note: UInt8(note), velocity: UInt8(70 + 10 * i)))
            at(30_001 + 13 * i, .noteOff(channel: 0, note: UInt8(note), velocity: 64))
        }
        for step in 0..<32 {
            at(5_000 + 700 * step, .controlChange(channel: 0, controller: 74, value: UInt8(127 - 3 * step)))
            at(5_350 + 700 * step, .pitchBend(channel: 1, value: Int16(-4000 + 250 * step)))
        }
        at(12_345, .noteOn(channel: 1, note: 48, velocity: 100))
        at(20_000, .controlChange(channel: 1, controller: 64, value: 127))
        at(24_321, .noteOff(channel: 1, note: 48, velocity: 0))
        for step in 0..<20 { at(26_000 + 911 * step, .controlChange(channel: 1, controller: 71, value: UInt8(40 + 4 * step))) }
        for i in 0..<20 {  // more notes than voices: steals
            at(40_000 + 1_003 * i, .noteOn(channel: 0, note: UInt8(50 + i), velocity: 90))
            at(58_000 + 517 * i, .noteOff(channel: 0, note: UInt8(50 + i), velocity: 64))
        }
        at(60_000, .controlChange(channel: 1, controller: 64, value: 0))
        let ticks = MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: 48_000)!
        let file = try MIDIFile.parse(MIDIFileWriter.write(m, sampleRate: 48_000, ticksPerQuarter: ticks))
        return (file.timedMessages(sampleRate: 48_000), file.durationSeconds)
    }
}
