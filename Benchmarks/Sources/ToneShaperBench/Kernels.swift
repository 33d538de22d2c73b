#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ToneShaperCore

// Hot-spot experiments. The engine's inner loops are re-stated here ("engine copy": Voice.render's
// pass 1 for a settled constant envelope, its sine and band-limited pass 2, and Engine.mixPart's
// amplitude + DC blocker + pan loops) next to candidate rewrites, all timed on the same data.
// Nothing here is used by the engine: a faster variant is a proposal for the core, with its gain.
// (The one-gain-per-block voice variant measured here was adopted by the core in 9ea31ad; the
// part-mix variant is still a proposal.)
// Keep the copies in step with Sources/ToneShaperCore/Engine/Voice.swift and Engine.swift.

// MARK: - Voice kernels

struct KVoice {
    var u = 0.0
    var seg = 0
    var limit = 0.0
    var df = 0.0
    var phase = 0.0
    var f = 0.0
    var ratio = 1.0
    var gain = 0.3
    var rampLeft = 0
    var gainStep = 0.0
    var gainTarget = 0.3
    var blendLevel = 0
    var blendWeight: Float = 0
}

/// Band-limited sawtooth pair tables in the engine's layout: per level, (level L sample j,
/// level L+1 sample j) interleaved, 4097 pairs (one guard), 37 levels a quarter octave apart.
final class KTables: @unchecked Sendable {
    static let size = 4096, levels = 37, stride = 4097, pairStride = 2 * 4097
    let storage: UnsafeMutablePointer<Float>
    init() {
        let n = Self.size
        storage = .allocate(capacity: Self.levels * Self.pairStride)
        var sine = [Double](repeating: 0, count: n)
        for j in 0..<n { sine[j] = sin(2 * Double.pi * Double(j) / Double(n)) }
        var acc = [Double](repeating: 0, count: n)
        var plain = [Float](repeating: 0, count: Self.levels * Self.stride)
        var k = 0
        for level in (0..<Self.levels).reversed() {
            let top = Int((512 / exp2(Double(level) / 4)).rounded(.down))
            while k < top {
                k += 1
                let a = -2 / (Double.pi * Double(k))
                for j in 0..<n { acc[j] += a * sine[(k * j) & (n - 1)] }
            }
            for j in 0..<n { plain[level * Self.stride + j] = Float(acc[j]) }
            plain[level * Self.stride + n] = plain[level * Self.stride]
        }
        for level in 0..<Self.levels {
            let lean = min(level + 1, Self.levels - 1)
            for j in 0..<Self.stride {
                storage[level * Self.pairStride + 2 * j] = plain[level * Self.stride + j]
                storage[level * Self.pairStride + 2 * j + 1] = plain[lean * Self.stride + j]
            }
        }
    }
    static let shared = KTables()

    /// The engine's Float level/weight choice (BandLimitedTables.blend(scaledFrequency:)).
    @inline(__always) static func blend(_ r: Float) -> (level: Int, weight: Float) {
        let bits = r.bitPattern
        let e = Int((bits >> 23) & 0xFF) - 127
        let m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
        let t1: Float = 1.189_207_1, t2: Float = 1.414_213_6, t3: Float = 1.681_792_8
        let a1 = m >= t1, a2 = m >= t2, a3 = m >= t3
        let q = 4 * e + (a1 ? 1 : 0) + (a2 ? 1 : 0) + (a3 ? 1 : 0)
        let lo: Float = a3 ? t3 : (a2 ? t2 : (a1 ? t1 : 1))
        let inverseSpan: Float = a3 ? 1 / (2 - t3) : (a2 ? 1 / (t3 - t2) : (a1 ? 1 / (t2 - t1) : 1 / (t1 - 1)))
        let level = q + 1
        let inRange = level >= 0 && level < levels - 1
        return (min(max(level, 0), levels - 1), inRange ? (m - lo) * inverseSpan : 0)
    }
}

