import CALSA
import ToneShaperMIDI

/// What the sequencer input hands the instrument.
public enum SequencerEvent: Equatable, Sendable {
    case message(MIDIMessage)
    /// A source disconnected or its client exited: release every held note so nothing sticks.
    case sourceGone
}

extension SequencerInput {
    /// Turns one ALSA sequencer event into what the instrument needs, or nil for events it ignores.
    ///
    /// Note-on with velocity 0 is a note-off (velocity 64, as `MIDIMessage(status:data1:data2:)`
    /// decodes it). Pitch bend arrives already signed (-8192...8191). Messages on channels other
    /// than `channelFilter` (0-based) are dropped; `sourceGone` always passes.
    public static func decode(_ event: UnsafePointer<snd_seq_event_t>, channelFilter: UInt8?) -> SequencerEvent? {
        let type = UInt32(event.pointee.type)
        let message: MIDIMessage
        switch type {
        case SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue, SND_SEQ_EVENT_CLIENT_EXIT.rawValue:
            return .sourceGone
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
        return .message(message)
    }

    /// A MIDI data byte from ALSA's wider int, clamped so a misbehaving client cannot trap us.
    private static func dataByte(_ value: Int32) -> UInt8 {
        UInt8(min(max(value, 0), 127))
    }
}
