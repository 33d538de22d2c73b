extension MIDIFile {
    /// Reads a Standard MIDI File (formats 0, 1 and 2; metrical or SMPTE division).
    ///
    /// Throws `MIDIFileError` for anything malformed. Every declared length is checked against
    /// the bytes actually present before it is used, so no input can trap or hang, and nothing
    /// is allocated from a declared length: memory follows the events actually read, 8 bytes
    /// each (an event takes at least 2 bytes of the file) plus the bytes of meta and sysex
    /// payloads, so at most about 4 times the size of the input. Chunks of unknown type are skipped;
    /// bytes after the last declared track, and after an End of Track event inside its chunk,
    /// are ignored. A track without End of Track simply ends at its last event.
    public static func parse(_ bytes: [UInt8]) throws -> MIDIFile {
        var cursor = ByteCursor(bytes)
        let header = try HeaderChunk.read(&cursor)
        var tracks: [Track] = []
        while tracks.count < header.trackCount {
            guard !cursor.isAtEnd else {
                throw MIDIFileError(
                    "file ends before track \(tracks.count + 1) of \(header.trackCount)", at: cursor.offset)
            }
            let chunk = try ChunkHeader.read(&cursor)
            if chunk.type == ChunkHeader.track {
                var parser = TrackParser(
                    cursor: ByteCursor(bytes, from: cursor.offset, to: cursor.offset + chunk.length),
                    number: tracks.count + 1)
                tracks.append(try parser.parse())
            }
            _ = cursor.skip(chunk.length)  // cannot fail: ChunkHeader.read checked the length
        }
        return MIDIFile(format: header.format, division: header.division, tracks: tracks)
    }
}

/// The 8 bytes that open every chunk: a 4-character type and a 32-bit big-endian length.
struct ChunkHeader {
    static let header: [UInt8] = Array("MThd".utf8)
    static let track: [UInt8] = Array("MTrk".utf8)

    let type: [UInt8]
    let length: Int

    /// Reads a chunk header and guarantees that `length` bytes follow it.
    static func read(_ cursor: inout ByteCursor) throws -> ChunkHeader {
        let start = cursor.offset
        guard cursor.remaining >= 8, let type = cursor.readBytes(4), let length = cursor.readBigEndian(width: 4) else {
            throw MIDIFileError("truncated chunk header (\(cursor.remaining) of 8 bytes)", at: start)
        }
        guard length <= cursor.remaining else {
            throw MIDIFileError(
                "chunk length \(length) exceeds file size (\(cursor.remaining) bytes left)", at: start + 4)
        }
        return ChunkHeader(type: type, length: length)
    }
}

/// The MThd chunk: format, number of tracks and division, validated.
struct HeaderChunk {
    let format: MIDIFile.Format
    let trackCount: Int
    let division: MIDIFile.Division

    static func read(_ cursor: inout ByteCursor) throws -> HeaderChunk {
        guard cursor.remaining >= 4, cursor.peekBytes(4) == ChunkHeader.header else {
            throw MIDIFileError("not a Standard MIDI File (no MThd header)", at: 0)
        }
        let chunk = try ChunkHeader.read(&cursor)
        let body = cursor.offset
        guard chunk.length >= 6 else {
            throw MIDIFileError("MThd length \(chunk.length) is shorter than 6", at: body - 4)
        }
        // The length was checked, so these three reads cannot fail.
        let rawFormat = cursor.readBigEndian(width: 2) ?? 0
        let trackCount = cursor.readBigEndian(width: 2) ?? 0
        let rawDivision = cursor.readBigEndian(width: 2) ?? 0
        _ = cursor.skip(chunk.length - 6)  // longer headers are allowed for future extensions

        guard let format = MIDIFile.Format(rawValue: rawFormat) else {
            throw MIDIFileError("unsupported MIDI file format \(rawFormat)", at: body)
        }
        // Reading rule: a format 0 file should hold exactly one track, but one with several (or
        // none) is read anyway and its tracks play together, as in format 1 (mido reads it so).
        let division = try Self.division(rawDivision, at: body + 4)
        return HeaderChunk(format: format, trackCount: trackCount, division: division)
    }

    private static func division(_ raw: Int, at offset: Int) throws -> MIDIFile.Division {
        guard raw & 0x8000 != 0 else {
            guard raw > 0 else { throw MIDIFileError("division of 0 ticks per quarter note", at: offset) }
            return .ticksPerQuarterNote(raw)
        }
        // The high byte is the frame rate as a negative two's-complement number.
        let framesPerSecond = -Int(Int8(truncatingIfNeeded: raw >> 8))
        let ticksPerFrame = raw & 0xFF
        guard [24, 25, 29, 30].contains(framesPerSecond) else {
            throw MIDIFileError("unsupported SMPTE frame rate \(framesPerSecond)", at: offset)
        }
        guard ticksPerFrame > 0 else {
            throw MIDIFileError("SMPTE division with 0 ticks per frame", at: offset + 1)
        }
        return .smpte(framesPerSecond: framesPerSecond, ticksPerFrame: ticksPerFrame)
    }
}

extension ByteCursor {
    /// The next `count` bytes without moving; nil when fewer are left.
    func peekBytes(_ count: Int) -> [UInt8]? {
        var copy = self
        return copy.readBytes(count)
    }
}
