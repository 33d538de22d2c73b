import Foundation
import CSndFile

/// The file formats ToneShaper records to: the ones a musician asks for, not every libsndfile mode.
public enum AudioFileFormat: String, CaseIterable, Sendable, CustomStringConvertible {
    case wav16
    case wav24
    case wav32Float
    case flac16
    case flac24
    case oggVorbis

    /// Names accepted by `init(path:explicit:)`, for help text and error messages.
    public static let acceptedNames = [
        "wav", "wav16", "wav24", "wav32f", "float", "flac", "flac16", "flac24", "ogg", "vorbis",
    ]
    /// File extensions recognised when no explicit name is given.
    public static let acceptedExtensions = ["wav", "flac", "ogg", "oga"]

    /// Chooses a format by `explicit` name when given (case-insensitive), otherwise by the
    /// extension of `path`. WAV and FLAC default to 16-bit, the most widely playable depth.
    public init(path: String, explicit: String?) throws {
        if let explicit {
            guard let format = Self.byName[explicit.lowercased()] else {
                throw AudioFileError.unknownFormat(value: explicit, accepted: Self.acceptedNames)
            }
            self = format
            return
        }
        let fileName = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = fileName.lastIndex(of: "."), fileName.index(after: dot) != fileName.endIndex else {
            throw AudioFileError.unknownFormat(
                value: "\(path) (no file extension)", accepted: Self.acceptedNames + Self.acceptedExtensions.map { "." + $0 })
        }
        let ext = fileName[fileName.index(after: dot)...].lowercased()
        guard let format = Self.byExtension[ext] else {
            throw AudioFileError.unknownFormat(
                value: "\(path) (extension .\(ext))", accepted: Self.acceptedNames + Self.acceptedExtensions.map { "." + $0 })
        }
        self = format
    }

    private static let byName: [String: AudioFileFormat] = [
        "wav": .wav16, "wav16": .wav16, "wav24": .wav24,
        "wav32f": .wav32Float, "float": .wav32Float,
        "flac": .flac16, "flac16": .flac16, "flac24": .flac24,
        "ogg": .oggVorbis, "vorbis": .oggVorbis,
    ]

    private static let byExtension: [String: AudioFileFormat] = [
        "wav": .wav16, "flac": .flac16, "ogg": .oggVorbis, "oga": .oggVorbis,
    ]

    /// The libsndfile `SF_FORMAT_*` major|subtype code.
    public var sndfileFormat: Int32 {
        switch self {
        case .wav16: return Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
        case .wav24: return Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24)
        case .wav32Float: return Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        case .flac16: return Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
        case .flac24: return Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
        case .oggVorbis: return Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS)
        }
    }

    /// The format a libsndfile code stands for, if it is one of ours.
    public init?(sndfileFormat: Int32) {
        guard let match = Self.allCases.first(where: { $0.sndfileFormat == sndfileFormat }) else { return nil }
        self = match
    }

    /// Usual file extension, without the dot.
    public var fileExtension: String {
        switch self {
        case .wav16, .wav24, .wav32Float: return "wav"
        case .flac16, .flac24: return "flac"
        case .oggVorbis: return "ogg"
        }
    }

    /// Bytes per second of stereo at `sampleRate` a file of this format takes at most (PCM sizes;
    /// FLAC never exceeds them by more than its framing, Vorbis at quality 0.6 stays far below).
    public func estimatedBytesPerSecond(sampleRate: Int, channels: Int) -> Double {
        let pcm = Double(sampleRate * channels)
        switch self {
        case .wav16: return pcm * 2
        case .wav24: return pcm * 3
        case .wav32Float: return pcm * 4
        case .flac16: return pcm * 2 * 1.02
        case .flac24: return pcm * 3 * 1.02
        case .oggVorbis: return 32_000  // ~256 kbit/s, above quality 0.6's usual rate
        }
    }

    /// What writing `frames` to `path` would lack, when the estimate is more than the free space
    /// of its folder's file system (nil when it fits, or when the folder cannot be asked: the
    /// writer then says what is wrong). `freeBytes` stands in for the file system's answer.
    public func shortfall(writing frames: Int, sampleRate: Int, channels: Int, to path: String,
                          freeBytes: Double? = nil) -> (needed: Double, free: Double, folder: String)? {
        let needed = Double(frames) / Double(sampleRate) * estimatedBytesPerSecond(sampleRate: sampleRate, channels: channels)
        let folder = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
        var free = freeBytes
        if free == nil {
            var stats = statvfs()
            guard statvfs(folder, &stats) == 0 else { return nil }
            free = Double(stats.f_bavail) * Double(stats.f_frsize)
        }
        guard let free, needed > free else { return nil }
        return (needed, free, folder)
    }

    /// True for formats that store samples exactly up to their bit depth (everything but Vorbis).
    public var isLossless: Bool { self != .oggVorbis }

    public var description: String {
        switch self {
        case .wav16: return "WAV 16-bit PCM"
        case .wav24: return "WAV 24-bit PCM"
        case .wav32Float: return "WAV 32-bit float"
        case .flac16: return "FLAC 16-bit"
        case .flac24: return "FLAC 24-bit"
        case .oggVorbis: return "Ogg Vorbis"
        }
    }
}
