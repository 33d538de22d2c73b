import Foundation
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI
import ToneShaperNSM

/// `play` under a New Session Manager (RaySession, Agordejo, Ardour's NSM, nsmd): when `NSM_URL`
/// is set, the program announces itself, waits for `/nsm/client/open` before it opens any port,
/// names its ports with the client id, starts from the session's saved state when there is one,
/// and saves it on `/nsm/client/save`. SIGTERM stops it as Ctrl-C does (files finalised).
///
/// The session's files are a folder, the path the server gives; the state is `state.json` in it
/// (`InstrumentState`'s versioned JSON), written whole beside it and renamed over it.
final class SessionStart {
    let client: NSMClient
    /// The session's folder for this client.
    let path: String
    let clientID: String
    let displayName: String
    /// The state the session saved last time, nil for a new session (the command line's instrument).
    let saved: InstrumentState?
    /// The signals stopping `play`, taken before waiting so SIGTERM ends the wait too.
    let signals: StopSignals
    /// The controls last saved (or restored), the mirror's revision last compared with them, and
    /// what the server was last told.
    private var savedControls: [MIDIMessage] = []
    private var seenRevision = 0
    private var toldDirty = false
    /// Whether `/nsm/client/open` has been answered.
    private var answered = false

    var statePath: String { path + "/state.json" }

    /// Announces to the server at `NSM_URL` and waits for it to open a session; nil without
    /// `NSM_URL`, or when SIGINT/SIGTERM came first. A state that cannot be read is answered with
    /// `/error` and thrown: the file is left as it is, nothing plays.
    static func begin(signals: StopSignals) throws -> SessionStart? {
        guard let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty else { return nil }
        let client = try NSMClient(url: url)
        let executable = (CommandLine.arguments.first.map { ($0 as NSString).lastPathComponent }) ?? "toneshaper"
        try client.announce(name: "ToneShaper", capabilities: ":dirty:", executable: executable)
        Console.error("toneshaper: announced to the session manager at \(url); waiting for it to open a session")
        while !signals.raised {
            for request in client.poll() {
                switch request {
                case .refused(let code, let message):
                    throw CLIError("the session manager at \(url) refused us (\(code)): \(message)")
                case .open(let path, let name, let id):
                    return try SessionStart(client: client, path: path, displayName: name, clientID: id, signals: signals)
                case .welcomed, .save, .sessionLoaded:
                    break  // nothing to save before a session is open
                }
            }
            usleep(10_000)
        }
        return nil
    }

    private init(client: NSMClient, path: String, displayName: String, clientID: String, signals: StopSignals) throws {
        self.client = client
        self.path = path
        self.displayName = displayName
        self.clientID = clientID
        self.signals = signals
        let open = "/nsm/client/open"
        func refuse(_ code: NSMClient.ErrorCode, _ message: String) -> CLIError {
            try? client.fail(open, code: code, message: message)
            return CLIError(message)
        }
        guard !clientID.isEmpty, clientID.utf8.count <= 63, !path.isEmpty else {
            throw refuse(.general, "the session manager gave no usable path or client id ('\(path)', '\(clientID)')")
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw refuse(.createFailed, "\(path): cannot be made a folder for the session (\(error.localizedDescription))")
        }
        let file = path + "/state.json"
        guard FileManager.default.fileExists(atPath: file) else {
            saved = nil
            return
        }
        let bytes: [UInt8]
        do {
            bytes = try BoundedRead.contents(of: file, limit: InstrumentState.maximumBytes)
        } catch {
            throw refuse(.badProject, "\(file): \(error.description(tooLarge: ", more than any state needs; not read"))")
        }
        do {
            saved = try InstrumentState(bytes: bytes, file: file)
        } catch {
            throw refuse(.badProject, error.description)
        }
        savedControls = saved?.controls ?? []
    }

    /// Whether `play` runs under a session manager: `NSM_URL` is set.
    static var wanted: Bool { !(ProcessInfo.processInfo.environment["NSM_URL"] ?? "").isEmpty }