final class KScratch: @unchecked Sendable {
    let ph = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
    let fr = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
    let ga = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
    let bus = UnsafeMutablePointer<Float>.allocate(capacity: 4096)
    static let shared = KScratch()
}

enum Kernels {
    static let halfStep = 0.5 / 48_000
    static let nyquistReciprocal = 2 / 48_000.0

    /// Engine copy: `Voice.advance` specialised for a settled constant envelope (Unity), with or
    /// without the Float frequency for the band-limited pass 2. `storeGain: false` is the proposal:
    /// a voice with no gain ramp running writes no per-sample gain (pass 2 takes one scalar).
    @inline(__always)
    static func pass1(_ v: inout KVoice, _ c: BenchCurve, count: Int, _ s: KScratch, frequency: Bool, storeGain: Bool) {
        let end = c.end, slope = c.slope, intercept = c.intercept, du = c.du, period = c.period
        var u = v.u, seg = v.seg, limit = v.limit, df = v.df, phase = v.phase, f = v.f
        var g = v.gain, left = v.rampLeft
        let ratio = v.ratio, step = v.gainStep, target = v.gainTarget
        let ph = s.ph, fr = s.fr, ga = s.ga
        for n in 0..<count {
            ph[n] = Float(phase)
            if frequency { fr[n] = Float(f) }
            if storeGain { ga[n] = Float(g * 1) }
            u += du
            let fNext: Double
            if u >= limit {
                if u >= period { u -= period; seg = 0 }
                while u >= end[seg] { seg += 1 }
                limit = min(end[seg], period)
                df = slope[seg] * du * ratio
                fNext = (intercept[seg] + slope[seg] * u) * ratio
            } else {
                fNext = f + df
            }
            phase += (f + fNext) * halfStep
            f = fNext
            if phase >= 1 { phase -= Double(Int64(phase)) }
            if storeGain && left > 0 {
                g += step
                left -= 1
                if left == 0 { g = target }
            }
        }
        v.u = u; v.seg = seg; v.limit = limit; v.df = df; v.phase = phase; v.f = f; v.gain = g; v.rampLeft = left
    }

    @inline(__always) static func sine(_ s: KScratch, count: Int, gain: Float?, bus: UnsafeMutablePointer<Float>) {
        let ph = s.ph, ga = s.ga
        if let g = gain {
            for n in 0..<count { bus[n] += kSin2Pi(ph[n]) * g }
        } else {
            for n in 0..<count { bus[n] += kSin2Pi(ph[n]) * ga[n] }
        }
    }

    /// Engine copy of the band-limited pass 2: level and weight every 8 samples of absolute time,
    /// two neighbouring levels read with one 16-byte load at a shared index and blended.
    @inline(__always) static func blsaw(_ v: inout KVoice, _ s: KScratch, count: Int, intoPeriod: Int, gain: Float?,
                                        bus: UnsafeMutablePointer<Float>) {
        let base = KTables.shared.storage
        let ph = s.ph, fr = s.fr, ga = s.ga
        let scale = Float(512 * nyquistReciprocal)
        var n = 0
        while n < count {
            if (intoPeriod + n) & 7 == 0 { (v.blendLevel, v.blendWeight) = KTables.blend(fr[n] * scale * 1.01) }
            let stop = min(count, n + 8 - ((intoPeriod + n) & 7))
            let pairs = UnsafeRawPointer(base + v.blendLevel * KTables.pairStride)
            let w = v.blendWeight
            while n < stop {
                let x = ph[n] * Float(KTables.size)
                let i = min(Int(x), KTables.size - 1)
                let t = x - Float(i)
                let q = pairs.loadUnaligned(fromByteOffset: 8 * i, as: SIMD4<Float>.self)
                let here = q.lowHalf, next = q.highHalf
                let val = here + (next - here) * t
                bus[n] += (val.x + (val.y - val.x) * w) * (gain ?? ga[n])
                n += 1
            }
        }
    }

