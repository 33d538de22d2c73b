import ToneShaperALSA
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperMIDI
import ToneShaperRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    /// Something the control thread should tell the musician, from `poll()`.
    public enum Notice: Equatable {
        /// The device failed beyond recovery: playing goes on silently (and into the recording),
        /// and it is tried again every `reopenInterval` seconds.
        case deviceLost(ALSAError, atSeconds: Double)
        /// A negotiated device timed out right after it started: opened again with a longer period.
        case deviceRenegotiated(ALSAError, periodFrames: Int, periods: Int)
        /// The device is back after `seconds` without sound, with the period sizes it took this time.
        case deviceBack(seconds: Double, outages: Int, periodFrames: Int, periods: Int)
    }

    /// Where the notes come from.
    public enum Source {
        /// A keyboard or any sequencer client: open-ended; events land at the next period start.
        case sequencer(SequencerInput)
        /// A known performance (MIDI file, script) with exact frames, rendered up to `endFrame`.
        case performance([TimedMIDIMessage], endFrame: Int64)
    }

    public let session: LiveSession
    public let input: LiveInput
    /// The device as first opened (its settings are what a reopen asks for).
    public let pcm: PCMOutput
    /// Seconds between attempts to open a lost device again.
    public var reopenInterval: Double = 1
    private let audio: AudioThread
    private let realtime: Bool
    /// Opens the device again after a loss (nil: the loss is final, as before reopening existed).
    private let reopen: ((PCMOutput.Request) throws -> PCMOutput)?
    /// Every device opened, kept alive while the audio thread may use it; the last is current.
    private var devices: [PCMOutput]
    private var handledLosses = 0
    private var outageStarted: Int64?
    private var nextAttempt: Int64 = 0
    private var nextRequest: PCMOutput.Request
    private var currentOpened: Int64 = 0
    private var outages = 0
    private var silentNanoseconds: Int64 = 0
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
    ///   - reopen: opens the device again after it was lost (`PCMOutput.init` by default; nil: a
    ///     lost device ends the sound for good, and the summary reports it).
    public init(engine: Engine, pcm: PCMOutput, source: Source, recorder: AudioRecorder? = nil,
                recordMIDI: Bool = false, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false,
                realtime: Bool = true, reopen: ((PCMOutput.Request) throws -> PCMOutput)? = { try PCMOutput($0) }) {
        precondition(pcm.channels == 2, "the engine renders stereo")
        precondition(Int(engine.sampleRate) == pcm.sampleRate, "build the engine for the negotiated rate")
        switch source {
        case .sequencer(let sequencer):
            session = LiveSession(engine: engine, recorder: recorder, recordMIDI: recordMIDI)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            self.sequencer = sequencer
            feeder = nil
            let input = self.input
            sequencer.onEvent = { input.receive($0, arrival: $1) }
        case .performance(let messages, let endFrame):
            session = LiveSession(engine: engine, eventCapacity: EventFeeder.ringCapacity(for: messages.count),
                                  recorder: recorder, recordMIDI: recordMIDI, endFrame: endFrame)
            input = LiveInput(session: session, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges)
            feeder = EventFeeder(messages: messages, input: input)
            sequencer = nil
        }
        self.pcm = pcm
        self.realtime = realtime
        self.reopen = reopen
        self.devices = [pcm]
        self.nextRequest = pcm.request
        // Live events sound the device buffer plus one period after they arrive (see LiveSession.frame(arrivedAt:)).
        session.eventLatency = pcm.bufferFrames + pcm.periodFrames
        let session = self.session
        audio = AudioThread(pcm: pcm, realtime: realtime) { buffer, frames, time in
            session.observeDevice(delay: time.delay, at: time.nanoseconds)
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
        currentOpened = MonotonicClock.nanoseconds()
        started = true
        feeder?.start()
        if let sequencer {
            do { try sequencer.start(realtimePriority: realtime ? AudioThread.defaultPriority + 5 : nil) } catch {
                _ = stop()
                throw error
            }
        }
    }

    /// True when the performance has been rendered to its end, or the device was lost with no way to reopen it.
    public var isFinished: Bool { session.isFinished || (started && reopen == nil && audio.lostDevices > 0) }

    /// What has been applied so far (with `recordMIDI`), as `poll()` collected it.
    public var playedSoFar: [TimedMIDIMessage] { played }

    /// Collects what the audio thread applied, and looks after the device: a lost one is closed and
    /// opened again every `reopenInterval` seconds until it returns. Call every few milliseconds
    /// while playing (when recording MIDI, so its ring never fills); returns what to tell the musician.
    @discardableResult
    public func poll() -> [Notice] {
        session.collectPlayedMIDI(into: &played)
        guard let reopen else { return [] }
        var notices: [Notice] = []
        let now = MonotonicClock.nanoseconds()
        let lost = audio.lostDevices
        if lost > handledLosses, let failure = audio.lastFailure {
            // The audio thread has let go of the current device: ours to close.
            handledLosses = lost
            devices.last?.close()
            let seconds = Double(session.framesRendered) / Double(pcm.sampleRate)
            let playedFor = Double(now - currentOpened) * 1e-9
            if nextRequest.negotiate && failure.code == -EIO && playedFor < 15 && nextRequest.periodFrames < 4096 {
                // A negotiated setup the driver could not keep up with (a "playback write timeout"
                // right away): a longer period is the usual cure; try it at once.
                nextRequest.periodFrames *= 2
                notices.append(.deviceRenegotiated(failure, periodFrames: nextRequest.periodFrames, periods: nextRequest.periods))
                nextAttempt = now
            } else {
                notices.append(.deviceLost(failure, atSeconds: seconds))
                nextAttempt = now + Int64(reopenInterval * 1e9)
            }
            outageStarted = now
            outages += 1
        }
        if let started = outageStarted, now >= nextAttempt, audio.offerTaken {
            nextAttempt = now + Int64(reopenInterval * 1e9)
            if let device = try? reopen(nextRequest), device.sampleRate == pcm.sampleRate, device.channels == pcm.channels {
                devices.append(device)
                if audio.offer(device) {
                    silentNanoseconds += now - started
                    outageStarted = nil
                    currentOpened = now
                    notices.append(.deviceBack(seconds: Double(now - started) * 1e-9, outages: outages, periodFrames: device.periodFrames,
                                               periods: device.bufferFrames / max(1, device.periodFrames)))
                }
            }
        }
        return notices
    }

    /// Stops in dependency order — MIDI thread, audio thread, PCM (played out), recorder (file
    /// finalised) — and reports. Safe to call more than once: later calls return the same summary.
    public func stop() -> LiveSummary {
        if let summary { return summary }
        feeder?.stop()
        sequencer?.stop()
        audio.stop()
        // Lost and not back: that is the failure to report (a device that came back is only counted).
        let audioFailure = audio.failure
        if audioFailure == nil { try? devices.last?.drain() }
        let xruns = devices.reduce(0) { $0 + $1.xrunCount }
        for device in devices { device.close() }
        if let started = outageStarted { silentNanoseconds += MonotonicClock.nanoseconds() - started; outageStarted = nil }
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
            audioFailure: audioFailure, midiFailure: sequencer?.failure, midiOverruns: sequencer?.overrunCount ?? 0,
            deviceOutages: outages, secondsWithoutDevice: Double(silentNanoseconds) * 1e-9)
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
