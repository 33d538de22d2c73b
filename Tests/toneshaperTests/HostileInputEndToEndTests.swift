import Foundation
import Testing
import ToneShaperAudioFile

/// Hostile tunings, files and options through the program as a user runs it: a clear line and a
/// clean exit, never a trap, and no input sized without bound.
@Suite("toneshaper against hostile input, run as a program")
struct HostileInputEndToEndTests {
    /// Legal Scala files that once stopped `render` and `play` with SIGILL and nothing printed.
    static let scales: [(name: String, text: String)] = [
        ("o.scl", "! o\no\n 1\n 2/1\n"),  // one degree per octave: key 127 near 4e22 Hz
        ("c.scl", "! c\nc\n 1\n 999999.0\n"),  // a step of 999999 cents
        ("r.scl", "! r\nr\n 2\n " + String(repeating: "9", count: 400) + "/3\n 2/1\n"),  // a 400-digit ratio
    ]

    /// A format-0 MIDI file playing `keys` one after another, each for a quarter note (0.25 s at
    /// the default 120 bpm) with no gap.
    static func midi(_ keys: [UInt8]) -> Data {
        var track: [UInt8] = []
        for key in keys { track += [0x00, 0x90, key, 100, 0x81, 0x70, 0x80, key, 64] }  // delta 240 ticks = 0x81 0x70
        track += [0x00, 0xFF, 0x2F, 0x00]
        let length = UInt32(track.count)
        return Data(Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8)
                    + [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + track)
    }

    /// RMS of the left channel over the middle of the i-th quarter second.
    static func level(_ samples: [Float], note i: Int, rate: Int = 48_000) -> Double {
        let from = (i * rate / 4 + rate / 20) * 2, to = ((i + 1) * rate / 4 - rate / 40) * 2
        var sum = 0.0
        for n in stride(from: from, to: to, by: 2) { sum += Double(samples[n]) * Double(samples[n]) }
        return (sum / Double((to - from) / 2)).squareRoot()
    }

    /// The largest step between neighbouring left samples in the middle of the i-th quarter second:
    /// a sounding wave steps by far more than 1e-5, the output DC blocker's slow tail by far less.
    static func largestStep(_ samples: [Float], note i: Int, rate: Int = 48_000) -> Float {
        let from = (i * rate / 4 + rate / 20) * 2, to = ((i + 1) * rate / 4 - rate / 40) * 2
        var largest: Float = 0
        for n in stride(from: from + 2, to: to, by: 2) { largest = max(largest, abs(samples[n] - samples[n - 2])) }
        return largest
    }

    /// A steady 110 Hz sine drawn on key 45 that starts and stops at once (no echo), so each
    /// quarter second holds one key alone.
    static let tone = #"{"name": "tone", "duration": 1, "points": [[0, 110], [1, 110]], "rootNote": 45, "attack": 0.005, "release": 0.01}"#

