import CALSA
import Synchronization
import ToneShaperMIDI
import ToneShaperRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// MIDI input from the ALSA sequencer: a client "ToneShaper" with one writable port that other
/// programs and keyboards can be connected to, read on a thread of its own.
///
/// The port also listens to System:Announce (0:1), so a client or port that goes away is heard of
/// even when it wrote to us without a subscription; each message says which client:port sent it,
/// and when the kernel delivered it (see `SequencerClock`), so it can be played at its own frame.
///
/// The reader waits in poll() with a short timeout, so it sleeps while nothing arrives and
/// `stop()` returns within that timeout.
public final class SequencerInput {
    /// How long the reader may sleep in poll() before looking at the stop flag.
    static let pollTimeoutMilliseconds: Int32 = 100

    public let clientName: String
    public let portName: String
    /// Our sequencer address, as `aconnect -l` shows it.
    public let clientID: Int32
    public let portID: Int32
    /// Only messages on this (0-based) channel are delivered; nil delivers all.
    public let channelFilter: UInt8?
    /// Called on the reader thread for each decoded event with its arrival time (monotonic
    /// nanoseconds, see `MonotonicClock`); set before `start()`.
    public var onEvent: ((SequencerEvent, Int64) -> Void)?

    /// How many times the kernel's input queue overflowed and events were lost.
    public var overrunCount: Int { state?.overruns.load(ordering: .relaxed) ?? 0 }
    /// The read error that ended the reader thread, if any; valid after `stop()`.
    public var failure: ALSAError? { state?.failure }

    private var handle: OpaquePointer?
    private var clock: SequencerClock?
    private var state: ReaderState?
    private var thread: NativeThread?

    /// Opens the sequencer and creates the input port.
    ///
    /// Fails with a message pointing at the kernel module when the sequencer device is missing,
    /// which is the usual cause on machines without sound hardware.
    public init(clientName: String = "ToneShaper", portName: String = "ToneShaper In", channelFilter: UInt8? = nil) throws {
        self.clientName = clientName
        self.portName = portName
        self.channelFilter = channelFilter
        ALSAError.prepareLibrary()

        var seqOptional: OpaquePointer?
        // Duplex: starting our timestamp queue is an event we send.
        let opened = snd_seq_open(&seqOptional, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK)
        guard opened >= 0, let seq = seqOptional else {
            throw ALSAError("cannot open the ALSA sequencer", code: opened,
                            reason: String(cString: snd_strerror(opened)) + " — is the snd-seq kernel module loaded?")
        }
        let named = snd_seq_set_client_name(seq, clientName)
        guard named >= 0 else {
            snd_seq_close(seq)
            throw ALSAError("cannot name the sequencer client", subject: clientName, code: named)
        }
        let clock: SequencerClock
        do { clock = try SequencerClock(seq: seq, name: clientName) } catch {
            snd_seq_close(seq)
            throw error
        }
        let port = Self.createPort(seq, name: portName, timestampQueue: clock.queue)
        guard port >= 0 else {
            snd_seq_close(seq)
            throw ALSAError("cannot create the sequencer port", subject: portName, code: port)
        }
        let client = snd_seq_client_id(seq)
        guard client >= 0 else {
            snd_seq_close(seq)
            throw ALSAError("cannot read our sequencer client number", code: client)
        }
        // Client and port departures arrive through System:Announce: without it, a sender that wrote to
        // us directly (no subscription) and died would leave its notes sounding.
        let announced = snd_seq_connect_from(seq, port, Int32(SND_SEQ_CLIENT_SYSTEM), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE))
        guard announced >= 0 else {
            snd_seq_close(seq)
            throw ALSAError("cannot subscribe to System:Announce (0:1)", code: announced)
        }
        self.handle = seq
        self.clock = clock
        self.clientID = client
        self.portID = port
    }

    /// Our writable port, with every event stamped on arrival in `timestampQueue`'s real time.
    private static func createPort(_ seq: OpaquePointer, name: String, timestampQueue: Int32) -> Int32 {
        var infoOptional: OpaquePointer?
        let allocated = snd_seq_port_info_malloc(&infoOptional)
        guard allocated >= 0, let info = infoOptional else { return allocated }
        defer { snd_seq_port_info_free(info) }
        snd_seq_port_info_set_name(info, name)
        snd_seq_port_info_set_capability(info, UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE))
        snd_seq_port_info_set_type(info, UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION))
        snd_seq_port_info_set_timestamping(info, 1)
        snd_seq_port_info_set_timestamp_real(info, 1)
        snd_seq_port_info_set_timestamp_queue(info, timestampQueue)
        let created = snd_seq_create_port(seq, info)
        return created < 0 ? created : snd_seq_port_info_get_port(info)
    }

    /// Our own address, as senders and announcements name it.
    public var address: SequencerAddress { SequencerAddress(client: UInt8(clientID), port: UInt8(portID)) }

    deinit { close() }

    /// Subscribes our port to a source: "CLIENT:PORT", "CLIENT" (port 0), or a client name such as
    /// "Midi Through" (names are resolved by snd_seq_parse_address, as aconnect does).
    /// Call it before `start()`: alsa-lib handles are not meant to be shared between threads.
    /// When the source goes away the kernel sends our port PORT_UNSUBSCRIBED, delivered as `portGone`.
    public func connect(from source: String) throws {
        guard let seq = handle else { throw ALSAError("cannot connect from MIDI source", subject: source, reason: "the sequencer is closed") }
        ALSAError.prepareLibrary()
        var address = snd_seq_addr_t()
        let parsed = snd_seq_parse_address(seq, &address, source)
        guard parsed >= 0 else {
            throw ALSAError("unknown MIDI source", subject: source, code: parsed,
                            reason: "no such sequencer client or port (list them with `aconnect -i`)")
        }
        // snd_seq_connect_from says only "Invalid argument" for an address nobody has: say which part is missing.
        try Self.checkExists(seq, address, source: source)
        let connected = snd_seq_connect_from(seq, portID, Int32(address.client), Int32(address.port))
        guard connected >= 0 else {
            throw ALSAError("cannot subscribe to MIDI source '\(source)' (\(address.client):\(address.port))",
                            code: connected, detail: ALSAError.lastLibraryMessage())
        }
    }

    /// Throws "no such sequencer client 99" or "sequencer client 20 (Name) has no port 3".
    private static func checkExists(_ seq: OpaquePointer, _ address: snd_seq_addr_t, source: String) throws {
        var clientOptional: OpaquePointer?
        var portOptional: OpaquePointer?
        guard snd_seq_client_info_malloc(&clientOptional) >= 0, let clientInfo = clientOptional else { return }
        defer { snd_seq_client_info_free(clientInfo) }
        guard snd_seq_port_info_malloc(&portOptional) >= 0, let portInfo = portOptional else { return }
        defer { snd_seq_port_info_free(portInfo) }
        guard snd_seq_get_any_client_info(seq, Int32(address.client), clientInfo) >= 0 else {
            throw ALSAError("cannot connect from MIDI source", subject: source,
                            reason: "no such sequencer client \(address.client) (list them with `aconnect -i`)")
        }
        guard snd_seq_get_any_port_info(seq, Int32(address.client), Int32(address.port), portInfo) >= 0 else {
            let name = String(cString: snd_seq_client_info_get_name(clientInfo))
            throw ALSAError("cannot connect from MIDI source", subject: source,
                            reason: "sequencer client \(address.client) (\(name)) has no port \(address.port) (list them with `aconnect -i`)")
        }
    }

    /// Starts the reader thread, which calls `onEvent` for every decoded event until `stop()`.
    /// - Parameter realtimePriority: SCHED_FIFO priority for the reader (live play: just above the
    ///   audio thread, so on a busy or single core an arriving note is queued at once instead of
    ///   after the audio thread's next burst of periods — which could already have passed its frame);
    ///   refused, the reader runs at normal priority.
    public func start(realtimePriority: Int32? = nil) throws {
        precondition(thread == nil, "SequencerInput.start() called twice")
        guard let seq = handle else { throw ALSAError("cannot start reading MIDI", reason: "the sequencer is closed") }
        let count = snd_seq_poll_descriptors_count(seq, Int16(POLLIN))
        guard count > 0 else { throw ALSAError("cannot poll the ALSA sequencer", reason: "it offers no poll descriptors") }
        let state = ReaderState(seq: seq, descriptorCount: Int(count), channelFilter: channelFilter, port: address,
                                clock: clock, onEvent: onEvent)
        let filled = snd_seq_poll_descriptors(seq, state.descriptors, UInt32(count), Int16(POLLIN))
        guard filled > 0 else { throw ALSAError("cannot poll the ALSA sequencer", code: filled) }
        state.descriptorCount = Int(filled)
        self.state = state
        var spawned = NativeThread.spawn(realtimePriority: realtimePriority) { state.loop() }
        if realtimePriority != nil, case .failure = spawned { spawned = NativeThread.spawn { state.loop() } }
        switch spawned {
        case .success(let thread): self.thread = thread
        case .failure(let failure): throw ALSAError("cannot start the MIDI input thread", reason: failure.text)
        }
    }

    /// Ends the reader thread (within one poll timeout) and waits for it. Safe to call more than once.
    public func stop() {
        guard let thread else { return }
        state?.stopRequested.store(true, ordering: .releasing)
        thread.join()
        self.thread = nil
    }

    /// Stops reading and closes the sequencer, which removes our port and its subscriptions.
    public func close() {
        stop()
        if let seq = handle {
            snd_seq_close(seq)
            handle = nil
        }
    }
}

