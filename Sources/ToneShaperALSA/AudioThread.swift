import Synchronization
import ToneShaperRealtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The audio thread: render a period, write it, repeat, until `stop()` — and go on when the
/// device goes away.
///
/// A dedicated pthread, asking for SCHED_FIFO so a busy desktop cannot starve it. The blocking
/// PCM write is what paces the loop. The loop allocates, locks and logs nothing.
///
/// When a write fails for good (EIO "playback write timeout", ENODEV when a USB interface is
/// unplugged) the loop drops that device (`lostDevices` counts up, `lastFailure` says why) and keeps
/// rendering, paced by the monotonic clock, so the performance — and its recording — go on without
/// a gap; the control thread closes the lost device, opens it again when it can and hands it over
/// with `offer(_:)`, and sound resumes at the next period.
public final class AudioThread {
    /// The SCHED_FIFO priority asked for: above threaded IRQ handlers (50), below the
    /// kernel's watchdogs (99); clamped to what the system allows.
    public static let defaultPriority: Int32 = 70

    /// What the device said just before a period was rendered (see `PCMOutput.playbackPosition`).
    public struct DeviceTime: Sendable {
        /// Frames still to play before the period about to be rendered.
        public var delay: Int
        /// When that was so (monotonic nanoseconds).
        public var nanoseconds: Int64
        /// False while there is no device: the time is the loop's own clock.
        public var hasDevice: Bool
    }

    /// The device the thread started with.
    public let pcm: PCMOutput
    /// The one-time message to print when SCHED_FIFO was refused (nil when granted or not asked).
    public private(set) var realtimeWarning: String?
    /// True from `start()` until `stop()`.
    public var isRunning: Bool { state.running.load(ordering: .acquiring) }
    /// Devices the loop gave up on (a write failed beyond recovery). The control thread owns a
    /// lost device again from the moment this counts it.
    public var lostDevices: Int { state.lost.load(ordering: .acquiring) }
    /// Why the last device was lost; read it once `lostDevices` has counted that loss.
    public var lastFailure: ALSAError? { lostDevices > 0 ? state.failure : nil }
    /// The write error of a device that is still lost (nil while a device is playing).
    public var failure: ALSAError? { state.hasDevice.load(ordering: .acquiring) ? nil : lastFailure }

    private let state: LoopState
    private let realtime: Bool
    private let priority: Int32
    private var thread: NativeThread?

    /// - Parameter render: fills `frames` interleaved frames (`frames * pcm.channels` floats) into
    ///   the pointer; called on the audio thread, so it must be real-time safe too.
    public init(pcm: PCMOutput, realtime: Bool = true, priority: Int32 = AudioThread.defaultPriority,
                render: @escaping (UnsafeMutablePointer<Float>, Int, DeviceTime) -> Void) {
        self.pcm = pcm
        self.realtime = realtime
        self.priority = priority
        self.state = LoopState(pcm: pcm, render: render)
    }

    deinit {
        stop()
        state.buffer.deallocate()
    }

    /// Starts the loop on a thread created under SCHED_FIFO, or, if that is refused, at normal
    /// priority with `realtimeWarning` set.
    public func start() throws {
        precondition(thread == nil, "AudioThread.start() called twice")
        state.stopRequested.store(false, ordering: .releasing)
        state.running.store(true, ordering: .releasing)
        let state = self.state
        var spawned = NativeThread.spawn(realtimePriority: realtime ? priority : nil) { state.loop() }
        if realtime, case .failure(let refusal) = spawned {
            realtimeWarning = Self.realtimeRefusal(refusal.text)
            spawned = NativeThread.spawn { state.loop() }
        }
        switch spawned {
        case .success(let thread):
            self.thread = thread
        case .failure(let failure):
            state.running.store(false, ordering: .releasing)
            throw ALSAError("cannot start the audio thread", reason: failure.text)
        }
    }

