#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time in nanoseconds (clock_gettime(CLOCK_MONOTONIC)).
@inline(never) func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Runs `body` `runs` times and returns the median elapsed time in seconds (what a figure quoted
/// from one run should be: not the luckiest run), plus every run's time for the range.
/// `prepare` runs before each timed run, untimed (e.g. a fresh engine, so that idle helper threads
/// of earlier runs' engines are not napping and waking beside the timed one).
func medianOf(_ runs: Int, prepare: () -> Void = {}, _ body: () -> Void) -> (median: Double, all: [Double]) {
    var all: [Double] = []
    for _ in 0..<max(1, runs) {
        prepare()
        all.append(timed(body))
    }
    return (all.sorted()[all.count / 2], all)
}

/// `body`'s wall-clock time in seconds; how much of it the thread was off the CPU goes to `timingLog`.
func timed(_ body: () -> Void) -> Double {
    let c0 = threadCPUNanoseconds()
    let t0 = monotonicNanoseconds()
    body()
    let t1 = monotonicNanoseconds()
    let c1 = threadCPUNanoseconds()
    let wall = Double(t1 - t0) * 1e-9
    timingLog.note(wall: wall, cpu: Double(c1 - c0) * 1e-9)
    return wall
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): excludes time the thread was preempted.
@inline(never) func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// How much of each timed run the thread spent off the CPU (a busy machine shows here).
final class TimingLog: @unchecked Sendable {
    var worstOffCPU = 0.0
    func note(wall: Double, cpu: Double) { worstOffCPU = max(worstOffCPU, max(0, 1 - cpu / wall)) }
}
let timingLog = TimingLog()

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never) func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }
