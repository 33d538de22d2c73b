import CLO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A New Session Manager client (https://new-session-manager.jackaudio.org/api/): OSC over UDP to
/// the server at `NSM_URL`, through liblo (Debian's liblo-dev), a thin wrapper that checks every
/// return code.
///
/// Nothing here blocks or starts a thread: `poll()` takes what has arrived (at most a few dozen
/// messages a call) and returns it as `Request`s for the caller's control loop, which answers with
/// `reply`/`fail`. Messages are taken only from the server's own address and port (`open` chooses
/// where the state is read and written), and only the few the protocol sends a client, with the
/// argument types it gives them; anything else is dropped. When the server is on this machine, the
/// socket hears only the loopback interface: nothing off the machine reaches it.
public final class NSMClient {
    /// What the session manager asked or answered.
    public enum Request: Equatable, Sendable {
        /// The announce was accepted (the server's name and capabilities, its message).
        case welcomed(serverName: String, capabilities: String, message: String)
        /// The announce was refused: the server's code and message.
        case refused(code: Int32, message: String)
        /// Open (or create) the session's files under `path`; `clientID` names our ports.
        case open(path: String, displayName: String, clientID: String)
        case save
        /// Every client of the session has opened (informational).
        case sessionLoaded
    }

    /// The protocol's error codes (the API's ERR_*).
    public enum ErrorCode: Int32, Sendable {
        case general = -1
        case incompatibleAPI = -2
        case noSuchFile = -5
        case notNow = -8
        case badProject = -9
        case createFailed = -10
    }

    /// The API version this client speaks (1.2).
    public static let apiMajor: Int32 = 1
    public static let apiMinor: Int32 = 2
    /// Longest path, display name or client id taken from the server.
    public static let maximumStringBytes = 4096
    /// Most messages taken by one `poll()`: a flood waits for the next call instead of holding it up.
    public static let messagesPerPoll = 64

    public let url: String
    private let server: lo_server
    private let address: lo_address
    /// The server's port, as liblo writes it: messages from any other are not the server's.
    private let serverPort: String
    /// The addresses the server's messages may come from (numeric, as `numericHost` writes them):
    /// NSM_URL's host resolved once at start.
    let serverHosts: Set<String>
    /// Whether every address of the server is a loopback one (then the socket hears only `lo`).
    let serverIsLocal: Bool
    /// Filled by the handler while `poll()` runs.
    fileprivate var arrived: [Request] = []

    /// Opens our UDP socket (any free port) and addresses the server at `url` ("osc.udp://host:port/").
    public init(url: String) throws(NSMError) {
        self.url = url
        guard url.hasPrefix("osc.udp://"), let address = lo_address_new_from_url(url) else {
            throw NSMError("NSM_URL '\(url)' is not an OSC UDP address (osc.udp://HOST:PORT/)")
        }
        guard let port = lo_address_get_port(address).map({ String(cString: $0) }), let number = Int(port), (1...65535).contains(number) else {
            lo_address_free(address)
            throw NSMError("NSM_URL '\(url)' names no port")
        }
        let host = lo_address_get_hostname(address).map { String(cString: $0) } ?? ""
        let resolved: [String]
        do { resolved = try Self.resolve(host) } catch {
            lo_address_free(address)
            throw NSMError("NSM_URL '\(url)': \(error.description)")
        }
        guard let server = lo_server_new_with_proto(nil, LO_UDP, { _, _, _ in }) else {
            lo_address_free(address)
            throw NSMError("cannot open a UDP socket for the session manager at \(url)")
        }
        self.address = address
        self.server = server
        serverPort = port
        serverIsLocal = resolved.allSatisfy(Self.isLoopback)
        // A server on this machine answers from its wildcard socket, so its messages come from the
        // loopback's own address even when NSM_URL names another (Debian's hostname is 127.0.1.1).
        serverHosts = Set(resolved + (serverIsLocal ? ["127.0.0.1", "::1"] : []))
        if serverIsLocal {
            // liblo 0.31 binds UDP servers to the wildcard address only (a host in a URL is taken
            // as a multicast group), so the socket is tied to the loopback interface instead. Where
            // the kernel refuses (before Linux 5.7, unprivileged), the address check still holds.
            _ = setsockopt(lo_server_get_socket_fd(server), SOL_SOCKET, SO_BINDTODEVICE, "lo", 3)
        }
        lo_server_add_method(server, nil, nil, { path, types, argv, argc, message, context in
            guard let context, let path, let types else { return 1 }
            let client = Unmanaged<NSMClient>.fromOpaque(context).takeUnretainedValue()
            client.take(path: String(cString: path), types: String(cString: types), argv: argv, argc: Int(argc), message: message)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        lo_server_free(server)
        lo_address_free(address)
    }

    /// `/nsm/server/announce`: who we are and what we can do (`capabilities` as ":dirty:").
    public func announce(name: String, capabilities: String, executable: String) throws(NSMError) {
        try send("/nsm/server/announce", [.string(name), .string(capabilities), .string(executable),
                                           .int(Self.apiMajor), .int(Self.apiMinor), .int(getpid())])
    }

    /// `/reply` to a request (`path` is the request's, e.g. "/nsm/client/save").
    public func reply(to path: String, message: String) throws(NSMError) {
        try send("/reply", [.string(path), .string(message)])
    }

    /// `/error` for a request that failed.
    public func fail(_ path: String, code: ErrorCode, message: String) throws(NSMError) {
        try send("/error", [.string(path), .int(code.rawValue), .string(message)])
    }

    /// `/nsm/client/is_dirty` or `is_clean`: whether there is something unsaved.
    public func tell(dirty: Bool) throws(NSMError) {
        try send(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean", [])
    }

    /// What has arrived since the last call, without waiting.
    public func poll() -> [Request] {
        arrived.removeAll(keepingCapacity: true)
        for _ in 0..<Self.messagesPerPoll where lo_server_recv_noblock(server, 0) > 0 {}
        return arrived
    }

    // MARK: - Inside

    /// The interface the socket is tied to ("lo" for a server on this machine), read back from it.
    var receivingInterface: String? {
        var name = [CChar](repeating: 0, count: Int(IFNAMSIZ) + 1)
        var length = socklen_t(IFNAMSIZ)
        guard getsockopt(lo_server_get_socket_fd(server), SOL_SOCKET, SO_BINDTODEVICE, &name, &length) == 0,
              name[0] != 0 else { return nil }
        return String(cString: name)
    }

    /// Every address `host` resolves to, numeric (getaddrinfo: names, IPv4 and IPv6 literals).
    static func resolve(_ host: String) throws(NSMError) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw NSMError("cannot resolve the host '\(host)' (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var found: [String] = []
        for entry in sequence(first: list, next: { $0.pointee.ai_next }) {
            if let text = numericHost(entry.pointee.ai_addr, entry.pointee.ai_addrlen) { found.append(text) }
        }
        guard !found.isEmpty else { throw NSMError("cannot resolve the host '\(host)' (no address)") }
        return found
    }

    /// A numeric address written one way (so "127.000.0.1" and "127.0.0.1" compare equal), or nil
    /// when `text` is not one.
    static func numericHost(_ text: String) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(text, nil, &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        return numericHost(list.pointee.ai_addr, list.pointee.ai_addrlen)
    }

    private static func numericHost(_ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> String? {
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard let address, getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return String(cString: text)
    }

    static func isLoopback(_ numeric: String) -> Bool {
        numeric.hasPrefix("127.") || numeric == "::1" || numeric.hasPrefix("::ffff:127.")
    }

    private enum Argument {
        case string(String)
        case int(Int32)
    }

    private func send(_ path: String, _ arguments: [Argument]) throws(NSMError) {
        guard let message = lo_message_new() else { throw NSMError("cannot build the OSC message \(path)") }
        defer { lo_message_free(message) }
        for argument in arguments {
            let added: Int32
            switch argument {
            case .string(let s): added = lo_message_add_string(message, s)
            case .int(let i): added = lo_message_add_int32(message, i)
            }
            guard added == 0 else { throw NSMError("cannot build the OSC message \(path)") }
        }
        // From our own socket: the server answers to the address the message came from.
        guard lo_send_message_from(address, server, path, message) >= 0 else {
            let reason = lo_address_errstr(address).map { String(cString: $0) } ?? "unknown error"
            throw NSMError("cannot send \(path) to the session manager at \(url) (\(reason))")
        }
    }

    /// One message from liblo (already checked as well-formed OSC): kept when it is one the protocol
    /// sends a client, from the server, with the types the API gives it.
    fileprivate func take(path: String, types: String, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                          argc: Int, message: lo_message?) {
        guard let message, let source = lo_message_get_source(message),
              let port = lo_address_get_port(source).map({ String(cString: $0) }), port == serverPort,
              let host = lo_address_get_hostname(source).flatMap({ Self.numericHost(String(cString: $0)) }),
              serverHosts.contains(host) else { return }
        guard types.utf8.count == argc, argc == 0 || argv != nil else { return }
        func string(_ i: Int) -> String? {
            guard i < argc, types.utf8[types.utf8.index(types.utf8.startIndex, offsetBy: i)] == UInt8(ascii: "s"),
                  let arg = argv?[i] else { return nil }
            // An OSC string is stored inline, NUL-terminated (liblo checked it lies within the message).
            let chars = UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self)
            guard strnlen(chars, Self.maximumStringBytes + 1) <= Self.maximumStringBytes else { return nil }
            return String(cString: chars)
        }
        func int(_ i: Int) -> Int32? {
            guard i < argc, types.utf8[types.utf8.index(types.utf8.startIndex, offsetBy: i)] == UInt8(ascii: "i"),
                  let arg = argv?[i] else { return nil }
            return UnsafeRawPointer(arg).loadUnaligned(as: Int32.self)
        }
        switch path {
        case "/nsm/client/open":
            if let path = string(0), let name = string(1), let id = string(2) { arrived.append(.open(path: path, displayName: name, clientID: id)) }
        case "/nsm/client/save":
            arrived.append(.save)
        case "/nsm/client/session_is_loaded":
            arrived.append(.sessionLoaded)
        case "/reply":
            if string(0) == "/nsm/server/announce" {
                arrived.append(.welcomed(serverName: string(2) ?? "", capabilities: string(3) ?? "", message: string(1) ?? ""))
            }
        case "/error":
            if string(0) == "/nsm/server/announce", let code = int(1) {
                arrived.append(.refused(code: code, message: string(2) ?? ""))
            }
        default:
            break
        }
    }
}

/// Something that went wrong talking to the session manager: one line.
public struct NSMError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
