import Foundation
import TestSupport
import ToneShaperMIDI
@testable import ToneShaperCore
import ToneShaperInstrument

/// Measurements made on rendered audio, written independently of the engine.
enum Signal {
    /// The left channel of an interleaved stereo buffer.
    static func left(_ stereo: [Float]) -> [Float] {
        var out = [Float](repeating: 0, count: stereo.count / 2)
        for i in out.indices { out[i] = stereo[2 * i] }
        return out
    }

    /// Times (in samples, fractional) where the signal crosses zero going up, linearly interpolated.
    static func risingZeroCrossings(_ x: [Float], in range: Range<Int>? = nil) -> [Double] {
        ZeroCrossings.rising(x, in: range)
    }

    /// Mean frequency over a range: whole periods between the first and last rising zero crossing.
    static func frequency(_ x: [Float], sampleRate: Double, in range: Range<Int>? = nil) -> Double? {
        ZeroCrossings.frequency(x, rate: sampleRate, in: range)
    }

    /// Instantaneous frequency track: one (time in seconds, Hz) per period, placed at the period's middle.
    static func frequencyTrack(_ x: [Float], sampleRate: Double, in range: Range<Int>? = nil) -> [(time: Double, frequency: Double)] {
        let z = risingZeroCrossings(x, in: range)
        guard z.count >= 2 else { return [] }
        return (1..<z.count).map { i in
            (time: (z[i] + z[i - 1]) / 2 / sampleRate, frequency: sampleRate / (z[i] - z[i - 1]))
        }
    }

    /// The track linearly interpolated at time t (nil outside it).
    static func frequency(at t: Double, track: [(time: Double, frequency: Double)]) -> Double? {
        guard let first = track.first, let last = track.last, t >= first.time, t <= last.time else { return nil }
        var lo = 0, hi = track.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if track[mid].time <= t { lo = mid } else { hi = mid }
        }
        let a = track[lo], b = track[hi]
        if b.time == a.time { return a.frequency }
        return a.frequency + (b.frequency - a.frequency) * (t - a.time) / (b.time - a.time)
    }

    static func peak(_ x: [Float], in range: Range<Int>? = nil) -> Float {
        let r = range ?? 0..<x.count
        var m: Float = 0
        for i in r { m = max(m, abs(x[i])) }
        return m
    }

    static func rms(_ x: [Float], in range: Range<Int>? = nil) -> Double {
        let r = range ?? 0..<x.count
        guard !r.isEmpty else { return 0 }
        var s = 0.0
        for i in r { s += Double(x[i]) * Double(x[i]) }
        return (s / Double(r.count)).squareRoot()
    }

    /// Largest |x[n] − x[n−1]| in a range, and where it happens.
    static func maxJump(_ x: [Float], in range: Range<Int>? = nil) -> (jump: Float, at: Int) {
        let r = range ?? 0..<x.count
        var m: Float = 0, at = r.lowerBound
        guard r.count >= 2 else { return (0, at) }
        for i in (r.lowerBound + 1)..<r.upperBound {
            let d = abs(x[i] - x[i - 1])
            if d > m { m = d; at = i }
        }
        return (m, at)
    }

    /// First index whose |sample| exceeds `threshold`.
    static func firstIndex(_ x: [Float], above threshold: Float, from start: Int = 0) -> Int? {
        var i = start
        while i < x.count {
            if abs(x[i]) > threshold { return i }
            i += 1
        }
        return nil
    }

    /// Amplitude of the component at `frequency` (Goertzel over a Hann window, scaled so a sine of
    /// amplitude A reads ≈ A when the frequency falls on the analysed one).
    static func amplitude(_ x: [Float], at frequency: Double, sampleRate: Double, in range: Range<Int>,
                          window: Bool = true) -> Double {
        let n = range.count
        let w = 2 * Double.pi * frequency / sampleRate
        let coeff = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        var windowSum = 0.0
        for (j, i) in range.enumerated() {
            let h = window ? 0.5 - 0.5 * cos(2 * Double.pi * Double(j) / Double(n)) : 1
            windowSum += h
            let s = Double(x[i]) * h + coeff * s1 - s2
            s2 = s1
            s1 = s
        }
        let re = s1 - s2 * cos(w)
        let im = s2 * sin(w)
        return 2 * (re * re + im * im).squareRoot() / windowSum
    }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(max(ratio, 1e-300)) }
}

/// Building and playing small instruments for the tests.
enum Bench {
    static let rate = 48_000.0

