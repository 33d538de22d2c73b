import Foundation
import Testing
import ToneShaperCore

/// Segment kinds through the editor's server: it accepts exactly what a shape file accepts, and
/// the curve it returns for the page to draw is the one the engine plays.
@Suite("Segment kinds in the editor's API", .serialized)
struct EditorSegmentKindTests {
    /// A shape with the given points as the page sends it (a preset file's JSON).
    static func body(points: String, fidelity: Int = 1000) -> Data {
        Data(#"{"name": "kinds", "duration": 1, "minFrequency": 20, "maxFrequency": 2000, "fidelity": \#(fidelity), "points": [\#(points)]}"#.utf8)
    }

    /// The played polyline's frequency at time t (the first vertex at t when it steps there).
    static func frequency(at t: Double, _ played: [[Double]]) -> Double? {
        for i in 1..<played.count where played[i][0] >= t {
            let a = played[i - 1], b = played[i]
            return b[0] == a[0] ? a[1] : a[1] + (b[1] - a[1]) * (t - a[0]) / (b[0] - a[0])
        }
        return nil
    }

    @Test("a bad kind is refused by analyse, save, export and the live stream with the file loader's own line")
    func refusesABadKind() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let bad = Self.body(points: #"[0, 110], [0.5, 440, "expo"], [1, 220]"#)
        let expected = #"field 'points[1][2]' = "expo": must be "linear", "exponential" or "hold""#
        #expect(throws: ShapeError.self) { try ShapeFile.decode(bad) }
        do { _ = try ShapeFile.decode(bad) } catch { #expect(error.description == expected) }
        for path in ["/api/analyse", "/api/save", "/api/export"] {
            let (status, object) = try await editor.json("POST", path, body: bad)
            #expect(status == 422, "\(path)")
            #expect(object["error"] as? String == expected, "\(path)")
            #expect(object["field"] as? String == "points[1][2]", "\(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: editor.userLibrary.directory))  // nothing was saved

        let socket = try await editor.openLive()
        _ = try await socket.receive()
        let shape = try JSONSerialization.jsonObject(with: bad)
        try await socket.send(["type": "shape", "seq": 3, "shape": shape])
        var error: [String: Any]?
        for _ in 0..<50 where error == nil {
            if case .text(let t) = try await socket.receive(), t["type"] as? String == "error" { error = t }
        }
        #expect(error?["seq"] as? Int == 3)
        #expect(error?["error"] as? String == expected)
    }

    @Test("the kinds a file accepts are accepted, saved and reopened as written")
    func savesKinds() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let body = Self.body(points: #"[0, 110, "exponential"], [0.5, 880, "hold"], [0.75, 440, "linear"], [1, 220, "hold"]"#)
        #expect(try await editor.json("POST", "/api/save", body: body).status == 200)
        let reopened = try await editor.json("GET", "/api/shapes/kinds").object
        let shape = try ShapeFile.decode(JSONSerialization.data(withJSONObject: reopened["shape"] as Any))
        #expect(shape.points.map(\.kind) == [.exponential, .hold, .linear, .hold])
        #expect(shape == (try ShapeFile.decode(body)))
    }

    @Test("analyse returns the curve as played: an exponential glide passes 311 Hz at its middle (linear: 495), a hold is flat then steps")
    func playedFollowsTheKinds() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        func played(_ points: String, fidelity: Int = 1000) async throws -> [[Double]] {
            let answer = try await editor.json("POST", "/api/analyse", body: Self.body(points: points, fidelity: fidelity))
            #expect(answer.status == 200)
            return try #require(answer.object["played"] as? [[Double]])
        }
        let exponential = try await played(#"[0, 110, "exponential"], [1, 880]"#)
        let linear = try await played(#"[0, 110], [1, 880]"#)
        #expect(abs(try #require(Self.frequency(at: 0.5, exponential)) - 311.13) < 0.5)
        #expect(abs(try #require(Self.frequency(at: 0.25, exponential)) - 185.0) < 0.5)
        #expect(abs(try #require(Self.frequency(at: 0.5, linear)) - 495) < 0.01)
        #expect(linear.count == 2)

        let hold = try await played(#"[0, 220, "hold"], [0.5, 440], [1, 330]"#)
        #expect(hold.map { $0[1] } == [220, 220, 440, 330])
        try #require(hold.count == 4)
        #expect(hold[1][0] == hold[2][0] && abs(hold[1][0] - 0.5) < 0.001)

        // At N = 2 the page is shown the coarse glide the engine plays: two straight lines through 311 Hz.
        let coarse = try await played(#"[0, 110, "exponential"], [1, 880]"#, fidelity: 2)
        try #require(coarse.count == 3)
        #expect(coarse.map { $0[0] } == [0, 0.5, 1])
        #expect(abs(coarse[1][1] - 311.127) < 0.001)
    }
}
