import Foundation
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperMIDI

/// N cycles of a shape at a note, as `toneshaper render-shape` writes them and the editor's Export
/// sends them: one engine setup and one gain for both, so the two files are equal sample for sample.
public enum ShapeExporter {
    /// Seconds of audio an export may hold (it is answered from memory): 10 minutes, ≈ 115 MB of WAV.
    static let longestExport = 600.0

    /// The master gain both write with unless told otherwise (`--gain`): −6 dB, room for the echo.
    public static let defaultGainDecibels = -6.0

    /// The renderer, its events and its length for `cycles` passes of `shape` held on `note`.
    public static func performance(_ shape: Shape, cycles: Int, note: Int, velocity: Int = 127, sampleRate: Int,
                                   gainDecibels: Double = defaultGainDecibels) throws
        -> (renderer: OfflineRenderer, messages: [TimedMIDIMessage], frames: Int) {
        let engine = try ShapeExport.engine(for: shape, sampleRate: Double(sampleRate), masterGain: pow(10, gainDecibels / 20))
        let (messages, frames) = ShapeExport.performance(of: shape, cycles: cycles, note: UInt8(note), velocity: UInt8(velocity),
                                                         sampleRate: Double(sampleRate))
        return (OfflineRenderer(engine: engine), messages, frames)
    }

    /// The editor's Export: the file libsndfile writes, handed back as its bytes.
    static func export(_ shape: Shape, cycles: Int, note: Int, format: AudioFileFormat, sampleRate: Int) throws -> [UInt8] {
        let (renderer, messages, frames) = try performance(shape, cycles: cycles, note: note, sampleRate: sampleRate)
        let path = NSTemporaryDirectory() + "toneshaper-export-\(getpid())-\(UUID().uuidString).\(format.fileExtension)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try renderer.render(messages, totalFrames: frames, to: path, format: format)
        guard let data = FileManager.default.contents(atPath: path) else { throw EditorError(status: 500, "\(path): cannot be read back") }
        return [UInt8](data)
    }
}

extension AudioFileFormat {
    /// The export menu's names: the 16-bit lossless files and Ogg Vorbis.
    init?(exportName: String) {
        switch exportName.lowercased() {
        case "wav": self = .wav16
        case "flac": self = .flac16
        case "ogg": self = .oggVorbis
        default: return nil
        }
    }

    var mimeType: String {
        switch self {
        case .oggVorbis: return "audio/ogg"
        case .flac16, .flac24: return "audio/flac"
        default: return "audio/wav"
        }
    }
}
