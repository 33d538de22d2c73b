import CJACK
import CJACKShim
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A JACK call that failed, in one line: what was asked and why, in words a musician can act on.
public struct JACKError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Which ports: JACK's JackPortIsInput, JackPortIsOutput, JackPortIsPhysical.
public struct JACKPortFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let input = JACKPortFlags(rawValue: UInt(JackPortIsInput.rawValue))
    public static let output = JACKPortFlags(rawValue: UInt(JackPortIsOutput.rawValue))
    public static let physical = JACKPortFlags(rawValue: UInt(JackPortIsPhysical.rawValue))
    /// Playback ports of the sound card (or of the dummy driver).
    public static let physicalInput: JACKPortFlags = [.physical, .input]
}

/// JACK's port type strings (JACK_DEFAULT_AUDIO_TYPE, JACK_DEFAULT_MIDI_TYPE).
public enum JACKPortType {
    public static let audio = JACK_DEFAULT_AUDIO_TYPE
    public static let midi = JACK_DEFAULT_MIDI_TYPE
}

/// A port of this client: its handle and full name ("ToneShaper:midi_in").
public struct JACKPort: @unchecked Sendable {
    public let handle: OpaquePointer
    public let name: String
}

/// One JACK client, thin over libjack: open (its status bits said in one line), ports, the
/// callbacks, activation, the graph's ports and connections. Every return code is checked.
///
/// The callbacks are plain closures kept in one box the C callbacks reach through their `arg`;
/// `process` runs on JACK's real-time thread and must not allocate, lock or log — the closure
/// call itself does none of these. The others run on libjack's notification thread, where
/// JACK allows blocking (the buffer-size callback is where buffers are grown).
public final class JACKClient: @unchecked Sendable {
    public let handle: OpaquePointer
    /// The name the server gave us (asked with JackUseExactName, so the one asked for).
    public let name: String
    /// The server this client talks to: JACK_DEFAULT_SERVER, or "default".
    public let serverName: String
    private let box = CallbackBox()
    private var closed = false
    private var active = false

    /// Opens a client named `name` on the running server `server` (nil: JACK_DEFAULT_SERVER, or
    /// "default"), never starting one, and never renamed: a name in use is an error.
    public init(name: String, server: String? = nil) throws {
        toneshaper_jack_quiet()
        serverName = server ?? getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let size = Int(jack_client_name_size())
        guard !name.isEmpty, name.utf8.count < size, !name.contains(":") else {
            throw JACKError("JACK client name '\(name)' must be 1...\(size - 1) bytes without ':'")
        }
        var status = jack_status_t(0)
        let options = jack_options_t(JackNoStartServer.rawValue | JackUseExactName.rawValue)
        guard let client = toneshaper_jack_client_open(name, options, server, &status) else {
            // JACK 2 answers a taken exact name with only "server error": ask the server whether it has that client.
            let taken = status.rawValue & JackNameNotUnique.rawValue != 0 || Self.hasClient(named: name, server: server)
            throw JACKError(Self.openFailure(status: taken ? JackStatus(status.rawValue | JackNameNotUnique.rawValue) : status,
                                             name: name, server: serverName))
        }
        handle = client
        self.name = jack_get_client_name(client).map { String(cString: $0) } ?? name
    }

    /// Whether the server has a client of this name, asked through a short-lived client of our own.
    static func hasClient(named name: String, server: String?) -> Bool {
        var status = jack_status_t(0)
        guard let probe = toneshaper_jack_client_open("toneshaper-probe", jack_options_t(JackNoStartServer.rawValue), server, &status) else {
            return false
        }
        defer { _ = jack_client_close(probe) }
        guard let uuid = jack_get_uuid_for_client_name(probe, name) else { return false }
        jack_free(uuid)
        return true
    }

