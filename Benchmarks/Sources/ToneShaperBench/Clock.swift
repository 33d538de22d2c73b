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

/// Runs `body` `runs` times and returns the fastest elapsed time in seconds (best of N: the run
/// least disturbed by other processes on a shared machine), plus every run's time.
func bestOf(_ runs: Int, _ body: () -> Void) -> (best: Double, all: [Double]) {
    var all: [Double] = []
    for _ in 0..<max(1, runs) {
        let t0 = monotonicNanoseconds()
        body()
        let t1 = monotonicNanoseconds()
        all.append(Double(t1 - t0) * 1e-9)
    }
    return (all.min()!, all)
}

/// Keeps a value alive so the optimiser cannot drop the work that produced it.
@inline(never) func blackHole<T>(_ x: T) { withExtendedLifetime(x) {} }