/// What the reader thread touches.
private final class ReaderState: @unchecked Sendable {
    let seq: OpaquePointer
    let descriptors: UnsafeMutablePointer<pollfd>
    var descriptorCount: Int
    let channelFilter: UInt8?
    let port: SequencerAddress
    let clock: SequencerClock?
    let onEvent: ((SequencerEvent, Int64) -> Void)?
    let stopRequested = Atomic<Bool>(false)
    let overruns = Atomic<Int>(0)
    /// Written by the reader thread only; read after it was joined.
    var failure: ALSAError?

    init(seq: OpaquePointer, descriptorCount: Int, channelFilter: UInt8?, port: SequencerAddress, clock: SequencerClock?,
         onEvent: ((SequencerEvent, Int64) -> Void)?) {
        self.seq = seq
        self.descriptors = .allocate(capacity: descriptorCount)
        self.descriptors.initialize(repeating: pollfd(), count: descriptorCount)
        self.descriptorCount = descriptorCount
        self.channelFilter = channelFilter
        self.port = port
        self.clock = clock
        self.onEvent = onEvent
    }

    deinit { descriptors.deallocate() }

    func loop() {
        while !stopRequested.load(ordering: .acquiring) {
            let ready = poll(descriptors, nfds_t(descriptorCount), SequencerInput.pollTimeoutMilliseconds)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                failure = ALSAError("cannot wait for MIDI input", code: -code)
                return
            }
            if ready == 0 { continue }
            guard readAvailable() else { return }
        }
    }

    /// Reads until the sequencer has nothing more; false when reading failed for good.
    private func readAvailable() -> Bool {
        while true {
            var event: UnsafeMutablePointer<snd_seq_event_t>?
            let result = snd_seq_event_input(seq, &event)
            if result == -EAGAIN { return true }
            if result == -ENOSPC {
                // The kernel queue overflowed and dropped events; later ones still arrive.
                overruns.add(1, ordering: .relaxed)
                continue
            }
            if result < 0 {
                failure = ALSAError("cannot read MIDI input from the ALSA sequencer", code: result)
                return false
            }
            // When the kernel delivered it (its queue timestamp), however late this thread woke.
            let now = MonotonicClock.nanoseconds()
            if let event, let decoded = SequencerInput.decode(event, channelFilter: channelFilter, port: port) {
                onEvent?(decoded, clock?.arrival(of: event, readAt: now) ?? now)
            }
        }
    }
}
