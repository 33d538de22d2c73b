import Testing
import ToneShaperMIDI

@Suite("The stdin event script")
struct EventScriptTests {
    @Test("the documented example reads as the messages it names, at frames of the given rate")
    func documentedExample() throws {
        let script = try EventScript.parse("""
            # seconds  event  arguments
            0.5 on 60 100
            1.0 off 60
            1.2 cc 74 30
            1.5 bend 4096
            2.0 program 3
            2.2 pressure 90
            2.5 on 64 90 ch=2   # second channel
            2.75 ch=16 bend -8192
            3 on 67
            """)
        #expect(script.timedMessages(sampleRate: 48_000) == [
            TimedMIDIMessage(frame: 24_000, message: .noteOn(channel: 0, note: 60, velocity: 100)),
            TimedMIDIMessage(frame: 48_000, message: .noteOff(channel: 0, note: 60, velocity: 64)),
            TimedMIDIMessage(frame: 57_600, message: .controlChange(channel: 0, controller: 74, value: 30)),
            TimedMIDIMessage(frame: 72_000, message: .pitchBend(channel: 0, value: 4096)),
            TimedMIDIMessage(frame: 96_000, message: .programChange(channel: 0, program: 3)),
            TimedMIDIMessage(frame: 105_600, message: .channelPressure(channel: 0, pressure: 90)),
            TimedMIDIMessage(frame: 120_000, message: .noteOn(channel: 1, note: 64, velocity: 90)),
            TimedMIDIMessage(frame: 132_000, message: .pitchBend(channel: 15, value: -8192)),
            TimedMIDIMessage(frame: 144_000, message: .noteOn(channel: 0, note: 67, velocity: 100)),
        ])
        #expect(script.durationSeconds == 3)
    }

    @Test("a script written with CRLF line ends reads as the same events")
    func crlf() throws {
        let unix = "0.5 on 60 100\n1.0 off 60\n1.2 cc 74 30 ch=2\n"
        let windows = unix.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try EventScript.parse(windows, source: "crlf").timedMessages(sampleRate: 48_000)
                == EventScript.parse(unix, source: "lf").timedMessages(sampleRate: 48_000))
        #expect(try EventScript.parse(windows, source: "crlf").timedMessages(sampleRate: 48_000).count == 3)
    }

    @Test("events are put in time order; equal times keep the order they were written in")
    func sorted() throws {
        let script = try EventScript.parse("1 off 60\n0.5 on 60\n1 on 62\n")
        #expect(script.events.map(\.message) == [.noteOn(channel: 0, note: 60, velocity: 100),
                                                 .noteOff(channel: 0, note: 60, velocity: 64),
                                                 .noteOn(channel: 0, note: 62, velocity: 100)])
    }

    @Test("a bad line is refused with its line number and what is wrong", arguments: [
        ("0.5 on 60\n1.0 of 60", "stdin:2: unknown event 'of' (expected on, off, cc, bend, program or pressure)"),
        ("x on 60", "stdin:1: time 'x' is not a number of seconds"),
        ("inf on 60", "stdin:1: time 'inf' is not a number of seconds"),
        ("-1 on 60", "stdin:1: time '-1' is before the start (times are seconds from 0)"),
        // Refused, and the line says why: not a bad number, a time beyond any performance.
        ("1e7 on 60", "stdin:1: time '1e7' is too late: a script's times must be below 10000000 seconds (about 16 weeks)"),
        ("\n\n0 on 128", "stdin:3: a note '128' is not 0...127"),
        ("0 cc 7", "stdin:1: 'cc' needs a value (0...127)"),
        ("0 bend 9000", "stdin:1: a bend '9000' is not -8192...8191"),
        ("0 on 60 100 ch=17", "stdin:1: channel '17' is not 1...16"),
        ("0 program 3 4", "stdin:1: unexpected '4' after 'program'"),
        ("0.5", "stdin:1: expected an event after the time (on, off, cc, bend, program, pressure)"),
    ])
    func errors(text: String, message: String) {
        #expect(throws: EventScriptError.self) { try EventScript.parse(text) }
        do {
            _ = try EventScript.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    /// Inputs Tests/Fuzz/run.sh found trapping the reader, minimised, kept as they were found.
    @Test("a line holding only a channel is refused in one line, not a trap (found by the fuzzer)", arguments: [
        ([0x63, 0x68, 0x3D, 0x31] as [UInt8], "stdin:1: 'ch=1' needs a time and an event on its line"),
        (Array("0 on 60\n\tCH=16  # channel only\n".utf8), "stdin:2: 'CH=16' needs a time and an event on its line"),
    ])
    func channelAlone(bytes: [UInt8], message: String) {
        #expect(throws: EventScriptError.self) { try EventScript.parse(String(decoding: bytes, as: UTF8.self)) }
        do {
            _ = try EventScript.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            #expect(error.description == message)
        }
    }
}
