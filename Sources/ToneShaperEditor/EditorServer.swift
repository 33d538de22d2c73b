import Foundation
import Hummingbird
import HummingbirdWebSocket
import Synchronization
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperLibrary
import Logging
import ToneShaperLive

/// `toneshaper edit`: the shape editor's local server (Hummingbird: HTTP for the page and the
/// API, a WebSocket for continuous play), bound to 127.0.0.1 only, answering only its own page
/// in the browser that opened the address with this run's secret (`EditorAccess`). See docs/editor-api.md.
///
/// Every answer about sound comes from the instrument's own code: shapes are read by the file
/// loader, previews and exports rendered by the engine, live audio by a `LiveSession`.
public final class EditorServer: Sendable {
    public struct Configuration: Sendable {
        /// 0: any free port (the one chosen is passed to `onReady`).
        public var port = 0
        /// The shape the page opens first (a library name, program or FILE.json).
        public var initialShape: String?
        /// The built-in Presets folder (nil: the shipped one).
        public var builtInPresets: String?
        public var userLibrary = UserLibrary.standard()
        public var sampleRate = 48_000.0
        /// The page's folder (nil: installed share/toneshaper/editor, else the package resource).
        public var pageFolder: String?
        public init() {}
    }

    let configuration: Configuration
    let pageFolder: String
    /// The shape the page opens with, resolved at start so a bad name fails before serving.
    let initial: Shape?
    /// What the page and the instrument start on: `initial`, else the library's first shape.
    public let startingShape: Shape
    /// What the library said when it was read at start (overrides, clashes, skipped files), to print once.
    public let libraryNotes: [String]
    /// The ALSA instrument playing the shape being edited (`--device`/`--connect`), if any.
    let instrument: Mutex<LiveSession?>
    /// Who may use the editor: its own page, holding this run's secret (see `EditorAccess`).
    public let access = EditorAccess()

    public init(configuration: Configuration) throws {
        self.configuration = configuration
        pageFolder = try configuration.pageFolder ?? EditorPage.folder()
        var library = try Self.library(configuration)
        if let spec = configuration.initialShape {
            let index = try library.resolve(spec)  // may add the file: index only after it returns
            initial = library.entries[index].shape
        } else {
            initial = nil
        }
        startingShape = initial ?? library.entries[0].shape
        libraryNotes = library.notes
        instrument = Mutex(nil)
    }

    /// Connects the ALSA instrument: a running live session whose preset 0 is the shape being
    /// edited; every valid edit is offered to it through its lock-free shape hand-off.
    public func attach(instrument session: LiveSession) {
        instrument.withLock { $0 = session }
    }

    static func library(_ configuration: Configuration) throws -> ShapeLibrary {
        try ShapeLibrary.load(builtIn: configuration.builtInPresets ?? InstallLayout.builtInPresets(),
                              user: configuration.userLibrary)
    }