    enum Variant: String, CaseIterable {
        case sineEngine = "sine: per-sample gain (core before 9ea31ad)"
        case sineScalarGain = "sine: one gain per block (core since 9ea31ad)"
        case sawEngine = "bl-saw: per-sample gain (before 9ea31ad)"
        case sawScalarGain = "bl-saw: one gain per block (since 9ea31ad)"
    }

    static func makeVoices(_ count: Int) -> [KVoice] {
        (0..<count).map { i in
            let ratio = exp2((Double(heldNote(i).note) - 69) / 12)
            return KVoice(f: 440 * ratio, ratio: ratio)
        }
    }

    /// Renders `frames` frames of the voices into one bus with a kernel; optionally keeps the bus.
    @inline(never)
    static func render(_ variant: Variant, voices: inout [KVoice], frames: Int, capture: UnsafeMutablePointer<Float>? = nil,
                       captureCount: Int = 0) -> Float {
        let c = BenchCurve.bench
        let s = KScratch.shared
        let bus = s.bus
        var checksum: Float = 0
        var start = 0
        while start < frames {
            let count = min(256, frames - start)
            bus.update(repeating: 0, count: count)
            voices.withUnsafeMutableBufferPointer { vs in
                for i in 0..<vs.count {
                    // The proposal applies only to a settled voice (no ramp); these all are.
                    let settled = vs[i].rampLeft == 0
                    switch variant {
                    case .sineEngine:
                        pass1(&vs[i], c, count: count, s, frequency: false, storeGain: true)
                        sine(s, count: count, gain: nil, bus: bus)
                    case .sineScalarGain:
                        if settled {
                            pass1(&vs[i], c, count: count, s, frequency: false, storeGain: false)
                            sine(s, count: count, gain: Float(vs[i].gain), bus: bus)
                        } else {
                            pass1(&vs[i], c, count: count, s, frequency: false, storeGain: true)
                            sine(s, count: count, gain: nil, bus: bus)
                        }
                    case .sawEngine:
                        pass1(&vs[i], c, count: count, s, frequency: true, storeGain: true)
                        blsaw(&vs[i], s, count: count, intoPeriod: 0, gain: nil, bus: bus)
                    case .sawScalarGain:
                        if settled {
                            pass1(&vs[i], c, count: count, s, frequency: true, storeGain: false)
                            blsaw(&vs[i], s, count: count, intoPeriod: 0, gain: Float(vs[i].gain), bus: bus)
                        } else {
                            pass1(&vs[i], c, count: count, s, frequency: true, storeGain: true)
                            blsaw(&vs[i], s, count: count, intoPeriod: 0, gain: nil, bus: bus)
                        }
                    }
                }
            }
            if let capture {
                for n in 0..<count where start + n < captureCount { capture[start + n] = bus[n] }
            }
            checksum += bus[0] + bus[count - 1]
            start += count
        }
        return checksum
    }
}

// MARK: - Per-part mix: amplitude, DC blocker, pan (echo off: EchoLine.process returns at once)

struct KPart {
    var amplitude = 0.5, amplitudeTarget = 0.5
    var dcX: Float = 0, dcY: Float = 0
    var panFromLeft: Float = 0.70710678, panFromRight: Float = 0.70710678
    var panLeft: Float = 0.70710678, panRight: Float = 0.70710678
    var peak: Float = 0
}

enum PartMix {
    static let rampSamples = 0.02 * 48_000
    static let dcPole: Float = Float(1 - 2 * Double.pi * 1 / 48_000)

