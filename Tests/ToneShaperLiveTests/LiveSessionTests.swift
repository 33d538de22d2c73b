import Foundation
import Testing
import ToneShaperALSA
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

/// Drives a session period by period on the test thread, as the audio thread would.
private final class Periods {
    let session: LiveSession
    let frames: Int
    let buffer: UnsafeMutablePointer<Float>
    var output: [Float] = []

    init(_ session: LiveSession, frames: Int = 128) {
        self.session = session
        self.frames = frames
        buffer = .allocate(capacity: 2 * frames)
    }
    deinit { buffer.deallocate() }

    func run(_ count: Int) {
        for _ in 0..<count {
            session.renderPeriod(into: buffer, frames: frames)
            output.append(contentsOf: UnsafeBufferPointer(start: buffer, count: 2 * frames))
        }
    }
}

@Suite("The hand-off from the MIDI side to the audio thread")
struct LiveSessionTests {
    @Test("a source that goes away releases every held note, sustained ones too, and the output falls silent")
    func sourceGoneReleases() {
        func play(unplug: Bool) -> (Periods, Engine) {
            let engine = Fixtures.engine(program: 1)
            let session = LiveSession(engine: engine, recordMIDI: true)
            let input = LiveInput(session: session)
            let periods = Periods(session)
            input.receive(.message(.noteOn(channel: 0, note: 60, velocity: 110)))
            input.receive(.message(.noteOn(channel: 3, note: 67, velocity: 90)))
            input.receive(.message(.controlChange(channel: 0, controller: 64, value: 127)))
            periods.run(40)
            input.receive(.message(.noteOn(channel: 0, note: 72, velocity: 100)))
            input.receive(.message(.noteOff(channel: 0, note: 72, velocity: 64)))  // held by the pedal
            periods.run(40)
            if unplug { input.receive(.sourceGone) }
            periods.run(750)  // 2 s
            return (periods, engine)
        }
        let (held, heldEngine) = play(unplug: false)
        let (gone, goneEngine) = play(unplug: true)
        let lastSecond = (held.output.count - 2 * 48_000)..<held.output.count
        #expect(Fixtures.peak(held.output, lastSecond) > 0.01)
        #expect(heldEngine.activeVoiceCount == 3)
        #expect(gone.output[lastSecond].allSatisfy { $0 == 0 })
        #expect(goneEngine.activeVoiceCount == 0)
        // Identical until the unplug, which lands at the start of the next period.
        let unplugFrame = 80 * 128
        #expect(Array(gone.output[0..<(2 * unplugFrame)]) == Array(held.output[0..<(2 * unplugFrame)]))

        // Recorded as pedal up + All Notes Off on every channel, at the frame it was applied.
        var played: [TimedMIDIMessage] = []
        gone.session.collectPlayedMIDI(into: &played)
        let release = played.filter { $0.frame == Int64(unplugFrame) }
        #expect(release.count == 32)
        #expect(release.contains(TimedMIDIMessage(frame: Int64(unplugFrame), message: .controlChange(channel: 15, controller: 123, value: 0))))
    }

    @Test("live events are stamped with the audio thread's frame count and land at the next period start")
    func liveStamping() {
        let session = LiveSession(engine: Fixtures.engine(), recordMIDI: true)
        let input = LiveInput(session: session)
        let periods = Periods(session, frames: 64)
        periods.run(3)
        #expect(session.framesRendered == 192)
        input.receive(.message(.noteOn(channel: 0, note: 60, velocity: 100)))
        periods.run(2)
        input.receive(.message(.noteOff(channel: 0, note: 60, velocity: 64)))
        periods.run(1)
        var played: [TimedMIDIMessage] = []
        session.collectPlayedMIDI(into: &played)
        #expect(played == [TimedMIDIMessage(frame: 192, message: .noteOn(channel: 0, note: 60, velocity: 100)),
                           TimedMIDIMessage(frame: 320, message: .noteOff(channel: 0, note: 60, velocity: 64))])
        #expect(session.lateEvents == 0)
        #expect(Fixtures.peak(periods.output, 0..<(2 * 192)) == 0)
        #expect(Fixtures.peak(periods.output, (2 * 192)..<(2 * 320)) > 0.01)
    }

    @Test("an event whose frame has passed is applied at offset 0 of the current period and counted late")
    func lateEvents() {
        let session = LiveSession(engine: Fixtures.engine(), recordMIDI: true)
        let periods = Periods(session, frames: 100)
        periods.run(5)
        let input = LiveInput(session: session)
        input.enqueue(TimedEngineEvent(frame: 120, .midi(.noteOn(channel: 0, note: 64, velocity: 80))))
        input.enqueue(TimedEngineEvent(frame: 530, .midi(.noteOn(channel: 0, note: 67, velocity: 80))))
        input.enqueue(TimedEngineEvent(frame: 700, .midi(.noteOff(channel: 0, note: 64, velocity: 80))))
        periods.run(1)
        var played: [TimedMIDIMessage] = []
        session.collectPlayedMIDI(into: &played)
        #expect(played.map(\.frame) == [500, 530])
        #expect(session.lateEvents == 1)
        periods.run(2)
        session.collectPlayedMIDI(into: &played)
        #expect(played.map(\.frame) == [500, 530, 700])
    }

    @Test("--channel keeps one channel: the output equals an offline render of that channel's events alone")
    func channelFilter() {
        let engine = Fixtures.engine()
        let session = LiveSession(engine: engine)
        let input = LiveInput(session: session, channelFilter: 1)
        let periods = Periods(session)
        var expected: [TimedMIDIMessage] = []
        let script: [(period: Int, MIDIMessage)] = [
            (0, .noteOn(channel: 0, note: 60, velocity: 100)),
            (0, .noteOn(channel: 1, note: 64, velocity: 100)),
            (10, .controlChange(channel: 1, controller: 74, value: 20)),
            (12, .controlChange(channel: 0, controller: 7, value: 0)),
            (15, .noteOn(channel: 2, note: 67, velocity: 100)),
            (20, .pitchBend(channel: 1, value: 3000)),
            (30, .noteOff(channel: 1, note: 64, velocity: 64)),
            (31, .noteOff(channel: 0, note: 60, velocity: 64)),
        ]
        var next = 0
        for period in 0..<60 {
            while next < script.count && script[next].period == period {
                let message = script[next].1
                input.receive(.message(message))
                if message.channel == 1 { expected.append(TimedMIDIMessage(frame: Int64(period * 128), message: message)) }
                next += 1
            }
            periods.run(1)
        }
        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: 128).renderAll(expected, totalFrames: 60 * 128)
        #expect(periods.output == offline)
        #expect(Fixtures.peak(offline, 0..<offline.count) > 0.01)
        #expect(input.accepts(.noteOn(channel: 1, note: 1, velocity: 1)))
        #expect(!input.accepts(.noteOn(channel: 0, note: 1, velocity: 1)))
    }

    @Test("the file feeder leaves out what the input refuses: other channels, and program changes under --preset")
    func feederFilters() {
        let session = LiveSession(engine: Fixtures.engine())
        let input = LiveInput(session: session, channelFilter: 2, ignoresProgramChanges: true)
        let feeder = EventFeeder(messages: [
            TimedMIDIMessage(frame: 10, message: .noteOn(channel: 2, note: 60, velocity: 1)),
            TimedMIDIMessage(frame: 5, message: .programChange(channel: 2, program: 4)),
            TimedMIDIMessage(frame: 0, message: .noteOn(channel: 3, note: 60, velocity: 1)),
            TimedMIDIMessage(frame: 3, message: .controlChange(channel: 2, controller: 7, value: 1)),
        ], input: input)
        #expect(feeder.eventCount == 2)
        #expect(feeder.prime() == 2)
        #expect(feeder.isComplete)
        #expect(session.events.pop()?.frame == 3)
        #expect(session.events.pop()?.frame == 10)
    }

    @Test("a performance larger than the ring streams through it in order while the audio side drains it")
    func feederStreams() {
        let session = LiveSession(engine: Fixtures.engine(), eventCapacity: 16, recordMIDI: true)
        let input = LiveInput(session: session)
        var messages: [TimedMIDIMessage] = []
        for i in 0..<300 {
            let note = UInt8(40 + i % 40)
            messages.append(TimedMIDIMessage(frame: Int64(i * 80), message: .noteOn(channel: 0, note: note, velocity: 90)))
            messages.append(TimedMIDIMessage(frame: Int64(i * 80 + 40), message: .noteOff(channel: 0, note: note, velocity: 64)))
        }
        let feeder = EventFeeder(messages: messages, input: input)
        #expect(feeder.prime() == 16)
        feeder.start()
        let periods = Periods(session)
        var played: [TimedMIDIMessage] = []
        var rounds = 0
        while played.count < messages.count && rounds < 1_000_000 {
            periods.session.renderPeriod(into: periods.buffer, frames: 128)
            session.collectPlayedMIDI(into: &played)
            if session.events.availableToRead == 0 { usleep(100) }
            rounds += 1
        }
        feeder.stop()
        #expect(feeder.isComplete)
        #expect(played.map { $0.message } == messages.map { $0.message })
        // Never early: an event is applied at its frame, or later when the feeder was behind.
        #expect(zip(played, messages).allSatisfy { $0.frame >= $1.frame })
        #expect(session.notesPlayed == 300)
    }

    @Test("a performance ends at its end frame: the rest is silence and is not recorded")
    func endFrame() {
        let session = LiveSession(engine: Fixtures.engine(), endFrame: 300)
        let input = LiveInput(session: session)
        input.enqueue(TimedEngineEvent(frame: 0, .midi(.noteOn(channel: 0, note: 69, velocity: 127))))
        let periods = Periods(session)
        periods.run(2)
        #expect(!session.isFinished)
        periods.run(1)
        #expect(session.isFinished)
        #expect(Fixtures.peak(periods.output, (2 * 250)..<(2 * 300)) > 0)
        #expect(periods.output[(2 * 300)...].allSatisfy { $0 == 0 })
        let offline = OfflineRenderer(engine: Fixtures.engine(), blockFrames: 128)
            .renderAll([TimedMIDIMessage(frame: 0, message: .noteOn(channel: 0, note: 69, velocity: 127))], totalFrames: 300)
        #expect(Array(periods.output[0..<600]) == offline)
    }
}
