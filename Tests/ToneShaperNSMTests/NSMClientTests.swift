import CLO
import Foundation
import Testing
@testable import ToneShaperNSM

/// A session manager of the test's own: a liblo server on a free port that keeps what it receives.
final class FakeSessionManager {
    struct Received: Equatable {
        var path: String
        var types: String
        var strings: [String]
        var ints: [Int32]
    }

    let server: lo_server
    var received: [Received] = []
    /// Where the last message came from: the client's own socket.
    var lastSource: lo_address?

    init() {
        server = lo_server_new_with_proto(nil, LO_UDP, { _, _, _ in })!
        lo_server_add_method(server, nil, nil, { path, types, argv, argc, message, context in
            let fake = Unmanaged<FakeSessionManager>.fromOpaque(context!).takeUnretainedValue()
            let typeString = String(cString: types!)
            var strings: [String] = [], ints: [Int32] = []
            for (i, type) in typeString.utf8.enumerated() {
                let raw = UnsafeRawPointer(argv![i]!)
                if type == UInt8(ascii: "s") { strings.append(String(cString: raw.assumingMemoryBound(to: CChar.self))) }
                if type == UInt8(ascii: "i") { ints.append(raw.loadUnaligned(as: Int32.self)) }
            }
            fake.received.append(Received(path: String(cString: path!), types: typeString, strings: strings, ints: ints))
            if let old = fake.lastSource { lo_address_free(old) }
            let source = lo_message_get_source(message)!
            fake.lastSource = lo_address_new(lo_address_get_hostname(source), lo_address_get_port(source))
            _ = argc
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let lastSource { lo_address_free(lastSource) }
        lo_server_free(server)
    }

    var url: String { "osc.udp://127.0.0.1:\(lo_server_get_port(server))/" }

    /// Takes what arrived within `seconds`.
    func receive(for seconds: Double = 0.5, until done: () -> Bool = { false }) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end && !done() { _ = lo_server_recv_noblock(server, 10) }
    }

    /// Sends to the client, from this server's socket (as nsmd does) or from `other`.
    func send(_ path: String, strings: [String] = [], int: Int32? = nil, stringsAfter: [String] = [], from other: lo_server? = nil) {
        let message = lo_message_new()!
        for s in strings { lo_message_add_string(message, s) }
        if let int { lo_message_add_int32(message, int) }
        for s in stringsAfter { lo_message_add_string(message, s) }
        lo_send_message_from(lastSource!, other ?? server, path, message)
        lo_message_free(message)
    }
}

@Suite("NSM client: announce, then the session manager's requests, from it alone")
struct NSMClientTests {
    /// Polls the client until something arrives (or a second passes).
    static func requests(_ client: NSMClient) -> [NSMClient.Request] {
        for _ in 0..<100 {
            let got = client.poll()
            if !got.isEmpty { return got }
            usleep(10_000)
        }
        return []
    }

    @Test("the announce carries the name, capabilities, executable, API 1.2 and our pid; open, save and the replies follow the API")
    func announceOpenSave() throws {
        let manager = FakeSessionManager()
        let client = try NSMClient(url: manager.url)
        try client.announce(name: "ToneShaper", capabilities: ":dirty:", executable: "toneshaper")
        manager.receive { !manager.received.isEmpty }
        #expect(manager.received.first == .init(path: "/nsm/server/announce", types: "sssiii",
                                                 strings: ["ToneShaper", ":dirty:", "toneshaper"], ints: [1, 2, getpid()]))

        manager.send("/reply", strings: ["/nsm/server/announce", "hi", "fake-nsm", ":server-control:"])
        #expect(Self.requests(client) == [.welcomed(serverName: "fake-nsm", capabilities: ":server-control:", message: "hi")])
        manager.send("/nsm/client/open", strings: ["/tmp/session/ToneShaper.nABCD", "ToneShaper", "ToneShaper.nABCD"])
        #expect(Self.requests(client) == [.open(path: "/tmp/session/ToneShaper.nABCD", displayName: "ToneShaper", clientID: "ToneShaper.nABCD")])
        manager.send("/nsm/client/save")
        #expect(Self.requests(client) == [.save])

