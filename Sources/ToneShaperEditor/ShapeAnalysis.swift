import Foundation
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI
import ToneShaperPlot

/// What the page draws beside the curve: the curve as played at fidelity N, one pass's waveform
/// and its spectrum, all from the code that makes the sound (ShapeCurves, the engine, the FFT).
struct ShapeAnalysis: Encodable, Sendable {
    struct Waveform: Encodable, Sendable {
        var sampleRate: Double
        /// Seconds the samples cover (one pass, at most `longestPass`).
        var seconds: Double
        /// Every sample, or min/max pairs alternating when the pass has more than `maxSamples`.
        var samples: [Float]
        var reduced: Bool
    }
    struct Spectrum: Encodable, Sendable {
        var frequencies: [Double]
        var db: [Float]
    }

    /// The curve as played at N (the userIFCurve, each segment of its kind: a hold's step is two
    /// pairs at one time, an exponential glide its straight pieces) as [time, frequency] pairs in
    /// the shape's own seconds.
    var played: [[Double]]
    var waveform: Waveform
    var spectrum: Spectrum

    static let maxSamples = 2048
    /// A preview renders at most this much of a pass, so a long drone still answers at once.
    static let longestPass = 4.0

    init(shape: Shape, note: Int, sampleRate: Double) throws {
        let curves = ShapeCurves(shape: shape, note: shape.rootNote, cycles: 1, sampleRate: sampleRate)
        let t0 = shape.points.first!.time, t1 = shape.points.last!.time
        let span = max(curves.cycleSeconds - 1 / sampleRate, 1e-12)
        played = curves.played.map { [t0 + $0.time / span * (t1 - t0), $0.frequency] }

        let passFrames = max(2, Int(shape.duration * sampleRate))
        let frames = min(passFrames, Int(Self.longestPass * sampleRate))
        let engine = try ShapeExport.engine(for: shape, sampleRate: sampleRate)
        let start = [TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: UInt8(note), velocity: 127))]
        var left: [Float] = []
        left.reserveCapacity(frames)
        OfflineRenderer(engine: engine).render(start, totalFrames: frames) { block in
            for i in stride(from: 0, to: block.count, by: 2) { left.append(block[i]) }
        }
        if left.count <= Self.maxSamples {
            waveform = Waveform(sampleRate: sampleRate, seconds: Double(frames) / sampleRate, samples: left, reduced: false)
        } else {
            let envelope = WaveformEnvelope(samples: left, columns: Self.maxSamples / 2)
            var pairs: [Float] = []
            pairs.reserveCapacity(Self.maxSamples)
            for c in 0..<envelope.columns { pairs.append(envelope.minimum[c]); pairs.append(envelope.maximum[c]) }
            waveform = Waveform(sampleRate: sampleRate, seconds: Double(frames) / sampleRate, samples: pairs, reduced: true)
        }
        // The spectrum of the pass: the spectrogram's frames averaged in power (Welch), so a sweep
        // shows the band it covers.
        let fftSize = 4096
        let analysis = Spectrogram(samples: left, sampleRate: sampleRate, fftSize: fftSize, overlap: 0.5)
        var power = [Double](repeating: 0, count: analysis.binCount)
        for f in 0..<analysis.frameCount {
            for k in 0..<analysis.binCount { power[k] += pow(10, Double(analysis.level(frame: f, bin: k)) / 10) }
        }
        let bins = Array(1..<analysis.binCount)
        spectrum = Spectrum(frequencies: bins.map { analysis.frequency(ofBin: $0) },
                            db: bins.map { Float(10 * log10(max(power[$0] / Double(analysis.frameCount), 1e-20))) })
    }
}
