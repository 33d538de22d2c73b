import Foundation
import Testing
import ToneShaperAudioFile
import ToneShaperCore
import ToneShaperLibrary

/// The editor's HTTP API, spoken to over a real socket: what the page relies on.
@Suite("The shape editor's HTTP API", .serialized)
struct EditorAPITests {
    static func stepShape(name: String = "steps", fidelity: Int = 1000) -> Shape {
        Shape(name: name, points: [.init(time: 0, frequency: 220), .init(time: 0.49, frequency: 220),
                                   .init(time: 0.51, frequency: 440), .init(time: 1, frequency: 440)],
              duration: 1, minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: fidelity)
    }

    @Test("it serves the page, the limits and every library shape with its source")
    func loads() async throws {
        let editor = try await RunningEditor(initialShape: "siren")
        defer { editor.stop() }
        let (status, page) = try await editor.request("GET", "/")
        #expect(status == 200)
        #expect(String(decoding: page, as: UTF8.self).contains("<html"))
        let info = try await editor.json("GET", "/api/info").object
        #expect(info["initialName"] as? String == "siren")
        #expect((info["waves"] as? [String]) == WaveType.allCases.map(\.rawValue))
        let shapes = try #require(try await editor.json("GET", "/api/shapes").object["shapes"] as? [[String: Any]])
        #expect(shapes.count == 14 && shapes.allSatisfy { $0["source"] as? String == "built-in" })
        let siren = try await editor.json("GET", "/api/shapes/siren").object
        let body = try JSONSerialization.data(withJSONObject: siren["shape"] as Any)
        #expect(try ShapeFile.decode(body) == (try ShapeFile.load(path: RunningEditor.repository.path + "/Presets/01-siren.json")))
        #expect(try await editor.request("GET", "/api/shapes/no-such").status == 404)
    }

    @Test("analyse: the curve as played at N, one pass's waveform, a spectrum peaking at the shape's frequency")
    func analyse() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let fine = try await editor.json("POST", "/api/analyse", body: ShapeFile.encode(Self.stepShape(fidelity: 1000))).object
        let coarse = try await editor.json("POST", "/api/analyse", body: ShapeFile.encode(Self.stepShape(fidelity: 4))).object
        let finePlayed = try #require(fine["played"] as? [[Double]])
        let coarsePlayed = try #require(coarse["played"] as? [[Double]])
        // N = 1000 keeps the drawn times (to 1/1000); N = 4 moves 0.49 and 0.51 onto the grid 0, 0.25, 0.5…
        #expect(finePlayed.map { $0[0] }.enumerated().allSatisfy { abs($0.element - [0, 0.49, 0.51, 1][$0.offset]) < 0.0011 })
        // At N = 4: 0.49 → ⌊1.96⌋ = 1, 0.51 → ⌊2.04⌋ = 2, in quarters of the shape.
        #expect(coarsePlayed.map { $0[0] } == [0, 0.25, 0.5, 1])
        #expect(coarsePlayed.map { $0[1] } == [220, 220, 440, 440])
        #expect(coarsePlayed != finePlayed)

