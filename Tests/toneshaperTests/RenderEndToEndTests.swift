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