    /// Serves until SIGINT or SIGTERM (a graceful shutdown: open sockets are closed, then it returns).
    public func run(onReady: @escaping @Sendable (Int) -> Void) async throws {
        let router = Router()
        // First: nothing below it (the page's files, every route) sees a refused request.
        router.middlewares.add(EditorGuardMiddleware(access: access))
        router.middlewares.add(FileMiddleware(pageFolder, urlBasePath: "/page", searchForIndexHtml: false, logger: Self.quietLogger()))
        addRoutes(router)
        let webSocketRouter = Router(context: BasicWebSocketRequestContext.self)
        // A refused upgrade is not upgraded: the request then reaches the HTTP router, whose guard
        // answers 403 with the reason, and no stream is started.
        webSocketRouter.ws("/api/live") { [access] request, _ in
            access.verdict(request) == .allowed ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { [self] inbound, outbound, _ in
            try await live(inbound: inbound, outbound: outbound)
        }
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: webSocketRouter, configuration: .init(ws: .init(maxFrameSize: 1 << 22))),
            configuration: .init(address: .hostname("127.0.0.1", port: configuration.port), serverName: "toneshaper-edit"),
            onServerRunning: { [access] channel in
                let port = channel.localAddress?.port ?? 0
                access.listening(on: port)
                onReady(port)
            },
            logger: Self.quietLogger())
        try await app.runService()
    }

    static func quietLogger() -> Logger {
        var logger = Logger(label: "toneshaper-edit")
        logger.logLevel = ProcessInfo.processInfo.environment["TONESHAPER_EDIT_LOG"] != nil ? .debug : .critical
        return logger
    }

    // MARK: - HTTP

    func addRoutes(_ router: Router<BasicRequestContext>) {
        router.get("/") { [self] _, _ in
            guard let page = FileManager.default.contents(atPath: pageFolder + "/index.html") else {
                return Self.json(["error": "the editor page is missing from \(pageFolder)", "field": "(file)"], status: .internalServerError)
            }
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(bytes: page)))
        }
        router.get("/api/info") { [self] _, _ in
            Self.json([
                "sampleRate": configuration.sampleRate,
                "waves": WaveType.allCases.map(\.rawValue),
                "envelopes": ["constant", "linear-decay", "exponential-decay"],
                "limits": [
                    "maxFidelity": Shape.maximumFidelity, "maxFourierTerms": Shape.maximumFourierTerms,
                    "maxEchoDelay": Shape.maximumEchoDelay, "maxPoints": Shape.maximumPoints,
                    "maxDuration": Shape.maximumDuration, "maxFrequency": Shape.maximumFrequency,
                    "maxAttack": 10, "maxRelease": 30,
                ] as [String: Any],
                "initial": initial.map { ShapeWire.object($0) } ?? NSNull(),
                "initialName": initial?.name ?? NSNull(),
                "userLibrary": configuration.userLibrary.directory,
                "alsa": instrument.withLock { $0 != nil },
            ])
        }
        router.get("/api/shapes") { [self] _, _ in
            let library = try Self.library(configuration)
            return Self.json(["shapes": library.entries.map { e -> [String: Any] in
                ["name": e.shape.name, "program": e.shape.program, "wave": e.shape.wave.rawValue,
                 "description": e.shape.description, "source": e.source.rawValue, "overrides": e.overrides]
            }, "notes": library.notes])
        }
        router.get("/api/shapes/:name") { [self] _, context in
            // The router hands the path segment over still percent-encoded ("my%20shape").
            let raw = context.parameters.get("name") ?? ""
            let name = raw.removingPercentEncoding ?? raw
            guard let entry = try Self.library(configuration).entry(named: name) else {
                return Self.json(["error": "no shape named '\(name)'", "field": "name"], status: .notFound)
            }
            return Self.json(["source": entry.source.rawValue, "shape": ShapeWire.object(entry.shape)])
        }
        router.post("/api/analyse") { [self] request, context in
            try await answer {
                let shape = try await Self.shape(from: request, context: context)
                let note = try Self.integer(request, "note", default: shape.rootNote, in: 0...127)
                let analysis = try ShapeAnalysis(shape: shape, note: note, sampleRate: configuration.sampleRate)
                offerToInstrument(shape)
                return Self.json(analysis)
            }
        }
        router.post("/api/save") { [self] request, context in
            try await answer {
                let shape = try await Self.shape(from: request, context: context)
                // The name the library keeps it under ("ok.json" is "ok"): `save` applies the same rule.
                let name = UserLibrary.libraryName(shape.name)
                // Saving over a shape that exists (yours, or a built-in yours would then replace)
                // is only done when the request says so: the page asks the musician first.
                if request.uri.queryParameters.get("overwrite") != "1", let clash = try existing(name) {
                    throw EditorError(status: 409, "a shape named '\(name)' \(clash); save over it?", field: "name")
                }
                let path = try configuration.userLibrary.save(shape)
                return Self.json(["saved": path, "name": name])
            }
        }
        router.post("/api/export") { [self] request, context in
            try await answer {
                let shape = try await Self.shape(from: request, context: context)
                let note = try Self.integer(request, "note", default: shape.rootNote, in: 0...127)
                let cycles = try Self.integer(request, "cycles", default: 1, in: 1...1000)
                // The file is built in memory to be sent: ten minutes of audio at most.
                guard Double(cycles) * shape.duration <= ShapeExporter.longestExport else {
                    throw EditorError("cycles = \(cycles): \(cycles) × \(shape.duration) s is longer than the \(Int(ShapeExporter.longestExport)) s an export may last",
                                      field: "cycles")
                }
                let name = request.uri.queryParameters.get("format") ?? "wav"
                guard let format = AudioFileFormat(exportName: name) else {
                    throw EditorError("format '\(name)' must be wav, flac or ogg", field: "format")
                }
                let bytes = try ShapeExporter.export(shape, cycles: cycles, note: note, format: format,
                                                     sampleRate: Int(configuration.sampleRate))
                let filename = shape.name.replacingOccurrences(of: "\"", with: "") + "." + format.fileExtension
                return Response(status: .ok, headers: [.contentType: format.mimeType,
                                                       .contentDisposition: "attachment; filename=\"\(filename)\""],
                                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            }
        }
    }

    /// What a shape of this name already is, in the words the overwrite question uses, or nil.
    func existing(_ name: String) throws -> String? {
        if FileManager.default.fileExists(atPath: configuration.userLibrary.path(for: name)) {
            return "is already in your library"
        }
        guard let entry = try Self.library(configuration).entry(named: name) else { return nil }
        return entry.source == .builtIn ? "is built in (yours would be played in its place)" : "is already in your library"
    }

    /// Runs a handler; a refused request becomes its JSON error (422 unless it says otherwise).
    func answer(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch let error as EditorError {
            return Self.json(error, status: HTTPResponse.Status(code: error.status))
        } catch {
            return Self.json(EditorError(error), status: .unprocessableContent)
        }
    }

    /// The request body as a shape; larger than any real shape is refused unread.
    static func shape(from request: Request, context: BasicRequestContext) async throws -> Shape {
        var request = request
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: 1 << 21)
        } catch {
            throw EditorError(status: 413, "the shape is larger than 2 MB")
        }
        return try ShapeWire.decode(Data(buffer: body))
    }

    static func integer(_ request: Request, _ name: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters.get(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw EditorError("\(name) = \(text): must be a whole number in \(range.lowerBound)...\(range.upperBound)", field: name)
        }
        return value
    }

    /// The edited shape reaches the ALSA instrument too (its preset 0), through its lock-free path.
    func offerToInstrument(_ shape: Shape) {
        instrument.withLock { session in _ = session?.offerShape(shape, preset: 0) }
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONEncoder().encode(value)) ?? Data("{}".utf8)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    // MARK: - WebSocket: continuous play

    /// One page's live stream: messages in (shape, note, play), PCM chunks out.
    func live(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let stream = try LiveStream(shape: startingShape, note: startingShape.rootNote, sampleRate: configuration.sampleRate)
        let format = try JSONSerialization.data(withJSONObject: [
            "type": "format", "sampleRate": configuration.sampleRate, "channels": 1, "framesPerChunk": LiveStream.framesPerChunk,
        ] as [String: Any])
        try await outbound.write(.text(String(decoding: format, as: UTF8.self)))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await stream.run { bytes in try await outbound.write(.binary(ByteBuffer(bytes: bytes))) }
            }
            group.addTask { [self] in
                try await sendPlayheads(stream: stream) { text in try await outbound.write(.text(text)) }
            }
            for try await message in inbound.messages(maxSize: 1 << 22) {
                guard case .text(let text) = message else { continue }
                if let reply = handle(text, stream: stream) {
                    try await outbound.write(.text(reply))
                }
            }
            group.cancelAll()
        }
    }

    /// How often the page hears where the notes are: often enough for a playhead that glides.
    static let playheadInterval = Duration.milliseconds(33)

    /// About 30 times a second while notes sound, where each is in its pass (read from the audio
    /// side's lock-free `PlayheadBoard`): the page's own note ("page") and, with `--connect`, the
    /// keyboard's ("keyboard"); once more with none when the last one ends.
    func sendPlayheads(stream: LiveStream, send: @Sendable (String) async throws -> Void) async throws {
        var sounding = false
        while !Task.isCancelled {
            try await Task.sleep(for: Self.playheadInterval)
            var voices = stream.session.playheads.read().places.map { Self.playhead($0, source: "page") }
            if let keyboard = instrument.withLock({ $0 }) {
                voices += keyboard.playheads.read().places.map { Self.playhead($0, source: "keyboard") }
            }
            guard !voices.isEmpty || sounding else { continue }
            sounding = !voices.isEmpty
            let data = try JSONSerialization.data(withJSONObject: ["type": "playhead", "voices": voices] as [String: Any])
            try await send(String(decoding: data, as: UTF8.self))
        }
    }

    static func playhead(_ place: VoicePlace, source: String) -> [String: Any] {
        ["source": source, "voice": place.voice, "channel": place.channel, "note": Int(place.note),
         "pass": place.pass, "released": place.released]
    }

    /// Applies one client message; returns the reply to send, if any.
    func handle(_ text: String, stream: LiveStream) -> String? {
        func reply(_ object: [String: Any]) -> String {
            String(decoding: (try? JSONSerialization.data(withJSONObject: object)) ?? Data(), as: UTF8.self)
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
              let type = object["type"] as? String else {
            return reply(["type": "error", "error": "a message is a JSON object with a \"type\"", "field": "(request)"])
        }
        let seq = object["seq"] ?? NSNull()
        switch type {
        case "shape":
            guard let shapeObject = object["shape"], let data = try? JSONSerialization.data(withJSONObject: shapeObject) else {
                return reply(["type": "error", "seq": seq, "error": "\"shape\" must be a shape object", "field": "(request)"])
            }
            do {
                let shape = try ShapeWire.decode(data)
                guard stream.apply(shape) else {
                    return reply(["type": "error", "seq": seq, "error": "the audio thread is busy; edit not applied", "field": "(request)"])
                }
                offerToInstrument(shape)
                return reply(["type": "applied", "seq": seq])
            } catch {
                return reply(["type": "error", "seq": seq, "error": error.error, "field": error.field])
            }
        case "note":
            guard let note = object["note"] as? Int, (0...127).contains(note) else {
                return reply(["type": "error", "seq": seq, "error": "note must be a MIDI note 0...127", "field": "note"])
            }
            stream.setNote(note)
            return nil
        case "play":
            stream.play(object["on"] as? Bool ?? false)
            return nil
        default:
            return reply(["type": "error", "seq": seq, "error": "unknown message type '\(type)'", "field": "(request)"])
        }
    }
}
