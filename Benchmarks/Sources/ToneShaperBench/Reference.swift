#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CReference
import ToneShaperCore

/// The benchmark shape's curve as segments (the engine's FrequencyCurve layout, built here from the
/// same points at fidelity N = 1000): segment j covers u < end[j]; first and last are flat.
final class BenchCurve: @unchecked Sendable {
    let end: UnsafeMutablePointer<Double>
    let slope: UnsafeMutablePointer<Double>
    let intercept: UnsafeMutablePointer<Double>
    let count: Int
    let du: Double
    let period: Double

    init(points: [(Double, Double)], fidelity n: Int, duration: Double, sampleRate: Double) {
        let t0 = points.first!.0, t1 = points.last!.0
        let xs = points.map { Double(min(n, Int(($0.0 - t0) * Double(n) / (t1 - t0) + 1e-9))) }
        let ys = points.map(\.1)
        count = points.count + 1
        end = .allocate(capacity: count); slope = .allocate(capacity: count); intercept = .allocate(capacity: count)
        end[0] = xs[0]; slope[0] = 0; intercept[0] = ys[0]
        for i in 1..<points.count {
            let s = (ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1])
            end[i] = xs[i]; slope[i] = s; intercept[i] = ys[i - 1] - s * xs[i - 1]
        }
        end[points.count] = .infinity; slope[points.count] = 0; intercept[points.count] = ys.last!
        let samples = max(2, Int(duration * sampleRate))
        du = xs.last! / Double(samples - 1)
        period = xs.last! + du
    }
    deinit { end.deallocate(); slope.deallocate(); intercept.deallocate() }

    static let bench = BenchCurve(points: BenchShapes.points, fidelity: 1000, duration: 1, sampleRate: 48_000)
}

/// Voice states for the reference kernels: the same held-note spread as the engine benchmark.
func referenceVoices(_ count: Int) -> UnsafeMutablePointer<cref_voice> {
    let v = UnsafeMutablePointer<cref_voice>.allocate(capacity: count)
    for i in 0..<count {
        let note = Double(heldNote(i).note)
        let ratio = exp2((note - 69) / 12)
        v[i] = cref_voice(u: 0, seg: 0, phase: 0, f: 440 * ratio, ratio: ratio, gain: 0.3)
    }
    return v
}

/// Times the C reference: `voices` sine voices, `seconds` of audio in 256-frame blocks.
func benchCReference(voices: Int, seconds: Double, runs: Int, poly: Bool) -> (ns: Double, all: [Double]) {
    let v = referenceVoices(voices)
    defer { v.deallocate() }
    let c = BenchCurve.bench
    var curve = cref_curve(end: c.end, slope: c.slope, intercept: c.intercept, du: c.du, period: c.period)
    let frames = Int(seconds * 48_000)
    var checksum = 0.0
    let t = medianOf(runs) {
        checksum += cref_render_sine(v, Int32(voices), &curve, 48_000, frames, 256, poly ? 1 : 0)
    }
    blackHole(checksum)
    return (t.median * 1e9 / Double(voices * frames), t.all)
}

/// The same reference algorithm written in Swift (the language cost on identical work).
struct SwiftReference {
    @inline(__always)
    static func renderVoice(_ v: UnsafeMutablePointer<cref_voice>, _ c: BenchCurve, halfStep: Double, count: Int,
                            bus: UnsafeMutablePointer<Float>, poly: Bool) {
        let end = c.end, slope = c.slope, intercept = c.intercept, du = c.du, period = c.period
        let ratio = v.pointee.ratio, gain = v.pointee.gain
        var u = v.pointee.u, phase = v.pointee.phase, f = v.pointee.f, seg = v.pointee.seg
        for n in 0..<count {
            if poly { bus[n] += Float(gain) * fastSin2Pi(Float(phase)) } else { bus[n] += Float(gain * sin(2 * Double.pi * phase)) }
            u += du
            if u >= period { u -= period; seg = 0 }
            while u >= end[seg] { seg += 1 }
            let fNext = (intercept[seg] + slope[seg] * u) * ratio
            phase += (f + fNext) * halfStep
            f = fNext
            phase -= Double(Int64(phase))
        }
        v.pointee.u = u; v.pointee.phase = phase; v.pointee.f = f; v.pointee.seg = seg
    }

    static func bench(voices: Int, seconds: Double, runs: Int, poly: Bool) -> (ns: Double, all: [Double]) {
        let v = referenceVoices(voices)
        defer { v.deallocate() }
        let c = BenchCurve.bench
        let frames = Int(seconds * 48_000)
        let bus = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { bus.deallocate() }
        var checksum: Float = 0
        let t = medianOf(runs) {
            var start = 0
            while start < frames {
                let count = min(256, frames - start)
                bus.update(repeating: 0, count: count)
                for i in 0..<voices {
                    if poly { renderVoice(v + i, c, halfStep: 0.5 / 48_000, count: count, bus: bus, poly: true) }
                    else { renderVoice(v + i, c, halfStep: 0.5 / 48_000, count: count, bus: bus, poly: false) }
                }
                checksum += bus[0] + bus[count - 1]
                start += count
            }
        }
        blackHole(checksum)
        return (t.median * 1e9 / Double(voices * frames), t.all)
    }
}