    /// Where the package keeps its preset files.
    static var presetsDirectory: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Presets").path
    }

    /// A constant-frequency shape with settable envelope times.
    static func tone(_ frequency: Double, wave: WaveType = .sine, amplitude: Double = 0.5, rootNote: Int = 69,
                     attack: Double = 0.005, release: Double = 0.05, program: Int = 0, duration: Double = 1) -> Shape {
        var s = Shape.constant(frequency, wave: wave, duration: duration, amplitude: amplitude, rootNote: rootNote)
        s.attack = attack
        s.release = release
        s.program = program
        s.name = "tone-\(frequency)-\(program)"
        return s
    }

    static func engine(_ shapes: [Shape], voices: Int = 32, rate: Double = Bench.rate,
                       controllerMap: ControllerMap = .standard, masterGain: Double? = nil) throws -> Engine {
        var config = EngineConfiguration(sampleRate: rate, voices: voices)
        if let masterGain { config.masterGain = masterGain }
        return Engine(library: try PresetLibrary(shapes: shapes), configuration: config, controllerMap: controllerMap)
    }

    /// Renders `frames` frames of timed messages through the offline renderer; returns the left channel.
    static func play(_ engine: Engine, _ messages: [(frame: Int, message: MIDIMessage)], frames: Int,
                     blockFrames: Int = 512) -> [Float] {
        let timed = messages.map { TimedMIDIMessage(frame: Int64($0.frame), message: $0.message) }
        return Signal.left(OfflineRenderer(engine: engine, blockFrames: blockFrames).renderAll(timed, totalFrames: frames))
    }

    /// One note held for `seconds`, rendered with a tail; left channel.
    static func note(_ shape: Shape, note: UInt8? = nil, velocity: UInt8 = 127, seconds: Double, tail: Double = 0,
                     rate: Double = Bench.rate) throws -> [Float] {
        let e = try engine([shape], rate: rate)
        let key = note ?? UInt8(shape.rootNote)
        let held = Int(seconds * rate)
        return play(e, [(0, .noteOn(channel: 0, note: key, velocity: velocity)),
                        (held, .noteOff(channel: 0, note: key, velocity: 64))],
                    frames: held + Int(tail * rate))
    }

    static func seconds(_ s: Double) -> Int { Int(s * rate) }

    static func equalTempered(_ note: Int, root: Int, frequency: Double) -> Double {
        frequency * pow(2, Double(note - root) / 12)
    }
}

extension MIDIMessage {
    static func on(_ note: UInt8, _ velocity: UInt8 = 127, channel: UInt8 = 0) -> MIDIMessage {
        .noteOn(channel: channel, note: note, velocity: velocity)
    }
    static func off(_ note: UInt8, channel: UInt8 = 0) -> MIDIMessage {
        .noteOff(channel: channel, note: note, velocity: 64)
    }
    static func cc(_ controller: UInt8, _ value: UInt8, channel: UInt8 = 0) -> MIDIMessage {
        .controlChange(channel: channel, controller: controller, value: value)
    }
}

extension Signal {
    /// Magnitude spectrum (bins 0…n/2) of x[start ..< start + n] under a 4-term Blackman–Harris window
    /// (side lobes below −92 dB, main lobe ±4 bins), n a power of two, normalised so a sine of
    /// amplitude A on a bin reads ≈ A.
    /// `windowed: false` analyses a stretch holding whole periods of a periodic signal (coherent
    /// sampling): every component then sits exactly on a bin, with no leakage at all.
    static func spectrum(_ x: [Float], start: Int, count n: Int, windowed: Bool = true) -> [Double] {
        precondition(n > 0 && n & (n - 1) == 0)
        var re = [Double](repeating: 0, count: n), im = [Double](repeating: 0, count: n)
        var windowSum = 0.0
        for j in 0..<n {
            let w = 2 * Double.pi * Double(j) / Double(n)
            let h = windowed ? 0.35875 - 0.48829 * cos(w) + 0.14128 * cos(2 * w) - 0.01168 * cos(3 * w) : 1
            windowSum += h
            re[j] = Double(x[start + j]) * h
        }
        // Iterative radix-2 FFT.
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var len = 2
        while len <= n {
            let ang = -2 * Double.pi / Double(len)
            for i in stride(from: 0, to: n, by: len) {
                for k in 0..<(len / 2) {
                    let wr = cos(ang * Double(k)), wi = sin(ang * Double(k))
                    let a = i + k, b = i + k + len / 2
                    let tr = re[b] * wr - im[b] * wi, ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            len <<= 1
        }
        return (0...(n / 2)).map { 2 * (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() / windowSum }
    }
}
