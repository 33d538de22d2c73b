#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CPrefetch

/// A feedback delay on a part's mix: each repeat comes back `volume` times quieter.
///
/// Delay time glides (one-pole) and volume ramps linearly, so turning either knob never clicks;
/// the read position is fractional, which makes a gliding delay sound like tape rather than steps.
struct EchoLine {
    let buffer: UnsafeMutablePointer<Float>
    let capacity: Int
    var writeIndex = 0
    var delaySamples: Double
    var delayTarget: Double
    var volume: Float = 0
    var volumeTarget: Float = 0
    let glide: Double

    /// Samples a line holds for a longest delay of `maxDelaySeconds`.
    static func capacity(maxDelaySeconds: Double, sampleRate: Double) -> Int { Int(maxDelaySeconds * sampleRate) + 4 }

    /// A line over `storage`: `capacity` zeroed samples of the engine's echo block (`Engine.echoBlock`),
    /// which the engine keeps and frees.
    init(maxDelaySeconds: Double, sampleRate: Double, storage: UnsafeMutablePointer<Float>) {
        capacity = EchoLine.capacity(maxDelaySeconds: maxDelaySeconds, sampleRate: sampleRate)
        buffer = storage
        delaySamples = 0.25 * sampleRate
        delayTarget = delaySamples
        glide = 1 - _exp(-1 / (0.05 * sampleRate))  // ~50 ms glide
        volumeMaxStep = Float(1 / (0.02 * sampleRate))
    }

    mutating func clear() {
        buffer.update(repeating: 0, count: capacity)
    }

    /// Volume moves at most this much per sample (full scale in 20 ms): per-sample, so the result
    /// never depends on block boundaries.
    let volumeMaxStep: Float

    var isOff: Bool { volume == 0 && volumeTarget == 0 }

    /// Every cache line from `first`'s through `last`'s.
    @inline(__always) static func prefetch(_ first: UnsafeMutablePointer<Float>, through last: UnsafeMutablePointer<Float>) {
        var line = UInt(bitPattern: first) & ~63
        let end = UInt(bitPattern: last)
        while line <= end {
            toneshaper_prefetch(UnsafeRawPointer(bitPattern: line))
            line &+= 64
        }
    }

    /// The reads of the next `count` samples on their way, from where the next call will read (the
    /// settled delay's place). Asked before a part's voices render several periods at once: the
    /// echo's passes over those periods then follow one another, with no time between them for
    /// `process`'s own look-ahead of one call to arrive.
    func prefetchReads(_ count: Int) {
        if isOff { return }
        prefetchRing(from: settledRead().r, count: count)
    }

    /// Where the settled delay reads for the next write: whole samples back, the fraction, and the
    /// older sample's index (reading one sample further back and forward by 1 − frac is reading
    /// back the delay).
    @inline(__always) func settledRead() -> (whole: Int, frac: Float, r: Int) {
        let dd = clamped(delaySamples)
        let whole = Int(dd)
        var r = writeIndex - whole - 1
        if r < 0 { r += capacity }
        return (whole, Float(dd - Double(whole)), r)
    }

    /// A delay in samples as the ring can read it: at least one sample, at most three short of its capacity.
    @inline(__always) func clamped(_ d: Double) -> Double { min(max(d, 1), Double(capacity - 3)) }

    /// Every cache line of `count` ring samples from index `r` on, wrapping at the end.
    @inline(__always) func prefetchRing(from r: Int, count: Int) {
        let last = r + count
        EchoLine.prefetch(buffer + r, through: buffer + min(last, capacity - 1))
        if last >= capacity { EchoLine.prefetch(buffer, through: buffer + (last - capacity)) }
    }

    /// Processes `count` samples in place, each first multiplied by `gain` (the part's, settled:
    /// one pass over the bus instead of two; with the echo off only the gain is applied).
    mutating func process(_ io: UnsafeMutablePointer<Float>, count: Int, gain: Float = 1) {
        if isOff {
            if gain != 1 { for n in 0..<count { io[n] *= gain } }
            return
        }
        let target = volumeTarget, maxStep = volumeMaxStep
        var vol = volume
        var d = delaySamples
        var w = writeIndex
        let cap = capacity
        if d == delayTarget && vol == target {
            // Settled (the usual case): the read offset and its fraction are the same for every sample.
            let (whole, frac, start) = settledRead()
            var r = start
            var n = 0
            while n < count {
                // Eight at a time while no index wraps and the reads (whole + 1 samples back) all
                // precede this group's writes — as many groups as that allows, counted before the
                // loop, so it carries no test per group; the scalar step below handles the rest.
                if whole >= 8 && n + 8 <= count && w + 8 <= cap && r + 9 <= cap {
                    let groups = min((count - n) / 8, (cap - w) / 8, (cap - r - 1) / 8)
                    for _ in 0..<groups {
                        let older = UnsafeRawPointer(buffer + r).loadUnaligned(as: SIMD8<Float>.self)
                        let newer = UnsafeRawPointer(buffer + r + 1).loadUnaligned(as: SIMD8<Float>.self)
                        let x = UnsafeRawPointer(io + n).loadUnaligned(as: SIMD8<Float>.self) * gain
                        let y = x + vol * (newer + (older - newer) * frac)
                        UnsafeMutableRawPointer(buffer + w).storeBytes(of: y, as: SIMD8<Float>.self)
                        UnsafeMutableRawPointer(io + n).storeBytes(of: y, as: SIMD8<Float>.self)
                        n &+= 8; w &+= 8; r &+= 8
                    }
                    // (r + 9 ≤ cap held for every group, so only the writes can have reached the end.)
                    if w == cap { w = 0 }
                    continue
                }
                // Reading one sample further back and forward by (1 − frac) equals reading back dd.
                let r1 = r + 1 == cap ? 0 : r + 1
                let delayed = buffer[r1] + (buffer[r] - buffer[r1]) * frac
                let y = io[n] * gain + vol * delayed
                buffer[w] = y
                io[n] = y
                w += 1
                if w == cap { w = 0 }
                r = r1
                n += 1
            }
            writeIndex = w
            if volume == 0 { clear() }
            // The next call's reads (a delay ago: long gone from the cache) start on their way now,
            // while this part's voices render its next period: in a dense render, the delayed loads
            // had waited on memory for most of the echo's time. As many as this call read (a control
            // period, as a rule), from where it stopped (r is the next read's older sample).
            prefetchRing(from: r, count: count)
            return
        }
        for n in 0..<count {
            d += (delayTarget - d) * glide
            let dd = clamped(d)
            var r = Double(w) - dd
            if r < 0 { r += Double(cap) }
            let i0 = Int(r)
            let frac = Float(r - Double(i0))
            let i1 = i0 + 1 == cap ? 0 : i0 + 1
            let delayed = buffer[i0] + (buffer[i1] - buffer[i0]) * frac
            vol += min(max(target - vol, -maxStep), maxStep)
            let y = io[n] * gain + vol * delayed
            buffer[w] = y
            io[n] = y
            w += 1
            if w == cap { w = 0 }
        }
        volume = vol
        // The glide approaches its target only asymptotically: snap when a hair away, so the
        // settled fast path takes over.
        delaySamples = abs(delayTarget - d) < 1e-6 ? delayTarget : d
        writeIndex = w
        if volume == 0 { clear() }
    }
}
