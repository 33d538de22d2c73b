import Foundation
import Testing
@testable import ToneShaperCore

/// How clean the band-limited waves are: a stepped sweep of steady notes from 20 Hz to 20 kHz,
/// each tuned to an odd FFT bin so that 32,768 samples hold whole periods (no window, no leakage):
/// every harmonic below Nyquist lands on a multiple of that bin, and whatever lands anywhere else
/// is aliasing or interpolation error. The floor is all of that energy together, in dB re the fundamental.
@Suite("Band-limited waves: the aliasing floor over 20 Hz–20 kHz")
struct AliasingFloorTests {
    static let size = 32_768

    /// The energy off the harmonics re the fundamental (dB) for a steady note on bin `bin`.
    static func floor(wave: WaveType, rate: Double, bin: Int) throws -> Double {
        let frequency = Double(bin) * rate / Double(size)
        let shape = Bench.tone(frequency, wave: wave, amplitude: 0.5)
        let settle = Int(rate)   // the output DC blocker (1 Hz) settles from the attack (¼ s is not enough: −60 dB)
        let x = try Bench.note(shape, seconds: Double(settle + size) / rate + 0.01, rate: rate)
        let spectrum = Signal.spectrum(x, start: settle, count: size, windowed: false)
        let fundamental = spectrum[bin]
        let lowest = Int((20 * Double(size) / rate).rounded(.up))   // below 20 Hz: the blocker's own tail
        var energy = 0.0
        for b in lowest..<spectrum.count where b % bin != 0 { energy += spectrum[b] * spectrum[b] }
        return Signal.decibels(energy.squareRoot() / fundamental)
    }

    /// Odd bins, an octave apart, from 20 Hz to 20 kHz (the floor rises smoothly toward the low end).
    static func bins(rate: Double) -> [Int] {
        var bins: [Int] = []
        var f = 20.0
        while f <= 20_000 {
            bins.append(Int((f * Double(size) / rate / 2).rounded()) * 2 + 1)
            f *= 2
        }
        return bins
    }

    @Test("saw, square and triangle stay at or below −96 dB re the fundamental at 44.1 and 48 kHz",
          arguments: [WaveType.bandLimitedSawtooth, .bandLimitedSquare, .bandLimitedTriangle], [44_100.0, 48_000])
    func floorBelow96dB(wave: WaveType, rate: Double) throws {
        var report: [String] = []
        var worst = -400.0
        for bin in Self.bins(rate: rate) {
            let db = try Self.floor(wave: wave, rate: rate, bin: bin)
            report.append(String(format: "%.0f Hz: %.1f dB", Double(bin) * rate / Double(Self.size), db))
            worst = max(worst, db)
        }
        let summary = "worst \(String(format: "%.1f", worst)) dB — " + report.joined(separator: ", ")
        #expect(worst <= -96, "\(summary)")
    }
}
