import EngineFixtures
import Foundation
import Testing
import TestSupport
import ToneShaperCore
import ToneShaperInstrument
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

private let keyboard = MIDISourceID(20 << 8)

/// The left channel of interleaved stereo over a range of interleaved samples.
private func left(_ x: [Float], _ range: Range<Int>) -> [Float] {
    stride(from: range.lowerBound, to: range.upperBound, by: 2).map { x[$0] }
}

@Suite("The hand-off from the MIDI side to the audio thread")
struct LiveSessionTests {
    @Test("a source that goes away releases exactly the notes and pedal it holds; another keyboard's notes play on")
    func departedSourceReleasesItsOwnNotes() {
        let first = MIDISourceID(20 << 8), second = MIDISourceID(24 << 8)
        func play(_ departure: ((LiveInput) -> Void)?) -> (Periods, Engine) {
            let engine = Fixtures.engine(program: 1)
            let session = LiveSession(engine: engine, recordMIDI: true)
            let input = LiveInput(session: session)
            let periods = Periods(session)
            input.receive(.noteOn(channel: 0, note: 60, velocity: 110), from: first, at: session.framesRendered)
            input.receive(.noteOn(channel: 3, note: 67, velocity: 90), from: second, at: session.framesRendered)
            input.receive(.controlChange(channel: 0, controller: 64, value: 127), from: first, at: session.framesRendered)
            periods.run(40)
            input.receive(.noteOn(channel: 0, note: 72, velocity: 100), from: first, at: session.framesRendered)
            input.receive(.noteOff(channel: 0, note: 72, velocity: 64), from: first, at: session.framesRendered)  // held by the pedal
            periods.run(40)
            if let departure { departure(input) }
            periods.run(750)  // 2 s
            return (periods, engine)
        }
        let (held, heldEngine) = play(nil)
        let lastSecond = (held.output.count - 2 * 48_000)..<held.output.count
        #expect(Fixtures.peak(held.output, lastSecond) > 0.01)
        #expect(heldEngine.activeVoiceCount == 3)
        let unplugFrame = Int64(80 * 128)
        // The second keyboard's note by itself, measured the same way.
        let alone = Periods(LiveSession(engine: Fixtures.engine(program: 1)))
        LiveInput(session: alone.session).receive(.noteOn(channel: 3, note: 67, velocity: 90), from: second, at: 0)
        alone.run(830)
        let secondAlone = ZeroCrossings.frequency(left(alone.output, lastSecond), rate: 48_000) ?? -1
        #expect(abs((ZeroCrossings.frequency(left(held.output, lastSecond), rate: 48_000) ?? 0) - secondAlone) > 1)  // the chord is not that note

        let departures: [(LiveInput) -> Void] = [
            { $0.releaseAll(from: first, at: $0.session.framesRendered) },
            { $0.releaseAll(at: $0.session.framesRendered) { $0.rawValue >> 8 == 20 } },  // every port of ALSA client 20
        ]
        for departure in departures {
            let (gone, goneEngine) = play(departure)
            // Only the second keyboard's note is left, and it sounds as it did.
            #expect(goneEngine.activeVoiceCount == 1)
            let pitch = ZeroCrossings.frequency(left(gone.output, lastSecond), rate: 48_000) ?? 0
            #expect(abs(pitch / secondAlone - 1) < 0.002, "heard \(pitch) Hz, the second keyboard's note alone is \(secondAlone) Hz")
            // Identical until the departure, which lands at the start of the next period.
            #expect(Array(gone.output[0..<(2 * Int(unplugFrame))]) == Array(held.output[0..<(2 * Int(unplugFrame))]))

            // Recorded as the ordinary messages that end those notes, so the take re-renders the same.
            var played: [TimedMIDIMessage] = []
            gone.session.collectPlayedMIDI(into: &played)
            let release = Set(played.filter { $0.frame == unplugFrame }.map(\.message))
            // (72 was already let go and is held by the pedal: the pedal-up releases it.)
            #expect(release == [.controlChange(channel: 0, controller: 64, value: 0), .noteOff(channel: 0, note: 60, velocity: 64)])
        }

        // A source that held nothing leaves nothing to release; a note-off from anyone ends a note.
        let (other, otherEngine) = play { $0.releaseAll(from: MIDISourceID(30 << 8 | 1), at: $0.session.framesRendered) }
        #expect(otherEngine.activeVoiceCount == 3)
        #expect(other.output == held.output)
    }

