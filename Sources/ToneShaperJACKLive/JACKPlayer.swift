import Synchronization
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperJACK
import ToneShaperLive
import ToneShaperMIDI

/// Live play as a JACK client: a MIDI input port and two audio output ports, the engine rendering
/// in JACK's process callback at the graph's rate and buffer size. Everything that is not JACK is
/// the backend-neutral `LiveRig`.
///
/// ```
/// JACK MIDI in ─► (process callback) LiveInput.receive at cycle frame + event.time ─┐
///   or file feeder ─► LiveInput ─► SPSCRing ─────────────────────────────────────────┤
///                                   (process callback) LiveSession.renderPeriod ◄────┘
///                                   └─► out_left, out_right; AudioRecorder; applied MIDI
/// ```
/// Unlike the ALSA path, a MIDI event is applied in the very cycle it arrives in, at its frame
/// within the cycle: no MIDI thread, no added period. The callback allocates nothing, takes no
/// lock and logs nothing (`JACKAllocationTests`).
///
/// A change of the graph's sample rate is followed (with `rebuild`): `poll` builds the instrument
/// again at the new rate with its controls as last set (knobs, programs, bends: the rig keeps them
/// from what was applied) and the process callback takes it over at its next cycle
/// (`JACKRateChangeTests`). The notes sounding then are cut; `--record` is finalised there;
/// `--record-midi`'s frames are converted to the starting rate. A `.performance`'s events keep
/// their frames, so after a change it plays at the new rate's tempo.
public final class JACKPlayer {
    /// Where the notes come from.
    public enum Source {
        /// The MIDI input port: open-ended.
        case live
        /// A known performance (MIDI file, script) with exact frames, rendered up to `endFrame`.
        case performance([TimedMIDIMessage], endFrame: Int64)
    }

    /// Something the control thread should tell the musician, from `poll()`.
    public enum Notice: Equatable {
        /// The first cycle ran: session frame 0 (the recording's first sample) is this JACK frame time.
        case started(jackFrame: UInt32)
        /// The server went away (or dropped the client), with its reason: the sound has ended.
        case serverGone(reason: String)
        /// The graph's rate changed and no `rebuild` was given: the engine keeps its rate (pitch shifts).
        case sampleRateChanged(from: Int, to: Int)
        /// The graph's rate changed and the instrument followed: an engine built at `to` renders
        /// from session frame `atFrame` (notes that sounded then were cut). `recording` says how the
        /// --record file was finalised at the change (or why it could not be); nil without one.
        case sampleRateFollowed(from: Int, to: Int, atFrame: Int64, recording: String?)
    }

    public let client: JACKClient
    public let rig: LiveRig
    public var session: LiveSession { rig.session }
    public var input: LiveInput { rig.input }
    /// "NAME:midi_in" (nil when playing a performance: no port to read).
    public let midiPort: JACKPort?
    public let leftPort: JACKPort
    public let rightPort: JACKPort
    /// The callbacks' work (internal: the allocation test drives it under a counter).
    let processor: JACKProcessor
    private var started = false
    private var summary: LiveSummary?
    private var announcedStart = false
    private var announcedGone = false
    private var announcedRate = 0
    /// The engine's rate now, as the control thread last learned it.
    private var followedRate: Int
    /// Each engine swap: the session frame it rendered from and its rate (for --record-midi's frames).
    private var rateChanges: [(frame: Int64, rate: Double)] = []
    private var recordingFinalised = false

