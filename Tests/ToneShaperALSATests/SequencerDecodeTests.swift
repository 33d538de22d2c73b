import CALSA
import Testing
import ToneShaperMIDI
@testable import ToneShaperALSA

/// Builds a sequencer event in memory, as snd_seq_event_input would hand it over, and decodes it.
private func decode(_ type: snd_seq_event_type, channelFilter: UInt8? = nil,
                    _ fill: (inout snd_seq_event_t) -> Void = { _ in }) -> SequencerEvent? {
    var event = snd_seq_event_t()
    event.type = snd_seq_event_type_t(type.rawValue)
    fill(&event)
    return withUnsafePointer(to: &event) { SequencerInput.decode($0, channelFilter: channelFilter) }
}

private func note(_ channel: UInt8, _ note: UInt8, _ velocity: UInt8) -> (inout snd_seq_event_t) -> Void {
    { $0.data.note = snd_seq_ev_note_t(channel: channel, note: note, velocity: velocity, off_velocity: 0, duration: 0) }
}

private func control(_ channel: UInt8, param: UInt32 = 0, _ value: Int32) -> (inout snd_seq_event_t) -> Void {
    { $0.data.control = snd_seq_ev_ctrl_t(channel: channel, unused: (0, 0, 0), param: param, value: value) }
}

@Suite("Decoding ALSA sequencer events")
struct SequencerDecodeTests {
    @Test("note-on keeps channel, note and velocity")
    func noteOn() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(3, 60, 100)) == .message(.noteOn(channel: 3, note: 60, velocity: 100)))
    }

    @Test("note-on with velocity 0 is a note-off (velocity 64, like the MIDI byte decoder)")
    func velocityZero() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(0, 61, 0)) == .message(.noteOff(channel: 0, note: 61, velocity: 64)))
        #expect(MIDIMessage(status: 0x90, data1: 61, data2: 0) == .noteOff(channel: 0, note: 61, velocity: 64))
    }

    @Test("note-off keeps its release velocity")
    func noteOff() {
        #expect(decode(SND_SEQ_EVENT_NOTEOFF, note(15, 127, 33)) == .message(.noteOff(channel: 15, note: 127, velocity: 33)))
    }

    @Test("controller: parameter is the CC number, value the CC value")
    func controller() {
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 74, 90))
                == .message(.controlChange(channel: 1, controller: 74, value: 90)))
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 64, 500))
                == .message(.controlChange(channel: 1, controller: 64, value: 127)))
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 200, 1)) == nil)
    }

    @Test("program change")
    func programChange() {
        #expect(decode(SND_SEQ_EVENT_PGMCHANGE, control(9, 42)) == .message(.programChange(channel: 9, program: 42)))
    }

    @Test("pitch bend is already signed: -8192...8191, 0 centre; out-of-range values are clamped")
    func pitchBend() {
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, -8192)) == .message(.pitchBend(channel: 2, value: -8192)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 0)) == .message(.pitchBend(channel: 2, value: 0)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 8191)) == .message(.pitchBend(channel: 2, value: 8191)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 100_000)) == .message(.pitchBend(channel: 2, value: 8191)))
    }

    @Test("channel pressure and polyphonic key pressure")
    func pressure() {
        #expect(decode(SND_SEQ_EVENT_CHANPRESS, control(4, 77)) == .message(.channelPressure(channel: 4, pressure: 77)))
        #expect(decode(SND_SEQ_EVENT_KEYPRESS, note(5, 64, 12)) == .message(.polyPressure(channel: 5, note: 64, pressure: 12)))
    }

    @Test("a source unsubscribing or its client exiting means: release every held note")
    func sourceGone() {
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED) == .sourceGone)
        #expect(decode(SND_SEQ_EVENT_CLIENT_EXIT) == .sourceGone)
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED, channelFilter: 7) == .sourceGone)
    }

    @Test("events the instrument does not use decode to nil")
    func ignored() {
        #expect(decode(SND_SEQ_EVENT_CLOCK) == nil)
        #expect(decode(SND_SEQ_EVENT_SENSING) == nil)
        #expect(decode(SND_SEQ_EVENT_SYSEX) == nil)
        #expect(decode(SND_SEQ_EVENT_PORT_SUBSCRIBED) == nil)
        #expect(decode(SND_SEQ_EVENT_NOTE, note(0, 60, 100)) == nil)
    }

    @Test("the channel filter drops every other channel")
    func channelFilter() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, channelFilter: 3, note(3, 60, 100)) == .message(.noteOn(channel: 3, note: 60, velocity: 100)))
        #expect(decode(SND_SEQ_EVENT_NOTEON, channelFilter: 3, note(4, 60, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, channelFilter: 0, control(1, param: 7, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, channelFilter: 0, control(0, 5)) == .message(.pitchBend(channel: 0, value: 5)))
    }

    @Test("channels above 15 are not MIDI channels and are dropped")
    func wideChannels() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(16, 60, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_PGMCHANGE, control(200, 1)) == nil)
    }
}
