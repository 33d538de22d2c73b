import CALSA
import Testing
import ToneShaperMIDI
@testable import ToneShaperALSA

/// Builds a sequencer event in memory, as snd_seq_event_input would hand it over, and decodes it.
/// Messages come from a keyboard at 20:0 unless a test says otherwise; we are 128:0.
private let keyboard = SequencerAddress(client: 20, port: 0)
private let us = SequencerAddress(client: 128, port: 0)

private func decode(_ type: snd_seq_event_type, channelFilter: UInt8? = nil,
                    _ fill: (inout snd_seq_event_t) -> Void = { _ in }) -> SequencerEvent? {
    var event = snd_seq_event_t()
    event.type = snd_seq_event_type_t(type.rawValue)
    event.source = snd_seq_addr_t(client: keyboard.client, port: keyboard.port)
    fill(&event)
    return withUnsafePointer(to: &event) { SequencerInput.decode($0, channelFilter: channelFilter, port: us) }
}

private func heard(_ message: MIDIMessage) -> SequencerEvent { .message(message, from: keyboard) }

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
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(3, 60, 100)) == heard(.noteOn(channel: 3, note: 60, velocity: 100)))
    }

    @Test("note-on with velocity 0 is a note-off (velocity 64, like the MIDI byte decoder)")
    func velocityZero() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(0, 61, 0)) == heard(.noteOff(channel: 0, note: 61, velocity: 64)))
        #expect(MIDIMessage(status: 0x90, data1: 61, data2: 0) == .noteOff(channel: 0, note: 61, velocity: 64))
    }

    @Test("note-off keeps its release velocity")
    func noteOff() {
        #expect(decode(SND_SEQ_EVENT_NOTEOFF, note(15, 127, 33)) == heard(.noteOff(channel: 15, note: 127, velocity: 33)))
    }

    @Test("controller: parameter is the CC number, value the CC value")
    func controller() {
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 74, 90))
                == heard(.controlChange(channel: 1, controller: 74, value: 90)))
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 64, 500))
                == heard(.controlChange(channel: 1, controller: 64, value: 127)))
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, control(1, param: 200, 1)) == nil)
    }

    @Test("program change")
    func programChange() {
        #expect(decode(SND_SEQ_EVENT_PGMCHANGE, control(9, 42)) == heard(.programChange(channel: 9, program: 42)))
    }

    @Test("pitch bend is already signed: -8192...8191, 0 centre; out-of-range values are clamped")
    func pitchBend() {
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, -8192)) == heard(.pitchBend(channel: 2, value: -8192)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 0)) == heard(.pitchBend(channel: 2, value: 0)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 8191)) == heard(.pitchBend(channel: 2, value: 8191)))
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, control(2, 100_000)) == heard(.pitchBend(channel: 2, value: 8191)))
    }

    @Test("channel pressure and polyphonic key pressure")
    func pressure() {
        #expect(decode(SND_SEQ_EVENT_CHANPRESS, control(4, 77)) == heard(.channelPressure(channel: 4, pressure: 77)))
        #expect(decode(SND_SEQ_EVENT_KEYPRESS, note(5, 64, 12)) == heard(.polyPressure(channel: 5, note: 64, pressure: 12)))
    }

    @Test("each message names the client:port that sent it")
    func source() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, { $0.source = snd_seq_addr_t(client: 24, port: 3); note(0, 60, 1)(&$0) })
                == .message(.noteOn(channel: 0, note: 60, velocity: 1), from: SequencerAddress(client: 24, port: 3)))
    }

    @Test("departures: a client exits, a port goes away, or a subscription to our port is removed; others' unsubscriptions and the announce port are not sources")
    func departures() {
        #expect(decode(SND_SEQ_EVENT_CLIENT_EXIT) { $0.data.addr = snd_seq_addr_t(client: 24, port: 0) } == .clientGone(24))
        #expect(decode(SND_SEQ_EVENT_PORT_EXIT) { $0.data.addr = snd_seq_addr_t(client: 24, port: 2) }
                == .portGone(SequencerAddress(client: 24, port: 2)))
        func unsubscribed(sender: SequencerAddress, dest: SequencerAddress) -> (inout snd_seq_event_t) -> Void {
            { $0.data.connect = snd_seq_connect_t(sender: snd_seq_addr_t(client: sender.client, port: sender.port),
                                                  dest: snd_seq_addr_t(client: dest.client, port: dest.port)) }
        }
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED, unsubscribed(sender: keyboard, dest: us)) == .portGone(keyboard))
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED, channelFilter: 7, unsubscribed(sender: keyboard, dest: us)) == .portGone(keyboard))
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED, unsubscribed(sender: keyboard, dest: SequencerAddress(client: 129, port: 0))) == nil)
        #expect(decode(SND_SEQ_EVENT_PORT_UNSUBSCRIBED, unsubscribed(sender: SequencerAddress(client: 0, port: 1), dest: us)) == nil)
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
        #expect(decode(SND_SEQ_EVENT_NOTEON, channelFilter: 3, note(3, 60, 100)) == heard(.noteOn(channel: 3, note: 60, velocity: 100)))
        #expect(decode(SND_SEQ_EVENT_NOTEON, channelFilter: 3, note(4, 60, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_CONTROLLER, channelFilter: 0, control(1, param: 7, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_PITCHBEND, channelFilter: 0, control(0, 5)) == heard(.pitchBend(channel: 0, value: 5)))
    }

    @Test("channels above 15 are not MIDI channels and are dropped")
    func wideChannels() {
        #expect(decode(SND_SEQ_EVENT_NOTEON, note(16, 60, 100)) == nil)
        #expect(decode(SND_SEQ_EVENT_PGMCHANGE, control(200, 1)) == nil)
    }
}
