import Foundation
import Testing
import TestSupport
import ToneShaperMIDI
@testable import ToneShaperCore

@Suite("Instrument state: a saved session comes back as it was, and hostile bytes are refused")
struct InstrumentStateTests {
    // This machine's library: two built-ins and a shape of the user's own (program 40).
    static let pad = Shape(name: "pad", program: 0, points: [.init(time: 0, frequency: 440), .init(time: 1, frequency: 440)],
                           duration: 1, minFrequency: 400, maxFrequency: 500, wave: .triangle, amplitude: 0.4, fidelity: 100)
    static let bell = Shape(name: "bell", program: 1, points: [.init(time: 0, frequency: 880), .init(time: 0.3, frequency: 660)],
                            duration: 0.3, minFrequency: 600, maxFrequency: 900, wave: .sine, amplitude: 0.5,
                            echo: .init(delay: 0.05, volume: 0.3), fidelity: 50)
    static let mine = Shape(name: "mine", program: 40, points: [.init(time: 0, frequency: 220), .init(time: 0.2, frequency: 330),
                                                                .init(time: 0.4, frequency: 247)],
                            duration: 0.4, minFrequency: 200, maxFrequency: 400, wave: .bandLimitedSawtooth, amplitude: 0.3,
                            fidelity: 1000, rootNote: 57, attack: 0.01, release: 0.1)
    static let here = try! PresetLibrary(shapes: [pad, bell, mine])
    /// Another machine: only the first built-in, none of the user's shapes.
    static let elsewhere = try! PresetLibrary(shapes: [pad])
    static let pentatonic = "pentatonic\n5\n200.0\n400.0\n700.0\n900.0\n2/1\n"
    static let rate = 48_000.0

    static func cc(_ channel: UInt8, _ controller: UInt8, _ value: UInt8) -> MIDIMessage {
        .controlChange(channel: channel, controller: controller, value: value)
    }

    /// Settings a player makes before playing: knobs on three channels, program changes (one to a
    /// remapped program, one to the user's shape), a bend range by RPN 0 and a bend, echo.
    static let settings: [MIDIMessage] = [
        cc(1, 7, 90), cc(1, 71, 40), cc(1, 74, 30), cc(1, 10, 20),
        .programChange(channel: 0, program: 5), cc(0, 70, 100),
        .programChange(channel: 2, program: 40),
        cc(1, 101, 0), cc(1, 100, 0), cc(1, 6, 7), .pitchBend(channel: 1, value: 3000),
        cc(0, 91, 60), cc(0, 94, 50), .channelPressure(channel: 2, pressure: 10),
    ]

    /// Then notes on the three channels, over 0.6 s.
    static let notes: [EngineEvent] = [
        EngineEvent(offset: 100, .noteOn(channel: 0, note: 60, velocity: 100)),
        EngineEvent(offset: 1_000, .noteOn(channel: 1, note: 64, velocity: 90)),
        EngineEvent(offset: 5_000, .noteOn(channel: 2, note: 67, velocity: 110)),
        EngineEvent(offset: 12_000, .noteOff(channel: 0, note: 60, velocity: 64)),
        EngineEvent(offset: 15_000, .noteOff(channel: 1, note: 64, velocity: 64)),
        EngineEvent(offset: 20_000, .noteOff(channel: 2, note: 67, velocity: 64)),
    ]

    /// The instrument as the command line set it up here: presets per channel, a remapped program, a tuning.
    static func original() throws -> Engine {
        var config = EngineConfiguration(sampleRate: rate, voices: 16)
        config.masterGain = pow(10, -6 / 20)
        config.channelPresets = [0, 2] + Array(repeating: 0, count: 14)
        config.programPresets = [5: 1]
        config.tuning = Tuning(scale: try ScalaScale.parse(pentatonic))
        return Engine(library: here, configuration: config, controllerMap: .standard)
    }

    /// The state of `engine` after `played`, through its bytes, restored into a fresh engine on
    /// `base` (its controls applied unless `bare`).
    static func restored(from engine: Engine, after played: [MIDIMessage], base: PresetLibrary, bare: Bool = false) throws -> (Engine, InstrumentState) {
        var mirror = ControlMirror(engine: engine)
        for message in played { mirror.observe(message) }
        let state = try InstrumentState(engine: engine, mirror: mirror, scale: pentatonic, keymap: nil, channelFilter: nil,
                                        ignoresProgramChanges: false, gain: -6)
        var read = try InstrumentState(bytes: try state.encoded(), file: "state.json")
        if bare { read.controls = [] }
        return (read.engine(onto: base, sampleRate: rate), read)
    }

