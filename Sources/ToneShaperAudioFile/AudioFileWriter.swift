import CSndFile
import Glibc

/// Writes interleaved float samples to one audio file through libsndfile.
///
/// Not thread-safe: one thread writes (the recorder's disk thread, or an offline renderer).
/// Samples are floats in [-1, 1]; integer formats clip values beyond that instead of wrapping.
public final class AudioFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let sampleRate: Int
    public let channels: Int
    /// Frames accepted so far (by libsndfile, or waiting in the 16-bit buffer for it).
    public private(set) var framesWritten = 0

    private var handle: OpaquePointer?
    /// 16-bit WAV: samples converted here and gathered, `shortChunk` at a time, before libsndfile
    /// writes them (see `write(interleaved:)`); `buffered` of them wait.
    private let shorts: UnsafeMutablePointer<Int16>?
    private let shortChunk: Int
    private var buffered = 0

    /// Vorbis quality in libsndfile's 0...1 scale; 0.6 is transparent for most listeners at a
    /// moderate bit rate (libsndfile's default is lower).
    public static let vorbisQuality = 0.6

    public init(path: String, format: AudioFileFormat, sampleRate: Int, channels: Int) throws {
        guard sampleRate > 0, sampleRate <= Int(Int32.max) else {
            throw AudioFileError.invalidArgument(path: path, reason: "sample rate \(sampleRate) is not positive")
        }
        guard channels > 0, channels <= Int(Int32.max) else {
            throw AudioFileError.invalidArgument(path: path, reason: "channel count \(channels) is not positive")
        }
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channels = channels
        // A whole number of frames, about 16 KB: a 4096-frame stereo block is one system call.
        shortChunk = max(1, 8192 / channels) * channels
        shorts = format == .wav16 ? .allocate(capacity: shortChunk) : nil

        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format.sndfileFormat
        // Checked first so an impossible combination is reported as such, not as an open failure.
        guard sf_format_check(&info) == SF_TRUE else {
            throw AudioFileError.unsupportedFormat(
                path: path, format: format.description, sampleRate: sampleRate, channels: channels)
        }
        // A regular file being written over is unlinked first rather than truncated: ext4 takes a
        // truncated-then-rewritten file for an application's save and makes its close wait while
        // the data is written out (1.4 ms for 30 s of audio). Its old contents go either way.
        var status = stat()
        if lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG { _ = unlink(path) }
        guard let opened = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw AudioFileError.cannotOpen(path: path, reason: sndfileErrorText(nil))
        }
        handle = opened

        do {
            // Without this, libsndfile wraps out-of-range floats around in integer formats:
            // an overshoot becomes a full-scale click of the opposite sign.
            guard sf_command(opened, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE)) == SF_TRUE else {
                throw AudioFileError.cannotConfigure(path: path, setting: "clipping", reason: sndfileErrorText(opened))
            }
            if format == .oggVorbis {
                var quality = Self.vorbisQuality
                let size = Int32(MemoryLayout<Double>.size)
                guard sf_command(opened, Int32(SFC_SET_VBR_ENCODING_QUALITY), &quality, size) == SF_TRUE else {
                    throw AudioFileError.cannotConfigure(
                        path: path, setting: "Vorbis quality \(quality)", reason: sndfileErrorText(opened))
                }
            }
        } catch {
            // The configuration error is the one worth reporting; the half-made file is dropped.
            sf_close(opened)
            handle = nil
            throw error
        }
    }

    deinit {
        if let handle {
            try? flush()
            sf_close(handle)
        }
        shorts?.deallocate()
    }

    /// Appends `interleaved` (frame after frame, `channels` samples each).
    public func write(interleaved: UnsafeBufferPointer<Float>) throws {
        guard let handle else { throw AudioFileError.closed(path: path) }
        if let flushFailure { throw flushFailure }
        guard interleaved.count % channels == 0 else {
            throw AudioFileError.invalidArgument(
                path: path, reason: "\(interleaved.count) samples is not a whole number of \(channels)-channel frames")
        }
        guard let base = interleaved.baseAddress, !interleaved.isEmpty else { return }
        let frames = interleaved.count / channels
        if let shorts {
            // 16-bit WAV: converted here, eight samples at a time, to the very values libsndfile
            // 1.2's own clipping conversion gives (`convertToShorts`), gathered into 16 KB and
            // then written as they are: libsndfile converts one sample at a time and makes a
            // system call per 8 KB, and an offline render hands over a span (a few KB) at a time.
            var done = 0
            while done < frames {
                let count = min(frames - done, (shortChunk - buffered) / channels)
                Self.convertToShorts(base + done * channels, count: count * channels, into: shorts + buffered)
                buffered += count * channels
                framesWritten += count
                done += count
                if buffered == shortChunk { try flush() }
            }
            return
        }
        errno = 0
        let written = sf_writef_float(handle, base, sf_count_t(frames))
        let systemError = errno
        if written > 0 { framesWritten += Int(written) }
        guard written == sf_count_t(frames) else {
            throw AudioFileError.writeFailed(
                path: path, reason: "\(written) of \(frames) frames written: \(Self.reason(systemError, handle))")
        }
    }

    /// Floats to 16-bit samples exactly as libsndfile 1.2 converts them with clipping on (its
    /// `f2les_clip_array`): y = x·2³¹ rounded to an integer, of which the top 16 bits (the step
    /// below, not the nearest); 1 and above to 32767; −1 and below, and NaN, to −32768.
    /// Eight lanes at a time with adds, compares and selects only (a rounding instruction needs
    /// SSE4.1, and without it each lane called libm twice): floor(rint(y)/2¹⁶) is floor((y + ½)/2¹⁶)
    /// — they differ only where rint(y) ties up to a multiple of 2¹⁶, which is even, and floor(y + ½)
    /// rounds that tie up too — with the ½ added only below 2²³, where y can have a fraction and
    /// the sum is exact; the floor comes from adding 1.5·2²³ (the float then holds the nearest
    /// integer in its low bits) and stepping down where that rounded up.
    static func convertToShorts(_ source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<Int16>) {
        let magic = SIMD8<Float>(repeating: 12_582_912)
        var n = 0
        while n + 8 <= count {
            let y = UnsafeRawPointer(source + n).loadUnaligned(as: SIMD8<Float>.self) * 2_147_483_648
            let w = y.replacing(with: y + 0.5, where: (y .< 8_388_608) .& (y .> -8_388_608)) * (1 / 65536)
            let u = w + magic
            var q = unsafeBitCast(u, to: SIMD8<Int32>.self) &- 0x4B40_0000
            q.replace(with: q &- 1, where: (u - magic) .> w)
            q.replace(with: 32767, where: y .>= 2_147_483_648)
            q.replace(with: -32768, where: (y .<= -2_147_483_648) .| (y .!= y))
            UnsafeMutableRawPointer(target + n).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: q), as: SIMD8<Int16>.self)
            n += 8
        }
        while n < count {
            let y = source[n] * 2_147_483_648
            target[n] = y >= 2_147_483_648 ? 32767
                : (y <= -2_147_483_648 || y.isNaN) ? -32768
                : Int16((y.rounded(.toNearestOrEven) * (1 / 65536)).rounded(.down))
            n += 1
        }
    }

    /// Rewrites the header for the frames written so far (WAV's chunk sizes), so a file cut off
    /// before `close()` still reads back up to here. Costs a seek and a small write; call it now and
    /// then, not per block. Formats whose header libsndfile cannot rewrite mid-stream ignore it.
    public func updateHeader() {
        guard let handle else { return }
        // What is gathered goes first, so the header counts it; a failure to write it is kept for
        // the next write or `close()` to throw.
        if flushFailure == nil {
            do { try flush() } catch { flushFailure = error as? AudioFileError }
        }
        _ = sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
    }

    /// A failure to write the gathered 16-bit samples at `updateHeader()`, thrown at the next
    /// `write` or `close()`.
    private var flushFailure: AudioFileError?

    /// Hands the gathered 16-bit samples to libsndfile.
    private func flush() throws {
        guard let handle, let shorts, buffered > 0 else { return }
        let frames = buffered / channels
        buffered = 0
        errno = 0
        let written = sf_writef_short(handle, shorts, sf_count_t(frames))
        let systemError = errno
        guard written == sf_count_t(frames) else {
            framesWritten -= frames - max(0, Int(written))
            throw AudioFileError.writeFailed(
                path: path, reason: "\(max(0, Int(written))) of \(frames) frames written: \(Self.reason(systemError, handle))")
        }
    }

    /// Convenience for arrays.
    public func write(interleaved: [Float]) throws {
        try interleaved.withUnsafeBufferPointer { try write(interleaved: $0) }
    }

    /// Finishes the file (headers, codec flush). Safe to call more than once; `deinit` calls it
    /// too, but only an explicit call can report a failure.
    public func close() throws {
        guard let handle else { return }
        var failure = flushFailure
        if failure == nil {
            do { try flush() } catch { failure = error as? AudioFileError }
        }
        self.handle = nil
        errno = 0
        let result = sf_close(handle)
        if let failure { throw failure }
        let systemError = errno
        guard result == 0 else {
            let reason = Self.storageErrors.contains(systemError) ? String(cString: strerror(systemError)) : sndfileErrorText(number: result)
            throw AudioFileError.closeFailed(path: path, reason: reason)
        }
    }

    /// What the disk said, when it said no: libsndfile reports some of these in the codec's own
    /// words (a full disk under FLAC reads "problem with initialization of the flac decoder").
    static let storageErrors: Set<Int32> = [ENOSPC, EDQUOT, EFBIG, EIO, EROFS]

    static func reason(_ systemError: Int32, _ handle: OpaquePointer) -> String {
        storageErrors.contains(systemError) ? String(cString: strerror(systemError)) : sndfileErrorText(handle)
    }

    /// False once `close()` has been called.
    public var isOpen: Bool { handle != nil }
}
