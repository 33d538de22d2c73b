import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TestSupport
import Testing
import ToneShaperAudioFile

/// Your own shapes everywhere, and the editor as a program: run as a user would.
@Suite("Your own shapes, run as programs")
struct ShapeLibraryEndToEndTests {
    /// A shape file named like the built-in `siren` but flat at `frequency` Hz.
    static func flatSiren(_ frequency: Double, program: Int = 1) -> String {
        """
        {"name": "siren", "program": \(program), "duration": 1, "minFrequency": 20, "maxFrequency": 2000,
         "points": [[0, \(frequency)], [1, \(frequency)]], "wave": "sine", "amplitude": 0.5}
        """
    }

    static func frequency(_ path: String) throws -> Double {
        let audio = try AudioFileReader.read(path: path)
        let left = stride(from: 0, to: audio.samples.count, by: audio.channels).map { audio.samples[$0] }
        return ZeroCrossings.frequency(left, rate: Double(audio.sampleRate), in: 4_800..<min(left.count, 33_600)) ?? 0
    }

    @Test("--preset FILE.json plays the file itself, even when a built-in has its name; so do --presets and render-shape")
    func fileNamedLikeABuiltIn() throws {
        let work = try Workspace()
        defer { work.remove() }
        try Self.flatSiren(333).write(toFile: work.path("siren.json"), atomically: true, encoding: .utf8)
        try "0 on 69 127\n0.8 off 69\n".write(toFile: work.path("a.txt"), atomically: true, encoding: .utf8)
        let file = try work.run(["render-shape", "siren.json", "-o", "file.wav"])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(abs(try Self.frequency(work.path("file.wav")) - 333) < 0.5)
        let played = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.2",
                                   "--preset", "./siren.json", "--record", "played.wav"], stdin: "0 on 69 127\n0.8 off 69\n")
        #expect(played.status == 0, "\(played.stderr)")
        #expect(abs(try Self.frequency(work.path("played.wav")) - 333) < 0.5)
        let presets = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.2",
                                    "--presets", "1=\(work.path("siren.json"))", "--record", "presets.wav"], stdin: "0 on 69 127\n0.8 off 69\n")
        #expect(presets.status == 0, "\(presets.stderr)")
        #expect(abs(try Self.frequency(work.path("presets.wav")) - 333) < 0.5)
        let missing = try work.run(["render-shape", "nowhere.json", "-o", "x.wav"])
        #expect(missing.status != 0)
        #expect(missing.stderr == "toneshaper: shape file 'nowhere.json': no such file\n")
    }

    @Test("presets lists both libraries with their source; a user override is said once and used by render")
    func userLibraryEverywhere() throws {
        let work = try Workspace()
        defer { work.remove() }
        try FileManager.default.createDirectory(atPath: work.userPresets, withIntermediateDirectories: true)
        try Self.flatSiren(250).write(toFile: work.userPresets + "/siren.json", atomically: true, encoding: .utf8)
        try Self.flatSiren(600, program: 12).replacingOccurrences(of: "\"siren\"", with: "\"mine\"")
            .write(toFile: work.userPresets + "/mine.json", atomically: true, encoding: .utf8)
        let listed = try work.run(["presets"])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("  1  siren") && $0.contains("user*") })
        #expect(lines.contains { $0.hasPrefix(" 12  mine") && $0.contains(" user ") })
        #expect(lines.contains { $0.hasPrefix("  -  article-curve") && $0.contains("built-in") })
        #expect(lines.last == "user:     \(work.userPresets) (2 shapes; * overrides a built-in)")
        #expect(listed.stderr.split(separator: "\n").count == 2)  // the override and the clash, once each
        #expect(listed.stderr.contains("toneshaper: note: user shape 'siren' (\(work.userPresets)/siren.json) overrides the built-in"))
        #expect(listed.stderr.contains("toneshaper: note: program 12: user shape 'mine' keeps it; built-in shape 'article-curve' is played by name only"))
        let byName = try work.run(["render-shape", "siren", "-o", "user.wav"])
        #expect(byName.status == 0)
        #expect(abs(try Self.frequency(work.path("user.wav")) - 250) < 0.5)
        let byProgram = try work.run(["render-shape", "12", "-o", "program.wav"])
        #expect(abs(try Self.frequency(work.path("program.wav")) - 600) < 0.5, "\(byProgram.stderr)")
    }

    @Test("edit serves on 127.0.0.1, prints its address with this run's secret (nothing answers without it), and Ctrl-C stops it cleanly")
    func editStartsAndStops() throws {
        let work = try Workspace()
        defer { work.remove() }
        let editor = try work.start(["edit", "siren", "--no-open", "--port", "0"])
        editor.waitForFirstLine()
        let line = editor.stdoutSoFar
        let match = try #require(line.firstMatch(of: /toneshaper edit: (http:\/\/127\.0\.0\.1:(\d+)\/)\?token=([0-9a-f]{32,}) \(editing siren; Ctrl-C stops\)/), "\(line)")
        let url = try #require(URL(string: String(match.1) + "api/info"))
        func get(_ secret: Substring?) -> (status: Int, body: Data) {
            var request = URLRequest(url: url)
            if let secret { request.setValue("token \(secret)", forHTTPHeaderField: "Authorization") }
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var answer = (status: 0, body: Data())
            URLSession.shared.dataTask(with: request) { data, response, _ in
                answer = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()); done.signal()
            }.resume()
            #expect(done.wait(timeout: .now() + 10) == .success)
            return answer
        }
        #expect(get(nil).status == 403)
        let (status, body) = get(match.3)
        #expect(status == 200)
        let info = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(info["initialName"] as? String == "siren")
        #expect(info["userLibrary"] as? String == work.userPresets)
        kill(editor.process.processIdentifier, SIGINT)
        let result = editor.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let bad = try work.run(["edit", "no-such-shape", "--no-open"])
        #expect(bad.status != 0)
        #expect(bad.stderr.hasPrefix("toneshaper: unknown preset 'no-such-shape'"))
    }

    @Test("edit opens the browser through a file only the user can read, so the secret is on no command line; the file goes when edit stops")
    func editOpensThroughAPrivateFile() throws {
        let work = try Workspace()
        defer { work.remove() }
        let bin = work.path("bin"), runtime = work.path("run"), log = work.path("xdg-open.log")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // A stand-in for xdg-open: what it was given, and the mode and text of the file it names.
        try "#!/bin/sh\nf=\"${1#file://}\"\n{ echo \"ARGS $*\"; stat -c 'MODE %a' \"$f\"; cat \"$f\"; } > \(log).part && mv \(log).part \(log)\n"
            .write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
        chmod(bin + "/xdg-open", 0o755)
        let environment = work.alsaEnvironment.merging([
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            "DISPLAY": ":99", "XDG_RUNTIME_DIR": runtime,
        ]) { $1 }
        let editor = try ProgramRunner.Running(["edit", "siren", "--port", "0"], environment: environment, stdin: nil, in: work.folder)
        editor.waitForFirstLine()
        let match = try #require(editor.stdoutSoFar.firstMatch(of: /(http:\/\/127\.0\.0\.1:\d+\/\?token=([0-9a-f]+))/))
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: log) && Date() < deadline { usleep(50_000) }
        let opened = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        let lines = opened.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ARGS file://\(runtime)/toneshaper-edit-") == true, "\(opened)")
        #expect(!(lines.first ?? "").contains(match.2), "the secret is on xdg-open's command line")
        #expect(lines.dropFirst().first == "MODE 600", "\(opened)")
        #expect(opened.contains("url=\(match.1)"), "\(opened)")
        kill(editor.process.processIdentifier, SIGINT)
        let result = editor.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime).isEmpty)
    }
}