    /// What went wrong opening a client, from jack_status_t's bits, most specific first.
    static func openFailure(status: jack_status_t, name: String, server: String) -> String {
        let bits = status.rawValue
        func has(_ flag: JackStatus) -> Bool { bits & flag.rawValue != 0 }
        if has(JackNameNotUnique) {
            return "JACK client name '\(name)' is already taken on server '\(server)'; choose another with --jack-name"
        }
        if has(JackServerFailed) {
            return "no JACK server '\(server)' is running (start jackd or qjackctl, or run under PipeWire: pw-jack toneshaper play --jack)"
        }
        if has(JackVersionError) { return "the JACK server '\(server)' speaks another protocol version than this libjack" }
        if has(JackShmFailure) { return "cannot reach the JACK server '\(server)''s shared memory" }
        if has(JackServerError) { return "the JACK server '\(server)' refused the client '\(name)'" }
        if has(JackInvalidOption) { return "the JACK server '\(server)' rejected the client's options" }
        let detail = String(cString: toneshaper_jack_last_error())
        return "cannot open JACK client '\(name)' on server '\(server)' (status 0x\(String(bits, radix: 16))\(detail.isEmpty ? "" : ": " + detail))"
    }

    deinit { close() }

    /// Deactivates (if active) and closes the client. Safe to call more than once; after the
    /// server shut down it only frees what libjack still holds.
    public func close() {
        guard !closed else { return }
        closed = true
        if active { _ = jack_deactivate(handle); active = false }
        _ = jack_client_close(handle)
    }

    public var sampleRate: Int { Int(jack_get_sample_rate(handle)) }
    public var bufferSize: Int { Int(jack_get_buffer_size(handle)) }
    /// The priority JACK gives its process thread (0 when it does not run in real time).
    public var realtimePriority: Int32 {
        jack_is_realtime(handle) != 0 ? max(0, jack_client_real_time_priority(handle)) : 0
    }

    /// Frame time at the start of the current cycle (real-time safe; for the process callback).
    @inline(__always)
    public func lastFrameTime() -> UInt32 { jack_last_frame_time(handle) }

    // MARK: - Ports

    public func registerAudioOutput(_ shortName: String) throws -> JACKPort {
        try register(shortName, type: JACKPortType.audio, flags: .output)
    }

    public func registerMIDIInput(_ shortName: String) throws -> JACKPort {
        try register(shortName, type: JACKPortType.midi, flags: .input)
    }

    private func register(_ shortName: String, type: String, flags: JACKPortFlags) throws -> JACKPort {
        guard let port = jack_port_register(handle, shortName, type, flags.rawValue, 0) else {
            throw JACKError("cannot register JACK port '\(name):\(shortName)'")
        }
        let full = jack_port_name(port).map { String(cString: $0) } ?? "\(name):\(shortName)"
        return JACKPort(handle: port, name: full)
    }

    /// The graph's ports whose names match the extended regular expression `pattern` (nil: all),
    /// of `type` (JACK_DEFAULT_AUDIO_TYPE, JACK_DEFAULT_MIDI_TYPE) and with all of `flags`, in JACK's order.
    public func ports(matching pattern: String?, type: String, flags: JACKPortFlags) -> [String] {
        guard let list = jack_get_ports(handle, pattern, type, flags.rawValue) else { return [] }
        defer { jack_free(UnsafeMutableRawPointer(list)) }
        var names: [String] = []
        var i = 0
        while let entry = list[i] {
            names.append(String(cString: entry))
            i += 1
        }
        return names
    }

    /// Whether a port of exactly this name exists.
    public func portExists(_ fullName: String) -> Bool { jack_port_by_name(handle, fullName) != nil }

    /// Connects `source` (an output) to `destination` (an input); already connected is fine.
    public func connect(_ source: String, to destination: String) throws {
        let result = jack_connect(handle, source, destination)
        guard result == 0 || result == EEXIST else {
            throw JACKError("cannot connect JACK port '\(source)' to '\(destination)' (error \(result))")
        }
    }

    // MARK: - Callbacks

    /// `process(nframes)` on the real-time thread, every cycle; return 0 (non-zero drops the client).
    public func setProcess(_ body: @escaping (UInt32) -> Int32) throws {
        box.process = body
        try check(jack_set_process_callback(handle, { frames, arg in
            Unmanaged<CallbackBox>.fromOpaque(arg!).takeUnretainedValue().process(frames)
        }, box.pointer), "set the process callback")
    }

    /// Called (graph stopped, blocking allowed) when the buffer size changes, and once on activation.
    public func setBufferSizeChange(_ body: @escaping (UInt32) -> Int32) throws {
        box.bufferSize = body
        try check(jack_set_buffer_size_callback(handle, { frames, arg in
            Unmanaged<CallbackBox>.fromOpaque(arg!).takeUnretainedValue().bufferSize(frames)
        }, box.pointer), "set the buffer-size callback")
    }

