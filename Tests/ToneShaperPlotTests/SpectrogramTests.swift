import Foundation
import Testing
@testable import ToneShaperPlot

@Suite("Spectrogram")
struct SpectrogramTests {
    let rate = 48_000.0

    @Test("a 1 kHz sine peaks in the bin nearest 1 kHz in every frame away from the edges")
    func sinePeak() {
        let s = Spectrogram(samples: sineWave(1000, amplitude: 0.5, count: 48_000, rate: rate), sampleRate: rate)
        #expect(s.fftSize == 2048 && s.hop == 512 && s.binCount == 1025)
        let binWidth = rate / 2048
        for frame in 4..<(s.frameCount - 4) {
            let peak = s.peakBin(frame: frame)
            #expect(abs(s.frequency(ofBin: peak) - 1000) <= binWidth / 2, "frame \(frame) peaks at \(s.frequency(ofBin: peak)) Hz")
        }
        // 1000 Hz sits a third of a bin off-centre: within the Hann window's ≤ 1.5 dB scalloping of −6 dBFS.
        let level = s.level(frame: s.frameCount / 2, bin: 43)
        #expect(level > -7.6 && level < -5.9, "level \(level) dBFS")
    }

    @Test("a bin-centred sine of amplitude 0.5 reads −6.02 dBFS")
    func calibration() {
        let f = 40 * rate / 2048  // 937.5 Hz, exactly bin 40
        let s = Spectrogram(samples: sineWave(f, amplitude: 0.5, count: 24_000, rate: rate), sampleRate: rate)
        let level = s.level(frame: s.frameCount / 2, bin: 40)
        #expect(abs(Double(level) - 20 * log10(0.5)) < 0.05, "level \(level)")
    }

    @Test("two tones give two peaks in their own bins, 20 dB apart, with a quiet valley between")
    func twoTones() {
        let a = sineWave(500, amplitude: 0.5, count: 48_000, rate: rate)
        let b = sineWave(6000, amplitude: 0.05, count: 48_000, rate: rate)
        let s = Spectrogram(samples: zip(a, b).map { $0 + $1 }, sampleRate: rate)
        let frame = s.frameCount / 2
        let bin500 = Int((500 / (rate / 2048)).rounded()), bin6000 = Int((6000 / (rate / 2048)).rounded())
        #expect(s.peakBin(frame: frame) == bin500)
        // The second tone is the loudest bin above 3 kHz.
        let upper = (128..<s.binCount).max { s.level(frame: frame, bin: $0) < s.level(frame: frame, bin: $1) }!
        #expect(upper == bin6000)
        let difference = s.level(frame: frame, bin: bin500) - s.level(frame: frame, bin: bin6000)
        #expect(abs(difference - 20) < 1.5, "difference \(difference) dB")
        #expect(s.level(frame: frame, bin: (bin500 + bin6000) / 2) < -100)
    }

    @Test("time runs in seconds: a tone starting at 0.5 s first shows in the frame around 0.5 s")
    func timeAxis() {
        let samples = sineWave(2000, amplitude: 0.5, count: 48_000, rate: rate, startingAt: 24_000)
        let s = Spectrogram(samples: samples, sampleRate: rate)
        let bin = Int((2000 / (rate / 2048)).rounded())
        let first = (0..<s.frameCount).first { s.level(frame: $0, bin: bin) > -40 }!
        // The window reaches the onset half a window (1024 samples) before its centre does.
        #expect(abs(s.time(ofFrame: first) - 0.5) <= 1024 / rate, "first loud frame at \(s.time(ofFrame: first)) s")
        #expect(s.level(frame: 10, bin: bin) < -190)  // digital silence before the onset
    }

