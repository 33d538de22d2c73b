import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

@Suite("Band-limited waves: no partial above Nyquist, so no aliasing")
struct BandLimitedTests {
    @Test("the table level for any frequency keeps its top partial strictly below Nyquist, and at least half the partials it allows",
          arguments: [44_100.0, 48_000, 96_000])
    func levelChoice(rate: Double) {
        let nyquist = rate / 2
        var frequencies: [Double] = []
        var f = 1.0
        while f < nyquist { frequencies.append(f); f *= 1.003 }
        // The octave boundaries nyquist/2^m and their neighbours, where an off-by-one would show.
        for m in 0...12 {
            let b = nyquist / pow(2, Double(m))
            frequencies += [b.nextDown, b, b.nextUp].filter { $0 < nyquist }
        }
        for f in frequencies {
            let level = BandLimitedTables.level(frequency: f, nyquistReciprocal: 1 / nyquist)
            #expect(level >= 0 && level < BandLimitedTables.levelCount)
            let top = Double(BandLimitedTables.harmonics(level: level)) * f
            #expect(top < nyquist, "\(f) Hz at \(rate): level \(level) keeps \(BandLimitedTables.harmonics(level: level)) partials up to \(top) Hz")
            // Not needlessly dull either: at least half of the partials Nyquist allows are kept (or all 512).
            let allowed = Int((nyquist / f).rounded(.up)) - 1
            let kept = BandLimitedTables.harmonics(level: level)
            #expect(kept >= min(BandLimitedTables.maxHarmonics, allowed) / 2, "\(f) Hz: keeps \(kept) of \(allowed) partials")
        }
        // Negative frequencies (a curve bent below zero cannot happen, but the phase may run backwards) use |f|.
        #expect(BandLimitedTables.level(frequency: -5000, nyquistReciprocal: 1 / nyquist)
                == BandLimitedTables.level(frequency: 5000, nyquistReciprocal: 1 / nyquist))
    }

    @Test("a note transposed wholly above Nyquist is silent instead of folding back, band-limited or naive; an octave lower both sound, the naive one aliasing its harmonics",
          arguments: [WaveType.bandLimitedSawtooth, .bandLimitedSquare, .bandLimitedTriangle])
    func aboveNyquistIsSilent(wave: WaveType) throws {
        // An 8 kHz shape played 2 octaves up: a 32 kHz fundamental at 48 kHz (MIDI notes stop at 127).
        let bl = try Bench.note(Bench.tone(8000, wave: wave, amplitude: 0.5), note: 69 + 24, seconds: 0.1)
        #expect(Signal.peak(bl) == 0, "peak \(Signal.peak(bl))")
        // The naive wave would only fold its 32 kHz back to 16 kHz, a tone the shape never drew.
        let naive = try Bench.note(Bench.tone(8000, wave: .sawtooth, amplitude: 0.5), note: 69 + 24, seconds: 0.1)
        #expect(Signal.peak(naive) == 0, "naive peak \(Signal.peak(naive))")
        // An octave lower (16 kHz) it sounds: its fundamental fits.
        let fits = try Bench.note(Bench.tone(8000, wave: wave, amplitude: 0.5), note: 69 + 12, seconds: 0.1)
        #expect(Signal.peak(fits) > 0.05)
        // The naive wave too, its 32 kHz second harmonic folded back to 16 kHz, onto the fundamental.
        let naiveFits = try Bench.note(Bench.tone(8000, wave: .sawtooth, amplitude: 0.5), note: 69 + 12, seconds: 0.1)
        #expect(Signal.peak(naiveFits) > 0.05)
    }

    @Test("each wave's tables are built when first asked for, and built alone they are bit for bit those built with all three")
    func wavesBuiltAlone() {
        let all = BandLimitedTables()
        all.buildAll()
        for wave in BandLimitedTables.waves {
            let alone = BandLimitedTables()
            #expect(!BandLimitedTables.waves.contains { alone.isBuilt($0) })
            alone.build([wave, .sine])
            #expect(BandLimitedTables.waves.allSatisfy { alone.isBuilt($0) == ($0 == wave) })
            let bytes = BandLimitedTables.waveStride * MemoryLayout<Float>.stride
            #expect(memcmp(BandLimitedTables.waveBase(alone.storage, wave), BandLimitedTables.waveBase(all.storage, wave), bytes) == 0)
            // The other waves' room is left as it was allocated: zero pages, never touched.
            for other in BandLimitedTables.waves where other != wave {
                let base = BandLimitedTables.waveBase(alone.storage, other)
                #expect((0..<BandLimitedTables.waveStride).allSatisfy { base[$0] == 0 })
            }
        }
    }

    /// Amplitudes at every multiple of 250 Hz up to Nyquist of a steady stretch (rectangular window over
    /// whole periods: a 5 kHz wave repeats every 48 samples at 48 kHz, so each line falls on its bin).
    static func lines(_ x: [Float], from start: Int, count: Int) -> [(frequency: Double, amplitude: Double)] {
        stride(from: 250.0, to: 24_000, by: 250).map {
            (frequency: $0, amplitude: Signal.amplitude(x, at: $0, sampleRate: Bench.rate, in: start..<(start + count), window: false))
        }
    }

    /// The read pass addresses both kinds of table with one byte offset per sample: the singles'
    /// own, and twice it for the pairs.
    @Test("each level's single table holds the level's samples (its pairs' first values, guard and repeats included), at half the pairs' byte offset")
    func singleTablesBesideThePairs() {
        let storage = BandLimitedTables.shared.everyWave.storage
        for wave in BandLimitedTables.waves {
            let pairs = UnsafeRawPointer(BandLimitedTables.waveBase(storage, wave))
            let singles = pairs + 4 * BandLimitedTables.pairFloats
            var mismatches = 0, sounding = 0
            for level in 0..<BandLimitedTables.levelCount {
                let size = BandLimitedTables.sizes[level]
                for entry in 0..<(size + 4) {
                    let single = 2 * BandLimitedTables.offsets[level] + 4 * entry
                    let alone = singles.load(fromByteOffset: single, as: Float.self)
                    if alone != pairs.load(fromByteOffset: 2 * single, as: Float.self)
                        || alone != BandLimitedTables.shared.value(wave, level: level, index: (entry - 1 + size) % size) {
                        mismatches += 1
                    }
                    if alone != 0 { sounding += 1 }
                }
            }
            #expect(mismatches == 0 && sounding > 10_000, "\(wave): \(mismatches) entries differ, \(sounding) not 0")
        }
    }

    @Test("the render loop's Float level blend agrees with the Double one: same level, weight within 1e-5, continuous at level changes")
    func floatBlendMatches() {
        let nyquistReciprocal = 2 / 48_000.0
        let scale = Float(Double(BandLimitedTables.maxHarmonics) * nyquistReciprocal)
        var f = 20.0
        var previous: (level: Int, weight: Float)?
        while f < 30_000 {
            let exact = BandLimitedTables.blend(frequency: f, nyquistReciprocal: nyquistReciprocal)
            let fast = BandLimitedTables.blend(scaledFrequency: Float(f) * scale)
            if fast.level == exact.level {
                #expect(abs(fast.weight - exact.weight) < 1e-5, "f = \(f)")
            } else {
                // Only within rounding of a boundary, where both sides mean the same leaner table.
                #expect(abs(fast.level - exact.level) == 1 && (exact.weight > 0.9999 || exact.weight < 0.0001), "f = \(f)")
            }
            if let p = previous, p.level != fast.level {
                #expect(fast.level == p.level + 1 && p.weight > 0.99 && fast.weight < 0.01, "jump at f = \(f)")
            }
            previous = fast
            f *= 1.0001
        }
    }

    /// A voice starts each block's first table choice from its level's band and keeps it while the
    /// frequency stays inside: so any frequency inside must be given that very band, or the sound
    /// would depend on where blocks begin.
    @Test("each level's band, where a voice's first choice in a block starts, is the band found afresh for every frequency inside it")
    func levelBandsAreTheBandsFound() {
        var checked = 0
        for level in 0..<BandLimitedTables.levelCount {
            let b = BandLimitedTables.levelBands[level]
            #expect(b.level == level, "level \(level)'s band is level \(b.level)'s")
            let top = b.high.isFinite ? b.high.nextDown : b.low * 64
            var inside: [Float] = [b.low, top]
            for k in 1..<64 { inside.append(b.low + (top - b.low) * Float(k) / 64) }
            for r in inside where r >= b.low && r < b.high {
                let found = BandLimitedTables.band(scaledFrequency: r)
                #expect(found.level == b.level && found.low == b.low && found.high == b.high && found.start == b.start
                        && found.inverseSpan == b.inverseSpan, "level \(level), r = \(r): \(found) ≠ \(b)")
                checked += 1
            }
        }
        #expect(checked > 60 * BandLimitedTables.levelCount)
    }

    @Test("a steady 5 kHz band-limited sawtooth has lines only at 5, 10, 15, 20 kHz; the naive one aliases",
          arguments: [WaveType.bandLimitedSawtooth, .bandLimitedSquare])
    func steadyFiveKilohertz(wave: WaveType) throws {
        let bl = try Bench.note(Bench.tone(5000, wave: wave, amplitude: 0.5), seconds: 0.2)
        let naiveWave: WaveType = wave == .bandLimitedSquare ? .square : .sawtooth
        let naive = try Bench.note(Bench.tone(5000, wave: naiveWave, amplitude: 0.5), seconds: 0.2)
        let start = Bench.seconds(0.1), count = 4800
        let harmonic = { (f: Double) in (f / 5000).rounded() * 5000 == f }

        let blLines = Self.lines(bl, from: start, count: count)
        let fundamental = try #require(blLines.first { $0.frequency == 5000 }).amplitude
        #expect(fundamental > 0.05)
        let worstAlias = blLines.filter { !harmonic($0.frequency) }.max { $0.amplitude < $1.amplitude }!
        #expect(Signal.decibels(worstAlias.amplitude / fundamental) < -60,
                "band-limited: \(worstAlias.frequency) Hz at \(Signal.decibels(worstAlias.amplitude / fundamental)) dB")
        // The partials it keeps are there (the square has only the odd ones: 5 and 15 kHz).
        for k in wave == .bandLimitedSquare ? [3] : [2, 3, 4] {
            let a = blLines.first { $0.frequency == 5000 * Double(k) }!.amplitude
            #expect(abs(a / fundamental - 1 / Double(k)) < 0.02, "partial \(k): \(a / fundamental)")
        }

        let naiveLines = Self.lines(naive, from: start, count: count).filter { $0.frequency >= 1000 }
        let naiveFundamental = naiveLines.first { $0.frequency == 5000 }!.amplitude
        let naiveAlias = naiveLines.filter { !harmonic($0.frequency) }.max { $0.amplitude < $1.amplitude }!
        #expect(Signal.decibels(naiveAlias.amplitude / naiveFundamental) > -30,
                "naive: strongest alias only \(Signal.decibels(naiveAlias.amplitude / naiveFundamental)) dB")
        // The naive wave's 9th partial (45 kHz) folds to 3 kHz: a line the band-limited wave does not have.
        let folded = naiveLines.first { $0.frequency == 3000 }!.amplitude / naiveFundamental
        #expect(Signal.decibels(folded) > -35, "3 kHz alias \(Signal.decibels(folded)) dB")
    }

    static func sweepShape(_ wave: WaveType) -> Shape {
        Shape(name: "sweep", points: [.init(time: 0, frequency: 200), .init(time: 1, frequency: 16_000)], duration: 1,
              minFrequency: 20, maxFrequency: 16_000, wave: wave, amplitude: 0.5, fidelity: 1000)
    }

    @Test("a 200 Hz → 16 kHz band-limited sawtooth sweep puts no energy where folded partials land; the naive one does")
    func sweep() throws {
        let bl = Self.sweepAliasBands(try Bench.note(Self.sweepShape(.bandLimitedSawtooth), seconds: 1), from: 200, to: 16_000, seconds: 1)
        let naive = Self.sweepAliasBands(try Bench.note(Self.sweepShape(.sawtooth), seconds: 1), from: 200, to: 16_000, seconds: 1)
        #expect(bl.count == naive.count && bl.count > 15)
        // Typical frame: the folded-partial bands hold nothing but rounding noise.
        let median = bl.map(\.dB).sorted()[bl.count / 2]
        #expect(median < -80, "band-limited sweep: median \(median) dB in the alias bands")
        // Every frame is far cleaner than the naive sawtooth at the same moment, and below −35 dB.
        for (b, n) in zip(bl, naive) {
            #expect(b.dB < -35 && b.dB < n.dB - 25, "at \(b.time) s: band-limited \(b.dB) dB, naive \(n.dB) dB")
        }
        // The naive sawtooth's folded partials are loud once its harmonics pass Nyquist.
        #expect(naive.filter { $0.time > 0.3 }.allSatisfy { $0.dB > -20 }, "naive sweep: \(naive.map(\.dB))")
    }

    @Test("changing table level mid-sweep is seamless: no frame of the sweep shows more than −60 dB in the alias bands")
    func sweepLevelSwitchesAreSeamless() throws {
        // A level switch drops the top partial (e.g. the 5th, ≈ 21 kHz at 4.24 kHz, 2/(5π) of full scale) from one
        // sample to the next: a step in the waveform whose splatter lands everywhere, including the audible band.
        let bl = Self.sweepAliasBands(try Bench.note(Self.sweepShape(.bandLimitedSawtooth), seconds: 1), from: 200, to: 16_000,
                                      seconds: 1, below: 18_000)
        let worst = bl.max { $0.dB < $1.dB }!
        #expect(worst.dB < -60, "at \(worst.time) s (≈ \(Int(200 + 15_800 * worst.time)) Hz): \(worst.dB) dB below 18 kHz")
    }

}

