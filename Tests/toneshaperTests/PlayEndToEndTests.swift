import Foundation
import Testing
import ToneShaperAudioFile
import ToneShaperMIDI

@Suite("toneshaper play and learn, run as programs")
struct PlayEndToEndTests {
    static let demo = ProgramRunner.root.appendingPathComponent("Examples/demo.mid").path

    @Test("play --midi-in demo.mid through the capture device equals `toneshaper render` sample for sample; the recordings read back")
    func playEqualsRender() throws {
        let work = try Workspace()
        defer { work.remove() }
        // render uses 512-frame blocks and play the default 128-frame periods: the engine's control grid
        // runs on absolute frames, so how frames are grouped into render calls must not matter.
        let played = try work.run(["play", "--midi-in", Self.demo, "--device", "capture", "--no-realtime",
                                   "--record", "take.wav", "--format", "wav32f", "--record-midi", "take.mid"])
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stderr.isEmpty)
        let lines = played.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(played.stdout)")
        #expect(lines[0].hasPrefix("playing \(Self.demo) (26.00 s); device capture: 48000 Hz FLOAT_LE, period 128 × 3 frames (negotiated; set with --period/--periods), latency 8.0 ms"))
        #expect(lines[1].hasPrefix("stopped after 26.00 s: 0 xruns, "))
        #expect(lines[1].contains("1248000 frames recorded to take.wav (0 dropped by the recorder)"))

        let rendered = try work.run(["render", Self.demo, "-o", "reference.wav", "--format", "wav32f"])
        #expect(rendered.status == 0, "\(rendered.stderr)")
        let reference = try AudioFileReader.read(path: work.path("reference.wav"))
        #expect(reference.frames == 1_248_000)

        let captured = try work.floats("out.raw")
        try #require(captured.count >= reference.samples.count)
        #expect(Array(captured[0..<reference.samples.count]) == reference.samples)
        #expect(captured[reference.samples.count...].allSatisfy { $0 == 0 })

        let take = try AudioFileReader.read(path: work.path("take.wav"))
        #expect(take.format == .wav32Float && take.sampleRate == 48_000 && take.channels == 2)
        #expect(take.samples == reference.samples)

