import CVorbis
import Glibc

/// Ogg Vorbis written through libvorbisenc and libogg themselves, for the one thing libsndfile's
/// Ogg writer does not offer: ending the current page on demand.
///
/// libogg closes a page at about 4 KB or 255 packets: in a quiet passage that is several seconds of
/// audio, all lost if the program is killed before the page is out. `endPage()`, called once a
/// second while recording, bounds that loss to a second. (libsndfile offers SFC_UPDATE_HEADER_NOW,
/// which on Ogg starts a new chained stream each time: a take readers give up on after its first.)
/// Each page is written whole by one `writev`, and every write is checked (libsndfile's Ogg writer
/// ignores failed page writes).
final class OggVorbisWriter {
    let path: String
    let channels: Int

    // The libvorbis and libogg states point into each other, so each lives at a fixed address.
    private let info = UnsafeMutablePointer<vorbis_info>.allocate(capacity: 1)
    private let comment = UnsafeMutablePointer<vorbis_comment>.allocate(capacity: 1)
    private let dsp = UnsafeMutablePointer<vorbis_dsp_state>.allocate(capacity: 1)
    private let block = UnsafeMutablePointer<vorbis_block>.allocate(capacity: 1)
    private let stream = UnsafeMutablePointer<ogg_stream_state>.allocate(capacity: 1)
    /// What is set up and must be cleared: 1 the info, 2 all the encoder's state.
    private var stage = 0
    private var fd: Int32 = -1
    private var ended = false

    /// Frames handed to libvorbis per call: its analysis buffer grows to the largest request.
    private static let slice = 1024

    /// Sets the encoder up: an impossible rate or channel count is refused here, before `create()`
    /// makes the file.
    init(path: String, sampleRate: Int, channels: Int, quality: Double) throws {
        self.path = path
        self.channels = channels
        vorbis_info_init(info)
        stage = 1
        guard vorbis_encode_init_vbr(info, channels, sampleRate, Float(quality)) == 0 else {
            throw AudioFileError.unsupportedFormat(path: path, format: AudioFileFormat.oggVorbis.description,
                                                   sampleRate: sampleRate, channels: channels)
        }
        vorbis_comment_init(comment)
        vorbis_comment_add_tag(comment, "ENCODER", "ToneShaper")
        guard vorbis_analysis_init(dsp, info) == 0, vorbis_block_init(dsp, block) == 0,
              ogg_stream_init(stream, Int32.random(in: .min ... .max)) == 0 else {
            throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder could not be set up")
        }
        stage = 2
    }

    /// Creates the file and writes the three header packets on pages of their own.
    func create() throws {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw AudioFileError.cannotOpen(path: path, reason: String(cString: strerror(errno))) }