        var flat = Self.stepShape()
        flat.points = [.init(time: 0, frequency: 440), .init(time: 1, frequency: 440)]
        let analysis = try await editor.json("POST", "/api/analyse", body: ShapeFile.encode(flat)).object
        let spectrum = try #require(analysis["spectrum"] as? [String: Any])
        let frequencies = try #require(spectrum["frequencies"] as? [Double]), db = try #require(spectrum["db"] as? [Double])
        let peak = frequencies[db.indices.max { db[$0] < db[$1] }!]
        #expect(abs(peak - 440) < 12)  // one FFT bin at 4096 points, 48 kHz
        let waveform = try #require(analysis["waveform"] as? [String: Any])
        let samples = try #require(waveform["samples"] as? [Double])
        #expect(samples.count == 2048 && waveform["reduced"] as? Bool == true)
        #expect(samples.map(abs).max()! > 0.1)
    }

    @Test("an invalid edit is refused with the file loader's own line and the field it is about")
    func refusesInvalid() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        var zero = Self.stepShape(); zero.duration = 0
        var outside = Self.stepShape(); outside.points[2].frequency = 5000
        let cases: [(Data, String)] = [
            (try ShapeFile.encode(zero), "duration"),
            (try ShapeFile.encode(outside), "points[2].frequency"),
            (Data(#"{"duration": 1, "points": [[0, 100], [1, "x"]]}"#.utf8), "points[1][1]"),
            (Data("not json".utf8), "(file)"),
        ]
        for (body, field) in cases {
            let expected: String
            do { _ = try ShapeFile.decode(body); expected = "accepted" } catch { expected = error.description }
            for path in ["/api/analyse", "/api/save", "/api/export"] {
                let (status, object) = try await editor.json("POST", path, body: body)
                #expect(status == 422, "\(path) \(field)")
                #expect(object["error"] as? String == expected)
                #expect(object["field"] as? String == field)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: editor.userLibrary.directory))  // nothing was saved
    }

    @Test("save writes the user library, which lists it as the user's; export renders it like render-shape")
    func saveAndExport() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let shape = Self.stepShape(name: "my-steps")
        let saved = try await editor.json("POST", "/api/save", body: ShapeFile.encode(shape))
        #expect(saved.status == 200)
        #expect(saved.object["saved"] as? String == editor.userLibrary.path(for: "my-steps"))
        #expect(try ShapeFile.load(path: editor.userLibrary.path(for: "my-steps")) == shape)
        let shapes = try #require(try await editor.json("GET", "/api/shapes").object["shapes"] as? [[String: Any]])
        #expect(shapes.first { $0["name"] as? String == "my-steps" }?["source"] as? String == "user")

        let (status, bytes) = try await editor.request("POST", "/api/export?format=flac&cycles=2&note=69", body: ShapeFile.encode(shape))
        #expect(status == 200)
        let path = editor.root.appendingPathComponent("export.flac").path
        try bytes.write(to: URL(fileURLWithPath: path))
        let audio = try AudioFileReader.read(path: path)
        #expect(audio.sampleRate == 48_000 && audio.channels == 2)
        let left = stride(from: 0, to: audio.samples.count, by: 2).map { audio.samples[$0] }
        // Each pass: 220 Hz for its first half, 440 Hz for its second, twice.
        for pass in 0..<2 {
            let start = pass * 48_000
            let low = try #require(Measure.frequency(left, rate: 48_000, in: (start + 4_800)..<(start + 19_200)))
            let high = try #require(Measure.frequency(left, rate: 48_000, in: (start + 28_800)..<(start + 43_200)))
            #expect(abs(low - 220) < 0.5 && abs(high - 440) < 0.5, "pass \(pass): \(low) Hz, \(high) Hz")
        }
        #expect(try await editor.json("POST", "/api/export?format=mp3", body: ShapeFile.encode(shape)).object["field"] as? String == "format")
        var long = shape
        long.duration = 600
        let tooLong = try await editor.json("POST", "/api/export?cycles=2", body: ShapeFile.encode(long))
        #expect(tooLong.status == 422)
        #expect(tooLong.object["error"] as? String == "cycles = 2: 2 × 600.0 s is longer than the 600 s an export may last")
    }

    @Test("a saved shape reopens by any name it may have: spaces, letters beyond ASCII, # and +")
    func names() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        for name in ["my shape with spaces", "Ümlaut-é", "#+._-"] {
            let shape = Self.stepShape(name: name)
            #expect(try await editor.json("POST", "/api/save", body: ShapeFile.encode(shape)).status == 200)
            let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._")))!
            let reopened = try await editor.json("GET", "/api/shapes/" + encoded)
            #expect(reopened.status == 200, "\(name): \(reopened.object)")
            let object = try #require(reopened.object["shape"] as? [String: Any], "\(name): \(reopened.object)")
            #expect(try ShapeFile.decode(JSONSerialization.data(withJSONObject: object)) == shape)
        }
    }

    @Test("saving over your own shape or a built-in one is done only when the request says overwrite=1")
    func overwrite() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        #expect(try await editor.json("POST", "/api/save", body: ShapeFile.encode(Self.stepShape(name: "my shape with spaces"))).status == 200)
        var changed = Self.stepShape(name: "my shape with spaces")
        changed.amplitude = 0.25
        let refused = try await editor.json("POST", "/api/save", body: ShapeFile.encode(changed))
        #expect(refused.status == 409 && refused.object["field"] as? String == "name")
        #expect(try ShapeFile.load(path: editor.userLibrary.path(for: "my shape with spaces")).amplitude == 0.5)
        #expect(try await editor.json("POST", "/api/save?overwrite=1", body: ShapeFile.encode(changed)).status == 200)
        #expect(try ShapeFile.load(path: editor.userLibrary.path(for: "my shape with spaces")).amplitude == 0.25)
        let builtIn = try await editor.json("POST", "/api/save", body: ShapeFile.encode(Self.stepShape(name: "siren")))
        #expect(builtIn.status == 409 && (builtIn.object["error"] as? String ?? "").contains("built in"))
        #expect(!FileManager.default.fileExists(atPath: editor.userLibrary.path(for: "siren")))
    }

    @Test("a name ending in .json is the file's name: 'ok.json' is the shape 'ok', kept as ok.json")
    func jsonSuffix() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let ok = try await editor.json("POST", "/api/save", body: ShapeFile.encode(Self.stepShape(name: "ok.json")))
        #expect(ok.status == 200 && ok.object["name"] as? String == "ok")
        #expect(ok.object["saved"] as? String == editor.userLibrary.path(for: "ok"))
        #expect(!FileManager.default.fileExists(atPath: editor.userLibrary.path(for: "ok.json")))
    }

    @Test("a field written as null is refused by name, as the page refuses an emptied box")
    func refusesNull() async throws {
        let editor = try await RunningEditor()
        defer { editor.stop() }
        let base = try #require(try JSONSerialization.jsonObject(with: ShapeFile.encode(Self.stepShape())) as? [String: Any])
        for field in ["attack", "release", "amplitude", "fidelity", "duration", "minFrequency", "wave"] {
            var object = base
            object[field] = NSNull()
            let answer = try await editor.json("POST", "/api/analyse", body: JSONSerialization.data(withJSONObject: object))
            #expect(answer.status == 422 && answer.object["field"] as? String == field, "\(field): \(answer.object)")
        }
        var echo = base
        echo["echo"] = ["delay": NSNull(), "volume": 0] as [String: Any]
        #expect(try await editor.json("POST", "/api/analyse", body: JSONSerialization.data(withJSONObject: echo)).object["field"] as? String
                == "echo.delay")
        var absent = base
        absent["attack"] = nil
        #expect(try await editor.json("POST", "/api/analyse", body: JSONSerialization.data(withJSONObject: absent)).status == 200)
    }
}