@Suite("Microtuning from the command line")
struct TuningEndToEndTests {
    @Test("play --tuning a just scale: key E above the root sounds 5/4 of it; a bad scale is one line naming file and line")
    func justThird() throws {
        let work = try Workspace()
        defer { work.remove() }
        try #"{"name": "c", "duration": 1, "rootNote": 60, "points": [[0, 261.6255653], [1, 261.6255653]], "amplitude": 0.5}"#
            .write(toFile: work.path("c.json"), atomically: true, encoding: .utf8)
        let tunings = ProgramRunner.root.appendingPathComponent("Tunings").path
        let r = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.1", "--preset", "./c.json",
                              "--tuning", tunings + "/ji-5-limit-12.scl", "--record", "third.wav"], stdin: "0 on 64 100\n0.8 off 64\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs(try ShapeLibraryEndToEndTests.frequency(work.path("third.wav")) - 261.6255653 * 5 / 4) < 0.1)
        try "bad\n 2\n 3/2\n two\n".write(toFile: work.path("bad.scl"), atomically: true, encoding: .utf8)
        // A shipped tuning by its name alone.
        let named = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.1", "--preset", "./c.json",
                                  "--tuning", "ji-5-limit-12", "--record", "named.wav"], stdin: "0 on 67 100\n0.8 off 67\n")
        #expect(named.status == 0, "\(named.stderr)")
        #expect(abs(try ShapeLibraryEndToEndTests.frequency(work.path("named.wav")) - 261.6255653 * 3 / 2) < 0.1)
        let bad = try work.run(["render", RenderEndToEndTests.demo, "-o", "x.wav", "--tuning", "bad.scl"])
        #expect(bad.status != 0)
        #expect(bad.stderr == "toneshaper: bad.scl:4: pitch 'two' is not cents (with a '.') or a ratio a/b of positive whole numbers\n")
    }
}
