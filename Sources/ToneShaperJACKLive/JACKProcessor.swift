import Synchronization
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperJACK
import ToneShaperLive
import ToneShaperMIDI

/// What JACK's callbacks do: the process callback (real-time thread) and the notifications
/// (buffer size, sample rate, xrun, shutdown). The control thread only reads its atomics.
///
/// A new graph rate is followed: the sample-rate callback (not real-time) notes the rate, the
/// control thread builds the instrument again at it with `rebuild`, sets its controls as last set
/// and offers it to the session (`JACKPlayer.poll`), the process callback takes it over at the
/// start of its next cycle by swapping a pointer, and the control thread frees the old one.
///
/// Real-time rules for `process`: no allocation, no lock, no logging, no I/O. The interleaved
/// scratch the session renders into is allocated before activation and grown only in the
/// buffer-size callback, which JACK calls while the graph is stopped (blocking is allowed there);
/// a grown buffer is published before its capacity, and the old one kept until the end, so a
/// cycle never sees a capacity larger than the buffer it reads.
final class JACKProcessor: @unchecked Sendable {
    /// The source id the MIDI input port's messages carry (one port: one source).
    static let portSource = MIDISourceID(0)

    let client: JACKClient
    let session: LiveSession
    /// nil while a performance feeds the session (the feeder thread is then the ring's producer).
    let input: LiveInput?
    let midiPort: JACKPort?
    let left: JACKPort
    let right: JACKPort
    let engineRate: Int
    /// Builds the instrument again at a graph's new rate (nil: the rate is only reported).
    let rebuild: ((Int) -> Instrument)?
    /// A graph rate the instrument is to follow, not yet taken by the control thread (0: none).
    private let requestedRate = Atomic<Int>(0)
    /// The rate of the engine last built or started with (sample-rate callback only).
    private var followedRate: Int

    private let scratch: Atomic<UnsafeMutablePointer<Float>>
    private let capacity: Atomic<Int>
    /// Buffers replaced by larger ones; freed at the end (a cycle may still hold one).
    private var retired: [UnsafeMutablePointer<Float>] = []
    private let current = Atomic<Int>(0)
    private let rate = Atomic<Int>(0)
    private let xruns = Atomic<Int>(0)
    private let oversized = Atomic<Int>(0)
    /// JACK frame time of the first cycle, + 1 (0: not yet).
    private let firstFrame = Atomic<Int64>(0)
    private let gone = Atomic<Bool>(false)
    /// The server's reason, copied in by the shutdown callback before `gone` is set.
    private let reason: UnsafeMutablePointer<CChar>
    private static let reasonCapacity = 256
    // Process thread only.
    private var wasConnected = false

    init(client: JACKClient, session: LiveSession, input: LiveInput?, midiPort: JACKPort?, left: JACKPort, right: JACKPort,
         bufferFrames: Int, engineRate: Int, rebuild: ((Int) -> Instrument)? = nil) {
        self.client = client
        self.session = session
        self.input = input
        self.midiPort = midiPort
        self.left = left
        self.right = right
        self.engineRate = engineRate
        self.rebuild = rebuild
        followedRate = engineRate
        let frames = max(16, bufferFrames)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
        buffer.initialize(repeating: 0, count: 2 * frames)
        scratch = Atomic(buffer)
        capacity = Atomic(frames)
        current.store(bufferFrames, ordering: .relaxed)
        reason = .allocate(capacity: Self.reasonCapacity)
        reason.initialize(repeating: 0, count: Self.reasonCapacity)
    }

    deinit {
        scratch.load(ordering: .relaxed).deallocate()
        for buffer in retired { buffer.deallocate() }
        reason.deallocate()
    }

    // MARK: - Process thread

