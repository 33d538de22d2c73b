#if canImport(Glibc)
import Glibc
#endif
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI
import ToneShaperPlot

/// The aliasing floor of the band-limited waves, for the report: the measurement AliasingFloorTests
/// gates on (steady notes on odd FFT bins, whole periods, no window; all energy off the harmonics
/// re the fundamental), swept every sixth of an octave from 20 Hz to 20 kHz instead of every octave;
/// the spectrum from ToneShaperPlot's FFT (Double).
enum AliasingFloor {
    static let size = 32_768

    /// Worst floor (dB) over the sweep and the frequency where it occurs.
    static func worst(wave: WaveType, rate: Double) -> (db: Double, frequency: Double) {
        var worst = (db: -400.0, frequency: 0.0)
        var f = 20.0
        while f <= 20_000 {
            let bin = Int((f * Double(size) / rate / 2).rounded()) * 2 + 1
            let db = floor(wave: wave, rate: rate, bin: bin)
            if db > worst.db { worst = (db, Double(bin) * rate / Double(size)) }
            f *= 1.122_462_048_309_373  // 2^(1/6)
        }
        return worst
    }

    /// The off-harmonic energy re the fundamental (dB) of a steady note on FFT bin `bin`.
    static func floor(wave: WaveType, rate: Double, bin: Int) -> Double {
        let frequency = Double(bin) * rate / Double(size)
        var shape = Shape.constant(frequency, wave: wave, amplitude: 0.5)
        shape.name = "floor"
        let engine = Engine(library: try! PresetLibrary(shapes: [shape]),
                            configuration: EngineConfiguration(sampleRate: rate, voices: 4))
        // Two seconds for the output's DC blocker to settle from the attack (after one, a 20 Hz
        // note's offset still decays at −101 dB re the fundamental), then the analysed window.
        let settle = 2 * Int(rate)
        let stereo = OfflineRenderer(engine: engine, blockFrames: 512)
            .renderAll([TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 69, velocity: 127))],
                       totalFrames: settle + size)
        let (re, im) = RealFFT(size: size).transform((0..<size).map { Double(stereo[2 * (settle + $0)]) })
        let magnitude = re.indices.map { (re[$0] * re[$0] + im[$0] * im[$0]).squareRoot() }
        let lowest = Int((20 * Double(size) / rate).rounded(.up))  // below 20 Hz: the blocker's own tail
        var energy = 0.0
        for b in lowest..<magnitude.count where b % bin != 0 { energy += magnitude[b] * magnitude[b] }
        return 20 * log10(energy.squareRoot() / magnitude[bin])
    }
}
