import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import ToneShaperCore
import ToneShaperEditor
import ToneShaperLibrary
import ToneShaperLive

/// An editor server running in this process on a free port, with its own user library. Its
/// requests carry what the editor's own page sends: the secret and, on the socket, its Origin.
final class RunningEditor: @unchecked Sendable {
    let port: Int
    let userLibrary: UserLibrary
    let root: URL
    /// This run's secret (what `edit` puts in the address it prints).
    let secret: String
    private let task: Task<Void, any Error>

    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `instrument`: a live session attached as `edit --connect` attaches the ALSA one.
    init(initialShape: String? = nil, instrument: LiveSession? = nil) async throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-editor-\(UUID().uuidString)")
        userLibrary = UserLibrary(directory: root.appendingPathComponent("presets").path)
        var config = EditorServer.Configuration()
        config.builtInPresets = Self.repository.appendingPathComponent("Presets").path
        config.userLibrary = userLibrary
        config.pageFolder = Self.repository.appendingPathComponent("Sources/ToneShaperEditor/Page").path
        config.initialShape = initialShape
        let server = try EditorServer(configuration: config)
        if let instrument { server.attach(instrument: instrument) }
        secret = server.access.secret
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        task = Task(executorPreference: ServerThreads.shared) { try await server.run { continuation.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw EditorTestError("the server did not start") }
        self.port = port
    }

