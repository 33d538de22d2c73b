import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file, but never more than a bound: every reader of a user's file (shapes, maps,
/// tunings, MIDI files, event scripts) knows how large a real one can be, and refuses a larger one
/// before decoding it. Read in chunks, not sized from `stat`, so /dev/zero or a pipe is refused
/// after `limit` bytes instead of filling memory.
public enum BoundedRead {
    /// Why a file was not read, in words that follow its path: "cannot be read (No such file or
    /// directory)", "is larger than 1 MB".
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case unreadable(reason: String)
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .unreadable(let reason): return "cannot be read (\(reason))"
            case .tooLarge(let limit): return "is larger than \(BoundedRead.size(limit))"
            }
        }

        /// The description, and after it, for a file too large, why no file of its kind is that
        /// large ("; not a tuning file"): each reader says what it expected.
        public func description(tooLarge remark: String) -> String {
            if case .tooLarge = self { return description + remark }
            return description
        }
    }

    /// The file's bytes, or a failure when it cannot be opened or read or holds more than `limit` bytes.
    public static func contents(of path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        return try contents(of: fd, limit: limit)
    }

    /// Everything readable from `fd` (a file, a pipe, stdin) up to `limit` bytes.
    public static func contents(of fd: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = 1 << 16
        while true {
            // One byte past the limit is enough to know the file is larger.
            let want = min(chunk, limit + 1 - bytes.count)
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(0, count: want))
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, want) }
            if n < 0 {
                if errno == EINTR { bytes.removeLast(want); continue }
                throw .unreadable(reason: String(cString: strerror(errno)))
            }
            bytes.removeLast(want - n)
            if n == 0 { return bytes }
            if bytes.count > limit { throw .tooLarge(limit: limit) }
        }
    }

    /// 1048576 → "1 MB", 65536 → "64 KB".
    public static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }
}
