/// Decodes the events of one MTrk chunk: delta times, running status, meta and sysex events.
struct TrackParser {
    private var cursor: ByteCursor
    /// 1-based track number, used only in error messages.
    private let number: Int
    private var tick = 0
    /// The last channel status byte; meta and sysex events cancel it (SMF 1.0).
    private var runningStatus: UInt8?

    init(cursor: ByteCursor, number: Int) {
        self.cursor = cursor
        self.number = number
    }

    mutating func parse() throws -> MIDIFile.Track {
        var events: [MIDIFile.Event] = []
        while !cursor.isAtEnd {
            let delta = try readLength()
            let (sum, overflow) = tick.addingReportingOverflow(delta)
            guard !overflow else { throw error("tick count overflows in track \(number)") }
            tick = sum
            let kind = try readEvent()
            events.append(MIDIFile.Event(tick: tick, kind: kind))
            if kind == .endOfTrack { break }
        }
        return MIDIFile.Track(events: events)
    }

    // MARK: - Events

    private mutating func readEvent() throws -> MIDIFile.Event.Kind {
        guard let first = cursor.peekByte() else { throw truncated() }
        if first < 0x80 {
            guard let status = runningStatus else {
                throw error("data byte \(hex(first)) without running status in track \(number)")
            }
            return try readChannelMessage(status: status)
        }
        let statusOffset = cursor.offset
        _ = cursor.readByte()
        switch first {
        case 0xFF:
            runningStatus = nil
            return try readMeta()
        case 0xF0:
            runningStatus = nil
            return .sysex(data: try readPayload(of: "sysex event"))
        case 0xF7:
            runningStatus = nil
            return .sysexEscape(data: try readPayload(of: "sysex escape event"))
        case 0x80..<0xF0:
            runningStatus = first
            return try readChannelMessage(status: first)
        default:
            throw MIDIFileError("unexpected status byte \(hex(first)) in track \(number)", at: statusOffset)
        }
    }

    private mutating func readChannelMessage(status: UInt8) throws -> MIDIFile.Event.Kind {
        let count = MIDIMessage.dataLength(status: status) ?? 0
        var data: [UInt8] = [0, 0]
        for index in 0..<count {
            guard let byte = cursor.peekByte() else { throw truncated() }
            guard byte < 0x80 else {
                throw error("expected a data byte after status \(hex(status)), found \(hex(byte)) in track \(number)")
            }
            _ = cursor.readByte()
            data[index] = byte
        }
        guard let message = MIDIMessage(status: status, data1: data[0], data2: data[1]) else {
            throw error("invalid channel message \(hex(status)) in track \(number)")
        }
        return .channel(message)
    }

    private mutating func readMeta() throws -> MIDIFile.Event.Kind {
        let typeOffset = cursor.offset
        guard let type = cursor.readByte() else { throw truncated() }
        let data = try readPayload(of: "meta event")
        switch type {
        case 0x2F:
            return .endOfTrack
        case 0x51:
            guard data.count == 3 else {
                throw MIDIFileError(
                    "tempo event of length \(data.count) (expected 3) in track \(number)", at: typeOffset)
            }
            let tempo = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
            guard tempo > 0 else {
                throw MIDIFileError("tempo of 0 microseconds per quarter note in track \(number)", at: typeOffset)
            }
            return .tempo(microsecondsPerQuarter: tempo)
        default:
            return .meta(type: type, data: data)
        }
    }

    /// A length-prefixed payload (meta, sysex), its length checked against the chunk first.
    private mutating func readPayload(of what: String) throws -> [UInt8] {
        let lengthOffset = cursor.offset
        let length = try readLength()
        guard let data = cursor.readBytes(length) else {
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