    /// Registers the ports on `client` (not yet active) and prepares the session.
    /// - Parameters:
    ///   - instrument: built for `client.sampleRate`; used only by the process callback once started.
    ///   - recorder: opened at `client.sampleRate`, stereo; finished by `stop()`, or by `poll()` when
    ///     the graph's rate changes (a file cannot change rate; what follows is not recorded).
    ///   - rebuild: the same instrument built at another rate (same shapes, map, tuning, MPE zones,
    ///     gain, voices, threads), called by `poll` when the graph's rate changed, so it is
    ///     followed; nil leaves the engine at its rate and only reports the change. With it the rig
    ///     keeps the controls as last set, which the rebuilt instrument starts from.
    ///   - mirrorsControls: keep the controls as last set (`rig.controls`), for a session's state.
    public init(client: JACKClient, instrument: Instrument, source: Source, recorder: AudioRecorder? = nil,
                recordMIDI: Bool = false, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false,
                rebuild: ((Int) -> Instrument)? = nil, mirrorsControls: Bool = false) throws {
        let engine = instrument.engine
        precondition(Int(engine.sampleRate) == client.sampleRate, "build the instrument for the graph's rate")
        self.client = client
        switch source {
        case .live:
            rig = LiveRig(instrument: instrument, source: .live, recorder: recorder, recordMIDI: recordMIDI,
                          channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges,
                          mirrorsControls: mirrorsControls || rebuild != nil)
            midiPort = try client.registerMIDIInput("midi_in")
        case .performance(let messages, let endFrame):
            rig = LiveRig(instrument: instrument, source: .performance(messages, endFrame: endFrame), recorder: recorder,
                          recordMIDI: recordMIDI, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges,
                          mirrorsControls: mirrorsControls || rebuild != nil)
            midiPort = nil
        }
        leftPort = try client.registerAudioOutput("out_left")
        rightPort = try client.registerAudioOutput("out_right")
        processor = JACKProcessor(client: client, session: rig.session, input: midiPort == nil ? nil : rig.input,
                                  midiPort: midiPort, left: leftPort, right: rightPort, bufferFrames: client.bufferSize,
                                  engineRate: Int(engine.sampleRate), rebuild: rebuild)
        followedRate = Int(engine.sampleRate)
    }

    deinit {
        if started { _ = stop() }
    }

    /// Queues a performance's first events, sets the callbacks and activates the client; then the feeder starts.
    public func start() throws {
        precondition(!started, "JACKPlayer.start() called twice")
        rig.prime()
        let processor = self.processor
        try client.setProcess { processor.process($0) }
        try client.setBufferSizeChange { processor.bufferSizeChanged($0) }
        try client.setSampleRateChange { processor.sampleRateChanged($0) }
        try client.setXrun { processor.xrun() }
        client.setShutdown { processor.serverWentAway($0) }
        try client.activate()
        started = true
        rig.startFeeding()
    }

    /// The MIDI output ports the --connect patterns name (each an exact name, else a regular
    /// expression), in order; a pattern that names none is an error that says which, and what there is.
    public static func midiSources(_ client: JACKClient, patterns: [String]) throws -> [String] {
        try resolve(client, patterns: patterns, type: JACKPortType.midi, flags: .output, option: "--connect", kind: "MIDI output")
    }

    /// Where out_left and out_right go: the first two playback ports the --output patterns name
    /// (one port takes both sides), or with none the first two physical playback ports (none on
    /// a server without a sound card: then nothing is connected).
    public static func playbackTargets(_ client: JACKClient, patterns: [String]) throws -> [String] {
        if patterns.isEmpty {
            return Array(client.ports(matching: nil, type: JACKPortType.audio, flags: .physicalInput).prefix(2))
        }
        return Array(try resolve(client, patterns: patterns, type: JACKPortType.audio, flags: .input, option: "--output",
                                 kind: "audio input").prefix(2))
    }

    private static func resolve(_ client: JACKClient, patterns: [String], type: String, flags: JACKPortFlags,
                                option: String, kind: String) throws -> [String] {
        let own = client.name + ":"
        var found: [String] = []
        for pattern in patterns {
            let ports = try client.resolve(pattern, type: type, flags: flags).filter { !$0.hasPrefix(own) }
            guard !ports.isEmpty else {
                let all = client.ports(matching: nil, type: type, flags: flags).filter { !$0.hasPrefix(own) }
                throw JACKError("\(option) '\(pattern)': no JACK \(kind) port matches (there are: \(all.isEmpty ? "none" : all.joined(separator: ", ")))")
            }
            for port in ports where !found.contains(port) { found.append(port) }
        }
        return found
    }

    /// Connects the MIDI sources to our input and our outputs to `playback` (left to the first,
    /// right to the second, or to the first when there is one). Call after `start()`.
    public func connect(midiSources: [String], playback: [String]) throws {
        if let midiPort {
            for source in midiSources { try client.connect(source, to: midiPort.name) }
        }
        if let first = playback.first {
            try client.connect(leftPort.name, to: first)
            try client.connect(rightPort.name, to: playback.count > 1 ? playback[1] : first)
        }
    }

    /// True when the performance has been rendered to its end, or the server went away.
    public var isFinished: Bool { rig.isFinished || processor.isServerGone }

    /// JACK frame time of session frame 0, once the first cycle ran.
    public var startFrameTime: UInt32? { processor.startFrameTime }

