import Foundation
import Testing
import ToneShaperCore

/// Continuous play in the browser: the WebSocket stream is the engine's sound, paced to real
/// time, and an edit is heard within the promised 100 ms, without a click.
@Suite("The editor's live stream", .serialized)
struct EditorLiveTests {
    static func tone(_ f: Double, name: String = "live") -> [String: Any] {
        let s = Shape(name: name, points: [.init(time: 0, frequency: f), .init(time: 1, frequency: f)], duration: 1,
                      minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: 1000, attack: 0.005)
        return (try? JSONSerialization.jsonObject(with: ShapeFile.encode(s))) as? [String: Any] ?? [:]
    }

    /// Collects audio until `samples` more have arrived; the text messages met on the way are returned too.
    static func collect(_ socket: TestWebSocket, into audio: inout [Float], samples: Int) async throws -> [[String: Any]] {
        var texts: [[String: Any]] = []
        let target = audio.count + samples
        while audio.count < target {
            switch try await socket.receive() {
            case .audio(let chunk): audio += chunk
            case .text(let t): texts.append(t)
            }
        }
        return texts
    }

    @Test("play streams the shape at its frequency, paced to real time; an edit lands within 100 ms with no click")
    func editWhilePlaying() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let socket = try await editor.openLive()
        guard case .text(let format) = try await socket.receive() else { throw EditorTestError("no format message") }
        #expect(format["type"] as? String == "format")
        let rate = try #require(format["sampleRate"] as? Double)
        let chunk = try #require(format["framesPerChunk"] as? Int)

        try await socket.send(["type": "shape", "seq": 1, "shape": Self.tone(330)])
        try await socket.send(["type": "note", "note": 69])
        let started = ContinuousClock.now
        try await socket.send(["type": "play", "on": true])
        var audio: [Float] = []
        let texts = try await Self.collect(socket, into: &audio, samples: Int(0.5 * rate))
        let elapsed = ContinuousClock.now - started
        #expect(texts.contains { $0["type"] as? String == "applied" && $0["seq"] as? Int == 1 })
        // Real-time pacing: half a second of sound cannot arrive much sooner than half a second
        // (the server renders a few chunks ahead, no more).
        #expect(elapsed >= .seconds(0.5 - Double(4 * chunk) / rate), "\(elapsed)")
        let before = try #require(Measure.frequency(audio, rate: rate, in: (audio.count - 9_600)..<audio.count))
        #expect(abs(before - 330) < 0.5, "\(before) Hz")