    @Test("the drawing grid keeps the 1 kHz peak in the row whose range holds 1 kHz, linear and logarithmic")
    func gridRows() {
        let s = Spectrogram(samples: sineWave(1000, amplitude: 0.5, count: 96_000, rate: rate), sampleRate: rate)
        for scale in [Spectrogram.FrequencyScale.linear, .logarithmic(lowest: 20)] {
            let grid = s.grid(columns: 50, rows: 64, frequencyScale: scale)
            #expect(grid.columns == 50 && grid.rows == 64)
            #expect(grid.frequencyEdges.first! < 1000 && abs(grid.frequencyEdges.last! - 24_000) < 1e-6)
            let expected = grid.row(containing: 1000)!
            for column in 2..<(grid.columns - 2) {
                #expect(grid.peakRow(column: column) == expected, "\(scale), column \(column)")
            }
            // Max-pooling keeps the level instead of averaging it away.
            #expect(grid.value(column: 25, row: expected) > -7.6)
        }
    }

    @Test("the grid never has more cells than asked, and its time edges span the signal")
    func gridSize() {
        let s = Spectrogram(samples: [Float](repeating: 0, count: 480_000), sampleRate: rate)
        let grid = s.grid(columns: 400, rows: 256)
        #expect(grid.columns == 400 && grid.rows == 256 && grid.values.count == 400 * 256)
        #expect(grid.timeEdges.first! <= 0 && grid.timeEdges.last! >= 9.99)
        let short = Spectrogram(samples: [Float](repeating: 0, count: 1000), sampleRate: rate).grid(columns: 400, rows: 256)
        #expect(short.columns == 2)  // 1000 samples, hop 512: frames at 0 and 512
    }

    @Test("mixing to mono averages the channels")
    func mono() {
        let mono = SpectrogramPlot.mixToMono([1, 0, 0.5, 0.5, -1, 1], channels: 2)
        #expect(mono == [0.5, 0.5, 0])
    }
}

@Suite("Spectrograms of long files stream in bounded memory")
struct StreamingSpectrogramTests {
    static let rate = 48_000.0

    @Test("streamed in any chunks, the spectrogram equals the one of the whole array")
    func streamEqualsWhole() throws {
        let samples = sineWave(1000, amplitude: 0.5, count: 30_001, rate: Self.rate).enumerated().map { $0.element + Float($0.offset % 7) * 1e-3 }
        let whole = Spectrogram(samples: samples, sampleRate: Self.rate)
        for chunk in [1, 100, 4096, 8192] {
            var offset = 0
            let streamed = Spectrogram(sampleRate: Self.rate) { buffer in
                let n = min(chunk, buffer.count, samples.count - offset)
                for i in 0..<n { buffer[i] = samples[offset + i] }
                offset += n
                return n
            }
            #expect(streamed.frameCount == whole.frameCount && streamed.hop == whole.hop && streamed.sampleCount == whole.sampleCount)
            #expect(streamed.levels == whole.levels, "chunk \(chunk)")
        }
    }

    @Test("past maxFrames neighbouring frames merge (louder level wins): a 5 ms click in a minute still shows, memory stays bounded")
    func boundedAndClickSurvives() throws {
        let count = Int(60 * Self.rate)
        let clickAt = Int(41.3 * Self.rate)
        var produced = 0
        let s = Spectrogram(sampleRate: Self.rate, maxFrames: 64) { buffer in
            let n = min(buffer.count, count - produced)
            for i in 0..<n {
                let t = produced + i
                buffer[i] = (t >= clickAt && t < clickAt + 240) ? Float(sin(2 * Double.pi * 3000 * Double(t) / Self.rate)) * 0.5 : 0
            }
            produced += n
            return n
        }
        #expect(s.frameCount <= 64 && s.frameCount >= 32)
        #expect(s.analysisHop == 512 && s.hop == 512 * s.merged && s.merged > 1)
        #expect(s.levels.count == s.frameCount * s.binCount)
        #expect(s.sampleCount == count)
        // The frame that covers 41.3 s holds the click at 3 kHz; the frames far from it are silent.
        let frame = Int(41.3 * Self.rate) / s.hop
        let peak = s.frequency(ofBin: s.peakBin(frame: frame))
        #expect(abs(peak - 3000) < 50, "peak \(peak) Hz in frame \(frame) of \(s.frameCount)")
        #expect(s.level(frame: frame, bin: s.peakBin(frame: frame)) > -40)
        #expect(s.level(frame: 2, bin: s.peakBin(frame: frame)) < -150)
    }
}