    @Test("an event with no arrival time (no device clock yet) lands at the next period start")
    func liveStamping() {
        let session = LiveSession(engine: Fixtures.engine(), recordMIDI: true)
        let input = LiveInput(session: session)
        let periods = Periods(session, frames: 64)
        periods.run(3)
        #expect(session.framesRendered == 192)
        input.receive(.noteOn(channel: 0, note: 60, velocity: 100), from: keyboard, at: session.frame(arrivedAt: nil))
        periods.run(2)
        input.receive(.noteOff(channel: 0, note: 60, velocity: 64), from: keyboard, at: session.frame(arrivedAt: nil))
        periods.run(1)
        var played: [TimedMIDIMessage] = []
        session.collectPlayedMIDI(into: &played)
        #expect(played == [TimedMIDIMessage(frame: 192, message: .noteOn(channel: 0, note: 60, velocity: 100)),
                           TimedMIDIMessage(frame: 320, message: .noteOff(channel: 0, note: 60, velocity: 64))])
        #expect(session.lateEvents == 0)
        #expect(Fixtures.peak(periods.output, 0..<(2 * 192)) == 0)
        #expect(Fixtures.peak(periods.output, (2 * 192)..<(2 * 320)) > 0.01)
    }

    @Test("timed live events land at their own frame: arrival + buffer + one period, whatever the period grid", arguments: [128, 160, 256])
    func timedEvents(period: Int) {
        let rate = 48_000.0, buffer = 3 * period
        let session = LiveSession(engine: Fixtures.engine(), recordMIDI: true)
        session.eventLatency = buffer + period
        let input = LiveInput(session: session)
        let output = UnsafeMutablePointer<Float>.allocate(capacity: 2 * period)
        defer { output.deallocate() }
        // A device whose pointer moves in 4 ms timer ticks (as snd-aloop's does), and an audio thread
        // that wakes at those ticks once a period of room has opened, up to 0.3 ms late.
        var random = SplitMix64(seed: UInt64(period))
        let start: Int64 = 5_000_000_000, tick = 0.004
        let arrivals = (0..<200).map { start + Int64((1.5 + Double($0) * 0.010) * 1e9) }  // every 10 ms after 1.5 s
        var next = 0
        var frame = 0
        var played: [TimedMIDIMessage] = []
        while frame < Int(5 * rate) {
            // The write of the previous period returned at the first tick with room for this one.
            let needed = Double(frame + period - buffer) / rate
            let tickTime = (max(0, needed) / tick).rounded(.up) * tick
            let wake = start + Int64((tickTime + Double(random.next(below: 300)) * 1e-6) * 1e9)
            let playedAtTick = Int(tickTime * rate)
            while next < arrivals.count && arrivals[next] <= wake {
                let note = UInt8(40 + next % 40)
                input.receive(.noteOn(channel: 0, note: note, velocity: 100), from: keyboard, at: session.frame(arrivedAt: arrivals[next]))
                next += 1
            }
            session.observeDevice(delay: frame - min(frame, playedAtTick), at: start + Int64(tickTime * 1e9))
            session.renderPeriod(into: output, frames: period)
            session.collectPlayedMIDI(into: &played)
            frame += period
        }
        #expect(played.count == arrivals.count)
        #expect(session.lateEvents == 0)
        // Latency: the frame each note sounds at minus the frame the device played when it arrived.
        let latencies = zip(played, arrivals).map { Double($0.frame) - Double($1 - start) * 1e-9 * rate }
        let median = latencies.sorted()[latencies.count / 2]
        #expect(abs(median - Double(buffer + period)) <= 48, "median latency \(median) frames")
        let spread = latencies.map { abs($0 - median) }.max() ?? .infinity
        #expect(spread <= 4.8, "onsets wander \(spread) frames (0.1 ms = 4.8) around the median latency")
        // The notes are 10 ms apart in the output as they were on arrival (not snapped to periods).
        let gaps = zip(played.dropFirst(), played).map { $0.frame - $1.frame }
        #expect(gaps.allSatisfy { abs($0 - 480) <= 5 }, "gaps \(Set(gaps).sorted())")
    }

    @Test("an event whose frame has passed is applied at offset 0 of the current period and counted late")
    func lateEvents() {
        let session = LiveSession(engine: Fixtures.engine(), recordMIDI: true)
        let periods = Periods(session, frames: 100)
        periods.run(5)
        let input = LiveInput(session: session)
        input.enqueue(TimedInstrumentEvent(frame: 120, .message(.noteOn(channel: 0, note: 64, velocity: 80))))
        input.enqueue(TimedInstrumentEvent(frame: 530, .message(.noteOn(channel: 0, note: 67, velocity: 80))))
        input.enqueue(TimedInstrumentEvent(frame: 700, .message(.noteOff(channel: 0, note: 64, velocity: 80))))
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
                input.receive(message, from: keyboard, at: session.framesRendered)
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
        input.enqueue(TimedInstrumentEvent(frame: 0, .message(.noteOn(channel: 0, note: 69, velocity: 127))))
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