    /// The original after `settings`: applied, then left to settle as a session does between the
    /// knobs' last move and its save (`restore([])`: a silent part's ramps would otherwise stop
    /// half-way, which is no setting).
    @discardableResult
    static func settled(_ engine: Engine, after settings: [MIDIMessage]) -> Engine {
        _ = engine.render(frames: 9_600, events: settings.map { EngineEvent(offset: 0, $0) })
        engine.restore([])
        return engine
    }

    @Test("restored on a machine without the user's shapes, the instrument plays the same notes sample for sample")
    func restoredPlaysTheSame() throws {
        let engine = Self.settled(try Self.original(), after: Self.settings)
        let played = engine.render(frames: 28_800, events: Self.notes)
        let (copy, state) = try Self.restored(from: engine, after: Self.settings, base: Self.elsewhere)
        #expect(!Self.elsewhere.shapes.contains { $0.name == "mine" || $0.name == "bell" })
        #expect(state.shapes.map(\.name).sorted() == ["bell", "mine", "pad"])
        let replayed = copy.render(frames: 28_800, events: Self.notes)
        #expect(Signal.peak(played) > 0.05)
        #expect(Self.firstDifference(replayed, played) == nil)

        // The settings are what makes it the same: without them the restored instrument sounds otherwise.
        let (bare, _) = try Self.restored(from: engine, after: Self.settings, base: Self.elsewhere, bare: true)
        #expect(bare.render(frames: 28_800, events: Self.notes) != played)
    }

    /// `count` random settings on channels 1, 6, 11 and 16 (both zone managers): knobs, data entry,
    /// resets, programs (some unmapped), bends, pressure, RPN 0; `zoneChanges` MPE zone changes among them.
    static func randomSettings(seed: UInt64, count: Int, zoneChanges: Int) -> [MIDIMessage] {
        var random = SplitMix64(seed: seed)
        let controllers: [UInt8] = [1, 6, 7, 10, 38, 70, 71, 72, 73, 74, 91, 94, 98, 99, 100, 101, 121, 123]
        var settings: [MIDIMessage] = []
        for _ in 0..<count {
            let channel = UInt8(random.next(below: 4)) * 5 % 16
            switch random.next(below: 10) {
            case 0: settings.append(.programChange(channel: channel, program: [0, 1, 5, 40, 77][random.next(below: 5)]))
            case 1: settings.append(.pitchBend(channel: channel, value: Int16(random.next(below: 16_384) - 8192)))
            case 2: settings.append(.channelPressure(channel: channel, pressure: random.byte() & 127))
            case 3: settings += [Self.cc(channel, 101, 0), Self.cc(channel, 100, 0), Self.cc(channel, 6, UInt8(random.next(below: 30)))]
            default:
                let controller = controllers[random.next(below: controllers.count)]
                settings.append(Self.cc(channel, controller, controller == 6 ? UInt8(random.next(below: 30)) : random.byte() & 127))
            }
        }
        for _ in 0..<zoneChanges {
            let channel: UInt8 = random.next(below: 2) == 0 ? 0 : 15
            settings.insert(contentsOf: [Self.cc(channel, 101, 0), Self.cc(channel, 100, 6), Self.cc(channel, 6, UInt8(random.next(below: 16)))],
                            at: random.next(below: settings.count))
        }
        return settings
    }

    /// A note on each of the channels the random settings reach.
    static let fourNotes: [EngineEvent] = {
        var notes: [EngineEvent] = []
        for i in 0..<4 {
            let channel = UInt8(i * 5), note = UInt8(55 + 3 * i)
            notes.append(EngineEvent(offset: 200 * i, .noteOn(channel: channel, note: note, velocity: 100)))
            notes.append(EngineEvent(offset: 10_000 + 200 * i, .noteOff(channel: channel, note: note, velocity: 64)))
        }
        return notes.sorted { $0.offset < $1.offset }
    }()

    @Test("three thousand random settings, and six MPE zone changes among them, come back as the last of each in order",
          arguments: [(UInt64(21), 0), (UInt64(22), 0), (UInt64(23), 6), (UInt64(24), 6)])
    func lastOfEachInOrder(_ seed: UInt64, _ zoneChanges: Int) throws {
        let settings = Self.randomSettings(seed: seed, count: 3_000, zoneChanges: zoneChanges)
        let engine = try Self.original()
        Self.settled(engine, after: settings)
        let played = engine.render(frames: 19_200, events: Self.fourNotes)
        let (copy, state) = try Self.restored(from: engine, after: settings, base: Self.here)
        #expect(state.controls.count <= (zoneChanges + 1) * 4 * ControlMirror.maximumPerChannel)
        let replayed = copy.render(frames: 19_200, events: Self.fourNotes)
        #expect(Signal.peak(played) > 0.01)
        #expect(Self.firstDifference(replayed, played) == nil)
    }

