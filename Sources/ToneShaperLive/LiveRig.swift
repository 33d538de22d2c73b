import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// What every live front-end shares, whatever the backend: the session the audio thread renders,
/// the input MIDI reaches it through, the feeder of a known performance, the applied MIDI collected
/// for `--record-midi`, and the summary at the end.
///
/// A front-end (`ALSAPlayer` in ToneShaperALSALive) adds only what its backend needs: the thread or
/// callback that calls `session.renderPeriod` and writes the samples out, the MIDI reader that calls
/// `input.receive(_:from:at:)`, and how its device is lost and found again.
/// ```
/// front-end MIDI in ─┐                                   ┌─► front-end audio out
///   or file feeder   ├─► LiveInput ─► SPSCRing ─► audio thread: LiveSession.renderPeriod
///                    ┘  (filter, holders) (events)       └─► AudioRecorder.capture ─► disk thread ─► file
///                                                        └─► SPSCRing (applied MIDI) ─► control thread
/// ```
public final class LiveRig {
    /// Where the notes come from.
    public enum Source {
        /// The front-end's MIDI input: open-ended; it calls `input.receive` as messages arrive.
        case live
        /// A known performance (MIDI file, script) with exact frames, rendered up to `endFrame`.
        case performance([TimedMIDIMessage], endFrame: Int64)
    }

    public let session: LiveSession
    /// The instrument this (control) thread last built and handed over: the first, then each
    /// `offerRebuilt`. Settings are read from it, never from `session.engine`, whose reference the
    /// audio thread swaps (reading it here would race with that store).
    public private(set) var instrument: Instrument
    public let input: LiveInput
    private let feeder: EventFeeder?
    private var played: [TimedMIDIMessage] = []
    private let recordsMIDI: Bool
    /// The controls as last set (with `mirrorsControls`), kept current by `collectPlayed()`: what a
    /// saved session (NSM) restores.
    public private(set) var controls: ControlMirror?

    /// - Parameters:
    ///   - instrument: built for the device's rate; used only by the audio thread once it runs.
    ///   - recorder: opened at the device's rate, stereo; finished by `finish`.
    ///   - recordMIDI: keep every applied message (returned in the summary) for `--record-midi`.
    ///   - channelFilter: 0-based channel every source is limited to.
    ///   - mirrorsControls: keep `controls`, from what the audio thread applied.
    public init(instrument: Instrument, source: Source, recorder: AudioRecorder? = nil, recordMIDI: Bool = false,
                channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false, mirrorsControls: Bool = false) {
        recordsMIDI = recordMIDI
        self.instrument = instrument
        controls = mirrorsControls ? ControlMirror(engine: instrument.engine) : nil
        // The mirror learns from the applied messages the audio thread reports, as --record-midi does.
        let recordMIDI = recordMIDI || mirrorsControls
        switch source {
        case .live:
            session = LiveSession(instrument: instrument, recorder: recorder, recordMIDI: recordMIDI)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            feeder = nil
        case .performance(let messages, let endFrame):
            session = LiveSession(instrument: instrument, eventCapacity: EventFeeder.ringCapacity(for: messages.count),
                                  recorder: recorder, recordMIDI: recordMIDI, endFrame: endFrame)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            feeder = EventFeeder(messages: messages, input: input)
        }
    }

    /// A saved session's settings, into the engine before the audio thread starts (`Engine.restore`):
    /// the mirror starts from them, and `--record-midi` has them at frame 0, so the take re-renders
    /// with them.
    public func restore(_ controls: [MIDIMessage]) {
        instrument.engine.restore(controls)
        for message in controls { self.controls?.observe(message) }
        if recordsMIDI { played += controls.map { TimedMIDIMessage(frame: 0, message: $0) } }
    }

    /// Hands the audio thread `instrument` (the same one built again: a JACK graph's new rate) with
    /// the controls as last set, so the knobs, programs and bends stay where the player left them
    /// (with `mirrorsControls`). Control thread. What is applied between the last `collectPlayed`
    /// and the take-over (a few milliseconds) reaches only the old instrument.
    public func offerRebuilt(_ instrument: Instrument) {
        collectPlayed()
        if let controls { instrument.engine.restore(controls.messages) }
        self.instrument = instrument
        session.offer(instrument)
    }

    /// Queues a performance's first events: call before the audio thread starts.
    public func prime() { feeder?.prime() }

    /// Starts the feeder thread, which queues the rest of a performance (nothing for `.live`).
    public func startFeeding() { feeder?.start() }

    /// Stops the feeder thread. Safe to call more than once.
    public func stopFeeding() { feeder?.stop() }