        var header = ogg_packet(), commentPacket = ogg_packet(), codebooks = ogg_packet()
        guard vorbis_analysis_headerout(dsp, comment, &header, &commentPacket, &codebooks) == 0,
              ogg_stream_packetin(stream, &header) == 0, ogg_stream_packetin(stream, &commentPacket) == 0,
              ogg_stream_packetin(stream, &codebooks) == 0 else {
            throw AudioFileError.writeFailed(path: path, reason: "the Vorbis headers could not be made")
        }
        // The audio starts on a page of its own, as the Vorbis spec asks.
        try endPage()
    }

    deinit {
        if fd >= 0 { _ = Glibc.close(fd) }
        if stage == 2 {
            ogg_stream_clear(stream)
            vorbis_block_clear(block)
            vorbis_dsp_clear(dsp)
            vorbis_comment_clear(comment)
        }
        if stage >= 1 { vorbis_info_clear(info) }
        for pointer in [UnsafeMutableRawPointer(info), UnsafeMutableRawPointer(comment), UnsafeMutableRawPointer(dsp),
                        UnsafeMutableRawPointer(block), UnsafeMutableRawPointer(stream)] {
            pointer.deallocate()
        }
    }

    /// Encodes `frames` interleaved frames; pages are written as libogg completes them.
    func write(_ samples: UnsafePointer<Float>, frames: Int) throws {
        guard !ended, fd >= 0 else { throw AudioFileError.closed(path: path) }
        var done = 0
        while done < frames {
            let count = min(frames - done, Self.slice)
            guard let planes = vorbis_analysis_buffer(dsp, Int32(count)) else {
                throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder has no buffer")
            }
            for channel in 0..<channels {
                guard let plane = planes[channel] else {
                    throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder has no buffer")
                }
                let source = samples + done * channels + channel
                // NaN would spread over a whole transform block; beyond ±1 is clipped, as the PCM formats are.
                for i in 0..<count {
                    let x = source[i * channels]
                    plane[i] = x.isNaN ? 0 : Swift.min(1, Swift.max(-1, x))
                }
            }
            guard vorbis_analysis_wrote(dsp, Int32(count)) == 0 else {
                throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder refused \(count) frames")
            }
            try encodeReadyBlocks()
            done += count
        }
    }

    /// Writes out what is encoded so far as a page, however small: a file cut off afterwards still
    /// decodes up to here (less the encoder's look-ahead of one block, about 40 ms).
    func endPage() throws {
        var page = ogg_page()
        while ogg_stream_flush(stream, &page) != 0 { try write(page) }
    }

    /// Ends the stream (its last page carries the exact length and end-of-stream) and closes the file.
    /// Later calls do nothing.
    func finish() throws {
        guard !ended, fd >= 0 else { return }
        ended = true
        defer {
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
        guard vorbis_analysis_wrote(dsp, 0) == 0 else {
            throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder could not end the stream")
        }
        try encodeReadyBlocks()
        try endPage()
        let descriptor = fd
        fd = -1
        guard Glibc.close(descriptor) == 0 else {
            throw AudioFileError.closeFailed(path: path, reason: String(cString: strerror(errno)))
        }
    }

    private func encodeReadyBlocks() throws {
        var packet = ogg_packet()
        var page = ogg_page()
        while vorbis_analysis_blockout(dsp, block) == 1 {
            guard vorbis_analysis(block, nil) == 0, vorbis_bitrate_addblock(block) == 0 else {
                throw AudioFileError.writeFailed(path: path, reason: "the Vorbis encoder failed on a block")
            }
            while vorbis_bitrate_flushpacket(dsp, &packet) == 1 {
                guard ogg_stream_packetin(stream, &packet) == 0 else {
                    throw AudioFileError.writeFailed(path: path, reason: "libogg could not take a packet")
                }
                while ogg_stream_pageout(stream, &page) != 0 { try write(page) }
            }
        }
    }

    /// One page, header and body, in one system call where the kernel takes it all at once.
    private func write(_ page: ogg_page) throws {
        var parts = (iovec(iov_base: UnsafeMutableRawPointer(page.header), iov_len: page.header_len),
                     iovec(iov_base: UnsafeMutableRawPointer(page.body), iov_len: page.body_len))
        var remaining = page.header_len + page.body_len
        try withUnsafeMutableBytes(of: &parts) { raw in
            let vectors = raw.bindMemory(to: iovec.self)
            var first = 0
            while remaining > 0 {
                let written = writev(fd, vectors.baseAddress! + first, Int32(2 - first))
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else {
                    throw AudioFileError.writeFailed(path: path, reason: String(cString: strerror(written < 0 ? errno : ENOSPC)))
                }
                remaining -= written
                // A short write: step over what was taken.
                var taken = written
                while first < 2 && taken >= vectors[first].iov_len {
                    taken -= vectors[first].iov_len
                    first += 1
                }
                if first < 2 && taken > 0 {
                    vectors[first].iov_base = vectors[first].iov_base.map { $0 + taken }
                    vectors[first].iov_len -= taken
                }
            }
        }
    }
}