    /// Engine copy of Engine.mixPart's loops (amplitude test inside the loop, scalar pan with peak).
    @inline(__always)
    static func engine(_ part: inout KPart, bus: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>,
                       count: Int, intoPeriod: Int, period: Int) {
        var a = part.amplitude
        let target = part.amplitudeTarget
        let maxStep = 1 / rampSamples
        var x1 = part.dcX, y1 = part.dcY
        let dcPole = self.dcPole
        for n in 0..<count {
            let x: Float
            if a == target {
                x = bus[n] * Float(a)
            } else {
                a += min(max(target - a, -maxStep), maxStep)
                x = bus[n] * Float(a)
            }
            let y = x - x1 + dcPole * y1
            x1 = x; y1 = y
            bus[n] = y
        }
        part.amplitude = a; part.dcX = x1; part.dcY = y1
        let l0 = part.panFromLeft, r0 = part.panFromRight
        let p = Float(period)
        let dl = (part.panLeft - l0) / p, dr = (part.panRight - r0) / p
        var peak = part.peak
        for n in 0..<count {
            let s = bus[n]
            let k = Float(intoPeriod + n + 1)
            out[2 * n] += s * (l0 + dl * k)
            out[2 * n + 1] += s * (r0 + dr * k)
            peak = max(peak, abs(s))
        }
        part.peak = peak
    }

    /// Proposal, same results: (1) when the amplitude is settled at block start, the loop is the DC
    /// blocker alone with the gain converted once; (2) the pan loop computes the same products and
    /// keeps the peak in 8 lanes (max is order-independent), which lets it vectorise.
    @inline(__always)
    static func proposed(_ part: inout KPart, bus: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>,
                         count: Int, intoPeriod: Int, period: Int) {
        var x1 = part.dcX, y1 = part.dcY
        let dcPole = self.dcPole
        if part.amplitude == part.amplitudeTarget {
            let g = Float(part.amplitude)
            for n in 0..<count {
                let x = bus[n] * g
                let y = x - x1 + dcPole * y1
                x1 = x; y1 = y
                bus[n] = y
            }
        } else {
            var a = part.amplitude
            let target = part.amplitudeTarget
            let maxStep = 1 / rampSamples
            for n in 0..<count {
                if a != target { a += min(max(target - a, -maxStep), maxStep) }
                let x = bus[n] * Float(a)
                let y = x - x1 + dcPole * y1
                x1 = x; y1 = y
                bus[n] = y
            }
            part.amplitude = a
        }
        part.dcX = x1; part.dcY = y1
        let l0 = part.panFromLeft, r0 = part.panFromRight
        let p = Float(period)
        let dl = (part.panLeft - l0) / p, dr = (part.panRight - r0) / p
        var lanes = SIMD8<Float>(repeating: 0)
        var n = 0
        let ramp = SIMD8<Float>(1, 2, 3, 4, 5, 6, 7, 8)
        while n + 8 <= count {
            let s = UnsafeRawPointer(bus + n).loadUnaligned(as: SIMD8<Float>.self)
            let k = SIMD8<Float>(repeating: Float(intoPeriod + n)) + ramp
            let left = s * (l0 + dl * k), right = s * (r0 + dr * k)
            // Interleave (L, R) pairs and add to the stereo output.
            let o = UnsafeMutableRawPointer(out + 2 * n)
            var lo = o.loadUnaligned(as: SIMD8<Float>.self)
            var hi = o.loadUnaligned(fromByteOffset: 32, as: SIMD8<Float>.self)
            lo += SIMD8<Float>(left[0], right[0], left[1], right[1], left[2], right[2], left[3], right[3])
            hi += SIMD8<Float>(left[4], right[4], left[5], right[5], left[6], right[6], left[7], right[7])
            o.storeBytes(of: lo, as: SIMD8<Float>.self)
            o.storeBytes(of: hi, toByteOffset: 32, as: SIMD8<Float>.self)
            let m = s.replacing(with: -s, where: s .< 0)  // |s|
            lanes.replace(with: m, where: m .> lanes)
            n += 8
        }
        var peak = max(part.peak, lanes.max())
        while n < count {
            let s = bus[n]
            let k = Float(intoPeriod + n + 1)
            out[2 * n] += s * (l0 + dl * k)
            out[2 * n + 1] += s * (r0 + dr * k)
            peak = max(peak, abs(s))
            n += 1
        }
        part.peak = peak
    }

