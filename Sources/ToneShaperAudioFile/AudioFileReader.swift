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

/// Reads audio files libsndfile understands; used by tests and to check recordings.
public enum AudioFileReader {
    /// Frames requested per `sf_readf_float` call.
    static let chunkFrames = 4096

    public static func read(path: String) throws -> AudioFileContents {
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            throw AudioFileError.cannotOpen(path: path, reason: sndfileErrorText(nil))
        }
        defer { sf_close(handle) }  // Read-only: a close failure loses nothing.

        let channels = Int(info.channels)
        guard channels > 0 else {
            throw AudioFileError.readFailed(path: path, reason: "file reports \(channels) channels")
        }
        var samples: [Float] = []
        if info.frames > 0 { samples.reserveCapacity(Int(info.frames) * channels) }
        var chunk = [Float](repeating: 0, count: chunkFrames * channels)
        while true {
            let got = chunk.withUnsafeMutableBufferPointer {
                sf_readf_float(handle, $0.baseAddress, sf_count_t(chunkFrames))
            }
            if got <= 0 { break }
            samples.append(contentsOf: chunk[0..<(Int(got) * channels)])
        }
        // A short read ends the loop both at end of file and on failure; only sf_error tells which.
        guard sf_error(handle) == 0 else {
            throw AudioFileError.readFailed(path: path, reason: sndfileErrorText(handle))
        }
        return AudioFileContents(
            path: path,
            sampleRate: Int(info.samplerate),
            channels: channels,
            frames: samples.count / channels,
            samples: samples,
            sndfileFormat: info.format,
            format: AudioFileFormat(sndfileFormat: info.format),
            formatDescription: describe(format: info.format, handle: handle))
    }

    /// Names from libsndfile itself, so any file it can open gets a readable description.
    private static func describe(format: Int32, handle: OpaquePointer) -> String {
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
