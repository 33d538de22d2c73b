import CALSA
import ToneShaperMIDI

/// A sequencer client and port ("128:0" in `aconnect -l`): where a message came from.
public struct SequencerAddress: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    public var client: UInt8
    public var port: UInt8
    public init(client: UInt8, port: UInt8) { self.client = client; self.port = port }
    public var description: String { "\(client):\(port)" }
}

/// What the sequencer input hands the instrument.
public enum SequencerEvent: Equatable, Sendable {
    /// A MIDI message and the client:port that sent it (so its notes can be released if it leaves).
    case message(MIDIMessage, from: SequencerAddress)
    /// A client exited (System:Announce): every note it still holds must stop.
    case clientGone(UInt8)
    /// One port went away or stopped sending to us (port exit, or its subscription to our port was removed).
    case portGone(SequencerAddress)
}

extension SequencerInput {
    /// Turns one ALSA sequencer event into what the instrument needs, or nil for events it ignores.
    ///
    /// Note-on with velocity 0 is a note-off (velocity 64, as `MIDIMessage(status:data1:data2:)`
    /// decodes it). Pitch bend arrives already signed (-8192...8191). Messages on channels other
    /// than `channelFilter` (0-based) are dropped; departures always pass. `port` is our own
    /// address: an unsubscription names a source only when it was a subscription to us, and the
    /// System:Announce subscription itself is not a source.
    public static func decode(_ event: UnsafePointer<snd_seq_event_t>, channelFilter: UInt8?,
                              port: SequencerAddress? = nil) -> SequencerEvent? {
        let type = UInt32(event.pointee.type)
        let source = SequencerAddress(client: event.pointee.source.client, port: event.pointee.source.port)
        let message: MIDIMessage
        switch type {
        case SND_SEQ_EVENT_CLIENT_EXIT.rawValue:
            return .clientGone(event.pointee.data.addr.client)
        case SND_SEQ_EVENT_PORT_EXIT.rawValue:
            let gone = event.pointee.data.addr
            return .portGone(SequencerAddress(client: gone.client, port: gone.port))
        case SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue:
            let connection = event.pointee.data.connect
            let sender = SequencerAddress(client: connection.sender.client, port: connection.sender.port)
            if let port, connection.dest.client != port.client || connection.dest.port != port.port { return nil }
            if sender == SequencerInput.announceAddress { return nil }
            return .portGone(sender)
        case SND_SEQ_EVENT_NOTEON.rawValue, SND_SEQ_EVENT_NOTEOFF.rawValue, SND_SEQ_EVENT_KEYPRESS.rawValue:
            let note = event.pointee.data.note
            guard note.channel < 16, note.note < 128 else { return nil }
            let velocity = min(note.velocity, 127)
            if type == SND_SEQ_EVENT_KEYPRESS.rawValue {
                message = .polyPressure(channel: note.channel, note: note.note, pressure: velocity)
            } else if type == SND_SEQ_EVENT_NOTEON.rawValue && velocity > 0 {
                message = .noteOn(channel: note.channel, note: note.note, velocity: velocity)
            } else {
                message = .noteOff(channel: note.channel, note: note.note,
                                   velocity: type == SND_SEQ_EVENT_NOTEOFF.rawValue ? velocity : 64)
            }
        case SND_SEQ_EVENT_CONTROLLER.rawValue:
            let control = event.pointee.data.control
            guard control.channel < 16, control.param < 128 else { return nil }
            message = .controlChange(channel: control.channel, controller: UInt8(control.param),
                                     value: dataByte(control.value))
        case SND_SEQ_EVENT_PGMCHANGE.rawValue:
            let control = event.pointee.data.control
            guard control.channel < 16 else { return nil }
            message = .programChange(channel: control.channel, program: dataByte(control.value))
        case SND_SEQ_EVENT_CHANPRESS.rawValue:
            let control = event.pointee.data.control
            guard control.channel < 16 else { return nil }
            message = .channelPressure(channel: control.channel, pressure: dataByte(control.value))
        case SND_SEQ_EVENT_PITCHBEND.rawValue:
            let control = event.pointee.data.control
            guard control.channel < 16 else { return nil }
            message = .pitchBend(channel: control.channel, value: Int16(min(max(control.value, -8192), 8191)))
        default:
            return nil
        }
        if let channelFilter, message.channel != channelFilter { return nil }
        return .message(message, from: source)
    }

    /// System:Announce (0:1), where the kernel tells every subscriber about clients and ports coming and going.
    static let announceAddress = SequencerAddress(client: UInt8(SND_SEQ_CLIENT_SYSTEM), port: UInt8(SND_SEQ_PORT_SYSTEM_ANNOUNCE))

    /// A MIDI data byte from ALSA's wider int, clamped so a misbehaving client cannot trap us.
    private static func dataByte(_ value: Int32) -> UInt8 {
        UInt8(min(max(value, 0), 127))
    }
}