    @Test("a thousand zone changes keep the settings within their bound")
    func manyZoneChanges() throws {
        var mirror = ControlMirror(controllerMap: .standard)
        for message in Self.randomSettings(seed: 7, count: 20_000, zoneChanges: 1_000) { mirror.observe(message) }
        #expect(mirror.messages.count <= InstrumentState.maximumControls)
        #expect(mirror.messages.count > 100)
    }

    /// Where two renders first differ (nil: nowhere), so a failure names a frame, not two arrays.
    static func firstDifference(_ a: [Float], _ b: [Float]) -> String? {
        guard a.count == b.count else { return "\(a.count) samples against \(b.count)" }
        guard let i = a.indices.first(where: { a[$0] != b[$0] }) else { return nil }
        return "sample \(i) (frame \(i / 2)): \(a[i]) against \(b[i])"
    }

    @Test("notes, the sustain pedal and note-stopping messages are not settings: nothing is kept of them")
    func notesAreNotSettings() {
        var mirror = ControlMirror(controllerMap: .standard)
        for message: MIDIMessage in [.noteOn(channel: 0, note: 60, velocity: 100), Self.cc(0, 64, 127), Self.cc(0, 123, 0),
                                     Self.cc(3, 120, 0), .noteOff(channel: 0, note: 60, velocity: 0),
                                     .polyPressure(channel: 0, note: 60, pressure: 99)] {
            mirror.observe(message)
        }
        #expect(mirror.messages.isEmpty)
        #expect(mirror.revision == 0)
        mirror.observe(Self.cc(3, 7, 50))
        mirror.observe(Self.cc(3, 7, 60))
        #expect(mirror.messages == [Self.cc(3, 7, 60)])
    }

    @Test("a state reads back to the same bytes, and a map to the same assignments")
    func bytesRoundTrip() throws {
        let engine = try Self.original()
        var mirror = ControlMirror(engine: engine)
        for message in Self.settings { mirror.observe(message) }
        let state = try InstrumentState(engine: engine, mirror: mirror, scale: Self.pentatonic, keymap: nil,
                                        channelFilter: 4, ignoresProgramChanges: false, gain: -7.5)
        let bytes = try state.encoded()
        let read = try InstrumentState(bytes: bytes)
        #expect(try read.encoded() == bytes)
        #expect(read.channelFilter == 4)
        #expect(read.gain == -7.5)
        #expect(read.controls == mirror.messages)
        #expect(read.tuning == Tuning(scale: try ScalaScale.parse(Self.pentatonic)))

        let map = try ControllerMapFile.parse("cc 7 volume 0 1\ncc 74 fidelity 1 2000 exponential channel 2\npressure amplitude 0.1 0.9\npolypressure duration 0.05 8 exponential channel 16\n")
        #expect(try ControllerMapFile.parse(ControllerMapFile.text(map)).assignments == map.assignments)
        #expect(try ControllerMapFile.parse(ControllerMapFile.text(.standard)).assignments == ControllerMap.standard.assignments)
    }

    /// A valid state's text, to spoil.
    static func validText() throws -> String {
        let engine = try Self.original()
        var mirror = ControlMirror(engine: engine)
        for message in Self.settings { mirror.observe(message) }
        let state = try InstrumentState(engine: engine, mirror: mirror, scale: pentatonic, keymap: nil, channelFilter: nil,
                                        ignoresProgramChanges: false, gain: -6)
        return String(decoding: try state.encoded(), as: UTF8.self)
    }

