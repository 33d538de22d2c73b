import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads a whole file, but never more than a bound: every reader of a user's file (shapes, maps,
/// tunings, MIDI files, event scripts) knows how large a real one can be, and refuses a larger one
/// before decoding it. Read until a read returns nothing (`stat`'s size is only the first read's
/// guess), so /dev/zero or a pipe is refused after `limit` bytes instead of filling memory.
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
    ///
    /// A regular file is read at the size it says it has (and one byte more, for the end), a pipe or
    /// a device in chunks from 4 KB doubling to 64 KB: reading every file in 64 KB zero-filled chunks
    /// had a 500-byte preset take 160 KB and about 40 page faults, most of a render's reading of its
    /// presets folder. The size is only a first guess: the end is where a read returns nothing.
    public static func contents(of fd: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var bytes: [UInt8] = []
        let largest = 1 << 16
        var chunk = 1 << 12
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size >= 0 {
            chunk = Int(min(Int64(limit), Int64(info.st_size))) + 1
        }
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
            chunk = min(max(2 * chunk, 1 << 12), largest)
        }
    }

    /// 1048576 → "1 MB", 65536 → "64 KB".
    public static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(bytes >> 10) KB"
    }
}