        let original = try MIDIFile.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: Self.demo)))).timedMessages(sampleRate: 48_000)
        let recorded = try MIDIFile.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: work.path("take.mid"))))).timedMessages(sampleRate: 48_000)
        func notes(_ messages: [TimedMIDIMessage]) -> [TimedMIDIMessage] {
            messages.filter { switch $0.message { case .noteOn, .noteOff: return true; default: return false } }
        }
        #expect(!notes(original).isEmpty)
        #expect(notes(recorded) == notes(original))
        #expect(recorded == original)
        #expect(lines[2] == "wrote take.mid (\(original.count) events)")
    }

    @Test("with --tail 0 the events on the very last frame are still played and recorded: no note is left on in the take")
    func lastFrameEvents() throws {
        let work = try Workspace()
        defer { work.remove() }
        let r = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0",
                              "--record-midi", "take.mid"], stdin: "0 on 60 100\n0.25 on 64 90\n0.5 off 60\n0.5 off 64\n")
        #expect(r.status == 0, "\(r.stderr)")
        let take = try MIDIFile.parse([UInt8](Data(contentsOf: URL(fileURLWithPath: work.path("take.mid"))))).timedMessages(sampleRate: 48_000)
        let offs = take.filter { if case .noteOff = $0.message { return true } else { return false } }
        #expect(offs.count == 2, "\(take)")
        #expect(offs.allSatisfy { $0.frame == 24_000 })
    }

    @Test("play --presets starts channels on the named presets, as render --presets does; --preset and --presets together are refused")
    func channelPresets() throws {
        let work = try Workspace()
        defer { work.remove() }
        let script = "0 on 60 100 ch=2\n0.3 off 60 ch=2\n"
        func play(_ options: [String]) throws -> [Float] {
            let r = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.2"] + options,
                                 stdin: script)
            #expect(r.status == 0, "\(r.stderr)")
            // The performance is 0.5 s; the capture device may take a few silent periods more.
            let captured = try work.floats("out.raw")
            let frames = 2 * 24_000
            try #require(captured.count >= frames)
            #expect(captured[frames...].allSatisfy { $0 == 0 })
            return Array(captured[0..<frames])
        }
        let perChannel = try play(["--presets", "2=siren"])
        let everywhere = try play(["--preset", "siren"])
        let standard = try play([])
        #expect(perChannel.contains { $0 != 0 })
        #expect(perChannel == everywhere, "the two differ from sample \(perChannel.indices.first { perChannel[$0] != everywhere[$0] } ?? -1)")
        #expect(perChannel != standard, "--presets 2=siren sounds like the default preset")
        let both = try work.run(["play", "--midi-in", "-", "--device", "capture", "--preset", "siren", "--presets", "2=siren"],
                                stdin: script)
        #expect(both.status != 0)
        #expect(both.stderr.split(separator: "\n").count == 1 && both.stderr.contains("--presets"), "\(both.stderr)")
    }

    @Test("without --midi-in, play needs the sequencer and says so in one line",
          .enabled(if: !FileManager.default.fileExists(atPath: "/dev/snd/seq")))
    func noSequencer() throws {
        let work = try Workspace()
        defer { work.remove() }
        let result = try work.run(["play", "--device", "capture"])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "toneshaper: cannot open the ALSA sequencer: No such file or directory — is the snd-seq kernel module loaded?\n")
        let learn = try work.run(["learn", "fidelity"])
        #expect(learn.status != 0)
        #expect(learn.stderr == result.stderr)
    }

    @Test("an unknown device is one line naming it")
    func unknownDevice() throws {
        let work = try Workspace()
        defer { work.remove() }
        let result = try work.run(["play", "--midi-in", Self.demo, "--device", "nosuchdevice"])
        #expect(result.status != 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("toneshaper: cannot open PCM device 'nosuchdevice'") == true)
    }

    @Test("a bad mapping file and a bad script line are named, with their line number")
    func badInputs() throws {
        let work = try Workspace()
        defer { work.remove() }
        try "cc 7 volume 0 1\ncc 74 fidelity 1 2000 exponentail\n".write(toFile: work.path("bad.map"), atomically: true, encoding: .utf8)
        let map = try work.run(["play", "--midi-in", Self.demo, "--device", "capture", "--map", "bad.map"])
        #expect(map.status != 0)
        #expect(map.stderr == "toneshaper: bad.map:2: unexpected 'exponentail' (expected linear, exponential or 'channel N')\n")
        let script = try work.run(["play", "--midi-in", "-", "--device", "capture"], stdin: "0 on 60\n0.5 of 60\n")
        #expect(script.status != 0)
        #expect(script.stderr == "toneshaper: stdin:2: unknown event 'of' (expected on, off, cc, bend, program or pressure)\n")
    }

    @Test("learn reads the first control change of a stdin script and prints a ready mapping line")
    func learnFromScript() throws {
        let work = try Workspace()
        defer { work.remove() }
        let script = "0.1 on 60 100\n0.2 cc 123 0\n0.3 cc 21 64 ch=1\n0.4 cc 22 1\n"
        let result = try work.run(["learn", "fidelity", "--midi-in", "-"], stdin: script)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "cc 21 channel 1 (value 64)\ncc 21  fidelity  1 2000 exponential\n")
        let none = try work.run(["learn", "--midi-in", "-"], stdin: "0 on 60\n")
        #expect(none.status != 0)
        #expect(none.stderr == "toneshaper: stdin: no control change\n")
    }

    @Test("SIGTERM during a long play still leaves a finalised, readable recording")
    func terminateLeavesReadableFile() throws {
        let work = try Workspace()
        defer { work.remove() }
        // One note held for an hour: far longer than the test waits.
        let running = try work.start(["play", "--midi-in", "-", "--device", "capture", "--no-realtime",
                                      "--record", "long.wav", "--tail", "0"], stdin: "0 on 57 100\n3600 off 57\n")
        running.waitForFirstLine()
        Thread.sleep(forTimeInterval: 1)
        running.process.terminate()
        let result = running.finish()
        #expect(result.reason == .exit)
        #expect(result.status == 0, "\(result.stderr)")

        let file = try AudioFileReader.read(path: work.path("long.wav"))
        #expect(file.format == .wav16 && file.sampleRate == 48_000 && file.channels == 2)
        #expect(file.frames > 0)
        #expect(file.frames < 3600 * 48_000)
        #expect(result.stdout.contains("\(file.frames) frames recorded to long.wav"))
        #expect(file.samples.contains { $0 != 0 })
    }
}

