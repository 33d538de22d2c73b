import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import ToneShaperALSALive
import ToneShaperCore
import ToneShaperEditor
import ToneShaperInstrument
import ToneShaperLive

struct EditCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract: "Draw your own tone shapes: a local editor page with continuous play.",
        discussion: """
            Starts the shape editor on 127.0.0.1 (this machine only), prints its address and opens \
            it in your browser when there is a display. The address carries a secret made for this \
            run (?token=…): only a browser that opened it, and only the editor's own page, can use \
            the editor; other local users and other web pages cannot. Draw the frequency curve with points or a \
            sketch, hear it while you edit (Play streams it to the page), save it to your library \
            ($XDG_DATA_HOME/toneshaper/presets, default ~/.local/share/toneshaper/presets), where \
            `render`, `play` and the rest find it by name.

            With --device or --connect (the same options as `play`) the shape being edited is also \
            an ALSA instrument: play it from a MIDI keyboard and hear every edit at once. \
            Ctrl-C stops.
            """)

    @Argument(help: "Shape to start from: a name or program (see `toneshaper presets`), or a shape .json file.", completion: .shapeNames)
    var shape: String?

    @Option(name: .long, help: "Port on 127.0.0.1 to serve on (default: a free one).")
    var port: Int = 0

    @Flag(name: .customLong("no-open"), help: "Do not open the page in a browser.")
    var noOpen = false

    @OptionGroup(title: "Play the edited shape through ALSA (optional)")
    var live: LiveDeviceOptions

    @Option(name: .long, help: "Voices for the ALSA instrument.")
    var voices: Int = 32

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port \(port) must be 0...65535") }
        guard (1...4096).contains(voices) else { throw ValidationError("--voices \(voices) must be 1...4096") }
    }

    func run() throws {
        var config = EditorServer.Configuration()
        config.port = port
        config.initialShape = shape
        let server = try EditorServer(configuration: config)
        for note in server.libraryNotes { Console.error("toneshaper: note: \(note)") }

        var player: ALSAPlayer?
        if live.device != nil || !live.connect.isEmpty {
            let sequencer = try live.openSequencer()
            let pcm = try live.openPCM()
            let engine = try ShapeExport.engine(for: server.startingShape, sampleRate: Double(pcm.sampleRate),
                                                voices: voices, pointCapacity: Shape.maximumPoints)
            let instrument = ALSAPlayer(instrument: Instrument(engine: engine), pcm: pcm, source: .sequencer(sequencer),
                                        channelFilter: live.channelFilter, ignoresProgramChanges: true, realtime: live.realtime)
            try instrument.start()
            if let warning = instrument.realtimeWarning { Console.error(warning) }
            server.attach(instrument: instrument.session)
            Console.out("\(live.inputDescription(sequencer)); \(LiveDeviceOptions.deviceDescription(pcm))")
            player = instrument
        }

        let failure = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let open = !noOpen
        let opener = Mutex<String?>(nil)
        Task {
            do {
                try await server.run { port in
                    // The secret is in the address: printed for the user (stdout, their terminal),
                    // never logged, and handed to the browser through a file only they can read.
                    let url = server.access.openingURL(port: port)
                    Console.out("toneshaper edit: \(url) (editing \(server.startingShape.name); Ctrl-C stops)")
                    if open { opener.withLock { $0 = Self.openInBrowser(url, port: port) } }
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        // The instrument's device is looked after while the editor serves (a lost one is reopened).
        while done.wait(timeout: .now() + .milliseconds(10)) == .timedOut {
            guard let player else { continue }
            for notice in player.poll() {
                var line = live.line(for: notice)
                if case .deviceLost = notice { line += "; trying to reopen the device every second" }
                Console.error(line)
            }
        }
        if let file = opener.withLock({ $0 }) { unlink(file) }
        if let player {
            let summary = player.stop()
            Console.out("instrument stopped: \(summary.notesPlayed) notes played, \(summary.xruns) xruns")
        }
        if let message = failure.withLock({ $0 }) { throw CLIError("the editor stopped: \(message)") }
    }

    /// xdg-open, only when there is a display to open it on and the program exists. As Jupyter does,
    /// the browser is given a 0600 file that redirects to the address, so the secret is not on
    /// xdg-open's or the browser's command line, which every local user can read (/proc/PID/cmdline).
    /// Returns the file to remove when the editor stops.
    static func openInBrowser(_ url: String, port: Int) -> String? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil else { return nil }
        let file: String
        do {
            file = try redirectFile(to: url, port: port)
        } catch {
            Console.error("toneshaper: \(error); open the address above yourself")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", URL(fileURLWithPath: file).absoluteString]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { Console.error("toneshaper: could not run xdg-open (\(error)); open the address above yourself") }
        return file
    }

    /// A page that sends the browser on to `url`, created 0600 (O_EXCL: never an existing file) in
    /// $XDG_RUNTIME_DIR (the user's own), else the temporary folder.
    static func redirectFile(to url: String, port: Int) throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let folder = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.temporaryDirectory.path
        let path = "\(folder)/toneshaper-edit-\(port)-\(UInt64.random(in: 0...UInt64.max)).html"
        let html = """
            <!doctype html><html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\(url)">
            <title>ToneShaper editor</title></head><body><p><a href="\(url)">Open the ToneShaper editor</a></p></body></html>

            """
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError("cannot create \(path) to open the browser with: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(html.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            unlink(path)
            throw CLIError("cannot write \(path) to open the browser with: \(String(cString: strerror(errno)))")
        }
        return path
    }
}
