import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The audio thread: render a period, write it, repeat, until `stop()`.
///
/// A dedicated pthread, asking for SCHED_FIFO so a busy desktop cannot starve it. The blocking
/// PCM write is what paces the loop. The loop allocates, locks and logs nothing; a write failure
/// ends it and is kept in `failure` for the caller to report.
public final class AudioThread {
    /// The SCHED_FIFO priority asked for: above threaded IRQ handlers (50), below the
    /// kernel's watchdogs (99); clamped to what the system allows.
    public static let defaultPriority: Int32 = 70

    public let pcm: PCMOutput
    /// The one-time message to print when SCHED_FIFO was refused (nil when granted or not asked).
    public private(set) var realtimeWarning: String?
    /// True from `start()` until the loop ends (stopped, or a write failed).
    public var isRunning: Bool { state.running.load(ordering: .acquiring) }
    /// The write error that ended the loop, if any; read it after `stop()` or once `isRunning` is false.
    public var failure: ALSAError? {
        isRunning ? nil : state.failure
    }

    private let state: LoopState
    private let realtime: Bool
    private let priority: Int32
    private var thread: NativeThread?

    /// - Parameter render: fills `frames` interleaved frames (`frames * pcm.channels` floats) into
    ///   the pointer; called on the audio thread, so it must be real-time safe too.
    public init(pcm: PCMOutput, realtime: Bool = true, priority: Int32 = AudioThread.defaultPriority,
                render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) {
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
    }
}

/// What the audio thread touches; shared with it by reference, published by pthread_create.
private final class LoopState: @unchecked Sendable {
    let pcm: PCMOutput
    let render: (UnsafeMutablePointer<Float>, Int) -> Void
    let buffer: UnsafeMutablePointer<Float>
    let frames: Int
    let stopRequested = Atomic<Bool>(false)
    let running = Atomic<Bool>(false)
    /// Written by the audio thread before it clears `running`; read only after that.
    var failure: ALSAError?

    init(pcm: PCMOutput, render: @escaping (UnsafeMutablePointer<Float>, Int) -> Void) {
        self.pcm = pcm
        self.render = render
        self.frames = pcm.periodFrames
        self.buffer = .allocate(capacity: pcm.periodFrames * pcm.channels)
        self.buffer.initialize(repeating: 0, count: pcm.periodFrames * pcm.channels)
    }

    func loop() {
        failure = nil
        while !stopRequested.load(ordering: .acquiring) {
            render(buffer, frames)
            do {
                try pcm.write(buffer, frames: frames)
            } catch {
                failure = error
                break
            }
        }
        running.store(false, ordering: .releasing)
    }
}
