import CSndFile

/// A whole audio file in memory, samples interleaved and normalised to [-1, 1].
public struct AudioFileContents: Sendable {
    public let path: String
    public let sampleRate: Int
    public let channels: Int
    /// Frames actually read (for Vorbis this can differ slightly from the header's count).
    public let frames: Int
    public let samples: [Float]
    /// libsndfile's `SF_FORMAT_*` code.
    public let sndfileFormat: Int32
    /// One of ours when it matches, nil for other files libsndfile can read.
    public let format: AudioFileFormat?
    /// libsndfile's names for container and encoding, e.g. "WAV (Microsoft), Signed 16 bit PCM".
    public let formatDescription: String

    /// The samples of one channel.
    public func channel(_ index: Int) -> [Float] {
        precondition(index >= 0 && index < channels, "channel \(index) out of 0..<\(channels)")
        return stride(from: index, to: samples.count, by: channels).map { samples[$0] }
    }
}

/// An audio file open for reading block by block: what streams (plots of long files) use, and
/// what `AudioFileReader.read` is made of. The header's frame count is only a claim: nothing is
/// sized from it, reading simply goes on to the end of the data.
public final class AudioFileStream {
    public let path: String
    public let sampleRate: Int
    public let channels: Int
    /// Frames the header claims (may be wrong in a damaged or hostile file).
    public let claimedFrames: Int64
    public let sndfileFormat: Int32
    public let formatDescription: String
    private let handle: OpaquePointer

    public init(path: String) throws {
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError.cannotOpen(path: path, reason: sndfileErrorText(nil))
        }
        guard info.channels > 0, info.channels <= 1024, info.samplerate > 0 else {
            sf_close(handle)
            throw AudioFileError.readFailed(path: path, reason: "file reports \(info.channels) channels at \(info.samplerate) Hz")
        }
        self.handle = handle
        self.path = path
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        claimedFrames = Int64(info.frames)
        sndfileFormat = info.format
        formatDescription = AudioFileReader.describe(format: info.format, handle: handle)
    }

    deinit { sf_close(handle) }  // read-only: a close failure loses nothing

    /// Reads up to `buffer.count / channels` frames, interleaved; returns the frames read, 0 at
    /// the end. A read error is thrown (a short read alone does not tell end from failure).
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        let frames = buffer.count / channels
        guard frames > 0, let base = buffer.baseAddress else { return 0 }
        let got = sf_readf_float(handle, base, sf_count_t(frames))
        if got <= 0 {
            guard sf_error(handle) == 0 else { throw AudioFileError.readFailed(path: path, reason: sndfileErrorText(handle)) }
            return 0
        }
        return Int(got)
    }
}

/// Reads audio files libsndfile understands; used by tests and to check recordings.
public enum AudioFileReader {
    /// Frames requested per read.
    static let chunkFrames = 4096

    public static func read(path: String) throws -> AudioFileContents {
        let stream = try AudioFileStream(path: path)
        var samples: [Float] = []
        let chunk = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkFrames * stream.channels)
        defer { chunk.deallocate() }
        while true {
            let got = try stream.read(into: chunk)
            if got == 0 { break }
            samples.append(contentsOf: chunk[0..<(got * stream.channels)])
        }
        return AudioFileContents(
            path: path,
            sampleRate: stream.sampleRate,
            channels: stream.channels,
            frames: samples.count / stream.channels,
            samples: samples,
            sndfileFormat: stream.sndfileFormat,
            format: AudioFileFormat(sndfileFormat: stream.sndfileFormat),
            formatDescription: stream.formatDescription)
    }

    /// Names from libsndfile itself, so any file it can open gets a readable description.
    static func describe(format: Int32, handle: OpaquePointer) -> String {
        let parts = [format & Int32(SF_FORMAT_TYPEMASK), format & Int32(SF_FORMAT_SUBMASK)].map { code -> String in
            var entry = SF_FORMAT_INFO()
            entry.format = code
            let ok = sf_command(handle, Int32(SFC_GET_FORMAT_INFO), &entry, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0
            guard ok, let name = entry.name else { return "0x" + String(code, radix: 16, uppercase: true) }
            return String(cString: name)
        }
        return parts.joined(separator: ", ")
    }
}
