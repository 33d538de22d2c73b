/// A channel-voice MIDI message, already decoded.
///
/// One value type shared by every source (ALSA sequencer, Standard MIDI File, tests), so the
/// engine sees the same thing whether a performance is live or re-rendered offline.
/// Channels are 0-based (0...15); data bytes are 0...127.
public enum MIDIMessage: Equatable, Hashable, Sendable, BitwiseCopyable {
    case noteOn(channel: UInt8, note: UInt8, velocity: UInt8)
    case noteOff(channel: UInt8, note: UInt8, velocity: UInt8)
    case controlChange(channel: UInt8, controller: UInt8, value: UInt8)
    case programChange(channel: UInt8, program: UInt8)
    /// Signed 14-bit bend, -8192...8191, 0 is centre.
    case pitchBend(channel: UInt8, value: Int16)
    case channelPressure(channel: UInt8, pressure: UInt8)
    case polyPressure(channel: UInt8, note: UInt8, pressure: UInt8)

    public var channel: UInt8 {
        switch self {
        case .noteOn(let c, _, _), .noteOff(let c, _, _), .controlChange(let c, _, _),
             .programChange(let c, _), .pitchBend(let c, _), .channelPressure(let c, _),
             .polyPressure(let c, _, _):
            return c
        }
    }

    /// Decodes a channel-voice message from its status and data bytes (running status already
    /// resolved by the caller). Returns nil for system messages and out-of-range bytes.
    public init?(status: UInt8, data1: UInt8, data2: UInt8) {
        guard status >= 0x80, status < 0xF0, data1 < 0x80, data2 < 0x80 else { return nil }
        let channel = status & 0x0F
        switch status & 0xF0 {
        case 0x80: self = .noteOff(channel: channel, note: data1, velocity: data2)
        case 0x90:
            // Note-on with velocity 0 is a note-off (MIDI 1.0 spec), so running status can be kept.
            self = data2 == 0 ? .noteOff(channel: channel, note: data1, velocity: 64)
                              : .noteOn(channel: channel, note: data1, velocity: data2)
        case 0xA0: self = .polyPressure(channel: channel, note: data1, pressure: data2)
        case 0xB0: self = .controlChange(channel: channel, controller: data1, value: data2)
        case 0xC0: self = .programChange(channel: channel, program: data1)
        case 0xD0: self = .channelPressure(channel: channel, pressure: data1)
        case 0xE0: self = .pitchBend(channel: channel, value: Int16(Int(data2) << 7 | Int(data1)) - 8192)
        default: return nil
        }
    }

    /// Number of data bytes that follow a status byte of this kind (1 or 2); nil for non channel-voice.
    public static func dataLength(status: UInt8) -> Int? {
        switch status & 0xF0 {
        case 0x80, 0x90, 0xA0, 0xB0, 0xE0: return 2
        case 0xC0, 0xD0: return 1
        default: return nil
        }
    }

    /// The wire bytes (status first), for writing Standard MIDI Files.
    public var bytes: [UInt8] {
        switch self {
        case .noteOn(let c, let n, let v): return [0x90 | c, n, v]
        case .noteOff(let c, let n, let v): return [0x80 | c, n, v]
        case .controlChange(let c, let cc, let v): return [0xB0 | c, cc, v]
        case .programChange(let c, let p): return [0xC0 | c, p]
        case .pitchBend(let c, let v):
            let u = Int(v) + 8192
            return [0xE0 | c, UInt8(u & 0x7F), UInt8((u >> 7) & 0x7F)]
        case .channelPressure(let c, let p): return [0xD0 | c, p]
        case .polyPressure(let c, let n, let p): return [0xA0 | c, n, p]
        }
    }
}

/// A MIDI message stamped with the sample frame at which it takes effect.
///
/// Frames, not seconds: sample-accurate and exact, so offline and live renders agree bit for bit.
public struct TimedMIDIMessage: Equatable, Sendable, BitwiseCopyable {
    public var frame: Int64
    public var message: MIDIMessage
    public init(frame: Int64, message: MIDIMessage) {
        self.frame = frame
        self.message = message
    }
}

extension Array where Element == TimedMIDIMessage {
    /// In frame order, equal frames keeping their order: the array itself when it already is
    /// (a file's messages always are; no copy of millions of events), else a stable sort.
    public func inFrameOrder() -> [TimedMIDIMessage] {
        var previous = Int64.min
        for m in self {
            if m.frame < previous {
                return enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
            }
            previous = m.frame
        }
        return self
    }
}
