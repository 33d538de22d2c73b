import Foundation
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperJACK
import ToneShaperJACKLive
import ToneShaperLive
import ToneShaperMIDI

extension PlayCommand {
    /// `play --jack`: the client opened first (its rate and buffer size are the graph's), the
    /// ports --connect and --output name found before anything records, then the engine built
    /// for that rate, activated, connected, and watched until Ctrl-C, the end of a --midi-in
    /// performance, or the server going away.
    /// Under a session manager, `session` names the client and gives the instrument's numbers.
    func runJACK(_ setup: InstrumentOptions.Instrument, fileFormat: AudioFileFormat?, performance: Performance?,
                 session: SessionPlay) throws {
        let client = try JACKClient(name: session.clientName(jack.clientName))
        let rate = client.sampleRate
        let sampleRate = Double(rate)
        // Every pattern is checked before a file is created: a typo costs nothing.
        let midiSources = try JACKPlayer.midiSources(client, patterns: live.connect)
        let playback = jack.noAutoConnect ? [] : try JACKPlayer.playbackTargets(client, patterns: jack.outputs)

        let performed = performance?.timedMessages(sampleRate: sampleRate)
        setup.noteSilentKeys(sampleRate: sampleRate, messages: performed)
        var config = setup.configuration(sampleRate: sampleRate, voices: session.voices, masterGain: pow(10, session.gain / 20),
                                         threads: threads)
        // The helper renders inside JACK's cycle: it gets the priority of JACK's process thread.
        if client.realtimePriority > 0 { config.helperPriority = client.realtimePriority }
        // The instrument at a rate: the graph's now, and its new one should it change (JACK's sample-rate callback).
        let rebuild: (Int) -> Instrument = { [config] newRate in
            var again = config
            again.sampleRate = Double(newRate)
            return Instrument(library: setup.library, configuration: again, controllerMap: setup.controllerMap)
        }
        let frontDoor = rebuild(rate)
        let recorder = try record.map { try AudioRecorder(path: $0, format: fileFormat!, sampleRate: rate, channels: 2) }

        let source: JACKPlayer.Source
        let endFrame: Int64?
        if let performance {
            let frames = Int64(try limit.frames(seconds: performance.durationSeconds + tail, rate: rate, what: performance.name))
            source = .performance(performed ?? [], endFrame: frames)
            endFrame = frames
        } else {
            source = .live
            endFrame = nil
        }
        let player = try JACKPlayer(client: client, instrument: frontDoor, source: source, recorder: recorder,
                                    recordMIDI: recordMIDI != nil, channelFilter: session.channelFilter,
                                    ignoresProgramChanges: setup.ignoresProgramChanges, rebuild: rebuild,
                                    mirrorsControls: session.mirrorsControls)
        session.restore(into: player.rig)
        let signals = session.signals ?? StopSignals()
        defer { signals.restore() }
        try player.start()
        do {
            try player.connect(midiSources: midiSources, playback: playback)
        } catch {
            // Connections that vanished between the check and now: stop cleanly, then say so.
            _ = player.stop()
            throw error
        }
        Console.out(jackStartLine(player, midiSources: midiSources, playback: playback, performance: performance, endFrame: endFrame))
        try session.session?.opened()

        var bufferFrames = player.bufferFrames
        while !signals.raised && !player.isFinished {
            usleep(10_000)
            for notice in player.poll() {
                switch notice {
                case .started(let frame):
                    Console.out("first cycle at JACK frame \(frame) (frame 0 of --record and --record-midi)")
                case .sampleRateChanged(let from, let to):
                    Console.error("toneshaper: the JACK graph now runs at \(to) Hz; ToneShaper was started at \(from) Hz and plays "
                                  + "\(String(format: "%.2f", 12 * log2(Double(to) / Double(from)))) semitones off until restarted")
                case .sampleRateFollowed(let from, let to, _, let recording):
                    Console.error("toneshaper: the JACK graph now runs at \(to) Hz (was \(from) Hz); ToneShaper follows it, "
                                  + "the notes sounding at the change cut" + (recording.map { "; --record \($0)" } ?? ""))
                case .serverGone:
                    break  // said once, by finish(), as the exit's reason
                }
            }
            session.serve(player.rig)
            if player.bufferFrames != bufferFrames {
                bufferFrames = player.bufferFrames
                Console.out("JACK buffer size now \(bufferFrames) frames (latency \(Self.milliseconds(bufferFrames, rate: rate)) ms)")
            }
        }
        let summary = player.stop()
        try finish(summary, sampleRate: sampleRate, endFrame: endFrame)
    }

    /// One line: the client and its ports, where they are connected, the graph's rate and period.
    func jackStartLine(_ player: JACKPlayer, midiSources: [String], playback: [String], performance: Performance?,
                       endFrame: Int64?) -> String {
        let client = player.client
        let rate = client.sampleRate
        var from: String
        if let midiPort = player.midiPort {
            from = "JACK MIDI in \(midiPort.name)"
            from += midiSources.isEmpty ? " (connect a keyboard with: jack_connect KEYBOARD_PORT \(midiPort.name))"
                                        : " (connected from \(midiSources.joined(separator: ", ")))"
        } else {
            let seconds = Double(endFrame ?? 0) / Double(rate)
            from = "playing \(performance?.name ?? "?") (\(String(format: "%.2f", seconds)) s)"
        }
        let to = playback.isEmpty ? "not connected" : "to \(playback.joined(separator: ", "))"
        return "\(from); JACK client '\(client.name)' on server '\(client.serverName)': \(rate) Hz, buffer \(client.bufferSize) frames "
            + "(latency \(Self.milliseconds(client.bufferSize, rate: rate)) ms); \(player.leftPort.name), \(player.rightPort.name) \(to); Ctrl-C stops"
    }

    static func milliseconds(_ frames: Int, rate: Int) -> String {
        String(format: "%.1f", Double(frames) / Double(max(1, rate)) * 1000)
    }
}
