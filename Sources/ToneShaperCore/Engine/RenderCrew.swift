import CThreadPlacement
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Threads that render some parts' voices and buses while the engine's own thread renders the rest
/// (what a share is: `Engine+Shares`).
///
/// Hand-off is two atomic counters (start generation, finished count) with spinning, because
/// a span is tens to hundreds of microseconds of work: a lock or a wake-up through the kernel would cost more
/// than it saves. A waiting thread spins for up to 50 µs, then yields; a worker that sees no work
/// for half a millisecond naps 50 µs at a time, so an idle engine (or a live one between periods)
/// does not hold a core. Nothing here allocates or locks once the threads run.
final class RenderCrew: @unchecked Sendable {
    /// Threads besides the engine's own.
    let helpers: Int
    private let joinEveryRun: Bool
    private var threads: [pthread_t] = []
    /// Runs started so far, counted on the engine's thread (the helpers read `generation`).
    private var runs = 0
    // What the engine's thread writes and the helpers what they write, on lines of their own
    // (128 bytes apart: a line and the neighbour the prefetcher pairs with it): each span then
    // moves one line to the helpers and one back. The counts only grow, so nothing is reset.
    private let padBefore = LinePairPadding()
    /// Runs started, as the helpers see it.
    private let generation = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let padBetween = LinePairPadding()
    /// Helper shares finished, over all runs.
    private let finished = Atomic<Int>(0)
    /// Helper shares begun, over all runs (counted only when `joinEveryRun`).
    private let joined = Atomic<Int>(0)
    private let padAfter = LinePairPadding()

    /// Starts `helpers` threads that call `share(k)` (k = 1...helpers) for every `run()`.
    /// `share` must be safe to call concurrently for different k; it is kept unretained by the
    /// threads (the owner stops the crew before it goes).
    /// `priority`: SCHED_FIFO priority to ask for (live play); when refused, normal priority.
    init(helpers: Int, priority: Int32? = nil, joinEveryRun: Bool = false, share: @escaping (Int) -> Void) {
        self.helpers = helpers
        self.joinEveryRun = joinEveryRun
        for k in 1...max(1, helpers) where helpers > 0 {
            let context = Unmanaged.passRetained(Context(crew: self, index: k, share: share)).toOpaque()
            var thread = pthread_t()
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            if let priority {
                var param = sched_param()
                param.sched_priority = min(max(priority, sched_get_priority_min(SCHED_FIFO)), sched_get_priority_max(SCHED_FIFO))
                pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
                pthread_attr_setschedpolicy(&attributes, SCHED_FIFO)
                pthread_attr_setschedparam(&attributes, &param)
            }
            let body: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? = { raw in
                let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
                context.crew.work(index: context.index, share: context.share)
                return nil
            }
            // On another CPU from the start: left to the kernel, a new thread shares its creator's
            // CPU until the load balancer moves it (up to 40 ms on a small VM).
            toneshaper_start_elsewhere(&attributes)
            var created = pthread_create(&thread, &attributes, body, context)
            if created != 0 && priority != nil {
                // Real-time refused: run at normal priority.
                pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_INHERIT_SCHED))
                created = pthread_create(&thread, &attributes, body, context)
            }
            precondition(created == 0, "cannot start a render thread (pthread_create: \(created))")
            threads.append(thread)
        }
    }

    private final class Context {
        unowned(unsafe) let crew: RenderCrew
        let index: Int
        let share: (Int) -> Void
        init(crew: RenderCrew, index: Int, share: @escaping (Int) -> Void) { self.crew = crew; self.index = index; self.share = share }
    }

    /// Ends and joins the threads. Call before the engine goes away.
    func stop() {
        stopping.store(true, ordering: .releasing)
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    /// Starts every helper on the current job, runs share 0 on this thread, and returns when all are done.
    @inline(__always)
    func run(_ ownShare: () -> Void) {
        runs += 1
        let all = runs * helpers
        generation.store(runs, ordering: .releasing)
        if joinEveryRun { RenderCrew.spin { joined.load(ordering: .acquiring) >= all } }
        ownShare()
        RenderCrew.spin { finished.load(ordering: .acquiring) >= all }
    }

    /// Waits for `done`: spins for up to `spinLimit` (the usual wait is a few microseconds), then
    /// gives the core away each round: with more threads than free cores a helper may only run
    /// once this one yields. Counted in time, not turns: a fast core's few thousand turns are a
    /// microsecond, and yielding that early costs a system call per span for nothing.
    @inline(__always) static func spin(until done: () -> Bool) {
        var turns = 0
        var deadline = 0
        while !done() {
            turns &+= 1
            if turns & 127 == 0 {
                let now = RenderCrew.now()
                if deadline == 0 { deadline = now + RenderCrew.spinLimit } else if now > deadline { sched_yield() }
            }
        }
    }

    /// How long a waiting thread spins before it yields its core, in nanoseconds.
    static let spinLimit = 50_000
    /// How long a helper waits for work, spinning then yielding, before it naps, in nanoseconds.
    static let napAfter = 500_000

    /// CLOCK_MONOTONIC in nanoseconds (a vDSO read, no system call).
    @inline(__always) static func now() -> Int {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return t.tv_sec * 1_000_000_000 + t.tv_nsec
    }

    private func work(index: Int, share: (Int) -> Void) {
        toneshaper_run_anywhere()  // started elsewhere, not pinned there
        var seen = 0
        while true {
            var turns = 0
            var waited = 0
            var current = generation.load(ordering: .acquiring)
            while current == seen {
                if stopping.load(ordering: .relaxed) { return }
                // Spin a while, yield for a while (the engine's thread is between spans), then
                // nap: a live helper at real-time priority must not hold its core between periods.
                turns &+= 1
                if turns & 127 == 0 {
                    let now = RenderCrew.now()
                    if waited == 0 { waited = now }
                    let idle = now - waited
                    if idle > RenderCrew.napAfter { usleep(50) } else if idle > RenderCrew.spinLimit { sched_yield() }
                }
                current = generation.load(ordering: .acquiring)
            }
            seen = current
            if joinEveryRun { joined.wrappingAdd(1, ordering: .releasing) }
            share(index)
            finished.wrappingAdd(1, ordering: .releasing)
        }
    }
}
