import Testing
@testable import ToneShaperRealtime

@Suite("The device clock: which frame the device plays when")
struct DeviceClockTests {
    @Test("says nothing before the audio thread has reported")
    func silentBeforeFirstReport() {
        #expect(DeviceClock(nominalRate: 48_000).frame(at: 123) == nil)
    }

    /// Reports as a 48 kHz device whose crystal runs `drift` fast and whose pointer moves in 4 ms
    /// timer ticks (as snd-aloop's does): the audio thread wakes at the first tick that leaves room
    /// for a period, and stamps its report up to 3 ms late (a heavily loaded machine).
    private func run(_ clock: DeviceClock, seconds: Double, drift: Double, period: Int = 160) -> [Double] {
        let rate = 48_000 * (1 + drift)
        var random = UInt64(7)
        func jitter() -> Double { random = random &* 6364136223846793005 &+ 1442695040888963407; return Double(random >> 11) / Double(1 << 53) }
        var errors: [Double] = []
        var frame = 0
        while Double(frame) / rate < seconds {
            let tick = (Double(frame) / rate / 0.004).rounded(.up) * 0.004  // the pointer's move that made room
            let wake = tick + 0.003 * jitter()                                  // when the thread ran and asked
            let playedAtTick = Int(tick * rate)
            clock.observe(frame: Int64(frame + 3 * period), delay: frame + 3 * period - playedAtTick,
                          at: Int64((1000 + wake) * 1e9))
            // How far the line is from the true device, in seconds, at an instant in between.
            let probe = wake + 0.001
            if let predicted = clock.frame(at: Int64((1000 + probe) * 1e9)) { errors.append((predicted - probe * rate) / rate) }
            frame += period
        }
        return errors
    }

    /// Reports that are late on average only shift the line (a constant latency, harmless); what
    /// must stay within 0.1 ms is how far it wanders around that.
    @Test("tick-quantised, late-stamped reports become a line that wanders less than 0.1 ms, drift included",
          arguments: [0.0, 100e-6, -100e-6])
    func locksWithinATenthOfAMillisecond(drift: Double) {
        let clock = DeviceClock(nominalRate: 48_000)
        let errors = run(clock, seconds: 30, drift: drift)
        let settled = Array(errors.suffix(from: errors.count / 5))   // after 6 s
        let middle = settled.sorted()[settled.count / 2]
        let wander = settled.map { abs($0 - middle) }.max() ?? .infinity
        #expect(wander < 0.0001, "wanders \(wander * 1000) ms around a constant offset of \(middle * 1000) ms")
        #expect(abs(middle) < 0.003)   // the offset is within what the reports were late by
        #expect(clock.resets == 0)
    }

    @Test("a jump in the stream (an underrun, a reopened device) starts the line over at once")
    func restartsOnAJump() {
        let clock = DeviceClock(nominalRate: 48_000)
        clock.observe(frame: 0, delay: 480, at: 1_000_000_000)
        clock.observe(frame: 480, delay: 480, at: 1_010_000_000)
        #expect(abs((clock.frame(at: 1_010_000_000) ?? 0) - 0) < 1)
        // One second of sound missing: the device restarted from an empty buffer.
        clock.observe(frame: 960, delay: 480, at: 2_020_000_000)
        #expect(clock.resets == 1)
        #expect(abs((clock.frame(at: 2_020_000_000) ?? 0) - 480) < 1)
    }
}