    /// One cycle: the MIDI port's events into the session at their frames, one period rendered,
    /// split into the two output ports.
    func process(_ nframes: UInt32) -> Int32 {
        if firstFrame.load(ordering: .relaxed) == 0 {
            firstFrame.store(Int64(client.lastFrameTime()) + 1, ordering: .releasing)
        }
        let frames = Int(nframes)
        guard let outLeft = JACKCycle.audioBuffer(left, frames: nframes),
              let outRight = JACKCycle.audioBuffer(right, frames: nframes) else { return 0 }
        let room = capacity.load(ordering: .acquiring)
        let buffer = scratch.load(ordering: .acquiring)
        guard frames <= room else {
            // Cannot happen with a server that announces its buffer size; silence rather than overrun.
            outLeft.update(repeating: 0, count: frames)
            outRight.update(repeating: 0, count: frames)
            oversized.wrappingAdd(1, ordering: .relaxed)
            return 0
        }
        if let input, let midiPort {
            let start = session.framesRendered
            let connected = JACKCycle.connectionCount(midiPort) > 0
            if wasConnected && !connected { input.releaseAll(from: Self.portSource, at: start, patience: 0) }
            wasConnected = connected
            JACKCycle.forEachEvent(in: midiPort, frames: nframes) { time, bytes in
                guard let message = Self.decode(bytes) else { return }
                input.receive(message, from: Self.portSource, at: start + Int64(time), patience: 0)
            }
        }
        session.renderPeriod(into: buffer, frames: frames)
        for i in 0..<frames {
            outLeft[i] = buffer[2 * i]
            outRight[i] = buffer[2 * i + 1]
        }
        return 0
    }

    /// A JACK MIDI event (one whole message, no running status) as a channel-voice message; nil
    /// for system messages (SysEx, clock, ...) and malformed ones.
    @inline(__always)
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> MIDIMessage? {
        // Through the base pointer: Collection's generic `first` and subscript allocate in a debug build.
        guard let base = bytes.baseAddress, bytes.count > 0, let length = MIDIMessage.dataLength(status: base[0]),
              bytes.count > length else { return nil }
        return MIDIMessage(status: base[0], data1: base[1], data2: length == 2 ? base[2] : 0)
    }

    // MARK: - Notifications

    /// Grows the scratch for a larger buffer size (graph stopped: allocation is allowed here).
    func bufferSizeChanged(_ nframes: UInt32) -> Int32 {
        let frames = Int(nframes)
        current.store(frames, ordering: .relaxed)
        if frames > capacity.load(ordering: .relaxed) {
            let grown = UnsafeMutablePointer<Float>.allocate(capacity: 2 * frames)
            grown.initialize(repeating: 0, count: 2 * frames)
            retired.append(scratch.load(ordering: .relaxed))
            scratch.store(grown, ordering: .releasing)
            capacity.store(frames, ordering: .releasing)
        }
        return 0
    }

    /// The graph's rate is now `newRate` (JACK also calls this once when the callback is set): a
    /// rate other than the instrument's is left for the control thread to rebuild at
    /// (`takeRateToFollow`), where the controls as last set are kept. JACK calls it from its
    /// notification thread; the tests call it directly.
    func sampleRateChanged(_ newRate: UInt32) -> Int32 {
        let hertz = Int(newRate)
        rate.store(hertz, ordering: .relaxed)
        guard rebuild != nil, hertz > 0, hertz != followedRate else { return 0 }
        followedRate = hertz
        requestedRate.store(hertz, ordering: .releasing)
        return 0
    }

    /// Control thread: the graph rate to build the instrument again at, once per change (the
    /// latest, when the graph changed twice before it looked).
    func takeRateToFollow() -> Int? {
        let hertz = requestedRate.exchange(0, ordering: .acquiring)
        return hertz == 0 ? nil : hertz
    }

    func xrun() -> Int32 {
        xruns.wrappingAdd(1, ordering: .relaxed)
        return 0
    }

    /// Notes the reason and that the server is gone; nothing else (it may run on the process thread).
    func serverWentAway(_ text: UnsafePointer<CChar>?) {
        if let text {
            var i = 0
            while i < Self.reasonCapacity - 1 && text[i] != 0 {
                reason[i] = text[i]
                i += 1
            }
            reason[i] = 0
        }
        gone.store(true, ordering: .releasing)
    }

    // MARK: - Control thread

    var isServerGone: Bool { gone.load(ordering: .acquiring) }
    var shutdownReason: String { isServerGone ? String(cString: reason) : "" }
    var xrunCount: Int { xruns.load(ordering: .relaxed) }
    var oversizedCycles: Int { oversized.load(ordering: .relaxed) }
    var currentBufferFrames: Int { current.load(ordering: .relaxed) }
    var graphRate: Int { rate.load(ordering: .relaxed) }
    var startFrameTime: UInt32? {
        let value = firstFrame.load(ordering: .acquiring)
        return value == 0 ? nil : UInt32(truncatingIfNeeded: value - 1)
    }
}
