import ToneShaperALSA
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperMIDI

/// Live play, put together: a MIDI source thread, the audio thread, and what the control thread
/// does to start, watch and stop them in the right order.
///
/// ```
/// sequencer reader ─┐                                  ┌─► PCMOutput.write (blocking: paces the loop)
///   or file feeder  ├─► LiveInput ─► SPSCRing ─► audio thread: LiveSession.renderPeriod
///                   ┘  (stamp, filter)    (events)      └─► AudioRecorder.capture ─► disk thread ─► file
///                                                       └─► SPSCRing (applied MIDI) ─► control thread
/// ```
/// The command-line `play` and the tests use this same object, so what the tests prove about
/// ordering, recording and stopping is what the program does.
public final class LivePlayer {
    /// Where the notes come from.
    public enum Source {
        /// A keyboard or any sequencer client: open-ended; events land at the next period start.
        case sequencer(SequencerInput)
        /// A known performance (MIDI file, script) with exact frames, rendered up to `endFrame`.
        case performance([TimedMIDIMessage], endFrame: Int64)
    }

    public let session: LiveSession
    public let input: LiveInput
    public let pcm: PCMOutput
    private let audio: AudioThread
    private let feeder: EventFeeder?
    private let sequencer: SequencerInput?
    private var played: [TimedMIDIMessage] = []
    private var started = false
    private var summary: LiveSummary?

    /// - Parameters:
    ///   - engine: built for `pcm.sampleRate`; used only by the audio thread once started.
    ///   - recorder: opened at `pcm.sampleRate`, stereo; finished by `stop()`.
    ///   - recordMIDI: keep every applied message (returned in the summary) for `--record-midi`.
    ///   - channelFilter: 0-based channel every source is limited to (the sequencer filters at decode too).
    ///   - realtime: ask for SCHED_FIFO for the audio thread.
    public init(engine: Engine, pcm: PCMOutput, source: Source, recorder: AudioRecorder? = nil,
                recordMIDI: Bool = false, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false,
                realtime: Bool = true) {
        precondition(pcm.channels == 2, "the engine renders stereo")
        precondition(Int(engine.sampleRate) == pcm.sampleRate, "build the engine for the negotiated rate")
        switch source {
        case .sequencer(let sequencer):
            session = LiveSession(engine: engine, recorder: recorder, recordMIDI: recordMIDI)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            self.sequencer = sequencer
            feeder = nil
            let input = self.input
            sequencer.onEvent = { input.receive($0) }
        case .performance(let messages, let endFrame):
            session = LiveSession(engine: engine, eventCapacity: EventFeeder.ringCapacity(for: messages.count),
                                  recorder: recorder, recordMIDI: recordMIDI, endFrame: endFrame)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            feeder = EventFeeder(messages: messages, input: input)
            sequencer = nil
        }
        self.pcm = pcm
        let session = self.session
        audio = AudioThread(pcm: pcm, realtime: realtime) { buffer, frames in
            session.renderPeriod(into: buffer, frames: frames)
        }
    }

    deinit {
        if started { _ = stop() }
    }

    /// The one-time warning to print when SCHED_FIFO was refused (after `start()`).
    public var realtimeWarning: String? { audio.realtimeWarning }

    /// Queues the first events, starts the audio thread, then the MIDI thread.
    public func start() throws {
        precondition(!started, "LivePlayer.start() called twice")
        feeder?.prime()
        try audio.start()
        started = true
        feeder?.start()
        if let sequencer {
            do { try sequencer.start() } catch {
                _ = stop()
                throw error
            }
        }
    }

    /// True when the performance has been rendered to its end, or the audio thread stopped on an error.
    public var isFinished: Bool { session.isFinished || (started && !audio.isRunning) }

    /// Collects what the audio thread applied; call every few milliseconds while playing when
    /// recording MIDI, so its ring never fills.
    public func poll() {
        session.collectPlayedMIDI(into: &played)
    }

    /// Stops in dependency order — MIDI thread, audio thread, PCM (played out), recorder (file
    /// finalised) — and reports. Safe to call more than once: later calls return the same summary.
    public func stop() -> LiveSummary {
        if let summary { return summary }
        feeder?.stop()
        sequencer?.stop()
        audio.stop()
        let audioFailure = audio.failure
        if audioFailure == nil { try? pcm.drain() }
        let xruns = pcm.xrunCount
        pcm.close()
        session.collectPlayedMIDI(into: &played)

        var recording: RecordingReport?
        var recordingError: (any Error)?
        if let recorder = session.recorder {
            do { recording = try recorder.finish() } catch { recordingError = error }
        }
        let result = LiveSummary(
            framesRendered: session.framesRendered, xruns: xruns, notesPlayed: session.notesPlayed,
            lateEvents: session.lateEvents, droppedEvents: input.droppedEvents, unrecordedEvents: session.unrecordedEvents,
            playedMIDI: played, recording: recording, recordingError: recordingError,
            audioFailure: audioFailure, midiFailure: sequencer?.failure, midiOverruns: sequencer?.overrunCount ?? 0)
        summary = result
        started = false
        return result
    }
}

/// How a live session went: what the exit line reports, and what --record-midi writes.
public struct LiveSummary {
    /// Frames the audio thread produced (silence after a performance's end included).
    public var framesRendered: Int64
    /// Underruns recovered by the PCM output.
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
    /// The PCM write error that ended the audio thread (device unplugged...).
    public var audioFailure: ALSAError?
    /// The sequencer read error that ended the MIDI thread.
    public var midiFailure: ALSAError?
    /// Times the kernel's sequencer queue overflowed (events lost before we saw them).
    public var midiOverruns: Int
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
