import Foundation
import Testing
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperLive
import ToneShaperMIDI

/// The playhead's data: the live socket tells the page, about 30 times a second, where each
/// sounding note is in its pass, for the page's own Play and for notes played on the instrument.
/// Part of the live stream's suite, whose tests run one at a time: each holds a socket open and
/// waits on it.
extension EditorLiveTests {

    @Test("Play: the page's note moves through its pass at the shape's pace, ~30 messages a second; after Stop it leaves")
    func pageNoteMovesAtTheShapesPace() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let socket = try await editor.openLive()
        _ = try await socket.receive()  // format
        var tone = Self.tone(330)
        tone["duration"] = 4.0
        tone["points"] = [[0, 330], [4, 330]]
        tone["release"] = 0.05
        try await socket.send(["type": "shape", "seq": 1, "shape": tone])
        try await socket.send(["type": "play", "on": true])
        var audio: [Float] = []
        _ = try await Self.collect(socket, into: &audio, samples: 48_000)
        // Each message's pass against the sound received since then: both count the same frames
        // (the server renders at most a few 512-frame chunks ahead of what it has sent).
        var marks: [(pass: Double, seconds: Double)] = []
        var received = 0
        for _ in 0..<2_000 where marks.count < 20 {
            switch try await socket.receive() {
            case .audio(let chunk): received += chunk.count
            case .text(let message):
                guard message["type"] as? String == "playhead", let voices = message["voices"] as? [[String: Any]],
                      let voice = voices.first else { continue }
                #expect(voices.count == 1)
                #expect(voice["source"] as? String == "page")
                #expect(voice["note"] as? Int == 69)
                #expect(voice["released"] as? Bool == false)
                marks.append((try #require(voice["pass"] as? Double), Double(received) / 48_000))
            }
        }
        #expect(marks.count == 20)
        let first = try #require(marks.first), last = try #require(marks.last)
        // 20 messages at ~33 ms: about 0.63 s of stream; the pass (of 4 s) moved as far.
        let moved = (last.pass - first.pass) * 4, heard = last.seconds - first.seconds
        #expect(heard > 0.45 && heard < 1.0, "\(heard) s between the first and the twentieth message")
        #expect(abs(moved - heard) < 0.05, "the playhead moved \(moved) s while \(heard) s of sound arrived")
        // Where the note is: one second and a bit of sound in (the server renders a few chunks ahead).
        #expect(first.pass * 4 > 0.95 && first.pass * 4 < 1.3, "\(first.pass * 4) s")

        try await socket.send(["type": "play", "on": false])
        var released = false, gone = false
        for _ in 0..<2_000 where !gone {
            if case .text(let message) = try await socket.receive(), message["type"] as? String == "playhead" {
                let voices = message["voices"] as? [[String: Any]] ?? []
                if voices.first?["released"] as? Bool == true { released = true }
                gone = voices.isEmpty
            }
        }
        #expect(released)
        #expect(gone)
    }

    @Test("a note played on the attached instrument (edit --connect) is told to the page with its place, and leaves")
    func keyboardNoteIsTold() async throws {
        let shape = Shape(name: "kb", points: [.init(time: 0, frequency: 440), .init(time: 2, frequency: 440)], duration: 2,
                          minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: 1000, attack: 0.005, release: 0.05)
        let session = LiveSession(engine: try ShapeExport.engine(for: shape, sampleRate: 48_000, voices: 4))
        let editor = try await RunningEditor(instrument: session)
        defer { editor.stop() }
        let socket = try await editor.openLive()
        _ = try await socket.receive()  // format
        _ = LiveInput(session: session).enqueue(TimedInstrumentEvent(frame: 0, .message(.noteOn(channel: 1, note: 57, velocity: 100))))
        // The instrument's audio thread: 300 periods of 128 frames (0.8 s of a 2 s, 96 000-frame pass).
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { buffer.deallocate() }
        for _ in 0..<300 { session.renderPeriod(into: buffer, frames: 128) }
        var voice: [String: Any]?
        for _ in 0..<200 where voice == nil {
            if case .text(let message) = try await socket.receive(), message["type"] as? String == "playhead" {
                voice = (message["voices"] as? [[String: Any]])?.first { $0["source"] as? String == "keyboard" }
            }
        }
        let told = try #require(voice)
        #expect(told["note"] as? Int == 57)
        #expect(told["channel"] as? Int == 1)
        #expect(abs((told["pass"] as? Double ?? -1) - 38_400.0 / 96_000) < 1e-9)

        _ = LiveInput(session: session).enqueue(TimedInstrumentEvent(frame: session.framesRendered, .message(.noteOff(channel: 1, note: 57, velocity: 0))))
        for _ in 0..<40 { session.renderPeriod(into: buffer, frames: 128) }  // past the 50 ms release
        var gone = false
        for _ in 0..<200 where !gone {
            if case .text(let message) = try await socket.receive(), message["type"] as? String == "playhead" {
                gone = !(message["voices"] as? [[String: Any]] ?? []).contains { $0["source"] as? String == "keyboard" }
            }
        }
        #expect(gone)
    }
}