    /// True when a performance has been rendered to its end.
    public var isFinished: Bool { session.isFinished }

    /// Moves what the audio thread applied into `playedSoFar`; call every few milliseconds while
    /// playing when recording MIDI, so its ring never fills.
    public func collectPlayed() {
        guard controls != nil else {
            session.collectPlayedMIDI(into: &played)
            return
        }
        let first = played.count
        session.collectPlayedMIDI(into: &played)
        for i in first..<played.count { controls!.observe(played[i].message) }
        if !recordsMIDI { played.removeAll(keepingCapacity: true) }
    }

    /// What has been applied so far (with `recordMIDI`), as `collectPlayed()` collected it.
    public var playedSoFar: [TimedMIDIMessage] { played }

    /// What the backend itself counted, for the summary.
    public struct BackendReport {
        /// Underruns the backend recovered from.
        public var xruns = 0
        /// The output error that ended the sound (device unplugged, server gone), if it did not come back.
        public var audioFailure: (any Error)?
        /// The MIDI read error that ended the front-end's MIDI thread.
        public var midiFailure: (any Error)?
        /// Times the MIDI input lost events before we saw them.
        public var midiOverruns = 0
        /// Times the device was lost (each followed by reopening, or by the end).
        public var deviceOutages = 0
        /// Time played without a device, all outages together.
        public var secondsWithoutDevice: Double = 0
        public init() {}
    }

    /// After the front-end stopped its MIDI and audio threads: the last applied MIDI collected, the
    /// recording finished (file finalised), and how it went.
    public func finish(_ backend: BackendReport) -> LiveSummary {
        collectPlayed()
        var recording: RecordingReport?
        var recordingError: (any Error)?
        if let recorder = session.recorder {
            do { recording = try recorder.finish() } catch { recordingError = error }
        }
        return LiveSummary(
            framesRendered: session.framesRendered, xruns: backend.xruns, notesPlayed: session.notesPlayed,
            lateEvents: session.lateEvents, droppedEvents: input.droppedEvents, unrecordedEvents: session.unrecordedEvents,
            playedMIDI: played, recording: recording, recordingError: recordingError,
            audioFailure: backend.audioFailure, midiFailure: backend.midiFailure, midiOverruns: backend.midiOverruns,
            deviceOutages: backend.deviceOutages, secondsWithoutDevice: backend.secondsWithoutDevice)
    }
}

/// How a live session went: what the exit line reports, and what --record-midi writes.
public struct LiveSummary {
    /// Frames the audio thread produced (silence after a performance's end included).
    public var framesRendered: Int64
    /// Underruns recovered by the backend.
    public var xruns: Int
    public var notesPlayed: Int
    /// Events applied after their frame (at the start of a later period).
    public var lateEvents: Int
    /// Events lost because the ring to the audio thread stayed full.
    public var droppedEvents: Int
    /// Applied messages missing from `playedMIDI` because the control thread fell behind.
    public var unrecordedEvents: Int
    /// Every applied message at the frame it was applied, in order (only with `recordMIDI`).
    public var playedMIDI: [TimedMIDIMessage]
    public var recording: RecordingReport?
    public var recordingError: (any Error)?
    /// The output error that ended the audio thread (device unplugged...), in the backend's own words.
    public var audioFailure: (any Error)?
    /// The MIDI read error that ended the MIDI thread, in the backend's own words.
    public var midiFailure: (any Error)?
    /// Times the MIDI input overflowed (events lost before we saw them).
    public var midiOverruns: Int
    /// Times the device was lost (each followed by reopening, or by the end).
    public var deviceOutages: Int = 0
    /// Time played without a device, all outages together.
    public var secondsWithoutDevice: Double = 0
}

extension LiveSummary {
    /// The applied messages as a Standard MIDI File (see `MIDIRecording.fileBytes`).
    public func midiFile(sampleRate: Double) -> [UInt8] {
        MIDIRecording.fileBytes(playedMIDI, sampleRate: sampleRate)
    }
}

/// How `--record-midi` writes what was played.
public enum MIDIRecording {
    /// A format 0 file whose ticks are no longer than a frame (24,000 per quarter at 48 kHz and
    /// 120 bpm), so reading it back at `sampleRate` gives every message its exact frame again and an
    /// offline render of the file repeats the performance.
    public static func fileBytes(_ messages: [TimedMIDIMessage], sampleRate: Double) -> [UInt8] {
        let ticks = MIDIFileWriter.sampleExactTicksPerQuarter(sampleRate: sampleRate) ?? MIDIFileWriter.maxTicksPerQuarter
        return MIDIFileWriter.write(messages, sampleRate: sampleRate, ticksPerQuarter: ticks)
    }
}
