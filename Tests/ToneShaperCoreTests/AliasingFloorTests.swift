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
        // The output DC blocker (1 Hz) settles from the attack: a low note's 5 ms attack covers a
        // slice of one period and leaves an offset whose decay lands in every bin. ¼ s left it at
        // −60 dB, 1 s at −101 dB for 20 Hz (−109 dB at 42 Hz, halving with each octave); 2 s is
        // under −150 dB, so what is measured is the tables.
        let settle = 2 * Int(rate)
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

    /// −110 dB: under a 16-bit file's own floor (−96 dB) with room to spare, so a drone at 20 Hz
    /// mixed with others or recorded in 24 bits carries no interpolation hiss either.
    @Test("saw, square and triangle stay at or below −110 dB re the fundamental at 44.1 and 48 kHz",
          arguments: [WaveType.bandLimitedSawtooth, .bandLimitedSquare, .bandLimitedTriangle], [44_100.0, 48_000])
    func floorBelow110dB(wave: WaveType, rate: Double) throws {
        var report: [String] = []
        var worst = -400.0
        for bin in Self.bins(rate: rate) {
            let db = try Self.floor(wave: wave, rate: rate, bin: bin)
            report.append(String(format: "%.0f Hz: %.1f dB", Double(bin) * rate / Double(Self.size), db))
            worst = max(worst, db)
        }
        let summary = "worst \(String(format: "%.1f", worst)) dB — " + report.joined(separator: ", ")
        #expect(worst <= -110, "\(summary)")
    }
}
