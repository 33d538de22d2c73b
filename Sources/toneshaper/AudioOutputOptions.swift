import ArgumentParser
import Foundation
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// Options every command that writes an audio file shares.
struct AudioOutputOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Output file (.wav, .flac, .ogg).")
    var output: String

    @Option(name: .long, help: "Output format: wav16, wav24, wav32f, flac16, flac24, ogg (default: from the extension).")
    var format: String?

    @Option(name: .long, parsing: .unconditional, help: "Sample rate in Hz.")
    var rate: Int = 48_000

    @Option(name: .long, parsing: .unconditional, help: "Master gain in dB applied to the mix before the hard clip at 0 dBFS.")
    var gain: Double = ShapeExport.defaultGainDecibels

    /// The master gain as a linear factor.
    var linearGain: Double { pow(10, gain / 20) }

    func validate() throws {
        guard (8_000...192_000).contains(rate) else { throw ValidationError("--rate \(rate) is outside 8000...192000 Hz") }
        guard (-60...24).contains(gain) else { throw ValidationError("--gain \(gain) dB is outside -60...24") }
    }

    /// Renders through `renderer` into the output file and prints where it went.
    func write(_ renderer: OfflineRenderer, messages: [TimedMIDIMessage], frames: Int,
               progressLabel: String? = nil) throws {
        let fileFormat = try AudioFileFormat(path: output, explicit: format)
        try LengthLimit.checkSpace(for: output, format: fileFormat, frames: frames, rate: rate)
        let bar = progressLabel.map { ProgressBar(label: $0) }
        let peak: Float
        do {
            peak = try renderer.render(messages, totalFrames: frames, to: output, format: fileFormat,
                                       progress: bar.map { b in { b.update($0) } })
        } catch {
            bar?.finish()
            throw error
        }
        bar?.finish()
        let seconds = Double(frames) / Double(rate)
        let dB = peak > 0 ? 20 * log10(Double(peak)) : -.infinity
        let absolute = URL(fileURLWithPath: output).standardizedFileURL.path
        var line = "wrote \(absolute) (\(String(format: "%.2f", seconds)) s, \(rate) Hz, \(fileFormat), peak \(String(format: "%.1f", dB)) dBFS"
        if renderer.engine.clippedSamples > 0 { line += ", \(renderer.engine.clippedSamples) samples clipped" }
        print(line + ")")
    }
}

/// A one-line progress bar on stderr, shown only when stderr is a terminal.
final class ProgressBar {
    let label: String
    let enabled = isatty(STDERR_FILENO) == 1
    var shown = -1
    init(label: String) { self.label = label }
    func update(_ fraction: Double) {
        guard enabled else { return }
        let percent = Int(fraction * 100)
        guard percent != shown else { return }
        shown = percent
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(percent)%".utf8))
    }
    func finish() {
        guard enabled, shown >= 0 else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        shown = -1
    }
}
