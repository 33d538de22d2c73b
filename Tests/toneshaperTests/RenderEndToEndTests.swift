import Foundation
import Testing
import ToneShaperAudioFile

/// `toneshaper render` and `render-shape`, run as programs, judged by the files they write.
@Suite("toneshaper render, run as a program")
struct RenderEndToEndTests {
    static let demo = ProgramRunner.root.appendingPathComponent("Examples/demo.mid").path

    @Test("rendering the same MIDI file twice gives the same file, byte for byte (WAV and FLAC)",
          arguments: ["wav", "flac"])
    func deterministic(ext: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        for name in ["a", "b"] {
            let r = try work.run(["render", Self.demo, "-o", "\(name).\(ext)"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.hasPrefix("wrote \(work.path("\(name).\(ext)"))"), "\(r.stdout)")
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: work.path("a.\(ext)")))
        let b = try Data(contentsOf: URL(fileURLWithPath: work.path("b.\(ext)")))
        #expect(a.count > 100_000)
        #expect(a == b)
    }

    @Test("no progress bar is drawn when the output is not a terminal")
    func noProgressWhenPiped() throws {
        let work = try Workspace()
        defer { work.remove() }
        let r = try work.run(["render", Self.demo, "-o", "out.wav"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty, "stderr: \(r.stderr)")
    }

    @Test("bad input gets one line naming what is wrong and a non-zero exit",
          arguments: [(["render", "nosuch.mid", "-o", "x.wav"], "nosuch.mid"),
                      (["render", demo, "-o", "x.mp3"], "mp3"),
                      (["render", demo, "-o", "x.wav", "--preset", "nosuch"], "nosuch"),
                      (["render-shape", "siren", "-o", "x.wav", "--cycles", "0"], "--cycles"),
                      (["render", demo, "-o", "x.wav", "--presets", "17=siren"], "17=siren"),
                      (["render", demo, "-o", "x.wav", "--presets", "p128=siren"], "p128=siren"),
                      (["render", demo, "-o", "x.wav", "--presets", "p0=nosuch"], "nosuch"),
                      (["plot", "siren", "-o", "x.png"], "x.png"),
                      (["plot", "siren", "-o", "x.jpg"], "x.jpg")])
    func badInput(arguments: [String], named: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        let r = try work.run(arguments)
        #expect(r.status != 0)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(r.stderr)")
        #expect(r.stderr.hasPrefix("toneshaper: ") && r.stderr.contains(named), "stderr: \(r.stderr)")
    }

    @Test("--presets remaps programs: pN=PRESET changes what program N selects, CHANNEL=PRESET where a channel starts")
    func presetMap() throws {
        let work = try Workspace()
        defer { work.remove() }
        // The demo's channels use programs 0, 2 and 8 (Examples/README.md).
        func render(_ options: [String], _ name: String) throws -> [Float] {
            let r = try work.run(["render", Self.demo, "-o", name, "--format", "wav32f"] + options)
            #expect(r.status == 0, "\(r.stderr)")
            return try AudioFileReader.read(path: work.path(name)).samples
        }
        let standard = try render([], "standard.wav")
        let remapped = try render(["--presets", "p8=siren"], "remapped.wav")
        let explicit = try render(["--presets", "p8=8"], "explicit.wav")
        #expect(remapped != standard)
        // Mapping a program to the preset that already has its number changes nothing.
        #expect(explicit == standard)
    }

    @Test("a garbage MIDI file is refused with the reader's error and no crash")
    func garbageMIDI() throws {
        let work = try Workspace()
        defer { work.remove() }
        try Data("MThd this is not a MIDI file".utf8).write(to: URL(fileURLWithPath: work.path("bad.mid")))
        let r = try work.run(["render", "bad.mid", "-o", "x.wav"])
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix("toneshaper: bad.mid: "), "stderr: \(r.stderr)")
    }

    @Test("render-shape writes N cycles of the shape's duration plus its release tail")
    func renderShapeCycles() throws {
        let work = try Workspace()
        defer { work.remove() }
        let r = try work.run(["render-shape", "article-pulses", "-o", "p.wav", "--cycles", "3", "--rate", "44100"])
        #expect(r.status == 0, "\(r.stderr)")
        let file = try AudioFileReader.read(path: work.path("p.wav"))
        #expect(file.sampleRate == 44_100)
        // 3 passes of 1 s, then the preset's 0.08 s release and 1 s for the DC blocker to settle.
        #expect(file.frames == 3 * 44_100 + Int((0.08 + 1) * 44_100))
    }
}

