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
    var all: [Double] = [], cpu: [Double] = []
    for _ in 0..<max(1, runs) {
        prepare()
        let c0 = threadCPUNanoseconds()
        let t0 = monotonicNanoseconds()
        body()
        let t1 = monotonicNanoseconds()
        let c1 = threadCPUNanoseconds()
        all.append(Double(t1 - t0) * 1e-9)
        cpu.append(Double(c1 - c0) * 1e-9)
    }
    let i = all.indices.sorted { all[$0] < all[$1] }[all.count / 2]
    timingLog.note(wall: all[i], cpu: cpu[i])
    return (all[i], all)
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID): excludes time the thread was preempted.
@inline(never) func threadCPUNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// How much of each median run the thread spent off the CPU (a busy machine shows here).
final class TimingLog: @unchecked Sendable {
    var worstBestOffCPU = 0.0
    func note(wall: Double, cpu: Double) { worstBestOffCPU = max(worstBestOffCPU, max(0, 1 - cpu / wall)) }
}
let timingLog = TimingLog()

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never) func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }
