import EngineFixtures
import Testing
import ToneShaperALSA
import ToneShaperALSALive
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

@Suite("The ALSA front-end's sequencer events in the live core")
struct SequencerRoutingTests {
    /// Applies what was queued (one period) and returns the messages applied in it.
    private static func period(_ session: LiveSession, _ buffer: UnsafeMutablePointer<Float>) -> Set<MIDIMessage> {
        session.renderPeriod(into: buffer, frames: 128)
        var played: [TimedMIDIMessage] = []
        session.collectPlayedMIDI(into: &played)
        return Set(played.map(\.message))
    }

    @Test("a port that leaves releases its own notes and pedal; a client that exits, those of all its ports; others play on")
    func departures() {
        let session = LiveSession(engine: Fixtures.engine(program: 1), recordMIDI: true)
        let input = LiveInput(session: session)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 128)
        defer { buffer.deallocate() }
        let a0 = SequencerAddress(client: 20, port: 0), a1 = SequencerAddress(client: 20, port: 1)
        let a2 = SequencerAddress(client: 20, port: 2), b0 = SequencerAddress(client: 24, port: 0)
        input.receive(.message(.noteOn(channel: 0, note: 60, velocity: 100), from: a0))
        input.receive(.message(.noteOn(channel: 0, note: 61, velocity: 100), from: a1))
        input.receive(.message(.noteOn(channel: 1, note: 62, velocity: 100), from: a2))
        input.receive(.message(.controlChange(channel: 1, controller: 64, value: 127), from: a2))
        input.receive(.message(.noteOn(channel: 2, note: 64, velocity: 100), from: b0))
        #expect(Self.period(session, buffer).count == 5)
        #expect(session.engine.activeVoiceCount == 4)

        input.receive(.portGone(a2))
        #expect(Self.period(session, buffer) == [.noteOff(channel: 1, note: 62, velocity: 64),
                                                 .controlChange(channel: 1, controller: 64, value: 0)])
        input.receive(.clientGone(20))  // both ports still holding a note
        #expect(Self.period(session, buffer) == [.noteOff(channel: 0, note: 60, velocity: 64), .noteOff(channel: 0, note: 61, velocity: 64)])
        input.receive(.portGone(SequencerAddress(client: 24, port: 1)))  // held nothing
        #expect(Self.period(session, buffer).isEmpty)
        input.receive(.clientGone(24))
        #expect(Self.period(session, buffer) == [.noteOff(channel: 2, note: 64, velocity: 64)])
        #expect(SequencerAddress(client: 20, port: 1).sourceID == MIDISourceID(20 * 256 + 1))
    }
}
