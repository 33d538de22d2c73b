import CSndFile
import Glibc

/// Writes interleaved float samples to one audio file: WAV and FLAC through libsndfile, Ogg Vorbis
/// through libvorbis (`OggVorbisWriter`).
///
/// Not thread-safe: one thread writes (the recorder's disk thread, or an offline renderer).
/// Samples are floats in [-1, 1]; integer formats clip values beyond that instead of wrapping.
/// `updateHeader()` makes what is written so far readable should the program be killed.
public final class AudioFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let sampleRate: Int
    public let channels: Int
    /// Frames accepted so far (by libsndfile, or waiting in the 16-bit buffer for it).
    public private(set) var framesWritten = 0

    private var handle: OpaquePointer?
    /// Ogg Vorbis: the encoder and its file (libsndfile is not used).
    private var vorbis: OggVorbisWriter?
    /// FLAC: a second descriptor of the file, for `updateHeader()` to set the stream's length.
    private var flacHeader: Int32 = -1
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
        // A whole number of frames, about 256 KB (1.4 s of 48 kHz stereo). The kernel's cost of a
        // write is per page-cache folio more than per call, and the folios follow the writes' size:
        // 6 MB written in 16 KB pieces took 3.8 ms of system time here, in 256 KB pieces 1.6 ms.
        // The recorder's header update once a second writes out what is gathered before it.
        shortChunk = max(1, 131_072 / channels) * channels
        shorts = format == .wav16 ? .allocate(capacity: shortChunk) : nil

        // A regular file being written over is unlinked first rather than truncated: ext4 takes a
        // truncated-then-rewritten file for an application's save and makes its close wait while
        // the data is written out (1.4 ms for 30 s of audio). Its old contents go either way.
        func unlinkRegularFile() {
            var status = stat()
            if lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG { _ = unlink(path) }
        }
        if format == .oggVorbis {
            // The encoder is set up (a rate or channel count it cannot take refused) before the file is touched.
            let encoder = try OggVorbisWriter(path: path, sampleRate: sampleRate, channels: channels, quality: Self.vorbisQuality)
            unlinkRegularFile()
            try encoder.create()
            vorbis = encoder
            return
        }

        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format.sndfileFormat
        // Checked first so an impossible combination is reported as such, not as an open failure.
        guard sf_format_check(&info) == SF_TRUE else {
            throw AudioFileError.unsupportedFormat(
                path: path, format: format.description, sampleRate: sampleRate, channels: channels)
        }
        unlinkRegularFile()
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
        } catch {
            // The configuration error is the one worth reporting; the half-made file is dropped.
            sf_close(opened)
            handle = nil
            throw error
        }
        if format == .flac16 || format == .flac24 {
            // Only a regular file has a header to come back to (not /dev/full, a pipe, a terminal).
            let descriptor = open(path, O_RDWR | O_CLOEXEC)
            var status = stat()
            if descriptor >= 0 && fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG {
                flacHeader = descriptor
            } else if descriptor >= 0 {
                _ = Glibc.close(descriptor)
            }
        }
    }

    deinit {
        if let handle {
            try? flush()
            sf_close(handle)
        }
        try? vorbis?.finish()
        if flacHeader >= 0 { _ = Glibc.close(flacHeader) }
        shorts?.deallocate()
    }

    /// Appends `interleaved` (frame after frame, `channels` samples each).
    public func write(interleaved: UnsafeBufferPointer<Float>) throws {
        guard isOpen else { throw AudioFileError.closed(path: path) }
        if let flushFailure { throw flushFailure }
        guard interleaved.count % channels == 0 else {
            throw AudioFileError.invalidArgument(
                path: path, reason: "\(interleaved.count) samples is not a whole number of \(channels)-channel frames")
        }
        guard let base = interleaved.baseAddress, !interleaved.isEmpty else { return }
        let frames = interleaved.count / channels
        if let vorbis {
            try vorbis.write(base, frames: frames)
            framesWritten += frames
            return
        }
        guard let handle else { throw AudioFileError.closed(path: path) }
        if let shorts {
            // 16-bit WAV: converted here, eight samples at a time, to the very values libsndfile
            // 1.2's own clipping conversion gives (`convertToShorts`), gathered into 256 KB and
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
    ///
    /// Built for a CPU with a vector rounding instruction (Package.swift's TONESHAPER_VECTOR_ROUNDING),
    /// the lanes take the scalar tail's own formula, floor(rint(y)·2⁻¹⁶), with two rounding
    /// instructions and two selects for the clipping (NaN fails `t ≥ −32768`): the same value for
    /// every one of the 2³² floats (checked), at a seventh of the time (0.75 → 0.11 ns per sample,
    /// its mask juggling gone; 2 % of a dense sine render's CPU had been here).
    static func convertToShorts(_ source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<Int16>) {
        #if TONESHAPER_VECTOR_ROUNDING
        convertToShorts(source, count: count, into: target, lanes: .rounding)
        #else
        convertToShorts(source, count: count, into: target, lanes: .adding)
        #endif
    }

    /// The two eight-lane forms of the conversion: both are built everywhere, so the tests hold
    /// each to libsndfile's bytes whichever a build writes with.
    enum ShortLanes { case rounding, adding }

    @inline(__always) static func convertToShorts(_ source: UnsafePointer<Float>, count: Int, into target: UnsafeMutablePointer<Int16>,
                                                  lanes: ShortLanes) {
        let magic = SIMD8<Float>(repeating: 12_582_912)
        var n = 0
        if lanes == .rounding {
            while n + 8 <= count {
                let y = UnsafeRawPointer(source + n).loadUnaligned(as: SIMD8<Float>.self) * 2_147_483_648
                var t = (y.rounded(.toNearestOrEven) * (1 / 65536)).rounded(.down)
                t.replace(with: -32768, where: .!(t .>= -32768))
                t.replace(with: 32767, where: t .> 32767)
                // A whole number of at most 2¹⁵ in the float's low bits (exact below 2²²), then as an integer.
                let q = unsafeBitCast(t + magic, to: SIMD8<Int32>.self) &- 0x4B40_0000
                UnsafeMutableRawPointer(target + n).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: q), as: SIMD8<Int16>.self)
                n += 8
            }
        }
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

    /// Makes what is written so far readable should the program be killed before `close()`: WAV's
    /// chunk sizes are rewritten, FLAC's STREAMINFO is given the length of the frames on disk, Ogg's
    /// current page is ended. Costs a small write or two; call it now and then (the recorder: once a
    /// second), not per block. A failure to write is kept for the next write or `close()` to throw.
    public func updateHeader() {
        guard flushFailure == nil else { return }
        do {
            if let vorbis {
                try vorbis.endPage()
            } else if let handle {
                // What is gathered goes first, so the header counts it.
                try flush()
                if flacHeader >= 0 {
                    try setFLACLength()
                } else {
                    _ = sf_command(handle, Int32(SFC_UPDATE_HEADER_NOW), nil, 0)
                }
            }
        } catch {
            flushFailure = error as? AudioFileError
        }
    }

    /// libsndfile gives FLAC no mid-stream header update: until `close()` the STREAMINFO says 0
    /// samples, "unknown", which libsndfile reads as 2⁶³−1 frames (python-soundfile then cannot
    /// read the file at all). This writes the count of frames libFLAC has put on disk into the
    /// STREAMINFO's 36-bit total-samples field (bytes 21–25 of the file, after "fLaC" and the
    /// block's header), which `close()` overwrites with the final count. libFLAC encodes a block
    /// of B frames once it holds B + 1, so after n frames floor((n − 1) / B) · B are on disk.
    /// Anything but the expected layout (a fixed block size) is left alone.
    private func setFLACLength() throws {
        var header = [UInt8](repeating: 0, count: 42)
        let got = header.withUnsafeMutableBytes { pread(flacHeader, $0.baseAddress, 42, 0) }
        guard got == 42, header[0..<4] == [0x66, 0x4C, 0x61, 0x43],  // "fLaC"
              header[4] & 0x7F == 0, header[5] == 0, header[6] == 0, header[7] == 34 else { return }
        let minimumBlock = Int(header[8]) << 8 | Int(header[9])
        let blockSize = Int(header[10]) << 8 | Int(header[11])
        guard blockSize > 0, blockSize == minimumBlock, framesWritten > 0 else { return }
        let onDisk = UInt64((framesWritten - 1) / blockSize * blockSize)
        var field: [UInt8] = [header[21] & 0xF0 | UInt8(onDisk >> 32 & 0x0F),
                              UInt8(onDisk >> 24 & 0xFF), UInt8(onDisk >> 16 & 0xFF), UInt8(onDisk >> 8 & 0xFF), UInt8(onDisk & 0xFF)]
        let put = field.withUnsafeMutableBytes { pwrite(flacHeader, $0.baseAddress, 5, 21) }
        guard put == 5 else {
            throw AudioFileError.writeFailed(path: path, reason: String(cString: strerror(put < 0 ? errno : ENOSPC)))
        }
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
        if flacHeader >= 0 {
            _ = Glibc.close(flacHeader)  // only ever written with pwrite, each checked
            flacHeader = -1
        }
        if let vorbis {
            defer { self.vorbis = nil }
            let failure = flushFailure
            do { try vorbis.finish() } catch { throw failure ?? error }
            if let failure { throw failure }
            return
        }
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
    public var isOpen: Bool { handle != nil || vorbis != nil }
}