extension BandLimitedTests {
    /// Per frame of a linear sweep: energy in the bands where folded partials (k·f above Nyquist, reflected
    /// back) would land, relative to the energy of the partials themselves, in dB.
    static func sweepAliasBands(_ x: [Float], from f0: Double, to f1: Double, seconds: Double, below limit: Double = 24_000) -> [(time: Double, dB: Double)] {
        let n = 1024
        let rate = Bench.rate, nyquist = rate / 2
        let binWidth = rate / Double(n)
        let totalSamples = Int(seconds * rate)
        var result: [(time: Double, dB: Double)] = []
        var start = Bench.seconds(0.03)
        func fold(_ f: Double) -> Double {
            let m = f.truncatingRemainder(dividingBy: rate)
            return m > nyquist ? rate - m : m
        }
        while start + n < totalSamples - Bench.seconds(0.01) {
            let spectrum = Signal.spectrum(x, start: start, count: n)
            let fa = f0 + (f1 - f0) * Double(start) / Double(totalSamples - 1)
            let fb = f0 + (f1 - f0) * Double(start + n) / Double(totalSamples - 1)
            let margin = 6 * binWidth
            var harmonicBands: [ClosedRange<Double>] = []
            var k = 1.0
            while k * fa < nyquist { harmonicBands.append((k * fa - margin)...(k * fb + margin)); k += 1 }
            var aliasBands: [ClosedRange<Double>] = []
            for k in 1...64 {
                let ka = Double(k) * fa, kb = Double(k) * fb
                guard kb > nyquist else { continue }
                // Skip partials whose folded image crosses 0 or Nyquist within the frame.
                if Int(ka / nyquist) != Int(kb / nyquist) { continue }
                let a = fold(ka), b = fold(kb)
                aliasBands.append((min(a, b) - margin)...(max(a, b) + margin))
            }
            var harmonicEnergy = 0.0, aliasEnergy = 0.0
            for (bin, m) in spectrum.enumerated() {
                let f = Double(bin) * binWidth
                if f < 60 { continue }
                if harmonicBands.contains(where: { $0.contains(f) }) { harmonicEnergy += m * m; continue }
                if f < limit && aliasBands.contains(where: { $0.contains(f) }) { aliasEnergy += m * m }
            }
            if !aliasBands.isEmpty {
                result.append((time: Double(start + n / 2) / rate, dB: 10 * log10(max(aliasEnergy, 1e-30) / harmonicEnergy)))
            }
            start += 2048
        }
        return result
    }
}
