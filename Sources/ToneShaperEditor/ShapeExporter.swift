import Foundation
import ToneShaperAudioFile
import ToneShaperCore

/// The editor's Export: N cycles of the shape at a note, written by libsndfile exactly as
/// `toneshaper render-shape` writes them, handed back as the file's bytes.
enum ShapeExporter {
    /// Seconds of audio an export may hold (it is answered from memory): 10 minutes, ≈ 115 MB of WAV.
    static let longestExport = 600.0

    static func export(_ shape: Shape, cycles: Int, note: Int, format: AudioFileFormat, sampleRate: Int) throws -> [UInt8] {
        let engine = try ShapeExport.engine(for: shape, sampleRate: Double(sampleRate))
        let (messages, frames) = ShapeExport.performance(of: shape, cycles: cycles, note: UInt8(note), sampleRate: Double(sampleRate))
        let path = NSTemporaryDirectory() + "toneshaper-export-\(getpid())-\(UUID().uuidString).\(format.fileExtension)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try AudioFileWriter(path: path, format: format, sampleRate: sampleRate, channels: 2)
        do {
            try OfflineRenderer(engine: engine).render(messages, totalFrames: frames) { try writer.write(interleaved: $0) }
            try writer.close()
        } catch {
            try? writer.close()
            throw error
        }
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