    @Test("a spoiled state is refused with one line naming the field and the value",
          arguments: [
            ("", "is not a ToneShaper state"),
            ("[1, 2]", "is not a ToneShaper state"),
            ("{\"format\": \"toneshaper-state\"}", "field 'version' = (missing)"),
            ("{\"format\": \"something-else\", \"version\": 1}", "\"format\" is 'something-else'"),
            ("{\"format\": \"toneshaper-state\", \"version\": 7}", "newer ToneShaper (state version 7"),
            ("\"version\" : 1", "\"version\" : 0"),
            ("\"gain\" : -6", "\"gain\" : 90"),
            ("\"voices\" : 16", "\"voices\" : 100000"),
            ("\"duration\" : 0.3", "\"duration\" : -1"),
            ("\"attack\" : 0.01", "\"attack\" : null"),
            ("\"program\" : 5", "\"program\" : 500"),
            ("\"program\" : 5", "\"note\" : 5"),
            ("\"bend\" : 3000", "\"bend\" : 9000"),
            ("\"lower\" : 0", "\"lower\" : 16"),
            ("\"map\" : \"", "\"map\" : \"cc 300 volume 0 1\\n"),
            ("\"scale\" : \"", "\"scale\" : \"x\\n3\\n100.0\\n"),
            ("\"channels\" : [", "\"channels\" : [99, "),
          ])
    func refused(_ spoil: (String, String)) throws {
        let text = try Self.validText()
        let spoiled: String
        if spoil.1.contains("is not a ToneShaper state") || spoil.0.hasPrefix("{") {
            spoiled = spoil.0
        } else {
            #expect(text.contains(spoil.0), "the valid state has \(spoil.0)")
            spoiled = text.replacingOccurrences(of: spoil.0, with: spoil.1)
        }
        let expected: [String: String] = [
            "\"version\" : 0": "field 'version' = 0", "\"gain\" : 90": "field 'gain' = 90.0: must be -60...24 dB",
            "\"voices\" : 100000": "field 'voices' = 100000", "\"duration\" : -1": "shapes[",
            "\"attack\" : null": "field 'shapes[1].attack' = null", "\"program\" : 500": "program = 500: must be 0...127",
            "\"note\" : 5": "is not one setting", "\"bend\" : 9000": "bend = 9000: must be -8192...8191",
            "\"lower\" : 16": "field 'mpe': lower:16", "\"map\" : \"cc 300 volume 0 1\\n": "state.json: map:1: controller '300'",
            "\"scale\" : \"x\\n3\\n100.0\\n": "state.json: scale:4: pitch 'pentatonic'",
            "\"channels\" : [99, ": "channels",
        ]
        let want = expected[spoil.1] ?? spoil.1
        do {
            _ = try InstrumentState(bytes: Array(spoiled.utf8), file: "state.json")
            Issue.record("accepted a state with \(spoil.1)")
        } catch {
            #expect(error.description.hasPrefix("state.json"))
            #expect(error.description.contains(want), "\(error.description)")
            #expect(!error.description.contains("\n"))
        }
    }

    @Test("a state too large, too deep or too long in any list is refused before it is used")
    func bounded() throws {
        func refusal(_ bytes: [UInt8]) -> String? {
            do { _ = try InstrumentState(bytes: bytes, file: "s"); return nil } catch { return error.description }
        }
        #expect(refusal([UInt8](repeating: 32, count: InstrumentState.maximumBytes + 1))?.contains("larger than 4 MB") == true)
        #expect(refusal(Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)) != nil)
        let text = try Self.validText()
        let manyControls = text.replacingOccurrences(of: "\"controls\" : [", with: "\"controls\" : ["
            + String(repeating: "{\"channel\": 1, \"program\": 3},", count: InstrumentState.maximumControls + 1))
        #expect(refusal(Array(manyControls.utf8))?.contains("more than the 4768 settings") == true)
        let noteControl = text.replacingOccurrences(of: "\"controls\" : [", with: "\"controls\" : [{\"channel\": 1, \"note\": 60},")
        #expect(refusal(Array(noteControl.utf8))?.contains("is not one setting") == true)
        // A string where a number belongs is quoted on one line, cut short (the fuzzer's first find).
        let longText = text.replacingOccurrences(of: "\"voices\" : 16", with: "\"voices\" : \"cc 7 volume 0 1\\n\(String(repeating: "x", count: 5000))\"")
        let quoted = refusal(Array(longText.utf8))
        #expect(quoted?.contains("field 'voices' = 'cc 7 volume 0 1\\nxxx") == true, "\(quoted ?? "")")
        #expect(quoted.map { !$0.contains("\n") && $0.count <= 401 } == true)
    }

    @Test("two thousand randomly damaged states are each refused in one line or read whole and playable")
    func damaged() throws {
        let bytes = Array(try Self.validText().utf8)
        var random = SplitMix64(seed: 2121)
        var accepted = 0
        for _ in 0..<2_000 {
            var copy = bytes
            for _ in 0..<(1 + random.next(below: 4)) {
                let at = random.next(below: copy.count)
                switch random.next(below: 3) {
                case 0: copy[at] = random.byte()
                case 1: copy.remove(at: at)
                default: copy.insert(Array("0-9e,:]}\"".utf8)[random.next(below: 9)], at: at)
                }
            }
            do {
                let state = try InstrumentState(bytes: copy, file: "s")
                accepted += 1
                let engine = state.engine(onto: Self.elsewhere, sampleRate: Self.rate)
                let out = engine.render(frames: 256, events: [EngineEvent(offset: 0, .noteOn(channel: 0, note: 60, velocity: 100))])
                #expect(out.allSatisfy { abs($0) <= 1 })
                #expect(try InstrumentState(bytes: try state.encoded()).encoded() == (try state.encoded()))
            } catch {
                #expect(!error.description.isEmpty && !error.description.contains("\n"))
            }
        }
        #expect(accepted > 0 && accepted < 2_000)
    }
}