    /// Hands the loop a device to play to after one was lost (same rate and channels; its period
    /// may differ: periods are written through it in whatever sizes it took). The caller keeps the
    /// object alive until the loop has lost it too or stopped. False if a device is still playing
    /// or one is already on offer.
    @discardableResult
    public func offer(_ device: PCMOutput) -> Bool {
        guard device.channels == pcm.channels, device.sampleRate == pcm.sampleRate,
              !state.hasDevice.load(ordering: .acquiring) else { return false }
        let bits = UInt(bitPattern: Unmanaged.passUnretained(device).toOpaque())
        return state.offered.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing).exchanged
    }

    /// True once an offered device has been taken by the loop (or none is pending).
    public var offerTaken: Bool { state.offered.load(ordering: .acquiring) == 0 }

    /// The line to print once when SCHED_FIFO is refused (usually: no rtprio limit for this user).
    static func realtimeRefusal(_ reason: String) -> String {
        "toneshaper: running without real-time priority (SCHED_FIFO refused: \(reason)); expect glitches under load — see README"
    }

    /// Asks the loop to end after the current period and waits for it. Safe to call more than once.
    public func stop() {
        guard let thread else { return }
        state.stopRequested.store(true, ordering: .releasing)
        thread.join()
        self.thread = nil
        state.running.store(false, ordering: .releasing)
    }
}

/// What the audio thread touches; shared with it by reference, published by pthread_create.
private final class LoopState: @unchecked Sendable {
    let render: (UnsafeMutablePointer<Float>, Int, AudioThread.DeviceTime) -> Void
    let buffer: UnsafeMutablePointer<Float>
    let frames: Int
    let periodNanoseconds: Int64
    let nominalDelay: Int
    /// The device being played (audio thread only while `hasDevice`); unretained: the control side owns it.
    var device: Unmanaged<PCMOutput>
    let hasDevice = Atomic<Bool>(true)
    /// A device the control thread offers after a loss (opaque pointer bits, 0 = none).
    let offered = Atomic<UInt>(0)
    let lost = Atomic<Int>(0)
    let stopRequested = Atomic<Bool>(false)
    let running = Atomic<Bool>(false)
    /// Written by the audio thread before it counts a loss in `lost`; read only after that.
    var failure: ALSAError?

    init(pcm: PCMOutput, render: @escaping (UnsafeMutablePointer<Float>, Int, AudioThread.DeviceTime) -> Void) {
        self.render = render
        self.frames = pcm.periodFrames
        self.periodNanoseconds = Int64(pcm.periodFrames) * 1_000_000_000 / Int64(max(1, pcm.sampleRate))
        self.nominalDelay = pcm.bufferFrames
        self.device = Unmanaged.passUnretained(pcm)
        self.buffer = .allocate(capacity: pcm.periodFrames * pcm.channels)
        self.buffer.initialize(repeating: 0, count: pcm.periodFrames * pcm.channels)
    }

    func loop() {
        var deadline: Int64 = 0
        while !stopRequested.load(ordering: .acquiring) {
            if hasDevice.load(ordering: .relaxed) {
                let position = device._withUnsafeGuaranteedRef { $0.playbackPosition() }
                let time = position.map { AudioThread.DeviceTime(delay: $0.delay, nanoseconds: $0.nanoseconds, hasDevice: true) }
                    ?? AudioThread.DeviceTime(delay: nominalDelay, nanoseconds: MonotonicClock.nanoseconds(), hasDevice: true)
                render(buffer, frames, time)
                var failed: ALSAError?
                device._withUnsafeGuaranteedRef { pcm in
                    do throws(ALSAError) { try pcm.write(buffer, frames: frames) } catch { failed = error }
                }
                if let failed {
                    failure = failed
                    hasDevice.store(false, ordering: .releasing)
                    lost.wrappingAdd(1, ordering: .releasing)
                    deadline = MonotonicClock.nanoseconds() + periodNanoseconds
                }
            } else {
                // No device: the clock paces the loop, so the performance and its recording go on in time.
                let offer = offered.exchange(0, ordering: .acquiringAndReleasing)
                if offer != 0, let pointer = UnsafeRawPointer(bitPattern: offer) {
                    device = Unmanaged<PCMOutput>.fromOpaque(pointer)
                    hasDevice.store(true, ordering: .releasing)
                    continue
                }
                MonotonicClock.sleep(until: deadline)
                let now = MonotonicClock.nanoseconds()
                render(buffer, frames, AudioThread.DeviceTime(delay: nominalDelay, nanoseconds: now, hasDevice: false))
                deadline += periodNanoseconds
                // Far behind (the machine stalled): carry on from now rather than rush to catch up.
                if now - deadline > 1_000_000_000 { deadline = now + periodNanoseconds }
            }
        }
        running.store(false, ordering: .releasing)
    }
}
