import CSndFile

/// Everything that can go wrong reading or writing an audio file.
///
/// Each case carries the file path and, for libsndfile failures, libsndfile's own text
/// (`sf_strerror`), so the message a user sees names both the file and the cause.
public enum AudioFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A format name or file extension that no `AudioFileFormat` answers to.
    case unknownFormat(value: String, accepted: [String])
    /// libsndfile's `sf_format_check` (or, for Ogg Vorbis, libvorbis's encoder setup) refused this combination.
    case unsupportedFormat(path: String, format: String, sampleRate: Int, channels: Int)
    /// Sample rate, channel count or sample count outside what the call accepts.
    case invalidArgument(path: String, reason: String)
    case cannotOpen(path: String, reason: String)
    case cannotConfigure(path: String, setting: String, reason: String)
    case writeFailed(path: String, reason: String)
    case readFailed(path: String, reason: String)
    case closeFailed(path: String, reason: String)
    /// A write after `close()`.
    case closed(path: String)

    public var description: String {
        switch self {
        case let .unknownFormat(value, accepted):
            return "unknown audio file format '\(value)'; accepted: \(accepted.joined(separator: ", "))"
        case let .unsupportedFormat(path, format, rate, channels):
            return "\(path): \(format) cannot be written at \(rate) Hz with \(channels) channel(s)"
        case let .invalidArgument(path, reason):
            return "\(path): \(reason)"
        case let .cannotOpen(path, reason):
            return "\(path): cannot open: \(reason)"
        case let .cannotConfigure(path, setting, reason):
            return "\(path): cannot set \(setting): \(reason)"
        case let .writeFailed(path, reason):
            return "\(path): write failed: \(reason)"
        case let .readFailed(path, reason):
            return "\(path): read failed: \(reason)"
        case let .closeFailed(path, reason):
            return "\(path): close failed: \(reason)"
        case let .closed(path):
            return "\(path): write after close"
        }
    }
}

/// libsndfile's text for the last error on `handle` (or on the last failed `sf_open` when nil).
func sndfileErrorText(_ handle: OpaquePointer?) -> String {
    guard let text = sf_strerror(handle) else { return "unknown libsndfile error" }
    return String(cString: text)
}

/// libsndfile's text for an error number, as returned by `sf_close`.
func sndfileErrorText(number: Int32) -> String {
    guard let text = sf_error_number(number) else { return "libsndfile error \(number)" }
    return String(cString: text)
}