@Suite("No runaway work: what would never end is refused before it starts")
struct RunawayTests {
    /// 40 bytes: division 1, the slowest tempo, one note after a delta of 0x0FFFFFFF ticks (~143 years).
    static let centuries: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 1] + Array("MTrk".utf8) + [0, 0, 0, 18,
        0x00, 0xFF, 0x51, 0x03, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0x7F, 0x90, 60, 100,
        0x00, 0xFF, 0x2F, 0x00]

    @Test("a MIDI file lasting centuries is one line naming its length; --max-length raises the limit; nothing is written")
    func longPerformance() throws {
        let work = try Workspace()
        defer { work.remove() }
        #expect(Self.centuries.count == 40)
        try Data(Self.centuries).write(to: URL(fileURLWithPath: work.path("long.mid")))
        for command in [["render", "long.mid", "-o", "x.wav"],
                        ["play", "--midi-in", "long.mid", "--device", "capture", "--no-realtime"]] {
            let r = try work.run(command)
            #expect(r.status != 0)
            #expect(r.stderr.hasPrefix("toneshaper: long.mid lasts 143 years, longer than the 24 h limit (raise it with --max-length HOURS)"), "\(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1)
        }
        #expect(!FileManager.default.fileExists(atPath: work.path("x.wav")))
        let shape = try work.run(["render-shape", "drone", "-o", "y.wav", "--cycles", "10000", "--max-length", "1"])
        #expect(shape.stderr.hasPrefix("toneshaper: 10000 cycles of 'drone' lasts"), "\(shape.stderr)")
        #expect(shape.stderr.contains("longer than the 1 h limit"))
    }

    @Test("rendering onto the MIDI file itself is refused")
    func outputChecks() throws {
        let work = try Workspace()
        defer { work.remove() }
        let self1 = try work.run(["render", RenderEndToEndTests.demo, "-o", RenderEndToEndTests.demo, "--format", "wav"])
        #expect(self1.status != 0)
        #expect(self1.stderr == "toneshaper: \(RenderEndToEndTests.demo): is the MIDI file being rendered; choose another output\n")
    }

    @Test("negative values reach their own check instead of looking like options")
    func negativeValues() throws {
        let work = try Workspace()
        defer { work.remove() }
        let tail = try work.run(["render", RenderEndToEndTests.demo, "-o", "x.wav", "--tail", "-1"])
        #expect(tail.stderr == "toneshaper: --tail -1.0 must be 0...600 seconds\n")
        let gain = try work.run(["render-shape", "drone", "-o", "quiet.wav", "--gain", "-20"])
        #expect(gain.status == 0, "\(gain.stderr)")
    }
}

@Suite("A file's header is only a claim")
struct LyingHeaderTests {
    @Test("a FLAC whose STREAMINFO claims 2^33 samples plots (and reads) what is really there, without sizing memory from the claim")
    func flacClaimingBillions() throws {
        let work = try Workspace()
        defer { work.remove() }
        #expect(try work.run(["render-shape", "siren", "-o", "real.flac"]).status == 0)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: work.path("real.flac"))))
        // fLaC, a 4-byte block header, then STREAMINFO: total samples are the low 4 bits of its byte 13 and bytes 14...17.
        #expect(Array(bytes[0..<4]) == Array("fLaC".utf8) && bytes[4] & 0x7F == 0)
        bytes[8 + 13] = (bytes[8 + 13] & 0xF0) | 0x02
        for i in 14...17 { bytes[8 + i] = 0 }
        try Data(bytes).write(to: URL(fileURLWithPath: work.path("lying.flac")))
        let real = try AudioFileReader.read(path: work.path("real.flac"))
        let lying = try AudioFileReader.read(path: work.path("lying.flac"))
        #expect(lying.frames == real.frames)
        let plot = try work.run(["plot", "--spectrum", "lying.flac", "-o", "s.png"])
        #expect(plot.status == 0, "\(plot.stderr)")
        #expect(plot.stdout.contains("spectrogram, \(String(format: "%.2f", Double(real.frames) / 48_000)) s, 48000 Hz"), "\(plot.stdout)")
    }
}