    @Test("render with a scale that sends keys out of range: exit 0, one note naming the silent keys, a finite file in which the other keys sound",
          arguments: [0, 1, 2])
    func hostileScaleRenders(index: Int) throws {
        let (name, text) = Self.scales[index]
        let work = try Workspace()
        defer { work.remove() }
        try text.write(toFile: work.path(name), atomically: true, encoding: .utf8)
        try Self.tone.write(toFile: work.path("tone.json"), atomically: true, encoding: .utf8)
        // Keys 45, 127, 0, 46, 60, 53, 54 in that order.
        try Self.midi([45, 127, 0, 46, 60, 53, 54]).write(to: URL(fileURLWithPath: work.path("keys.mid")))
        let r = try work.run(["render", "keys.mid", "--tuning", name, "--preset", "tone.json", "-o", "out.wav", "--format", "wav32f"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(lines.first?.hasPrefix("toneshaper: note: tuning \(name): keys ") == true, "\(r.stderr)")
        #expect(lines.first?.contains("stay silent with shape 'tone'") == true, "\(r.stderr)")
        let file = try AudioFileReader.read(path: work.path("out.wav"))
        try #require(file.frames >= 7 * 48_000 / 4, "\(file.frames) frames")
        #expect(file.samples.allSatisfy { $0.isFinite && abs($0) <= 1 })
        // Key 45 is the shape's root: in every one of these scales it plays the shape as drawn.
        #expect(Self.level(file.samples, note: 0) > 0.01)
        // Key 127 is beyond anything playable in all three, and so is key 0.
        #expect(Self.largestStep(file.samples, note: 1) < 1e-5)
        #expect(Self.largestStep(file.samples, note: 2) < 1e-5)
        if name == "o.scl" {
            // One octave a key: 46 plays 220 Hz; from key 53 (110·2^8 = 28160 Hz, above Nyquist) nothing
            // sounds, as the note says, naming the keys the file plays (not 1-4, 55-59, ...): 53 and 54
            // for Nyquist alone, 60 and 127 for the 100 kHz limit too (110·2^10 Hz from key 55).
            #expect(Self.level(file.samples, note: 3) > 0.01)
            for i in [4, 5, 6] { #expect(Self.largestStep(file.samples, note: i) < 1e-5, "key at \(i)") }
            #expect(r.stderr == "toneshaper: note: tuning o.scl: keys 0, 53-54, 60, 127 stay silent with shape 'tone' (0 over 40 octaves below its root; 53-54, 60, 127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 60, 127 above 100 kHz, the highest a shape may reach)\n")
        }
    }

    @Test("without a tuning too: a file that plays the shipped chirp (up to 3 kHz on key 60) on key 121 is told that key is past 100 kHz and silent; one that stays below says nothing")
    func equalTemperamentCeiling() throws {
        let work = try Workspace()
        defer { work.remove() }
        // 121 first, so nothing echoes into its quarter second; then 120 (its echo reaches 60's).
        try Self.midi([121, 120, 60]).write(to: URL(fileURLWithPath: work.path("high.mid")))
        try Self.midi([60, 120]).write(to: URL(fileURLWithPath: work.path("fits.mid")))
        let r = try work.run(["render", "high.mid", "--preset", "chirp", "-o", "x.wav", "--format", "wav32f"])
        #expect(r.status == 0, "\(r.stderr)")
        // 3000 Hz · 2^(61/12) = 101 kHz; key 120 reaches 95.1 kHz and plays.
        #expect(r.stderr == "toneshaper: note: 12-tone equal temperament: key 121 stays silent with shape 'chirp' (121 above 100 kHz, the highest a shape may reach)\n")
        let file = try AudioFileReader.read(path: work.path("x.wav"))
        try #require(file.frames >= 3 * 48_000 / 4, "\(file.frames) frames")
        #expect(Self.largestStep(file.samples, note: 0) < 1e-5)
        #expect(Self.level(file.samples, note: 1) > 0.01)
        let fits = try work.run(["render", "fits.mid", "--preset", "chirp", "-o", "y.wav"])
        #expect(fits.status == 0 && fits.stderr.isEmpty, "\(fits.stderr)")
    }

    @Test("render-shape --note on a key that puts a band-limited shape wholly above Nyquist writes silence and says why, once")
    func silentTransposition() throws {
        let work = try Workspace()
        defer { work.remove() }
        try #"{"name": "high", "duration": 1, "points": [[0, 15000], [1, 20000]], "wave": "band-limited-sawtooth", "rootNote": 69}"#
            .write(toFile: work.path("high.json"), atomically: true, encoding: .utf8)
        // Key 78 is 9 semitones up: 15000 Hz becomes 25227 Hz, above the 24000 Hz Nyquist frequency.
        let r = try work.run(["render-shape", "high.json", "--note", "78", "-o", "x.wav", "--format", "wav32f"])
        #expect(r.status == 0, "\(r.stderr)")
        // From key 97 its 20 kHz top is past 100 kHz as well: 103 kHz.
        #expect(r.stderr == "toneshaper: note: --note 78: keys 78-127 stay silent with shape 'high' (78-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 97-127 above 100 kHz, the highest a shape may reach)\n")
        let file = try AudioFileReader.read(path: work.path("x.wav"))
        #expect(file.frames > 48_000 && file.samples.allSatisfy { $0 == 0 })
        // A key that fits says nothing.
        let fits = try work.run(["render-shape", "high.json", "--note", "70", "-o", "y.wav"])
        #expect(fits.status == 0 && fits.stderr.isEmpty, "\(fits.stderr)")
    }

    @Test("a sine drawn wholly above Nyquist is silent on its own root: render-shape writes silence and plot draws it, each saying why once")
    func silentOnItsRoot() throws {
        let work = try Workspace()
        defer { work.remove() }
        try #"{"name": "ultra", "duration": 1, "points": [[0, 30000], [1, 30000]], "rootNote": 69}"#
            .write(toFile: work.path("ultra.json"), atomically: true, encoding: .utf8)
        // 30 kHz aliases to 18 kHz at 48 kHz, a tone never drawn: nothing is played instead. Three
        // semitones down (key 66) it is still 25.2 kHz; 21 up (key 90) it is past 100 kHz too.
        let note = "toneshaper: note: root note 69: keys 66-127 stay silent with shape 'ultra' (66-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 90-127 above 100 kHz, the highest a shape may reach)\n"
        let r = try work.run(["render-shape", "ultra.json", "-o", "x.wav", "--format", "wav32f"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr == note)
        let file = try AudioFileReader.read(path: work.path("x.wav"))
        #expect(file.frames > 48_000 && file.samples.allSatisfy { $0 == 0 })
        let plot = try work.run(["plot", "ultra.json", "-o", "x.svg"])
        #expect(plot.status == 0 && plot.stderr == note, "\(plot.stderr)")
        // At 96 kHz the same shape lies below Nyquist (48 kHz) and plays, said nothing of.
        let high = try work.run(["render-shape", "ultra.json", "-o", "y.wav", "--format", "wav32f", "--rate", "96000"])
        #expect(high.status == 0 && high.stderr.isEmpty, "\(high.stderr)")
        let played = try AudioFileReader.read(path: work.path("y.wav"))
        #expect(played.samples.contains { abs($0) > 0.1 })
    }

    @Test("play with the one-octave-a-key scale plays a script through the capture device and says once which keys are silent")
    func hostileScalePlays() throws {
        let work = try Workspace()
        defer { work.remove() }
        try Self.scales[0].text.write(toFile: work.path("o.scl"), atomically: true, encoding: .utf8)
        try Self.tone.write(toFile: work.path("tone.json"), atomically: true, encoding: .utf8)
        let r = try work.run(["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--tuning", "o.scl", "--preset", "tone.json",
                              "--tail", "0.1"], stdin: "0 on 127\n0 on 46\n0.2 off 127\n0.2 off 46\n")
        #expect(r.status == 0, "\(r.stderr)")
        // The script plays 127 and 46: only 127 is named.
        #expect(r.stderr == "toneshaper: note: tuning o.scl: key 127 stays silent with shape 'tone' (127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 127 above 100 kHz, the highest a shape may reach)\n")
        #expect(r.stdout.contains("stopped after 0.30 s"), "\(r.stdout)")
    }

    @Test("options and script times say what is wrong with their value", arguments: [
        (["render", "keys.mid", "-o", "x.wav", "--voices", "-1"], nil, "toneshaper: --voices -1 must be 1...4096\n"),
        (["render", "keys.mid", "-o", "x.wav", "--voices=-1"], nil, "toneshaper: --voices -1 must be 1...4096\n"),
        (["play", "--midi-in", "-", "--device", "capture", "--no-realtime", "--voices", "0"], "0 on 60\n",
         "toneshaper: --voices 0 must be 1...4096\n"),
        (["play", "--midi-in", "-", "--device", "capture", "--no-realtime"], "0 on 60\n1e7 off 60\n",
         "toneshaper: stdin:2: time '1e7' is too late: a script's times must be below 10000000 seconds (about 16 weeks)\n"),
    ] as [([String], String?, String)])
    func optionMessages(arguments: [String], stdin: String?, message: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        try Self.midi([60]).write(to: URL(fileURLWithPath: work.path("keys.mid")))
        let r = try work.run(arguments, stdin: stdin)
        #expect(r.status != 0)
        #expect(r.stderr == message)
        #expect(!FileManager.default.fileExists(atPath: work.path("x.wav")))
    }

    @Test("a length of thousands of hours is said in hours and minutes, not 1.55e+03 h")
    func lengthInHoursAndMinutes() throws {
        let work = try Workspace()
        defer { work.remove() }
        // Division 24 ticks a quarter note at 120 bpm, one note after 0x0FFFFFFF ticks:
        // 268435455 / 24 × 0.5 s = 5592405.3 s = 1553 h 27 min.
        let bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 24] + Array("MTrk".utf8) + [0, 0, 0, 11,
            0xFF, 0xFF, 0xFF, 0x7F, 0x90, 60, 100, 0x00, 0xFF, 0x2F, 0x00]
        try Data(bytes).write(to: URL(fileURLWithPath: work.path("long.mid")))
        let r = try work.run(["render", "long.mid", "-o", "x.wav"])
        #expect(r.status != 0)
        #expect(r.stderr == "toneshaper: long.mid lasts 1553 h 27 min, longer than the 24 h limit (raise it with --max-length HOURS)\n")
        let half = try work.run(["render", "long.mid", "-o", "x.wav", "--max-length", "0.5"])
        #expect(half.stderr.contains("longer than the 30 min limit"), "\(half.stderr)")
    }

    @Test("files larger than any real one of their kind are refused unread, in one line naming the file and the bound")
    func oversizedFiles() throws {
        let work = try Workspace()
        defer { work.remove() }
        // Sparse files: large on paper, nothing written.
        for (name, size) in [("big.mid", (64 << 20) + 1), ("big.scl", (1 << 20) + 1), ("big.json", (2 << 20) + 1)] {
            let fd = open(work.path(name), O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
            close(fd)
        }
        let midi = try work.run(["render", "big.mid", "-o", "x.wav"])
        #expect(midi.stderr == "toneshaper: big.mid: is larger than 64 MB; not read\n")
        let scale = try work.run(["render", "big.mid", "-o", "x.wav", "--tuning", "big.scl"])
        #expect(scale.stderr == "toneshaper: big.scl: is larger than 1 MB; not a tuning file\n")
        let shape = try work.run(["render-shape", "big.json", "-o", "x.wav"])
        #expect(shape.stderr.hasPrefix("toneshaper: ") && shape.stderr.contains("big.json") && shape.stderr.contains("is larger than 2 MB"),
                "\(shape.stderr)")
        let endless = try work.run(["play", "--midi-in", "/dev/zero", "--device", "capture", "--no-realtime"])
        #expect(endless.stderr == "toneshaper: /dev/zero: is larger than 64 MB; not read\n")
        #expect(!FileManager.default.fileExists(atPath: work.path("x.wav")))
    }
}
