import ToneShaperALSA
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI
import ToneShaperRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Live play through ALSA, put together: the sequencer's reader thread (or a file feeder), the
/// audio thread writing to a PCM device, and what the control thread does to start, watch and stop
/// them in the right order. Everything that is not ALSA is the backend-neutral `LiveRig`.
///
/// ```
/// sequencer reader ─┐                                  ┌─► PCMOutput.write (blocking: paces the loop)
///   or file feeder  ├─► LiveInput ─► SPSCRing ─► audio thread: LiveSession.renderPeriod
///                   ┘  (filter, holders)  (events)      └─► AudioRecorder.capture ─► disk thread ─► file
///                                                       └─► SPSCRing (applied MIDI) ─► control thread
/// ```
/// The command-line `play` and `edit` and the tests use this same object, so what the tests prove
/// about ordering, recording and stopping is what the program does.
public final class ALSAPlayer {
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
        /// A keyboard or any sequencer client: open-ended; each event lands at its own frame.
        case sequencer(SequencerInput)
        /// A known performance (MIDI file, script) with exact frames, rendered up to `endFrame`.
        case performance([TimedMIDIMessage], endFrame: Int64)
    }

    /// The backend-neutral part: session, input, feeder, collected MIDI.
    public let rig: LiveRig
    public var session: LiveSession { rig.session }
    public var input: LiveInput { rig.input }
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
    private let sequencer: SequencerInput?
    private var started = false
    private var summary: LiveSummary?

    /// - Parameters:
    ///   - instrument: built for `pcm.sampleRate`; used only by the audio thread once started.
    ///   - recorder: opened at `pcm.sampleRate`, stereo; finished by `stop()`.
    ///   - recordMIDI: keep every applied message (returned in the summary) for `--record-midi`.
    ///   - channelFilter: 0-based channel every source is limited to (the sequencer filters at decode too).
    ///   - realtime: ask for SCHED_FIFO for the audio thread.
    ///   - mirrorsControls: keep the controls as last set (`rig.controls`), for a session's state.
    ///   - reopen: opens the device again after it was lost (`PCMOutput.init` by default; nil: a
    ///     lost device ends the sound for good, and the summary reports it).
    public init(instrument: Instrument, pcm: PCMOutput, source: Source, recorder: AudioRecorder? = nil,
                recordMIDI: Bool = false, channelFilter: UInt8? = nil, ignoresProgramChanges: Bool = false,
                realtime: Bool = true, mirrorsControls: Bool = false,
                reopen: ((PCMOutput.Request) throws -> PCMOutput)? = { try PCMOutput($0) }) {
        precondition(pcm.channels == 2, "the engine renders stereo")
        precondition(Int(instrument.engine.sampleRate) == pcm.sampleRate, "build the instrument for the negotiated rate")
        switch source {
        case .sequencer(let sequencer):
            rig = LiveRig(instrument: instrument, source: .live, recorder: recorder, recordMIDI: recordMIDI,
                          channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges,
                          mirrorsControls: mirrorsControls)
            self.sequencer = sequencer
            let input = rig.input
            sequencer.onEvent = { input.receive($0, arrival: $1) }
        case .performance(let messages, let endFrame):
            rig = LiveRig(instrument: instrument, source: .performance(messages, endFrame: endFrame), recorder: recorder,
                          recordMIDI: recordMIDI, channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges,
                          mirrorsControls: mirrorsControls)
            sequencer = nil
        }
        self.pcm = pcm
        self.realtime = realtime
        self.reopen = reopen
        self.devices = [pcm]
        self.nextRequest = pcm.request
        // Live events sound the device buffer plus one period after they arrive (see LiveSession.frame(arrivedAt:)).
        rig.session.eventLatency = pcm.bufferFrames + pcm.periodFrames
        let session = rig.session
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
        precondition(!started, "ALSAPlayer.start() called twice")
        rig.prime()
        try audio.start()
        currentOpened = MonotonicClock.nanoseconds()
        started = true
        rig.startFeeding()
        if let sequencer {
            do { try sequencer.start(realtimePriority: realtime ? AudioThread.defaultPriority + 5 : nil) } catch {
                _ = stop()
                throw error
            }
        }
    }

    /// True when the performance has been rendered to its end, or the device was lost with no way to reopen it.
    public var isFinished: Bool { rig.isFinished || (started && reopen == nil && audio.lostDevices > 0) }

    /// What has been applied so far (with `recordMIDI`), as `poll()` collected it.
    public var playedSoFar: [TimedMIDIMessage] { rig.playedSoFar }

    /// Collects what the audio thread applied, and looks after the device: a lost one is closed and
    /// opened again every `reopenInterval` seconds until it returns. Call every few milliseconds
    /// while playing (when recording MIDI, so its ring never fills); returns what to tell the musician.
    @discardableResult
    public func poll() -> [Notice] {
        rig.collectPlayed()
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
        rig.stopFeeding()
        sequencer?.stop()
        audio.stop()
        // Lost and not back: that is the failure to report (a device that came back is only counted).
        let audioFailure = audio.failure
        if audioFailure == nil { try? devices.last?.drain() }
        let xruns = devices.reduce(0) { $0 + $1.xrunCount }
        for device in devices { device.close() }
        if let started = outageStarted { silentNanoseconds += MonotonicClock.nanoseconds() - started; outageStarted = nil }

        var backend = LiveRig.BackendReport()
        backend.xruns = xruns
        backend.audioFailure = audioFailure
        backend.midiFailure = sequencer?.failure
        backend.midiOverruns = sequencer?.overrunCount ?? 0
        backend.deviceOutages = outages
        backend.secondsWithoutDevice = Double(silentNanoseconds) * 1e-9
        let result = rig.finish(backend)
        summary = result
        started = false
        return result
    }
}
