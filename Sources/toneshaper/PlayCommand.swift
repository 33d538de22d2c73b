import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play the instrument live: MIDI from a keyboard (ALSA sequencer) or a file, sound to an ALSA device.",
        discussion: """
            Without --midi-in, opens an ALSA sequencer input named "ToneShaper" and prints its \
            address; connect a keyboard with --connect "Your Keyboard" (see `aconnect -i`) or later \
            with `aconnect`. Ctrl-C (or SIGTERM) stops cleanly: the --record file is finalised, the \
            --record-midi file written, and a summary printed.

            --midi-in FILE.mid plays a Standard MIDI File with every event at its exact frame and \
            stops --tail seconds after its last event; at any --period the sound equals \
            `toneshaper render` of the file sample for sample. \
            --midi-in - reads an event script from stdin, one event per line:
              SECONDS on NOTE [VELOCITY] | off NOTE [VELOCITY] | cc CONTROLLER VALUE |
              bend -8192..8191 | program N | pressure VALUE      [ch=1..16, default 1]
            e.g. "0.5 on 60 100", "1.0 off 60", "1.2 cc 74 30 ch=2"; '#' starts a comment.

            Latency is the whole buffer, --period × --periods frames: 128 × 3 at 48 kHz is 8 ms. \
            Smaller is snappier but underruns (counted, recovered) come sooner on a busy machine.

            --jack plays as a JACK client instead (JACK, or PipeWire through its JACK layer: \
            `pw-jack toneshaper play --jack`): a client "ToneShaper" (--jack-name) with the ports \
            midi_in, out_left and out_right, at the graph's rate and buffer size. --connect then \
            takes JACK MIDI ports, by name or regular expression (--connect "system:midi_capture_1", \
            --connect "a2j:.*Keystation"); the outputs go to the first two physical playback ports, \
            or to --output PORT (repeatable), or nowhere with --no-auto-connect. Each MIDI event \
            sounds at its own frame in the cycle it arrives in: latency is one JACK period.

            Under a New Session Manager (RaySession, Agordejo, nsmd: NSM_URL is set) it waits for \
            the session to open, names its JACK or sequencer client with the session's client id, \
            starts from the state the session saved (state.json in the session's folder) and saves \
            it there when the session does.
            """)

    @OptionGroup var live: LiveDeviceOptions

    @OptionGroup var jack: JACKOptions

    @OptionGroup var instrument: InstrumentOptions

    @OptionGroup var limit: LengthLimit

    @Option(name: .long, parsing: .unconditional, help: "Threads that render voices: 2 spreads them over a second real-time thread when one core is not enough (default 1).")
    var threads: Int = 1

    @Option(name: .long, parsing: .unconditional, help: "Master gain in dB applied to the mix before the hard clip at 0 dBFS.")
    var gain: Double = -6

    @Option(name: .long, help: "Record what is played to this audio file (.wav, .flac, .ogg).")
    var record: String?

    @Option(name: .long, help: "Format of the --record file: wav16, wav24, wav32f, flac16, flac24, ogg (default: from the extension).")
    var format: String?

    @Option(name: .customLong("record-midi"), help: "Write the MIDI events played, at the frames they were played, to this .mid file.")
    var recordMIDI: String?

    @Option(name: .customLong("midi-in"), help: "Play this .mid file, or an event script from stdin with '-', instead of the sequencer.")
    var midiIn: String?

    @Option(name: .long, parsing: .unconditional, help: "With --midi-in: seconds played after the last event, for releases and echoes.")
    var tail: Double = 2

    func validate() throws {
        guard (1...64).contains(threads) else { throw ValidationError("--threads \(threads) must be 1...64") }
        guard (-60...24).contains(gain) else { throw ValidationError("--gain \(gain) dB is outside -60...24") }
        guard tail >= 0, tail <= 3600 else { throw ValidationError("--tail \(tail) must be 0...3600 seconds") }
        if format != nil && record == nil { throw ValidationError("--format applies to --record; give --record FILE too") }
        if midiIn != nil && !live.connect.isEmpty { throw ValidationError("--connect needs the sequencer; it cannot be used with --midi-in") }
        try jack.validate(live: live)
    }

    func run() throws {
        // Under a session manager (NSM_URL), nothing opens before it opens a session (SessionStart).
        let sessionSignals = SessionStart.wanted ? StopSignals() : nil
        let session = try sessionSignals.flatMap { try SessionStart.begin(signals: $0) }
        if let sessionSignals, session == nil { sessionSignals.restore(); return }
        do {
            try play(session: session, signals: sessionSignals)
        } catch {
            session?.failOpen(error)
            throw error
        }
    }

    func play(session: SessionStart?, signals sessionSignals: StopSignals?) throws {
        let restored = session?.saved
        // Everything that can be wrong with the command line or its files is found before any device opens.
        let setup = try restored.map { try SessionStart.instrument($0) } ?? instrument.load()
        let tuningText = try session.map { _ in try restored.map { ($0.scale, $0.keymap) } ?? instrument.tuningText() } ?? (nil, nil)
        let gain = restored?.gain ?? self.gain
        let fileFormat = try record.map { try AudioFileFormat(path: $0, explicit: format) }
        let performance = try midiIn.map { try Performance.load($0) }
        let channelFilter = restored.map { $0.channelFilter } ?? live.channelFilter
        let sessionPlay = SessionPlay(session: session, signals: sessionSignals, restored: restored, tuningText: tuningText, gain: gain,
                                      voices: restored?.voices ?? instrument.voices, channelFilter: channelFilter,
                                      ignoresProgramChanges: setup.ignoresProgramChanges)
        if jack.jack { return try runJACK(setup, fileFormat: fileFormat, performance: performance, session: sessionPlay) }

        // The sequencer first: without /dev/snd/seq that is the error a keyboard player needs to see.
        let sequencer = performance == nil ? try live.openSequencer(name: sessionPlay.clientName("ToneShaper"), channel: channelFilter) : nil
        let pcm = try live.openPCM()
        let sampleRate = Double(pcm.sampleRate)
        let performed = performance?.timedMessages(sampleRate: sampleRate)
        setup.noteSilentKeys(sampleRate: sampleRate, messages: performed)

        var config = setup.configuration(sampleRate: sampleRate, voices: sessionPlay.voices, masterGain: pow(10, gain / 20),
                                         threads: threads)
        // The helper renders inside the audio thread's period: it gets the audio thread's priority.
        if live.realtime { config.helperPriority = AudioThread.defaultPriority }
        let frontDoor = Instrument(library: setup.library, configuration: config, controllerMap: setup.controllerMap)
        let recorder = try record.map { try AudioRecorder(path: $0, format: fileFormat!, sampleRate: pcm.sampleRate, channels: 2) }

        let source: ALSAPlayer.Source
        let endFrame: Int64?
        if let performance {
            // Same length as `toneshaper render` of the same file, so the two can be compared frame for frame.
            let frames = Int64(try limit.frames(seconds: performance.durationSeconds + tail, rate: pcm.sampleRate, what: performance.name))
            source = .performance(performed ?? [], endFrame: frames)
            endFrame = frames
        } else {
            source = .sequencer(sequencer!)
            endFrame = nil
        }
        let player = ALSAPlayer(instrument: frontDoor, pcm: pcm, source: source, recorder: recorder,
                                recordMIDI: recordMIDI != nil, channelFilter: channelFilter,
                                ignoresProgramChanges: setup.ignoresProgramChanges, realtime: live.realtime,
                                mirrorsControls: sessionPlay.mirrorsControls)
        // A restored session's controls, as last set, before anything plays.
        sessionPlay.restore(into: player.rig)

        let signals = sessionSignals ?? StopSignals()
        defer { signals.restore() }
        try player.start()
        if let warning = player.realtimeWarning { Console.error(warning) }
        Console.out(startLine(pcm: pcm, sequencer: sequencer, performance: performance, endFrame: endFrame))
        try session?.opened()

        while !signals.raised && !player.isFinished {
            usleep(10_000)
            for notice in player.poll() { report(notice, player: player, sampleRate: sampleRate) }
            sessionPlay.serve(player.rig)
        }
        let summary = player.stop()
        sequencer?.close()
        try finish(summary, sampleRate: sampleRate, endFrame: endFrame)
    }

    /// One line: where the notes come from, the device as negotiated, and the latency it gives.
    func startLine(pcm: PCMOutput, sequencer: SequencerInput?, performance: Performance?, endFrame: Int64?) -> String {
        let from: String
        if let sequencer {
            from = live.inputDescription(sequencer)
        } else {
            let seconds = Double(endFrame ?? 0) / Double(pcm.sampleRate)
            from = "playing \(performance?.name ?? "?") (\(String(format: "%.2f", seconds)) s)"
        }
        return "\(from); \(LiveDeviceOptions.deviceDescription(pcm)); Ctrl-C stops"
    }

    /// One line per device event; a lost device also makes the MIDI take so far safe on disk
    /// (the audio recording goes on, its header rewritten every second).
    func report(_ notice: ALSAPlayer.Notice, player: ALSAPlayer, sampleRate: Double) {
        var line = live.line(for: notice)
        if case .deviceLost = notice {
            if let record { line += " (still recording to \(record))" }
            if let recordMIDI {
                let bytes = MIDIRecording.fileBytes(player.playedSoFar, sampleRate: sampleRate)
                if let reason = Self.write(bytes, to: recordMIDI) { line += "; \(recordMIDI) cannot be written (\(reason))" }
                else { line += "; MIDI so far saved to \(recordMIDI)" }
            }
            line += "; trying to reopen the device every second"
        }
        Console.error(line)
    }

    /// Writes a small file with plain POSIX calls, so a failure is the system's own words
    /// ("No space left on device"); nil when it was written whole. A file is written beside its
    /// destination and renamed over it only once whole: a failure leaves no empty or cut-off file,
    /// and an earlier take of that name as it was. A device or pipe (`/dev/full`) is written directly.
    static func write(_ bytes: [UInt8], to path: String) -> String? {
        var status = stat()
        let exists = stat(path, &status) == 0
        if exists && (status.st_mode & S_IFMT) != S_IFREG {
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return String(cString: strerror(errno)) }
            let failure = writeAll(bytes, to: fd)
            let closed = close(fd) == 0 ? nil : String(cString: strerror(errno))
            return failure ?? closed
        }
        // Through a symbolic link, its target is replaced and the link kept.
        var destination = path
        if exists, let resolved = realpath(path, nil) {
            destination = String(cString: resolved)
            free(resolved)
        }
        let slash = destination.lastIndex(of: "/")
        let folder = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        var temporary = "\(folder).\(name).\(getpid()).partial"
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EEXIST {
            // A leftover of a process that had this id: it is ours to replace.
            _ = unlink(temporary)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        if fd < 0 {
            let error = errno
            let reason = String(cString: strerror(error))
            // A folder the user may not add to may still let an existing file be written over (not
            // a full disk: that would cut the earlier take short).
            guard exists, error == EACCES || error == EPERM else { return reason }
            temporary = destination
            fd = open(destination, O_WRONLY | O_TRUNC | O_CLOEXEC)
            guard fd >= 0 else { return reason }
        } else if exists {
            _ = fchmod(fd, status.st_mode & 0o7777)  // the take replaced keeps its permissions
        }
        var failure = writeAll(bytes, to: fd)
        if close(fd) != 0 && failure == nil { failure = String(cString: strerror(errno)) }
        if temporary != destination {
            if failure == nil && rename(temporary, destination) != 0 { failure = String(cString: strerror(errno)) }
            if failure != nil { _ = unlink(temporary) }
        }
        return failure
    }

    /// Every byte, or the system's reason why not.
    private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> String? {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return String(cString: strerror(n < 0 ? errno : ENOSPC)) }
            done += n
        }
        return nil
    }

    /// Writes the MIDI file, prints the summary, then reports the first failure (non-zero exit).
    func finish(_ summary: LiveSummary, sampleRate: Double, endFrame: Int64?) throws {
        var failures: [String] = []
        var midiLine: String?
        if let recordMIDI {
            let bytes = summary.midiFile(sampleRate: sampleRate)
            if let reason = Self.write(bytes, to: recordMIDI) {
                failures.append("\(recordMIDI): cannot be written (\(reason)); the MIDI take (\(summary.playedMIDI.count) events) is lost")
            } else {
                midiLine = "wrote \(recordMIDI) (\(summary.playedMIDI.count) events)"
            }
        }
        let frames = min(summary.framesRendered, endFrame ?? .max)
        var line = "stopped after \(String(format: "%.2f", Double(frames) / sampleRate)) s: \(summary.xruns) xruns, "
            + "\(summary.notesPlayed) notes played"
        if let report = summary.recording {
            line += ", \(report.framesWritten) frames recorded to \(report.path) (\(report.framesDropped) dropped by the recorder)"
        } else if record != nil {
            line += ", recording failed"
        } else {
            line += ", nothing recorded"
        }
        if summary.deviceOutages > 0 {
            line += ", \(summary.deviceOutages) device outage\(summary.deviceOutages == 1 ? "" : "s") ("
                + "\(String(format: "%.1f", summary.secondsWithoutDevice)) s without sound)"
        }
        Console.out(line)
        if let midiLine { Console.out(midiLine) }
        if summary.lateEvents > 0 { Console.error("toneshaper: \(summary.lateEvents) events arrived too late for their frame and were played at the next period") }
        if summary.droppedEvents > 0 { Console.error("toneshaper: \(summary.droppedEvents) events were dropped (the audio thread fell behind)") }
        if summary.unrecordedEvents > 0 { Console.error("toneshaper: \(summary.unrecordedEvents) events are missing from \(recordMIDI ?? "the MIDI recording")") }
        if summary.midiOverruns > 0 { Console.error("toneshaper: the sequencer queue overflowed \(summary.midiOverruns) times; some MIDI was lost") }
        if let error = summary.recordingError { failures.insert("\(error)", at: 0) }
        if let error = summary.midiFailure { failures.insert("\(error)", at: 0) }
        if let error = summary.audioFailure { failures.insert("\(error)", at: 0) }
        // Every failure is said, one line each; the first is the exit's.
        for other in failures.dropFirst() { Console.error("toneshaper: \(other)") }
        if let first = failures.first { throw CLIError(first) }
    }
}

