import Synchronization
import ToneShaperRealtime

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
    private var threads: [NativeThread] = []
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
    /// `share` must be safe to call concurrently for different k. The threads hold the crew
    /// unretained (the owner stops the crew before it goes).
    /// `priority`: SCHED_FIFO priority to ask for (live play); when refused, normal priority.
    init(helpers: Int, priority: Int32? = nil, joinEveryRun: Bool = false, share: @escaping (Int) -> Void) {
        self.helpers = helpers
        self.joinEveryRun = joinEveryRun
        for k in 1...max(1, helpers) where helpers > 0 {
            // On another CPU from the start: a helper handed a span at once must not wait for
            // this thread to yield its CPU.
            let work = { [unowned(unsafe) self] in self.work(index: k, share: share) }
            var spawned = NativeThread.spawn(realtimePriority: priority, onAnotherCPU: true, work)
            if case .failure = spawned, priority != nil {
                // Real-time refused: run at normal priority.
                spawned = NativeThread.spawn(onAnotherCPU: true, work)
            }
            switch spawned {
            case .success(let thread): threads.append(thread)
            case .failure(let failure): preconditionFailure("cannot start a render thread (pthread_create: \(failure.code))")
            }
        }
    }

    /// Ends and joins the threads. Call before the engine goes away.
    func stop() {
        stopping.store(true, ordering: .releasing)
        for thread in threads { thread.join() }
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
