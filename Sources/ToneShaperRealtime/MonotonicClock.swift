#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// CLOCK_MONOTONIC in nanoseconds: the one clock the MIDI thread stamps arrivals with and the
/// PCM's timestamps are asked in, so the two can be compared (wall-clock time jumps; this does not).
public enum MonotonicClock {
    @inline(__always)
    public static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    /// Sleeps until the monotonic instant `deadline` (absolute, so a late wake-up does not push every later one back).
    public static func sleep(until deadline: Int64) {
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}