    /// xruns the server reported while we were active.
    public var xruns: Int { processor.xrunCount }

    /// The largest buffer size seen so far (the buffers follow it).
    public var bufferFrames: Int { processor.currentBufferFrames }

    /// What has been applied so far (with `recordMIDI`), as `poll()` collected it.
    /// Frames at the rate play started at, as in the summary.
    public var playedSoFar: [TimedMIDIMessage] {
        let played = rig.playedSoFar
        guard !rateChanges.isEmpty else { return played }
        let start = Double(processor.engineRate)
        return played.map { TimedMIDIMessage(frame: Self.framesAtStartingRate($0.frame, startRate: start, changes: rateChanges), message: $0.message) }
    }

    /// Collects what the process callback applied, builds the instrument again when the graph's
    /// rate changed, and says what changed. Call every few milliseconds.
    @discardableResult
    public func poll() -> [Notice] {
        rig.collectPlayed()
        if let hertz = processor.takeRateToFollow(), let rebuild = processor.rebuild {
            rig.offerRebuilt(rebuild(hertz))
        }
        var notices: [Notice] = []
        if !announcedStart, let frame = processor.startFrameTime {
            announcedStart = true
            notices.append(.started(jackFrame: frame))
        }
        if let notice = followRate() { notices.append(notice) }
        let rate = processor.graphRate
        if processor.rebuild == nil && rate != 0 && rate != processor.engineRate && rate != announcedRate {
            announcedRate = rate
            notices.append(.sampleRateChanged(from: processor.engineRate, to: rate))
        }
        if !announcedGone && processor.isServerGone {
            announcedGone = true
            notices.append(.serverGone(reason: processor.shutdownReason))
        }
        return notices
    }

    /// After the process callback took over an engine at a new rate: the old one freed, the
    /// change noted for --record-midi, and the recording finalised if the rate is not its own.
    private func followRate() -> Notice? {
        guard let swap = session.reclaimEngine() else { return nil }
        let from = followedRate
        followedRate = Int(swap.sampleRate)
        rateChanges.append((swap.frame, swap.sampleRate))
        var recording: String?
        if !recordingFinalised, followedRate != processor.engineRate, let recorder = session.recorder {
            recordingFinalised = true
            do {
                let report = try recorder.finish()
                recording = "\(report.path) finalised at \(processor.engineRate) Hz with \(report.framesWritten) frames (a file cannot change rate); "
                    + "what follows is not recorded"
            } catch {
                recording = "\(error)"
            }
        }
        return .sampleRateFollowed(from: from, to: followedRate, atFrame: swap.frame, recording: recording)
    }

    /// Session frames (each rendered at the rate of the engine then playing) as frames at
    /// `startRate`: what --record-midi, written at the rate play started at, needs so every event
    /// keeps its time across a rate change (rounded to the nearest frame at `startRate`).
    static func framesAtStartingRate(_ frame: Int64, startRate: Double, changes: [(frame: Int64, rate: Double)]) -> Int64 {
        var mapped = 0.0
        var segmentStart: Int64 = 0
        var segmentRate = startRate
        for change in changes where change.frame <= frame {
            mapped += Double(change.frame - segmentStart) * startRate / segmentRate
            segmentStart = change.frame
            segmentRate = change.rate
        }
        return Int64((mapped + Double(frame - segmentStart) * startRate / segmentRate).rounded())
    }

    /// Stops in dependency order — feeder, client (no more cycles), recorder (file finalised) —
    /// and reports. Safe to call more than once: later calls return the same summary.
    public func stop() -> LiveSummary {
        if let summary { return summary }
        rig.stopFeeding()
        client.close()
        _ = followRate()  // a swap the control thread had not seen yet
        var backend = LiveRig.BackendReport()
        backend.xruns = processor.xrunCount
        if processor.isServerGone {
            let reason = processor.shutdownReason
            backend.audioFailure = JACKError("the JACK server '\(client.serverName)' went away\(reason.isEmpty ? "" : " (\(reason))")")
        }
        var result = rig.finish(backend)
        if !rateChanges.isEmpty {
            let start = Double(processor.engineRate)
            for i in result.playedMIDI.indices {
                result.playedMIDI[i].frame = Self.framesAtStartingRate(result.playedMIDI[i].frame, startRate: start, changes: rateChanges)
            }
            result.framesRendered = Self.framesAtStartingRate(result.framesRendered, startRate: start, changes: rateChanges)
        }
        summary = result
        started = false
        return result
    }
}