@Suite("A take survives any stop")
struct TakeSurvivesTests {
    /// Starts a recording `play` of ten minutes of notes (the capture device does not pace, so the
    /// take grows fast), kills it with SIGKILL once the file passes `bytes` (waiting at most 20 s),
    /// and returns the file's size at the kill.
    static func killedTake(_ name: String, in work: Workspace, after bytes: Int) throws -> Int {
        var script = ""
        for i in 0..<600 { script += "\(i) on \(48 + i % 24) 100\n\(Double(i) + 0.5) off \(48 + i % 24)\n" }
        let play = try work.start(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--record", name], stdin: script)
        play.waitForFirstLine()
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: work.path(name)))?[.size] as? Int ?? 0 }
        for _ in 0..<400 where size() <= bytes { usleep(50_000) }
        kill(play.process.processIdentifier, SIGKILL)
        let result = play.finish()
        #expect(result.reason == .uncaughtSignal)
        try #require(size() > bytes, "only \(size()) bytes were recorded before the kill")
        return size()
    }

    @Test("play killed with SIGKILL mid-recording leaves a WAV that reads back, short of what is on disk by at most a second")
    func sigkill() throws {
        let work = try Workspace()
        defer { work.remove() }
        let size = try Self.killedTake("take.wav", in: work, after: 5 * 48_000 * 4)
        let take = try AudioFileReader.read(path: work.path("take.wav"))
        let onDisk = (size - 44) / 4  // 16-bit stereo after a 44-byte header
        #expect(take.sampleRate == 48_000 && take.channels == 2)
        #expect(take.frames <= onDisk)
        #expect(onDisk - take.frames <= 48_000 + 4096, "the header says \(take.frames) frames, \(onDisk) are on disk")
        #expect(take.samples.contains { $0 != 0 })
    }

    @Test("a MIDI take that cannot be written is named in one line, the audio take is still finalised, and the exit is non-zero")
    func midiTakeOnAFullDisk() throws {
        let work = try Workspace()
        defer { work.remove() }
        let r = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tail", "0.1",
                              "--record", "take.wav", "--record-midi", "/dev/full"], stdin: "0 on 60\n0.2 off 60\n")
        #expect(r.status != 0)
        #expect(r.stderr == "toneshaper: /dev/full: cannot be written (No space left on device); the MIDI take (2 events) is lost\n")
        #expect(try AudioFileReader.read(path: work.path("take.wav")).frames == 14_400)
    }

    /// A device that plays in real time, as a sound card does: alsa-lib's `file` PCM pipes what
    /// `play` writes to a small program that passes it on to out.raw at 48,000 frames a second
    /// (the pipe fills and `play`'s write waits). out.raw is then what was played, up to the
    /// moment `play` stopped, and the recorder runs as far behind as it would with a sound card.
    static func pacedDevice(in work: Workspace) throws {
        try """
            import os, sys, time
            out = open(sys.argv[1], "wb", buffering=0)
            start, total = time.monotonic(), 0
            while True:
                chunk = sys.stdin.buffer.raw.read(16384)
                if not chunk: break
                out.write(chunk)
                total += len(chunk)
                ahead = total / (48000 * 8) - (time.monotonic() - start)
                if ahead > 0: time.sleep(ahead)
            out.close()
            os.rename(sys.argv[1], sys.argv[2])
            """.write(toFile: work.path("pacer.py"), atomically: true, encoding: .utf8)
        let line = "pcm.paced { type file; slave.pcm \"null\"; format \"raw\"; "
            + "file \"|exec /usr/bin/python3 \(work.path("pacer.py")) \(work.path("playing.raw")) \(work.path("played.raw"))\" }\n"
        let conf = try FileHandle(forWritingTo: URL(fileURLWithPath: work.path("capture.conf")))
        try conf.seekToEnd()
        try conf.write(contentsOf: Data(line.utf8))
        try conf.close()
    }

    /// Runs another program (a decoder) and returns its exit status and output.
    static func tool(_ executable: String, _ arguments: [String], in work: Workspace) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = work.folder
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// The decoders a listener would use; `.ci/install-deps` installs them (this test skips nothing).
    static let decodersMissing: String? = {
        let tools = ["/usr/bin/sox", "/usr/bin/ogginfo", "/usr/bin/python3"]
        if let absent = tools.first(where: { !FileManager.default.isExecutableFile(atPath: $0) }) { return absent }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import soundfile, numpy"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "python3" }
        process.waitUntilExit()
        return process.terminationStatus == 0 ? nil : "python3-soundfile (with numpy)"
    }()

    @Test("a take stopped with SIGINT or killed with SIGKILL decodes with sox and python-soundfile to within a second of what was played; an Ogg take is one stream",
          arguments: ["wav", "flac", "ogg"], [SIGINT, SIGKILL])
    func takeSurvives(ext: String, signal: Int32) throws {
        try #require(Self.decodersMissing == nil, "\(Self.decodersMissing ?? "") is missing: run bash .ci/install-deps --tests")
        let work = try Workspace()
        defer { work.remove() }
        try Self.pacedDevice(in: work)
        let take = "take.\(ext)", rate = 48_000
        // Two notes, then silence, where an Ogg page waits longest; the last event is an hour away.
        let play = try work.start(["play", "--midi-in", "-", "--device", "paced", "--no-realtime", "--record", take],
                                  stdin: "0 on 60 100\n0.6 off 60\n1 on 67 90\n1.3 off 67\n3600 off 67\n")
        play.waitForFirstLine()
        func size(_ name: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: work.path(name)))?[.size] as? Int ?? 0 }
        // Stopped 3.5 s in (given 30 s to get there).
        for _ in 0..<600 where size("playing.raw") < 7 * rate * 4 { usleep(50_000) }
        kill(play.process.processIdentifier, signal)
        let result = play.finish()
        if signal == SIGINT {
            #expect(result.reason == .exit && result.status == 0, "\(result.stderr)")
        } else {
            #expect(result.reason == .uncaughtSignal)
        }
        // The pacer passes on what is still in the pipe, then names its file played.raw.
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: work.path("played.raw")) { usleep(50_000) }
        let played = try work.floats("played.raw")
        let playedFrames = played.count / 2
        try #require(playedFrames >= 3 * rate, "\(playedFrames) frames played")
        let second = rate + 4096

        // libsndfile, through our reader; for the lossless formats the samples are those played.
        let ours = try AudioFileReader.read(path: work.path(take))
        #expect(ours.sampleRate == rate && ours.channels == 2)
        #expect(abs(ours.frames - playedFrames) <= second, "\(ext): \(ours.frames) frames read, \(playedFrames) played")
        if ext != "ogg" {
            let common = 2 * min(ours.frames, playedFrames)
            let worst = zip(ours.samples[0..<common], played[0..<common]).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
            #expect(worst <= 1.5 / 32768, "\(ext): the take differs from what was played by up to \(worst)")
        }
        #expect(ours.samples.contains { $0 != 0 })

        // python-soundfile sizes its array from the header's frame count: a false one fails here.
        let python = try Self.tool("/usr/bin/python3", ["-c", "import soundfile, sys; d, r = soundfile.read(sys.argv[1], dtype='float32'); print(len(d), r)", take], in: work)
        #expect(python.status == 0, "\(ext): python-soundfile: \(python.err)")
        let pythonFrames = Int(python.out.split(separator: " ").first ?? "") ?? -1
        #expect(abs(pythonFrames - playedFrames) <= second, "\(ext): python-soundfile read \(pythonFrames) frames, \(playedFrames) played")

        let sox = try Self.tool("/usr/bin/sox", [take, "-t", "f32", "-r", "48000", "-c", "2", "sox.raw"], in: work)
        #expect(sox.status == 0 && !sox.err.contains("FAIL"), "\(ext): sox: \(sox.err)")
        let soxFrames = size("sox.raw") / 8
        #expect(abs(soxFrames - playedFrames) <= second, "\(ext): sox decoded \(soxFrames) frames, \(playedFrames) played")

        if ext == "ogg" {
            let info = try Self.tool("/usr/bin/ogginfo", [take], in: work)
            let streams = info.out.components(separatedBy: "New logical stream").count - 1
            #expect(streams == 1, "ogginfo: \(info.out)")
            #expect(!info.out.lowercased().contains("corrupt") && !info.out.contains("ERROR"), "ogginfo: \(info.out)")
            // A finished take ends its stream; only a killed one lacks the end-of-stream mark.
            if signal == SIGINT { #expect(info.status == 0, "ogginfo: \(info.out)") }
        }
    }

    @Test("a MIDI take that cannot be written leaves no file behind, and an earlier take of that name is kept whole")
    func midiTakeLeavesNothing() throws {
        let work = try Workspace()
        defer { work.remove() }
        var script = ""
        for i in 0..<300 { script += "\(Double(i) / 100) on \(40 + i % 40) 100\n\(Double(i) / 100 + 0.005) off \(40 + i % 40)\n" }
        let executable = try #require(ProgramRunner.executable)
        // Files of at most 1 KB (dash counts 512-byte blocks), SIGXFSZ ignored so writes beyond fail with EFBIG.
        func play() throws -> (status: Int32, err: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -f 2; trap '' XFSZ; exec \"$0\" \"$@\"", executable.path,
                                 "play", "--midi-in", "-", "--device", "null", "--no-realtime", "--tail", "0", "--record-midi", "take.mid"]
            process.currentDirectoryURL = work.folder
            process.environment = ProcessInfo.processInfo.environment.merging(work.alsaEnvironment) { $1 }
            let input = Pipe(), err = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            input.fileHandleForWriting.write(Data(script.utf8))
            try input.fileHandleForWriting.close()
            let errData = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: errData, as: UTF8.self))
        }
        let first = try play()
        #expect(first.status != 0)
        #expect(first.err.hasPrefix("toneshaper: take.mid: cannot be written (File too large); the MIDI take (600 events) is lost"), "\(first.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.folder.path).filter { $0.contains("take") } == [])

        let earlier = Data([UInt8](repeating: 7, count: 100))
        try earlier.write(to: URL(fileURLWithPath: work.path("take.mid")))
        let second = try play()
        #expect(second.status != 0, "\(second.err)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: work.path("take.mid"))) == earlier)
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.folder.path).filter { $0.contains("take") } == ["take.mid"])
    }
}