        try client.reply(to: "/nsm/client/save", message: "saved")
        try client.fail("/nsm/client/open", code: .badProject, message: "bad state")
        try client.tell(dirty: true)
        manager.received.removeAll()
        manager.receive { manager.received.count == 3 }
        #expect(manager.received == [
            .init(path: "/reply", types: "ss", strings: ["/nsm/client/save", "saved"], ints: []),
            .init(path: "/error", types: "sis", strings: ["/nsm/client/open", "bad state"], ints: [-9]),
            .init(path: "/nsm/client/is_dirty", types: "", strings: [], ints: []),
        ])
    }

    @Test("a refused announce is said with its code; messages from another port, of other types or unknown are dropped")
    func refusedAndStrangers() throws {
        let manager = FakeSessionManager()
        let client = try NSMClient(url: manager.url)
        try client.announce(name: "ToneShaper", capabilities: ":dirty:", executable: "toneshaper")
        manager.receive { !manager.received.isEmpty }

        let stranger = lo_server_new_with_proto(nil, LO_UDP, { _, _, _ in })!
        defer { lo_server_free(stranger) }
        manager.send("/nsm/client/open", strings: ["/tmp/elsewhere", "x", "x"], from: stranger)
        manager.send("/nsm/client/open", strings: ["/tmp/only-two", "x"])
        manager.send("/nsm/client/open", strings: ["/tmp/wrong"], int: 3, stringsAfter: ["x"])
        manager.send("/nsm/client/quit")
        // Not OSC at all, from the manager's own port.
        let fd = lo_server_get_socket_fd(manager.server)
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = in_port_t(UInt16(lo_address_get_port(manager.lastSource!).map { String(cString: $0) }.flatMap { Int($0) } ?? 0).bigEndian)
        target.sin_addr.s_addr = inet_addr("127.0.0.1")
        let junk: [UInt8] = [0x2f, 0x6e, 0x73, 0x6d, 0xff, 0xff, 0xff, 0xff, 0x2c, 0x73, 0x73]
        _ = withUnsafePointer(to: &target) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, junk, junk.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        manager.send("/error", strings: ["/nsm/server/announce"], int: -2, stringsAfter: ["incompatible API"])
        var got: [NSMClient.Request] = []
        for _ in 0..<100 where got.isEmpty || !got.contains(where: { if case .refused = $0 { true } else { false } }) {
            got += client.poll()
            usleep(10_000)
        }
        #expect(got == [.refused(code: -2, message: "incompatible API")])
    }

    @Test("only the session manager's address may steer the client: a local process on 127.0.0.2 with the manager's port is ignored")
    func strangerAddressWithManagersPort() throws {
        let manager = FakeSessionManager()
        let client = try NSMClient(url: manager.url)
        try client.announce(name: "ToneShaper", capabilities: ":dirty:", executable: "toneshaper")
        manager.receive { !manager.received.isEmpty }
        let clientPort = try #require(lo_address_get_port(manager.lastSource!).flatMap { UInt16(String(cString: $0)) })
        let managerPort = UInt16(lo_server_get_port(manager.server))

        // Another socket on the manager's port number, from another loopback address (both sockets
        // allow the shared port, as a hostile process on the machine can arrange with its own).
        var one: Int32 = 1
        #expect(setsockopt(lo_server_get_socket_fd(manager.server), SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0)
        let stranger = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(stranger) }
        #expect(setsockopt(stranger, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0)
        var from = sockaddr_in()
        from.sin_family = sa_family_t(AF_INET)
        from.sin_port = managerPort.bigEndian
        from.sin_addr.s_addr = inet_addr("127.0.0.2")
        let bound = withUnsafePointer(to: &from) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stranger, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(bound == 0)

        func strangerSends(_ path: String, _ strings: [String]) {
            let message = lo_message_new()!
            defer { lo_message_free(message) }
            for s in strings { lo_message_add_string(message, s) }
            var bytes = [UInt8](repeating: 0, count: 1024)
            var length = bytes.count
            _ = lo_message_serialise(message, path, &bytes, &length)
            var to = sockaddr_in()
            to.sin_family = sa_family_t(AF_INET)
            to.sin_port = clientPort.bigEndian
            to.sin_addr.s_addr = inet_addr("127.0.0.1")
            let sent = withUnsafePointer(to: &to) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(stranger, bytes, length, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            #expect(sent == length)
        }
        strangerSends("/nsm/client/open", ["/tmp/attacker", "ToneShaper", "ToneShaper.nEVIL"])
        strangerSends("/nsm/client/save", [])
        usleep(50_000)
        manager.send("/nsm/client/open", strings: ["/tmp/session/ToneShaper.nABCD", "ToneShaper", "ToneShaper.nABCD"])
        var got: [NSMClient.Request] = []
        for _ in 0..<100 where !got.contains(.open(path: "/tmp/session/ToneShaper.nABCD", displayName: "ToneShaper", clientID: "ToneShaper.nABCD")) {
            got += client.poll()
            usleep(10_000)
        }
        #expect(got == [.open(path: "/tmp/session/ToneShaper.nABCD", displayName: "ToneShaper", clientID: "ToneShaper.nABCD")])
    }

    @Test("a session manager on this machine: the client's socket hears only the loopback interface; one elsewhere, every interface")
    func loopbackOnly() throws {
        let manager = FakeSessionManager()
        #expect(try NSMClient(url: manager.url).receivingInterface == "lo")
        #expect(try NSMClient(url: "osc.udp://localhost:\(lo_server_get_port(manager.server))/").receivingInterface == "lo")
        #expect(try NSMClient(url: "osc.udp://192.0.2.7:15000/").receivingInterface == nil)
    }

    @Test("an NSM_URL that is not an OSC UDP address is one line naming it")
    func badURL() {
        #expect(throws: NSMError("NSM_URL 'http://example/' is not an OSC UDP address (osc.udp://HOST:PORT/)")) {
            try NSMClient(url: "http://example/")
        }
    }
}