    /// 16 parts with settled amplitude and a pan sweep, `frames` frames in 256-frame blocks.
    /// The buses are refilled each block by a cheap copy from a fixed noise table (the same for both).
    @inline(never)
    static func render(proposed useProposed: Bool, parts: inout [KPart], frames: Int, source: UnsafeMutablePointer<Float>,
                       buses: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>, keep: UnsafeMutablePointer<Float>? = nil) -> Float {
        var checksum: Float = 0
        var start = 0
        while start < frames {
            let count = min(256, frames - start)
            out.update(repeating: 0, count: 2 * count)
            buses.update(from: source + (start / 256 % 8) * 256, count: 16 * 256)
            for p in 0..<parts.count {
                if useProposed { proposed(&parts[p], bus: buses + p * 256, out: out, count: count, intoPeriod: 0, period: 256) }
                else { engine(&parts[p], bus: buses + p * 256, out: out, count: count, intoPeriod: 0, period: 256) }
            }
            if let keep, start < 48_000 { for n in 0..<(2 * count) where start * 2 + n < 96_000 { keep[start * 2 + n] = out[n] } }
            checksum += out[0]
            start += count
        }
        return checksum
    }

    static func makeParts() -> [KPart] {
        (0..<16).map { p in
            var k = KPart()
            let angle = Float(p) / 15 * Float.pi / 2
            k.panLeft = cos(angle); k.panRight = sin(angle)
            return k
        }
    }
}

// MARK: - Running the experiments

