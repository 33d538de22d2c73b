import Foundation
import Testing
import ToneShaperMIDI
@testable import ToneShaperCore

@Suite("Controller mappings: knobs reach parameters through a file")
struct ControllerMapTests {
    static let defaultMap = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Mappings/default.map").path

    @Test("the shipped Mappings/default.map is exactly the engine's built-in standard map")
    func shippedDefault() throws {
        let map = try ControllerMapFile.load(path: Self.defaultMap)
        #expect(map.assignments == ControllerMap.standard.assignments)
        #expect(map.assignment(channel: 0, controller: 7)?.parameter == .volume)
        #expect(map.assignment(channel: 9, controller: 64)?.parameter == .sustain)
        #expect(map.assignment(channel: 3, controller: 74)?.parameter == .fidelity)
        #expect(map.assignment(channel: 3, controller: 71)?.parameter == .duration)
        #expect(map.assignment(channel: 3, controller: 70)?.parameter == .amplitude)
    }

    @Test("a map of 40,000 lines loads, and the last line for a knob wins (no 16-bit index)")
    func manyLines() throws {
        var text = ""
        for i in 0..<40_000 { text += "cc \(1 + i % 100) \(i % 2 == 0 ? "amplitude" : "duration") 0.1 1\n" }
        text += "cc 21 fidelity 1 2000\n"
        let map = try ControllerMapFile.parse(text)
        #expect(map.assignments.count == 40_001)
        #expect(map.assignment(channel: 5, controller: 21)?.parameter == .fidelity)
        #expect(map.assignment(channel: 5, controller: 100)?.parameter == .duration)  // line 39,999
    }

    @Test("a map written with CRLF line ends reads as the same map")
    func crlf() throws {
        let unix = "cc 21 amplitude 0 1\ncc 22 fidelity 1 2000 exponential channel 3\n"
        let windows = try ControllerMapFile.parse(unix.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(windows.assignments == (try ControllerMapFile.parse(unix)).assignments)
        #expect(windows.assignments.count == 2)
    }

    @Test("a channel line wins over an any-channel line for its channel only; curves spread the range")
    func channelsAndCurves() throws {
        let map = try ControllerMapFile.parse("""
            cc 21 amplitude 0 1
            cc 21 duration 0.1 10 exponential channel 2   # only channel 2
            """)
        #expect(map.assignment(channel: 0, controller: 21)?.parameter == .amplitude)
        let d = try #require(map.assignment(channel: 1, controller: 21))
        #expect(d.parameter == .duration)
        #expect(abs(d.value(for: 0) - 0.1) < 1e-12 && abs(d.value(for: 127) - 10) < 1e-9)
        // Exponential: the middle of the knob is the geometric middle of the range.
        #expect(abs(d.value(for: 64) - 0.1 * pow(100, 64.0 / 127)) < 1e-9)
        #expect(abs(map.assignment(channel: 0, controller: 21)!.value(for: 64) - 64.0 / 127) < 1e-12)
    }

    @Test("a bad line is refused with the file, the line number and what is wrong",
          arguments: [("cc 7 loudness 0 1", "unknown parameter 'loudness'"),
                      ("cc 300 amplitude 0 1", "controller '300'"),
                      ("cc 123 amplitude 0 1", "channel mode"),
                      ("cc 7 amplitude 0", "found 4 fields"),
                      ("cc 7 amplitude zero 1", "minimum 'zero'"),
                      ("cc 7 amplitude 0 1 wobbly", "unexpected 'wobbly'"),
                      ("cc 7 amplitude 0 1 channel 17", "channel '17'"),
                      ("cc 91 echo-volume 0 0.9 exponential", "exponential curve needs"),
                      ("cc 7 amplitude 0 5", "outside amplitude's range"),
                      ("knob 7 amplitude 0 1", "expected 'cc'")])
    func badLines(line: String, expected: String) {
        let text = "# a comment\n\ncc 1 vibrato 0 1\n" + line + "\n"
        do {
            _ = try ControllerMapFile.parse(text, file: "my.map")
            Issue.record("accepted: \(line)")
        } catch {
            let message = String(describing: error)
            #expect(message.hasPrefix("my.map:4: "), "\(message)")
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test("a mapped knob changes the sound through the engine: CC 74 low makes the article's curve coarse")
    func knobReachesEngine() throws {
        let library = try PresetLibrary.load(directory: URL(fileURLWithPath: Self.defaultMap)
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Presets").path)
        let index = try #require(library.index(named: "article-curve"))
        var config = EngineConfiguration()
        config.channelPresets = Array(repeating: index, count: 16)
        func render(fidelityCC: UInt8?) -> [Float] {
            let engine = Engine(library: library, configuration: config)
            var events: [EngineEvent] = []
            if let cc = fidelityCC { events.append(EngineEvent(offset: 0, .controlChange(channel: 0, controller: 74, value: cc))) }
            events.append(EngineEvent(offset: 0, .noteOn(channel: 0, note: 69, velocity: 100)))
            return engine.render(frames: 24_000, events: events)
        }
        let fine = render(fidelityCC: nil), coarse = render(fidelityCC: 0)
        let difference = zip(fine, coarse).map { abs($0 - $1) }.max() ?? 0
        #expect(difference > 0.05, "fidelity N = 1 should change the wave, max difference \(difference)")
    }
}

@Suite("Wave type by controller index")
struct WaveTypeIndexTests {
    @Test("WaveType(index:) follows allCases, and out-of-range indices clamp to the ends")
    func followsAllCases() {
        #expect(WaveType.count == WaveType.allCases.count)
        for (i, wave) in WaveType.allCases.enumerated() { #expect(WaveType(index: i) == wave) }
        #expect(WaveType(index: -3) == WaveType.allCases.first)
        #expect(WaveType(index: 99) == WaveType.allCases.last)
    }
}