/// A performance given with --midi-in: a Standard MIDI File, or an event script read from stdin ("-").
enum Performance {
    case file(name: String, MIDIFile)
    case script(EventScript)

    static func load(_ path: String) throws -> Performance {
        if path == "-" { return .script(try InputFiles.scriptFromStandardInput()) }
        return .file(name: path, try InputFiles.midiFile(path))
    }

    var name: String {
        switch self {
        case .file(let name, _): return name
        case .script: return "stdin"
        }
    }

    var durationSeconds: Double {
        switch self {
        case .file(_, let file): return file.durationSeconds
        case .script(let script): return script.durationSeconds
        }
    }

    func timedMessages(sampleRate: Double) -> [TimedMIDIMessage] {
        switch self {
        case .file(_, let file): return file.timedMessages(sampleRate: sampleRate)
        case .script(let script): return script.timedMessages(sampleRate: sampleRate)
        }
    }
}

/// SIGINT and SIGTERM as a flag the main thread polls, instead of the default of dying on the spot.
///
/// The signals are ignored at the process level and delivered to dispatch sources, whose handlers
/// run on an ordinary queue and only set an atomic flag: nothing async-signal-unsafe runs in a
/// signal context, and the main thread does the orderly shutdown (MIDI, audio, recorder, files).
/// They are blocked first (and so in every thread started after): a blocked signal waits for the
/// source, where an ignored one arriving before the source is armed (a session manager's SIGTERM
/// right after the announce) would be dropped.
final class StopSignals: @unchecked Sendable {
    private let flag = Atomic<Bool>(false)
    private let numbers: [Int32]
    private var sources: [any DispatchSourceSignal] = []

    init(_ numbers: [Int32] = [SIGINT, SIGTERM]) {
        self.numbers = numbers
        Self.mask(numbers, SIG_BLOCK)
        for number in numbers {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in flag.store(true, ordering: .releasing) }
            source.resume()
            sources.append(source)
        }
    }

    var raised: Bool { flag.load(ordering: .acquiring) }

    /// Back to the default actions, so a second Ctrl-C after stopping still ends the program.
    func restore() {
        for source in sources { source.cancel() }
        sources.removeAll()
        for number in numbers { signal(number, SIG_DFL) }
        Self.mask(numbers, SIG_UNBLOCK)
    }

    private static func mask(_ numbers: [Int32], _ how: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        pthread_sigmask(how, &set, nil)
    }
}

/// Unbuffered lines to stdout/stderr, so they appear at once even through a pipe.
enum Console {
    static func out(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    static func error(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
}