    func stop() {
        task.cancel()
        try? FileManager.default.removeItem(at: root)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// The page's own origin, as a browser sends it.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// What a script holding the secret sends: the Authorization header, and the page's Origin.
    var authorized: [String: String] { ["Authorization": "token \(secret)", "Origin": origin] }

    /// One request (by default as a script with the secret); the status and the body.
    func request(_ method: String, _ path: String, body: Data? = nil, headers: [String: String]? = nil) async throws -> (status: Int, body: Data) {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers ?? authorized { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    func json(_ method: String, _ path: String, body: Data? = nil, headers: [String: String]? = nil) async throws -> (status: Int, object: [String: Any]) {
        let (status, data) = try await request(method, path, body: body, headers: headers)
        return (status, (try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// The live stream, opened as the editor's page opens it (its Origin, the cookie).
    func openLive() async throws -> TestWebSocket {
        try await TestWebSocket.open(port: port, headers: ["Origin: \(origin)", "Cookie: toneshaper-edit-\(port)=\(secret)"])
    }
}

/// Runs blocking work (sockets, a child process) on a thread of its own, off Swift's cooperative pool.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// A TCP connection to 127.0.0.1 with a receive timeout (so a test cannot hang).
func connectLocal(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw EditorTestError("socket failed") }
    var timeout = timeval(tv_sec: 60, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { close(fd); throw EditorTestError("connect failed") }
    return fd
}

/// One HTTP/1.1 request written byte for byte (every header line, Host included or left out, is
/// the test's), and the whole answer read until the server closes: what no HTTP client lets a test send.
struct RawAnswer: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: Data

    /// On a thread of its own: the server answers on the same cooperative pool as the tests, and
    /// a blocked pool thread would keep it from answering.
    static func send(port: Int, _ requestLine: String, headers: [String], body: Data = Data()) async throws -> RawAnswer {
        try await offThePool { try exchange(port: port, requestLine, headers: headers, body: body) }
    }

    private static func exchange(port: Int, _ requestLine: String, headers: [String], body: Data) throws -> RawAnswer {
        let fd = try connectLocal(port: port)
        defer { close(fd) }
        var head = requestLine + "\r\n" + headers.map { $0 + "\r\n" }.joined()
        if !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        let bytes = Array(head.utf8) + Array(body)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { break }  // the server may answer and close before reading a refused body
            sent += n
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            answer += buffer[..<n]
            // An upgraded socket stays open: its head is the whole answer.
            if answer.starts(with: Array("HTTP/1.1 101".utf8)), String(decoding: answer, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        guard let end = answer.indices.first(where: { Array(answer[$0..<min($0 + 4, answer.count)]) == [13, 10, 13, 10] }) else {
            throw EditorTestError("no HTTP answer: \(String(decoding: answer, as: UTF8.self))")
        }
        let lines = String(decoding: answer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
        let fields = lines.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return RawAnswer(status: status, headers: fields, body: Data(answer[(end + 4)...]))
    }

    func header(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
}

/// Threads of the test servers' own. Swift's cooperative pool has one thread per core (two
/// here), and other suites' long synchronous tests and the blocking sockets of these ones hold
/// them: a server on that pool could not answer for minutes. Its tasks (every connection's, the
/// live stream's) inherit this executor preference.
final class ServerThreads: TaskExecutor, @unchecked Sendable {
    static let shared = ServerThreads(count: 2)
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init(count: Int) {
        for _ in 0..<count { Thread { [unowned self] in work() }.start() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

struct EditorTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A WebSocket client over a plain socket (RFC 6455, just what the tests need: a text frame out,
/// masked; text and binary frames in). Reads block with a generous timeout, so a test cannot hang,
/// and every blocking call runs on a thread of its own, never on Swift's cooperative pool: the
/// server decides an upgrade on that pool (Hummingbird's `shouldUpgrade` is an unstructured task,
/// without the tests' `ServerThreads` preference), so two suites each blocked in a read there on
/// a two-core machine left no thread to answer either handshake, and both waited out the timeout.
final class TestWebSocket: @unchecked Sendable {
    private let fd: Int32

    /// Connects and upgrades; `headers`: further request lines (Origin, Cookie), as the page's browser would send them.
    static func open(port: Int, path: String = "/api/live", headers: [String] = []) async throws -> TestWebSocket {
        try await offThePool { try TestWebSocket(port: port, path: path, headers: headers) }
    }

    private init(port: Int, path: String, headers: [String]) throws {
        fd = try connectLocal(port: port)
        let handshake = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        try write(Array(handshake.utf8))
        var head: [UInt8] = []
        while !head.ends(with: [13, 10, 13, 10]) { head += try read(1) }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw EditorTestError("no upgrade: \(String(decoding: head, as: UTF8.self))")
        }
    }

    deinit { close(fd) }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw EditorTestError("send failed") }
            sent += n
        }
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out[got...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw EditorTestError("the socket closed or timed out") }
            got += n
        }
        return out
    }

    /// One text message (a JSON object), masked as a browser's.
    func send(_ object: [String: Any]) async throws {
        let payload = [UInt8](try JSONSerialization.data(withJSONObject: object))
        var frame: [UInt8] = [0x81]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65_536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 255)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 255)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        try await offThePool { [self, frame] in try write(frame) }
    }

    enum Message: @unchecked Sendable { case text([String: Any]), audio([Float]) }

    /// The next text or binary message (pings are skipped).
    func receive() async throws -> Message {
        try await offThePool { [self] in try receiveBlocking() }
    }

    private func receiveBlocking() throws -> Message {
        while true {
            let head = try read(2)
            let opcode = head[0] & 0x0F
            var length = Int(head[1] & 0x7F)
            if length == 126 { let b = try read(2); length = Int(b[0]) << 8 | Int(b[1]) }
            if length == 127 { length = try read(8).reduce(0) { $0 << 8 | Int($1) } }
            let payload = try read(length)
            switch opcode {
            case 1: return .text((try JSONSerialization.jsonObject(with: Data(payload))) as? [String: Any] ?? [:])
            case 2:
                return .audio(stride(from: 0, to: payload.count, by: 4).map { i in
                    Float(bitPattern: UInt32(payload[i]) | UInt32(payload[i + 1]) << 8 | UInt32(payload[i + 2]) << 16 | UInt32(payload[i + 3]) << 24)
                })
            case 8: throw EditorTestError("the server closed the socket")
            default: continue  // ping/pong
            }
        }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}

/// Measurements on received audio, independent of the engine.
enum Measure {
    static func frequency(_ x: [Float], rate: Double, in range: Range<Int>) -> Double? {
        ZeroCrossings.frequency(x, rate: rate, in: range)
    }

    /// The first sample from which every period until `range.upperBound` is near `frequency`.
    static func onset(of frequency: Double, _ x: [Float], rate: Double, in range: Range<Int>) -> Int? {
        let crossings = ZeroCrossings.rising(x, in: range)
        var start: Int?
        for k in 1..<crossings.count {
            let f = rate / (crossings[k] - crossings[k - 1])
            if abs(f - frequency) < frequency * 0.02 { if start == nil { start = Int(crossings[k - 1]) } } else { start = nil }
        }
        return start
    }

    static func shapeData(_ frequencies: [Double], duration: Double = 1, name: String = "test-shape") throws -> Data {
        let points = frequencies.enumerated().map { Shape.Point(time: Double($0.offset) / Double(max(1, frequencies.count - 1)) * duration, frequency: $0.element) }
        let s = Shape(name: name, points: points, duration: duration, minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: 1000)
        return try ShapeFile.encode(s)
    }
}