    /// The instrument a saved state describes, its shapes placed after the machine's library (which
    /// program changes the state does not pin still reach).
    static func instrument(_ state: InstrumentState) throws -> InstrumentOptions.Instrument {
        let placement = state.placed(onto: try Resources.shapeLibrary().presetLibrary())
        return InstrumentOptions.Instrument(
            library: placement.library, controllerMap: state.controllerMap, channelPresets: placement.channelPresets,
            programPresets: placement.programPresets, ignoresProgramChanges: state.ignoresProgramChanges, tuning: state.tuning,
            tuningLabel: state.scale == nil ? "12-tone equal temperament" : "the session's tuning", mpe: state.mpe)
    }

    /// Tells the server the session is open, once the ports are.
    func opened() throws {
        answered = true
        try client.reply(to: "/nsm/client/open", message: saved == nil ? "new session in \(path)" : "restored \(statePath)")
    }

    /// Tells the server why the session could not be opened, when it was not told it was.
    func failOpen(_ error: any Error) {
        guard !answered else { return }
        answered = true
        try? client.fail("/nsm/client/open", code: .general, message: "\(error)")
    }

    /// Answers what the server asked since the last call: saves the state `state()` gives, and says
    /// when the controls differ from those last saved (`:dirty:`). Call it from the control loop.
    func serve(controls: ControlMirror?, state: () throws -> InstrumentState) {
        for request in client.poll() {
            switch request {
            case .save:
                do {
                    let current = try state()
                    let bytes = try current.encoded(file: statePath)
                    if let reason = PlayCommand.write(bytes, to: statePath) {
                        throw CLIError("\(statePath): cannot be written (\(reason))")
                    }
                    savedControls = current.controls
                    toldDirty = false
                    try client.reply(to: "/nsm/client/save", message: "saved \(statePath)")
                } catch {
                    try? client.fail("/nsm/client/save", code: .general, message: "\(error)")
                    Console.error("toneshaper: \(error)")
                }
            case .open:
                try? client.fail("/nsm/client/open", code: .notNow,
                                 message: "already playing \(path); switching sessions needs a restart (no :switch: capability)")
            case .welcomed, .refused, .sessionLoaded:
                break
            }
        }
        // The replayed state's own controls come back as they were saved: not a change.
        if let controls, controls.revision != seenRevision {
            seenRevision = controls.revision
            let dirty = controls.messages != savedControls
            if dirty != toldDirty, (try? client.tell(dirty: dirty)) != nil { toldDirty = dirty }
        }
    }
}

/// What a session changes in `play --jack` (JACK's half of PlayCommand lives in PlayCommand+JACK):
/// its name, the instrument's numbers, the controls restored, saves served from the control loop.
struct SessionPlay {
    let session: SessionStart?
    /// SIGINT/SIGTERM, taken before waiting for the session (nil without one).
    let signals: StopSignals?
    let restored: InstrumentState?
    /// The tuning's text, as a save keeps it.
    let tuningText: (String?, String?)
    let gain: Double
    let voices: Int
    let channelFilter: UInt8?
    let ignoresProgramChanges: Bool

    /// The client id under a session (the port names its connections were saved with), else `name`.
    func clientName(_ name: String) -> String { session?.clientID ?? name }

    var mirrorsControls: Bool { session != nil }

    /// A restored state's controls into the rig, before it starts.
    func restore(into rig: LiveRig) {
        if let restored { rig.restore(restored.controls) }
    }

    /// Answers the session manager from the control loop (after `poll()` collected the applied MIDI).
    func serve(_ rig: LiveRig) {
        guard let session, let controls = rig.controls else { return }
        let engine = rig.instrument.engine  // not rig.session's: the audio thread swaps that one
        session.serve(controls: controls) {
            try InstrumentState(engine: engine, mirror: controls, scale: tuningText.0, keymap: tuningText.1,
                                channelFilter: channelFilter, ignoresProgramChanges: ignoresProgramChanges, gain: gain)
        }
    }
}
