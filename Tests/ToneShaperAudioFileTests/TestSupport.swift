import Foundation
import ToneShaperAudioFile

/// Runs `body` with a fresh directory under the system temporary directory, removed afterwards.
@discardableResult
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("ToneShaperAudioFileTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

/// Interleaved test signal: channel c is a sine of `frequency` with amplitude `amplitude / (c + 1)`,
/// phase-shifted per channel so swapped channels would be noticed.
func sine(frequency: Double, sampleRate: Int, frames: Int, channels: Int, amplitude: Double = 0.9) -> [Float] {
    var samples = [Float](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
        let t = Double(frame) / Double(sampleRate)
        for channel in 0..<channels {
            let phase = 2 * Double.pi * (frequency * t + Double(channel) * 0.25)
            samples[frame * channels + channel] = Float(amplitude / Double(channel + 1) * sin(phase))
        }
    }
    return samples
}

/// Largest absolute difference between two equally long sample arrays.
func maxAbsoluteDifference(_ a: [Float], _ b: [Float]) -> Float {
    precondition(a.count == b.count)
    return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

/// Frequency estimated from sign changes: a sine crosses zero twice per period.
func zeroCrossingFrequency(_ samples: ArraySlice<Float>, sampleRate: Int) -> Double {
    var crossings = 0
    var previous = samples.first ?? 0
    for sample in samples.dropFirst() {
        if (previous < 0) != (sample < 0) { crossings += 1 }
        previous = sample
    }
    return Double(crossings) / 2 / (Double(samples.count) / Double(sampleRate))
}

func rootMeanSquare(_ samples: ArraySlice<Float>) -> Double {
    let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    return (sum / Double(samples.count)).squareRoot()
}

/// Writes `samples` in one go and closes the file.
func writeFile(_ path: String, _ format: AudioFileFormat, sampleRate: Int, channels: Int, samples: [Float]) throws {
    let writer = try AudioFileWriter(path: path, format: format, sampleRate: sampleRate, channels: channels)
    try writer.write(interleaved: samples)
    try writer.close()
}

extension Error {
    /// The text a user would see.
    var text: String { String(describing: self) }
}

/// Where two sample arrays first differ, described briefly; nil when equal. Used instead of
/// `#expect(a == b)`, whose failure message would print hundreds of thousands of samples.
func firstDifference(_ actual: [Float], _ expected: [Float]) -> String? {
    let common = min(actual.count, expected.count)
    if let index = (0..<common).first(where: { actual[$0] != expected[$0] }) {
        return "sample \(index) is \(actual[index]), expected \(expected[index])"
    }
    return actual.count == expected.count ? nil : "\(actual.count) samples, expected \(expected.count)"
}
