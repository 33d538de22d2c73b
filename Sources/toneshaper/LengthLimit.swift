import ArgumentParser
import Foundation
import ToneShaperAudioFile

/// How long a performance may be, and what it will take on disk: checked before anything is
/// rendered, so a tiny file that claims years of music is one line, not a full disk.
struct LengthLimit: ParsableArguments {
    @Option(name: .customLong("max-length"), parsing: .unconditional, help: "Longest performance rendered, in hours (longer ones are refused).")
    var maxLength: Double = 24

    func validate() throws {
        guard maxLength > 0, maxLength <= 10_000 else { throw ValidationError("--max-length \(maxLength) must be in (0, 10000] hours") }
    }

    /// Frames for `seconds` at `rate`, rounded once (so 64.475 s at 8 kHz is 515,800 frames, not one
    /// short by float error); refused when longer than --max-length, naming `what` and its length.
    func frames(seconds: Double, rate: Int, what: String) throws -> Int {
        guard seconds.isFinite, seconds <= maxLength * 3600 else {
            throw CLIError("\(what) lasts \(Self.describe(seconds)), longer than the \(Self.describe(maxLength * 3600)) limit (raise it with --max-length HOURS)")
        }
        return max(1, Int((seconds * Double(rate)).rounded()))
    }

    /// Refuses to start a file that cannot fit on its disk.
    static func checkSpace(for path: String, format: AudioFileFormat, frames: Int, rate: Int, channels: Int = 2) throws {
        if let shortfall = format.shortfall(writing: frames, sampleRate: rate, channels: channels, to: path) {
            throw CLIError("\(path): about \(Self.size(shortfall.needed)) of \(format) needed, only \(Self.size(shortfall.free)) free on \(shortfall.folder)")
        }
    }

    /// A length as a person says it: "12.50 s", "4 min 10 s", "2780 h 15 min", "143 years".
    static func describe(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "forever" }
        let year = 86_400 * 365.25
        if seconds >= 1e6 * year { return "over a million years" }
        if seconds >= 1000 * year { return String(format: "%.0f years", seconds / year) }
        if seconds >= year { return String(format: "%.3g years", seconds / year) }
        if seconds < 60 { return String(format: "%.2f s", seconds) }
        // Whole minutes from here (under a year: an Int holds them), the largest unit first, zero parts left out.
        let minutes = Int((seconds / 60).rounded())
        if seconds < 3600 && minutes < 60 {
            let whole = Int(seconds.rounded())
            return whole % 60 == 0 ? "\(whole / 60) min" : "\(whole / 60) min \(whole % 60) s"
        }
        return minutes % 60 == 0 ? "\(minutes / 60) h" : "\(minutes / 60) h \(minutes % 60) min"
    }

    static func size(_ bytes: Double) -> String {
        bytes >= 1e9 ? String(format: "%.1f GB", bytes / 1e9) : String(format: "%.0f MB", max(bytes / 1e6, 1))
    }
}
