/// Decodes the events of one MTrk chunk: delta times, running status, meta and sysex events.
struct TrackParser {
    private var cursor: ByteCursor
    /// 1-based track number, used only in error messages.
    private let number: Int
    /// The last channel status byte of this track, for running status.
    ///
    /// Reading rule: meta (FF), sysex (F0) and escape (F7) events leave it as it is, so a data
    /// byte after one of them continues the channel message before it. SMF 1.0 says those events
    /// cancel running status, so a file written to the letter never has a data byte there; real
    /// writers do it anyway (Debian freedink-data's 104.mid puts `3D 64` right after an empty text
    /// event inside a run of 0x92 notes) and mido reads such files this way (it keeps running
    /// status across meta events). Refusing the whole file, as this reader did, plays nothing;
    /// taking the data byte as a meta or sysex status (what FluidSynth does) misreads it. Each
    /// track starts without running status.
    private var runningStatus: UInt8?
    private var track = MIDIFile.Track()

    init(cursor: ByteCursor, number: Int) {
        self.cursor = cursor
        self.number = number
    }

    /// The track's events up to its End of Track, or to the chunk's end when it has none.
    ///
    /// Reading rule: an End of Track before the chunk's end ends the track and the bytes after it
    /// are not read (SMF 1.0; FluidSynth skips them too, mido reads on), so a corrupt tail cannot
    /// refuse the file. Notes it leaves on are closed by `timedMessages` at the end of the performance.
    ///
    /// Storage grows as events are read (never reserved from a length in the file): a track's
    /// memory follows the events really present.
    mutating func parse() throws -> MIDIFile.Track {
        while !cursor.isAtEnd {
            // A delta time is at most 0x0FFFFFFF (4 bytes of 7 bits), so it fits a UInt32.
            let delta = UInt32(try readLength())
            if try readEvent(delta: delta) == .endOfTrack { break }
        }
        return track
    }

    // MARK: - Events

    private enum Read { case event, endOfTrack }

    private mutating func readEvent(delta: UInt32) throws -> Read {
        guard let first = cursor.peekByte() else { throw truncated() }
        if first < 0x80 {
            guard let status = runningStatus else {
                throw error("data byte \(hex(first)) without running status in track \(number)")
            }
            try readChannelMessage(delta: delta, status: status)
            return .event
        }
        let statusOffset = cursor.offset
        _ = cursor.readByte()
        switch first {
        case 0xFF:
            return try readMeta(delta: delta)
        case 0xF0:
            track.appendPayload(delta: delta, tag: PackedEvent.sysexTag, type: 0, try readPayload(of: "sysex event"))
        case 0xF7:
            track.appendPayload(delta: delta, tag: PackedEvent.escapeTag, type: 0, try readPayload(of: "sysex escape event"))
        case 0x80..<0xF0:
            runningStatus = first
            try readChannelMessage(delta: delta, status: first)
        default:
            throw MIDIFileError("unexpected status byte \(hex(first)) in track \(number)", at: statusOffset)
        }
        return .event
    }

    private mutating func readChannelMessage(delta: UInt32, status: UInt8) throws {
        let count = MIDIMessage.dataLength(status: status) ?? 0
        var data: (UInt8, UInt8) = (0, 0)
        for index in 0..<count {
            guard let byte = cursor.peekByte() else { throw truncated() }
            guard byte < 0x80 else {
                throw error("expected a data byte after status \(hex(status)), found \(hex(byte)) in track \(number)")
            }
            _ = cursor.readByte()
            if index == 0 { data.0 = byte } else { data.1 = byte }
        }
        track.appendChannel(delta: delta, status: status, data1: data.0, data2: data.1)
    }

    private mutating func readMeta(delta: UInt32) throws -> Read {
        guard let type = cursor.readByte() else { throw truncated() }
        let data = try readPayload(of: "meta event")
        switch type {
        case 0x2F:
            track.appendEndOfTrack(delta: delta)
            return .endOfTrack
        case 0x51 where data.count >= 3:
            // Reading rule: a Set Tempo of more than 3 bytes is read from its first 3 and the rest
            // is ignored, as mido reads it (FluidSynth refuses the file). One of fewer than 3 bytes
            // has no tempo to read: it falls through and is kept as a raw meta event that changes
            // nothing (mido and FluidSynth refuse the file). A tempo of 0 is kept as read; the tempo
            // map ignores it (see `TickClock`).
            let tempo = Int(data[data.startIndex]) << 16 | Int(data[data.startIndex + 1]) << 8 | Int(data[data.startIndex + 2])
            track.appendTempo(delta: delta, microsecondsPerQuarter: tempo)
        default:
            track.appendPayload(delta: delta, tag: PackedEvent.metaTag, type: type, data)
        }
        return .event
    }

    /// A length-prefixed payload (meta, sysex), its length checked against the chunk first.
    private mutating func readPayload(of what: String) throws -> ArraySlice<UInt8> {
        let lengthOffset = cursor.offset
        let length = try readLength()
        guard let data = cursor.readSlice(length) else {
            throw MIDIFileError(
                "truncated track \(number): \(what) declares \(length) bytes, \(cursor.remaining) left",
                at: lengthOffset)
        }
        return data
    }

    private mutating func readLength() throws -> Int {
        let start = cursor.offset
        switch cursor.readVariableLengthQuantity() {
        case .value(let value): return value
        case .truncated: throw truncated()
        case .tooLong:
            throw MIDIFileError("variable-length quantity longer than 4 bytes in track \(number)", at: start)
        }
    }

    // MARK: - Errors

    private func truncated() -> MIDIFileError {
        MIDIFileError("truncated track \(number)", at: cursor.offset)
    }

    private func error(_ message: String) -> MIDIFileError {
        MIDIFileError(message, at: cursor.offset)
    }
}

/// "0x9F": how status and data bytes are named in error messages.
func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}
