import Foundation
import ArgumentParser
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperLive

/// Where live sound goes and live notes come from, the same for `play` and `edit`: the ALSA PCM
/// device and its period, and the sequencer sources to connect.
struct LiveDeviceOptions: ParsableArguments {
    @Option(name: .long, help: "ALSA PCM device (see `aplay -L`): default, hw:0, plughw:1,0, pipewire, ... (default: default)")
    var device: String?

    @Option(name: .long, parsing: .unconditional, help: "Sample rate in Hz asked of the device (it may choose a near one).")
    var rate: Int = 48_000

    @Option(name: .long, parsing: .unconditional, help: "Frames per period: the block rendered at a time (default: 128, or more where the device needs it).")
    var period: Int?

    @Option(name: .long, parsing: .unconditional, help: "Periods in the device buffer (default: 3, with at least 8 ms in all).")
    var periods: Int?

    @Option(name: .long, help: "Sequencer source to connect from: CLIENT:PORT or a client name (repeatable; see `aconnect -i`).")
    var connect: [String] = []

    @Option(name: .long, parsing: .unconditional, help: "Listen to this MIDI channel only (1-16).")
    var channel: Int?

    @Flag(inversion: .prefixedNo, help: "Real-time (SCHED_FIFO) priority for the audio thread: asked for by default; --no-realtime runs it at normal priority.")
    var realtime: Bool = true

    func validate() throws {
        guard (8_000...192_000).contains(rate) else { throw ValidationError("--rate \(rate) is outside 8000...192000 Hz") }
        if let period, !(16...16_384).contains(period) { throw ValidationError("--period \(period) must be 16...16384 frames") }
        if let periods, !(2...64).contains(periods) { throw ValidationError("--periods \(periods) must be 2...64") }
        if let channel, !(1...16).contains(channel) { throw ValidationError("--channel \(channel) must be 1...16") }
    }

    var channelFilter: UInt8? { channel.map { UInt8($0 - 1) } }

    /// The "ToneShaper" sequencer input (a session names it), connected from every --connect source.
    func openSequencer(name: String = "ToneShaper", channel: UInt8?? = .none) throws -> SequencerInput {
        let input = try SequencerInput(clientName: name, channelFilter: channel ?? channelFilter)
        for source in connect { try input.connect(from: source) }
        return input
    }

    /// Without --period/--periods the sizes are negotiated: 128 × 3 where the device takes it, else
    /// at least 3 periods and 8 ms, and a longer period if the device times out at once (see ALSAPlayer).
    func openPCM() throws -> PCMOutput {
        try PCMOutput(device: device ?? "default", sampleRate: rate, channels: 2, periodFrames: period ?? 128,
                      periods: periods ?? 3, negotiate: period == nil && periods == nil)
    }

    /// "ToneShaper input 128:0 (connected from …)" for the start line.
    func inputDescription(_ sequencer: SequencerInput) -> String {
        let connected = connect.isEmpty ? "connect a keyboard with: aconnect KEYBOARD \(sequencer.clientID):\(sequencer.portID)"
                                        : "connected from " + connect.joined(separator: ", ")
        return "ToneShaper input \(sequencer.clientID):\(sequencer.portID) (\(connected))"
    }

    /// What to tell the musician about the device (`play` adds what happens to its recordings).
    func line(for notice: ALSAPlayer.Notice) -> String {
        switch notice {
        case .deviceLost(let error, let seconds):
            return "toneshaper: \(error) at \(String(format: "%.2f", seconds)) s — playing on silently"
        case .deviceRenegotiated(let error, let period, let periods):
            return "toneshaper: \(error) right after starting; trying a longer period: \(period) × \(periods) frames"
        case .deviceBack(let seconds, let outages, let period, let periods):
            return "toneshaper: PCM device '\(device ?? "default")' is back (period \(period) × \(periods) frames) after "
                + "\(String(format: "%.1f", seconds)) s without sound (outage \(outages))"
        }
    }

    /// The device as negotiated, and the latency it gives.
    static func deviceDescription(_ pcm: PCMOutput) -> String {
        let latency = Double(pcm.bufferFrames) / Double(pcm.sampleRate) * 1000
        let count = pcm.bufferFrames / max(1, pcm.periodFrames)
        return "device \(pcm.device): \(pcm.sampleRate) Hz \(pcm.format.rawValue), period \(pcm.periodFrames) × \(count) frames"
            + (pcm.request.negotiate ? " (negotiated; set with --period/--periods)" : "")
            + ", latency \(String(format: "%.1f", latency)) ms"
    }
}