    /// Called when the graph's sample rate changes (and once on activation).
    public func setSampleRateChange(_ body: @escaping (UInt32) -> Int32) throws {
        box.sampleRate = body
        try check(jack_set_sample_rate_callback(handle, { rate, arg in
            Unmanaged<CallbackBox>.fromOpaque(arg!).takeUnretainedValue().sampleRate(rate)
        }, box.pointer), "set the sample-rate callback")
    }

    /// Called on each xrun the server reports.
    public func setXrun(_ body: @escaping () -> Int32) throws {
        box.xrun = body
        try check(jack_set_xrun_callback(handle, { arg in
            Unmanaged<CallbackBox>.fromOpaque(arg!).takeUnretainedValue().xrun()
        }, box.pointer), "set the xrun callback")
    }

    /// Called once if the server goes away or drops the client, with its reason. It may run on
    /// any thread, the process thread included: it must only note what happened.
    public func setShutdown(_ body: @escaping (UnsafePointer<CChar>?) -> Void) {
        box.shutdown = body
        jack_on_info_shutdown(handle, { _, reason, arg in
            Unmanaged<CallbackBox>.fromOpaque(arg!).takeUnretainedValue().shutdown(reason)
        }, box.pointer)
    }

    public func activate() throws {
        try check(jack_activate(handle), "activate the client '\(name)'")
        active = true
    }

    private func check(_ result: Int32, _ what: String) throws {
        guard result == 0 else { throw JACKError("JACK: cannot \(what) (error \(result))") }
    }
}

/// The closures the C callbacks call, reached through their `arg` (the client keeps it alive).
final class CallbackBox: @unchecked Sendable {
    var process: (UInt32) -> Int32 = { _ in 0 }
    var bufferSize: (UInt32) -> Int32 = { _ in 0 }
    var sampleRate: (UInt32) -> Int32 = { _ in 0 }
    var xrun: () -> Int32 = { 0 }
    var shutdown: (UnsafePointer<CChar>?) -> Void = { _ in }
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

/// What the process callback reads and writes in one cycle, without allocating: MIDI events, audio buffers.
public enum JACKCycle {
    /// Calls `body(frame within the cycle, bytes)` for each event in `port`'s buffer this cycle, in order.
    @inline(__always)
    public static func forEachEvent(in port: JACKPort, frames: UInt32,
                                    _ body: (UInt32, UnsafeBufferPointer<UInt8>) -> Void) {
        guard let buffer = jack_port_get_buffer(port.handle, frames) else { return }
        let count = jack_midi_get_event_count(buffer)
        var event = jack_midi_event_t()
        var i: UInt32 = 0
        while i < count {
            if jack_midi_event_get(&event, buffer, i) == 0, let bytes = event.buffer {
                body(event.time, UnsafeBufferPointer(start: bytes, count: event.size))
            }
            i += 1
        }
    }

    /// The port's audio buffer for this cycle (real-time safe).
    @inline(__always)
    public static func audioBuffer(_ port: JACKPort, frames: UInt32) -> UnsafeMutablePointer<Float>? {
        jack_port_get_buffer(port.handle, frames)?.assumingMemoryBound(to: Float.self)
    }

    /// How many connections the port has now (real-time safe in JACK 2: it reads the graph's current state).
    @inline(__always)
    public static func connectionCount(_ port: JACKPort) -> Int { Int(jack_port_connected(port.handle)) }
}

extension JACKClient {
    /// The ports `pattern` names: the port of exactly that name if there is one, else every port
    /// of `type` and `flags` whose name the extended regular expression matches (anywhere in the
    /// name, as jack_get_ports and jack_connect's tools do). An invalid expression is an error.
    public func resolve(_ pattern: String, type: String, flags: JACKPortFlags) throws -> [String] {
        let candidates = ports(matching: nil, type: type, flags: flags)
        if candidates.contains(pattern) { return [pattern] }
        var regex = regex_t()
        let compiled = regcomp(&regex, pattern, REG_EXTENDED | REG_NOSUB)
        guard compiled == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(compiled, &regex, &message, message.count)
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw JACKError("'\(pattern)' is neither a JACK port nor a valid regular expression (\(reason))")
        }
        defer { regfree(&regex) }
        return candidates.filter { regexec(&regex, $0, 0, nil, 0) == 0 }
    }
}
