import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which stream frame the audio device plays at which instant, as the device's own clock says.
///
/// Why: a live event should sound a constant time after it arrived, not at whatever period start
/// comes next (up to a period of jitter). The audio thread reports, once per period, the monotonic
/// time at which the device had `delay` frames still to play before the period it is about to
/// render (snd_pcm_htimestamp); those reports jitter with scheduling and with drivers that move
/// their pointer in timer ticks, so a delay-locked loop (a second-order filter, as JACK and
/// PulseAudio use; F. Adriaensen, "Using a DLL to filter time", 2005) turns them into a straight
/// line frame = anchor + rate · (t − anchorTime), tracking the device's true rate. The MIDI thread
/// reads that line through a sequence lock: no lock, no allocation on either side.
public final class DeviceClock: @unchecked Sendable {
    /// The rate the device was opened at (the loop starts from it and learns the true one).
    public let nominalRate: Double
    /// Loop bandwidth once settled, in Hz: narrow, so wake-up jitter of a few milliseconds is
    /// averaged away, still tracking a crystal's drift.
    public let bandwidth: Double
    /// Loop bandwidth at the start, in Hz, narrowing toward `bandwidth` with a 1.5 s time constant:
    /// locks in a second, then settles without the jolt a sudden switch gives the rate estimate.
    public let lockingBandwidth: Double
    /// A report this far (seconds) off the line means the stream restarted (underrun, reopen): start over.
    public let resetThreshold: Double

    // Audio thread only: the loop's state, in seconds.
    private var started = false
    private var anchorFrame: Int64 = 0
    private var anchorTime: Double = 0      // when `anchorFrame` is played, filtered
    private var secondsPerFrame: Double = 0
    private var lockedSince: Double = 0

    // Published line: sequence-locked copy for readers on other threads.
    private let sequence = Atomic<UInt64>(0)
    private let publishedFrame = Atomic<Int64>(0)
    private let publishedTime = Atomic<UInt64>(0)   // Double bit pattern, seconds
    private let publishedRate = Atomic<UInt64>(0)   // Double bit pattern, frames per second
    private let resetCount = Atomic<Int>(0)

    public init(nominalRate: Double, bandwidth: Double = 0.05, lockingBandwidth: Double = 2, resetThreshold: Double = 0.02) {
        precondition(nominalRate > 0)
        self.nominalRate = nominalRate
        self.bandwidth = bandwidth
        self.lockingBandwidth = lockingBandwidth
        self.resetThreshold = resetThreshold
    }

    /// Times the loop had to start over (the stream jumped).
    public var resets: Int { resetCount.load(ordering: .relaxed) }

    /// Audio thread: at monotonic `nanoseconds` the device still had `delay` frames to play before
    /// frame `frame` (the first frame of the period about to be rendered).
    public func observe(frame: Int64, delay: Int, at nanoseconds: Int64) {
        let observed = Double(nanoseconds) * 1e-9 + Double(max(0, delay)) / nominalRate
        guard started else {
            restart(frame: frame, time: observed)
            return
        }
        let frames = Double(frame - anchorFrame)
        let predicted = anchorTime + secondsPerFrame * frames
        let error = observed - predicted
        if frames <= 0 || abs(error) > resetThreshold {
            resetCount.wrappingAdd(1, ordering: .relaxed)
            restart(frame: frame, time: observed)
            return
        }
        // Second-order loop, per step of `frames`: ω = 2π·B·T, b = √2·ω, c = ω².
        let step = frames * secondsPerFrame
        let band = max(bandwidth, lockingBandwidth * exp(-(observed - lockedSince) / 1.5))
        let omega = 2 * Double.pi * band * step
        anchorTime = predicted + 2.0.squareRoot() * omega * error
        secondsPerFrame += omega * omega * error / frames
        anchorFrame = frame
        publish()
    }

    /// Any thread: the (fractional) frame the device plays at monotonic `nanoseconds`; nil until
    /// the audio thread has reported once.
    public func frame(at nanoseconds: Int64) -> Double? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }  // being written: a few nanoseconds
            let frame = publishedFrame.load(ordering: .relaxed)
            let time = Double(bitPattern: publishedTime.load(ordering: .relaxed))
            let rate = Double(bitPattern: publishedRate.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            if sequence.load(ordering: .relaxed) == before {
                return Double(frame) + (Double(nanoseconds) * 1e-9 - time) * rate
            }
        }
    }

    private func restart(frame: Int64, time: Double) {
        started = true
        anchorFrame = frame
        anchorTime = time
        secondsPerFrame = 1 / nominalRate
        lockedSince = time
        publish()
    }

    private func publish() {
        let next = sequence.load(ordering: .relaxed) &+ 1
        sequence.store(next, ordering: .relaxed)  // odd: readers wait
        atomicMemoryFence(ordering: .releasing)
        publishedFrame.store(anchorFrame, ordering: .relaxed)
        publishedTime.store(anchorTime.bitPattern, ordering: .relaxed)
        publishedRate.store((1 / secondsPerFrame).bitPattern, ordering: .relaxed)
        sequence.store(next &+ 1, ordering: .releasing)
    }
}