        // The edit, timed in the stream rather than on this process's clock: replies and audio
        // share the socket in order, so where the "applied" reply sits is what the server had sent
        // when it took the edit. The new frequency must start within 100 ms of stream after that
        // (a test process starved by its neighbours reads stale audio late, but in the same order).
        let edgeAtSend = audio.count
        try await socket.send(["type": "shape", "seq": 2, "shape": Self.tone(495)])
        var appliedAt: Int?
        while appliedAt == nil, audio.count < edgeAtSend + Int(20 * rate) {
            switch try await socket.receive() {
            case .audio(let chunk): audio += chunk
            case .text(let t): if t["type"] as? String == "applied", t["seq"] as? Int == 2 { appliedAt = audio.count }
            }
        }
        let edgeAtEdit = try #require(appliedAt, "no \"applied\" for seq 2 within 20 s of stream")
        _ = try await Self.collect(socket, into: &audio, samples: Int(0.4 * rate))
        let onset = try #require(Measure.onset(of: 495, audio, rate: rate, in: edgeAtSend..<audio.count))
        #expect(Double(onset - edgeAtEdit) / rate < 0.1, "heard \(Double(onset - edgeAtEdit) / rate) s after the edit was applied")
        let after = try #require(Measure.frequency(audio, rate: rate, in: (audio.count - 9_600)..<audio.count))
        #expect(abs(after - 495) < 0.5)
        // No click: no step between samples larger than the 495 Hz sine's own steepest.
        var steepest: Float = 0, largest: Float = 0
        for i in (audio.count - 9_600)..<audio.count { steepest = max(steepest, abs(audio[i] - audio[i - 1])) }
        for i in (edgeAtSend + 1)..<(edgeAtEdit + Int(0.15 * rate)) { largest = max(largest, abs(audio[i] - audio[i - 1])) }
        #expect(largest <= steepest * 1.05, "step \(largest) around the edit, \(steepest) steady")
    }

    @Test("pages opening the live stream at the same moment (one per core, at least two) each get their own stream")
    func pagesOpenTogether() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let pages = max(2, ProcessInfo.processInfo.activeProcessorCount)
        let heard = try await withThrowingTaskGroup(of: (Double, Double?).self) { group in
            for page in 0..<pages {
                group.addTask {
                    let socket = try await editor.openLive()
                    guard case .text(let format) = try await socket.receive(), format["type"] as? String == "format" else {
                        throw EditorTestError("no format message")
                    }
                    let f = 220 + 55 * Double(page)
                    try await socket.send(["type": "shape", "seq": 1, "shape": Self.tone(f)])
                    try await socket.send(["type": "play", "on": true])
                    var audio: [Float] = []
                    _ = try await Self.collect(socket, into: &audio, samples: 9_600)
                    return (f, Measure.frequency(audio, rate: 48_000, in: (audio.count - 4_800)..<audio.count))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(heard.count == pages)
        for (played, measured) in heard {
            #expect(abs((measured ?? 0) - played) < 0.5, "a page playing \(played) Hz heard \(measured ?? 0) Hz")
        }
    }

    @Test("a shape with the most points a shape may have (4,096: some 150 KB of JSON in one WebSocket message) is applied")
    func largestShapeOverTheSocket() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let socket = try await editor.openLive()
        guard case .text = try await socket.receive() else { throw EditorTestError("no format message") }
        let n = Shape.maximumPoints
        let points = (0..<n).map { Shape.Point(time: Double($0) / Double(n - 1), frequency: 300 + 60 * sin(Double($0) * 0.01)) }
        let shape = Shape(name: "dense", points: points, duration: 1, minFrequency: 20, maxFrequency: 2000, amplitude: 0.5,
                          fidelity: 1000, attack: 0.005)
        let json = try #require(try JSONSerialization.jsonObject(with: ShapeFile.encode(shape)) as? [String: Any])
        let size = try JSONSerialization.data(withJSONObject: ["type": "shape", "seq": 7, "shape": json]).count
        #expect(size > 100_000, "\(size) bytes")
        try await socket.send(["type": "shape", "seq": 7, "shape": json])
        var applied = false
        for _ in 0..<50 where !applied {
            if case .text(let message) = try await socket.receive() {
                applied = message["type"] as? String == "applied" && message["seq"] as? Int == 7
            }
        }
        #expect(applied)
    }

    @Test("an invalid edit over the socket gets the loader's line and leaves the sound as it was")
    func invalidEditOverTheSocket() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let socket = try await editor.openLive()
        _ = try await socket.receive()
        try await socket.send(["type": "shape", "seq": 1, "shape": Self.tone(300)])
        try await socket.send(["type": "play", "on": true])
        var audio: [Float] = []
        _ = try await Self.collect(socket, into: &audio, samples: 9_600)
        var bad = Self.tone(300)
        bad["duration"] = -2
        try await socket.send(["type": "shape", "seq": 7, "shape": bad])
        let texts = try await Self.collect(socket, into: &audio, samples: 14_400)
        let error = try #require(texts.first { $0["type"] as? String == "error" })
        #expect(error["seq"] as? Int == 7)
        #expect(error["error"] as? String == "field 'duration' = -2.0: must be > 0")
        #expect(error["field"] as? String == "duration")
        let f = try #require(Measure.frequency(audio, rate: 48_000, in: (audio.count - 9_600)..<audio.count))
        #expect(abs(f - 300) < 0.5)
        try await socket.send(["type": "nonsense"])
        let reply = try await Self.collect(socket, into: &audio, samples: 1_024)
        #expect(reply.contains { ($0["error"] as? String)?.contains("unknown message type 'nonsense'") == true })
    }
}