func runKernelExperiments(seconds: Double, runs: Int, record: (String, [(String, String)]) -> Void) {
    let voices = 64
    let frames = Int(seconds * 48_000)
    print("kernels. Hot spots: the engine's inner loops re-stated here vs. proposed rewrites (64 held voices,")
    print("   one bus, \(fmt(seconds, 1)) s per run; 'max diff' = largest |difference| of the output over the first")
    print("   second against the engine copy; 0 = bit-identical)")
    print("   " + pad("kernel", 50) + lpad("ns/voice-sample", 16) + lpad("speed-up", 10) + lpad("max diff", 10))
    let captureCount = 48_000
    let reference = UnsafeMutablePointer<Float>.allocate(capacity: 2 * captureCount)
    let capture = UnsafeMutablePointer<Float>.allocate(capacity: 2 * captureCount)
    defer { reference.deallocate(); capture.deallocate() }
    var baseline = 0.0
    for variant in Kernels.Variant.allCases {
        let isBaseline = variant == .sineEngine || variant == .sawEngine
        var check = Kernels.makeVoices(voices)
        _ = Kernels.render(variant, voices: &check, frames: captureCount, capture: isBaseline ? reference : capture,
                           captureCount: captureCount)
        var diff: Float = 0
        if !isBaseline { for n in 0..<captureCount { diff = max(diff, abs(capture[n] - reference[n])) } }
        var state = Kernels.makeVoices(voices)
        var checksum: Float = 0
        let t = bestOf(runs) { checksum += Kernels.render(variant, voices: &state, frames: frames) }
        blackHole(checksum)
        let ns = t.best * 1e9 / Double(voices * frames)
        if isBaseline { baseline = ns }
        print("   " + pad(variant.rawValue, 50) + lpad(fmt(ns), 16) + lpad(fmt(baseline / ns) + "×", 10)
              + lpad(isBaseline ? "—" : sci(Double(diff)), 10))
        record("kernel_\(String(describing: variant))", [("ns_per_voice_sample", fmt(ns, 3)), ("speedup", fmt(baseline / ns, 3)),
                                                         ("max_diff", sci(Double(diff)))])
    }

    // Per-part mix, 16 parts (echo off), cost per voice-sample when 64 voices share the 16 parts.
    let source = UnsafeMutablePointer<Float>.allocate(capacity: 24 * 256)
    var seed: UInt32 = 0x1234_5678
    for n in 0..<(24 * 256) {
        seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
        source[n] = Float(Int32(bitPattern: seed)) * (1 / 2_147_483_648) * 0.1
    }
    let buses = UnsafeMutablePointer<Float>.allocate(capacity: 16 * 256)
    let out = UnsafeMutablePointer<Float>.allocate(capacity: 512)
    defer { source.deallocate(); buses.deallocate(); out.deallocate() }
    var pa = PartMix.makeParts(), pb = PartMix.makeParts()
    _ = PartMix.render(proposed: false, parts: &pa, frames: captureCount, source: source, buses: buses, out: out, keep: reference)
    _ = PartMix.render(proposed: true, parts: &pb, frames: captureCount, source: source, buses: buses, out: out, keep: capture)
    var diff: Float = 0
    for n in 0..<(2 * captureCount) { diff = max(diff, abs(capture[n] - reference[n])) }
    let samePeak = zip(pa, pb).allSatisfy { $0.peak == $1.peak }
    var checksum: Float = 0
    let ta = bestOf(runs) { checksum += PartMix.render(proposed: false, parts: &pa, frames: frames, source: source, buses: buses, out: out) }
    let tb = bestOf(runs) { checksum += PartMix.render(proposed: true, parts: &pb, frames: frames, source: source, buses: buses, out: out) }
    blackHole(checksum)
    let perA = ta.best * 1e9 / Double(16 * frames), perB = tb.best * 1e9 / Double(16 * frames)
    print("   " + pad("part mix (amp+DC+pan), engine copy", 50) + lpad(fmt(perA / 4), 16) + lpad("1.00×", 10) + lpad("—", 10))
    print("   " + pad("part mix, settled-gain loop + SIMD pan/peak", 50) + lpad(fmt(perB / 4), 16) + lpad(fmt(perA / perB) + "×", 10)
          + lpad(sci(Double(diff)), 10))
    print("   (part mix: per voice-sample with 64 voices on 16 parts = ¼ of the per-part-sample cost: "
          + "\(fmt(perA)) → \(fmt(perB)) ns/part-sample; peaks identical: \(samePeak ? "yes" : "NO"))")
    record("kernel_partmix_engine", [("ns_per_part_sample", fmt(perA, 3)), ("ns_per_voice_sample_64v_16p", fmt(perA / 4, 3))])
    record("kernel_partmix_proposed", [("ns_per_part_sample", fmt(perB, 3)), ("ns_per_voice_sample_64v_16p", fmt(perB / 4, 3)),
                                       ("speedup", fmt(perA / perB, 3)), ("max_diff", sci(Double(diff))),
                                       ("same_peak", samePeak ? "yes" : "no")])
    print("")
}

/// x in scientific notation with two significant digits, e.g. 3.1e-07 (no Foundation needed).
func sci(_ x: Double) -> String {
    if x == 0 { return "0" }
    var e = Int(log10(abs(x)).rounded(.down))
    var m = x / pow(10, Double(e))
    if abs(m) >= 9.95 { m /= 10; e += 1 }
    return fmt(m, 1) + "e" + (e < 0 ? "-" : "+") + (abs(e) < 10 ? "0" : "") + String(abs(e))
}

/// Copy of the core's `fastSin2Pi` (Sources/ToneShaperCore/DSP/Math.swift). The core's function is
/// public but not @inlinable, so from this module it would be a call per sample and the loop
/// could not vectorise, unlike inside the engine; the copy keeps the comparison fair.
@inline(__always) func kSin2Pi(_ x: Float) -> Float {
    let y = x - 0.5
    let a = abs(y)
    let folded = min(a, 0.5 - a)
    let z = Float(2 * Double.pi) * folded
    let z2 = z * z
    var p: Float = -2.5052108e-08
    p = p * z2 + 2.7557319e-06
    p = p * z2 - 1.9841270e-04
    p = p * z2 + 8.3333333e-03
    p = p * z2 - 1.6666667e-01
    p = p * z2 + 1
    let s = z * p
    return y < 0 ? s : -s
}
