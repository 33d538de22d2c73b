import Foundation
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// The editor's Export: N cycles of a shape at a note, rendered through the setup `render-shape`
/// uses (`ShapeExport.renderer`), so the two files are equal sample for sample.
public enum ShapeExporter {
    /// Seconds of audio an export may hold (it is answered from memory): 10 minutes, ≈ 115 MB of WAV.
    static let longestExport = 600.0

    /// The editor's Export: the file libsndfile writes, handed back as its bytes.
    static func export(_ shape: Shape, cycles: Int, note: Int, format: AudioFileFormat, sampleRate: Int) throws -> [UInt8] {
        let (renderer, messages, frames) = try ShapeExport.renderer(for: shape, cycles: cycles, note: note, sampleRate: sampleRate)
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
