import AllocationCounter
import CCLAP
import EngineFixtures
import Foundation
import Testing
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// toneshaper.clap as a CLAP host drives it, through clap_entry: what it plays, how its notes,
/// note expressions, parameters and state behave, and that nothing a host sends can crash it.
@Suite("The CLAP instrument")
struct CLAPPluginTests {
    static let rate = 48_000.0

    // MARK: - Fixtures

    static func demo() throws -> (messages: [TimedMIDIMessage], frames: Int) {
        let path = BundledShapesTests.root.appendingPathComponent("Examples/demo.mid").path
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path)")
        let file = try MIDIFile.parse([UInt8](data))
        return (file.timedMessages(sampleRate: rate).inFrameOrder(), Int(((file.durationSeconds + 2) * rate).rounded()))
    }

    /// `toneshaper render` of the messages: its default gain (−6 dB) and voices (32).
    static func offlineRender(_ messages: [TimedMIDIMessage], frames: Int) -> [Float] {
        var config = EngineConfiguration(sampleRate: rate, voices: 32)
        config.masterGain = pow(10, -6.0 / 20)
        return OfflineRenderer(engine: Engine(library: Fixtures.library, configuration: config)).renderAll(messages, totalFrames: frames)
    }

    static func firstDifference(_ a: [Float], _ b: [Float]) -> Int? {
        if a.count != b.count { return min(a.count, b.count) / 2 }
        return zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }.map { $0.offset / 2 }
    }

    /// A drawn shape no shipped one is: 440 Hz held (root A4), or a sweep with a bend in it whose
    /// sound depends on fidelity (its middle points move as N coarsens time).
    static func shape(_ name: String, points: String, root: Int, fidelity: Int = 100) -> String {
        """
        {"name": "\(name)", "program": 0, "duration": 1.0, "minFrequency": 20, "maxFrequency": 2000,
         "points": \(points), "wave": "sine", "amplitude": 0.5, "envelope": {"kind": "constant"},
         "echo": {"delay": 0.25, "volume": 0}, "fidelity": \(fidelity), "fourierTerms": 10, "rootNote": \(root),
         "attack": 0.005, "release": 0.05}
        """
    }
    static let steady = shape("steady", points: "[[0, 440], [1, 440]]", root: 69)
    static let sweep = shape("sweep", points: "[[0, 200], [0.31, 400], [0.57, 220], [1, 300]]", root: 60, fidelity: 50)

    /// An instrument on that one shape, as state bytes: how a user-drawn shape reaches a plugin.
    static func state(of json: String) throws -> (bytes: [UInt8], library: PresetLibrary) {
        let library = try PresetLibrary(shapes: [try ShapeFile.decode(Data(json.utf8))])
        return (try Instrument(library: library, sampleRate: rate).state(), library)
    }

    // MARK: - The entry

    @Test("the factory offers one plugin, org.toneshaper.instrument named ToneShaper, an instrument, synthesizer, stereo")
    func descriptor() throws {
        let f = CLAPHost.factory
        #expect(f.pointee.get_plugin_count(f) == 1)
        let d = try #require(f.pointee.get_plugin_descriptor(f, 0))
        #expect(String(cString: d.pointee.id) == "org.toneshaper.instrument")
        #expect(String(cString: d.pointee.name) == "ToneShaper")
        var features: [String] = []
        var p = d.pointee.features!
        while let s = p.pointee { features.append(String(cString: s)); p += 1 }
        #expect(features == ["instrument", "synthesizer", "stereo"])
        #expect(f.pointee.get_plugin_descriptor(f, 1) == nil)
        #expect(f.pointee.create_plugin(f, CLAPHost.host, "org.someone.else") == nil)
        #expect(clap_entry.get_factory("clap.something-else") == nil)
    }

    @Test("one note input taking CLAP notes, MIDI and MPE (CLAP preferred), one stereo output")
    func ports() throws {
        let plugin = try #require(CLAPPlugin())
        let notes = plugin.ext("clap.note-ports", clap_plugin_note_ports_t.self)
        #expect(notes.pointee.count(plugin.plugin, true) == 1)
        #expect(notes.pointee.count(plugin.plugin, false) == 0)
        var info = clap_note_port_info_t()
        #expect(notes.pointee.get(plugin.plugin, 0, true, &info))
        #expect(info.supported_dialects == UInt32(CLAP_NOTE_DIALECT_CLAP.rawValue | CLAP_NOTE_DIALECT_MIDI.rawValue | CLAP_NOTE_DIALECT_MIDI_MPE.rawValue))
        #expect(info.preferred_dialect == UInt32(CLAP_NOTE_DIALECT_CLAP.rawValue))
        let audio = plugin.ext("clap.audio-ports", clap_plugin_audio_ports_t.self)
        #expect(audio.pointee.count(plugin.plugin, false) == 1)
        #expect(audio.pointee.count(plugin.plugin, true) == 0)
        var port = clap_audio_port_info_t()
        #expect(audio.pointee.get(plugin.plugin, 0, false, &port))
        #expect(port.channel_count == 2 && String(cString: port.port_type) == "stereo")
        #expect(!audio.pointee.get(plugin.plugin, 1, false, &port))
    }

    // MARK: - Playing what render plays

    @Test("demo.mid sent as CLAP MIDI events in blocks of 32, 256 and 1024 frames is `render`'s output sample for sample",
          arguments: [32, 256, 1024])
    func demoAsMIDI(block: Int) throws {
        let (messages, frames) = try Self.demo()
        let reference = Self.offlineRender(messages, frames: frames)
        let plugin = try #require(CLAPPlugin())
        var next = 0
        let output = plugin.play(frames: frames, block: block) { start, count, list in
            while next < messages.count && messages[next].frame < Int64(start + count) {
                list.midi(Int(messages[next].frame) - start, messages[next].message.bytes)
                next += 1
            }
        }
        #expect(Self.firstDifference(output, reference) == nil)
        #expect(reference.contains { abs($0) > 0.05 })
    }

    @Test("demo.mid's notes sent as CLAP notes (velocity v/127, ids) and the rest as MIDI is `render`'s output sample for sample")
    func demoAsNotes() throws {
        let (messages, frames) = try Self.demo()
        let reference = Self.offlineRender(messages, frames: frames)
        let plugin = try #require(CLAPPlugin())
        var next = 0, id: Int32 = 0
        let output = plugin.play(frames: frames, block: 256) { start, count, list in
            while next < messages.count && messages[next].frame < Int64(start + count) {
                let at = Int(messages[next].frame) - start
                switch messages[next].message {
                case .noteOn(let c, let k, let v) where v > 0:
                    list.note(Int32(CLAP_EVENT_NOTE_ON), at, id: id, channel: Int(c), key: Int(k), velocity: Double(v) / 127)
                    id += 1
                case .noteOn(let c, let k, _), .noteOff(let c, let k, _):
                    list.note(Int32(CLAP_EVENT_NOTE_OFF), at, channel: Int(c), key: Int(k), velocity: 0)
                default:
                    list.midi(at, messages[next].message.bytes)
                }
                next += 1
            }
        }
        #expect(id > 10)
        #expect(Self.firstDifference(output, reference) == nil)
        // Every note the host started was reported ended once its voice fell silent.
        #expect(Set(plugin.output.noteEnds) == Set(0..<id))
    }

    // MARK: - Note expressions

    /// Keys 69 (id 1) and 76 (id 2) on the held 440 Hz shape, `expressions` at frame 4800; the left
    /// channel over the second second.
    static func twoNotes(_ expressions: (EventList) -> Void) throws -> [Double] {
        try notes(on: steady, keys: (69, 76), heard: 48_000..<96_000, expressions)
    }

    /// Notes id 1 and id 2 started at frame 0 on `shape`, `expressions` at frame 4800, 2 s in 480-frame
    /// blocks; the left channel over `heard`.
    static func notes(on shape: String, keys: (Int, Int), heard: Range<Int>, _ expressions: (EventList) -> Void) throws -> [Double] {
        let plugin = try #require(CLAPPlugin(state: try state(of: shape).bytes))
        let out = plugin.play(frames: 96_000, block: 480) { start, _, list in
            if start == 0 {
                list.note(Int32(CLAP_EVENT_NOTE_ON), 0, id: 1, key: keys.0, velocity: 0.8)
                list.note(Int32(CLAP_EVENT_NOTE_ON), 0, id: 2, key: keys.1, velocity: 0.8)
            }
            if start == 4800 { expressions(list) }
        }
        return Measure.left(out, heard)
    }

    @Test("tuning +1 semitone on one of two notes: its frequency × 2^(1/12), the other's unchanged; by key and channel too")
    func tuning() throws {
        let a = 440.0, e = 440 * pow(2, 7.0 / 12)
        let plain = try Self.twoNotes { _ in }
        #expect(abs(Measure.peak(plain, in: (a - 20)...(a + 40)) - a) < 0.2)
        #expect(abs(Measure.peak(plain, in: (e - 40)...(e + 20)) - e) < 0.2)

        let tuned = try Self.twoNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_TUNING), 0, note: 1, 1) }
        #expect(abs(Measure.peak(tuned, in: (a - 20)...(a + 40)) - a * pow(2, 1.0 / 12)) < 0.2)
        #expect(abs(Measure.peak(tuned, in: (e - 40)...(e + 20)) - e) < 0.2)

        // No id: key 76 on channel 0 named directly, two semitones down; key 69 stays.
        let byKey = try Self.twoNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_TUNING), 0, channel: 0, key: 76, -2) }
        #expect(abs(Measure.peak(byKey, in: (a - 20)...(a + 15)) - a) < 0.2)
        #expect(abs(Measure.peak(byKey, in: (e - 80)...(e + 20)) - e * pow(2, -2.0 / 12)) < 0.2)
    }

    @Test("pressure 0.25 on one note plays it at a quarter of its level; the other keeps its own")
    func pressure() throws {
        let a = 440.0, e = 440 * pow(2, 7.0 / 12)
        let plain = try Self.twoNotes { _ in }
        let pressed = try Self.twoNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_PRESSURE), 0, note: 2, 0.25) }
        let ratioE = Measure.magnitude(pressed, at: e) / Measure.magnitude(plain, at: e)
        let ratioA = Measure.magnitude(pressed, at: a) / Measure.magnitude(plain, at: a)
        #expect(abs(ratioE - 0.25) < 0.005, "the pressed note at \(ratioE) of its level")
        #expect(abs(ratioA - 1) < 0.001, "the other note at \(ratioA) of its level")
    }

    @Test("volume scales one note's level (0.5 halves it, 2 doubles it) and multiplies with its pressure; the other note keeps its own")
    func volume() throws {
        let a = 440.0, e = 440 * pow(2, 7.0 / 12)
        let plain = try Self.twoNotes { _ in }
        let halved = try Self.twoNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_VOLUME), 0, note: 2, 0.5) }
        #expect(abs(Measure.magnitude(halved, at: e) / Measure.magnitude(plain, at: e) - 0.5) < 0.005)
        #expect(abs(Measure.magnitude(halved, at: a) / Measure.magnitude(plain, at: a) - 1) < 0.001)

        let doubled = try Self.twoNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_VOLUME), 0, channel: 0, key: 69, 2) }
        #expect(abs(Measure.magnitude(doubled, at: a) / Measure.magnitude(plain, at: a) - 2) < 0.01)
        #expect(abs(Measure.magnitude(doubled, at: e) / Measure.magnitude(plain, at: e) - 1) < 0.001)

        // Pressure after volume on the same note: neither undoes the other.
        let both = try Self.twoNotes { list in
            list.expression(Int32(CLAP_NOTE_EXPRESSION_VOLUME), 0, note: 2, 0.5)
            list.expression(Int32(CLAP_NOTE_EXPRESSION_PRESSURE), 0, note: 2, 0.5)
        }
        let ratio = Measure.magnitude(both, at: e) / Measure.magnitude(plain, at: e)
        #expect(abs(ratio - 0.25) < 0.005, "volume 0.5 and pressure 0.5 left the note at \(ratio) of its level")
    }

    @Test("amplitude modulated on one note (−0.25 from 0.5) halves that note only")
    func perNoteAmplitude() throws {
        let a = 440.0, e = 440 * pow(2, 7.0 / 12)
        let plain = try Self.twoNotes { _ in }
        let modulated = try Self.twoNotes { $0.modulation(0, 0, -0.25, note: 1) }
        #expect(abs(Measure.magnitude(modulated, at: a) / Measure.magnitude(plain, at: a) - 0.5) < 0.005)
        #expect(abs(Measure.magnitude(modulated, at: e) / Measure.magnitude(plain, at: e) - 1) < 0.001)
    }

    /// Keys 36 (id 1) and 84 (id 2) on the sweep, four octaves apart (50–100 Hz and 800–1600 Hz):
    /// each note's sound is in a band of its own.
    static func sweepNotes(_ expressions: (EventList) -> Void) throws -> [Double] {
        try notes(on: sweep, keys: (36, 84), heard: 48_000..<64_384, expressions)
    }

    static func bandEnergy(_ x: [Double], _ band: ClosedRange<Double>) -> Double {
        stride(from: band.lowerBound, through: band.upperBound, by: 3).reduce(0) { $0 + pow(Measure.magnitude(x, at: $1), 2) }
    }

    @Test("brightness on one note changes that note's fidelity (its sound) and leaves the other note's band untouched; per-note fidelity modulation too")
    func brightness() throws {
        let plain = try Self.sweepNotes { _ in }
        for changed in [try Self.sweepNotes { $0.expression(Int32(CLAP_NOTE_EXPRESSION_BRIGHTNESS), 0, note: 2, 0) },
                        try Self.sweepNotes { $0.modulation(4, 0, -95, note: 2) }] {
            let difference = zip(changed, plain).map { $0 - $1 }
            let low = Self.bandEnergy(plain, 40...110), high = Self.bandEnergy(plain, 750...1700)
            #expect(Self.bandEnergy(difference, 750...1700) > 0.01 * high, "the bright note did not change")
            #expect(Self.bandEnergy(difference, 40...110) < 1e-8 * low, "the other note changed")
        }
    }

    // MARK: - Parameters

    @Test("the table's controls by name and id in their units, and the shape menu (id 100); text both ways")
    func parameters() throws {
        let plugin = try #require(CLAPPlugin())
        let params = plugin.ext("clap.params", clap_plugin_params_t.self)
        let table = InstrumentParameter.table
        #expect(params.pointee.count(plugin.plugin) == UInt32(table.count + 1))
        var byName: [String: clap_param_info_t] = [:]
        for i in 0..<params.pointee.count(plugin.plugin) {
            var info = clap_param_info_t()
            #expect(params.pointee.get_info(plugin.plugin, i, &info))
            let name = withUnsafeBytes(of: info.name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            byName[name] = info
        }
        #expect(!params.pointee.get_info(plugin.plugin, UInt32(table.count + 1), nil))
        for row in table {
            let info = try #require(byName[row.name], "no parameter named \(row.name)")
            #expect(info.id == UInt32(row.id) && info.min_value == row.range.lowerBound && info.max_value == row.range.upperBound)
            #expect(info.default_value == row.defaultValue)
            #expect(info.flags & UInt32(CLAP_PARAM_IS_AUTOMATABLE) != 0 && info.flags & UInt32(CLAP_PARAM_IS_MODULATABLE) != 0)
            let perNote = info.flags & UInt32(CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID) != 0
            #expect(perNote == (row.parameter == .amplitude || row.parameter == .fidelity))
        }
        let shape = try #require(byName["Shape"])
        #expect(shape.id == 100 && shape.flags & UInt32(CLAP_PARAM_IS_STEPPED) != 0)
        #expect(shape.max_value == Double(Fixtures.library.listedCount - 1))

        var text = [CChar](repeating: 0, count: 64)
        #expect(params.pointee.value_to_text(plugin.plugin, 7, 0.25, &text, 64))
        #expect(String(cString: text) == "0.25 s")
        #expect(params.pointee.value_to_text(plugin.plugin, 100, 8, &text, 64))
        #expect(String(cString: text) == Fixtures.library.shapes[8].name)
        var value = 0.0
        #expect(params.pointee.text_to_value(plugin.plugin, 7, "0.5 s", &value) && value == 0.5)
        #expect(params.pointee.text_to_value(plugin.plugin, 100, Fixtures.library.shapes[8].name, &value) && value == 8)
        #expect(params.pointee.text_to_value(plugin.plugin, 11, "square", &value) && value == Double(WaveType.allCases.firstIndex(of: .square)!))
        #expect(!params.pointee.text_to_value(plugin.plugin, 7, "loud", &value))
        #expect(!params.pointee.text_to_value(plugin.plugin, 55, "1", &value))
        #expect(!params.pointee.get_value(plugin.plugin, 55, &value))
        #expect(!params.pointee.value_to_text(plugin.plugin, 7, .nan, &text, 64))

        // flush outside processing keeps the value and the host reads it back.
        let list = EventList()
        list.parameter(4, 0, 250)
        params.pointee.flush(plugin.plugin, &list.list, nil)
        #expect(params.pointee.get_value(plugin.plugin, 4, &value) && value == 250)
    }

    @Test("Volume automated at frame 48 000 changes the output from that frame and not before")
    func automationAtItsFrame() throws {
        let (messages, frames) = try Self.demo()
        func play(_ volume: Double?) throws -> [Float] {
            let plugin = try #require(CLAPPlugin())
            var next = 0, inserted = volume == nil
            return plugin.play(frames: min(frames, 96_000), block: 256) { start, count, list in
                let here = (start..<(start + count)).contains(48_000)
                while next < messages.count && messages[next].frame < Int64(start + count) {
                    if here && !inserted && messages[next].frame >= 48_000 { list.parameter(1, 48_000 - start, volume!); inserted = true }
                    list.midi(Int(messages[next].frame) - start, messages[next].message.bytes)
                    next += 1
                }
                if here && !inserted { list.parameter(1, 48_000 - start, volume!); inserted = true }
            }
        }
        let plain = try play(nil), quiet = try play(0.1)
        #expect(Self.firstDifference(plain, quiet) == 48_000)
    }

    @Test("a note the host started is reported ended (NOTE_END with its id) once its release has died away")
    func noteEnd() throws {
        let plugin = try #require(CLAPPlugin())
        _ = plugin.play(frames: 48_000, block: 256) { start, _, list in
            if start == 0 { list.note(Int32(CLAP_EVENT_NOTE_ON), 10, id: 42, key: 60, velocity: 1) }
            if start == 2560 { list.note(Int32(CLAP_EVENT_NOTE_OFF), 0, id: 42, key: 60, velocity: 0) }
            if start == 2560 { #expect(plugin.output.noteEnds.isEmpty, "ended while held") }
        }
        #expect(plugin.output.noteEnds == [42])
    }

    // MARK: - State

    @Test("a user-drawn shape in a state plays in a fresh instance, and the state it saves plays the same in the next")
    func stateCarriesTheShape() throws {
        let (bytes, library) = try Self.state(of: Self.sweep)
        func notes(_ start: Int, _ count: Int, _ list: EventList) {
            if start == 0 { list.note(Int32(CLAP_EVENT_NOTE_ON), 5, id: 1, key: 60, velocity: 0.9) }
            if start == 24_000 { list.note(Int32(CLAP_EVENT_NOTE_OFF), 0, id: 1, key: 60, velocity: 0) }
        }
        // The same notes on an instrument holding the drawn shape itself.
        let direct = Instrument(library: library, sampleRate: Self.rate)
        var reference: [Float] = [], left = [Float](repeating: 0, count: 240), right = left
        for start in stride(from: 0, to: 48_000, by: 240) {
            var events: [InstrumentEvent] = []
            if start == 0 { events.append(InstrumentEvent(frame: 5, .midi(0x90, 60, 114))) }
            if start == 24_000 { events.append(InstrumentEvent(frame: 0, .midi(0x80, 60, 0))) }
            events.withUnsafeBufferPointer { ev in direct.process(frames: 240, events: ev, left: &left, right: &right) }
            for i in 0..<240 { reference.append(left[i]); reference.append(right[i]) }
        }
        let first = try #require(CLAPPlugin(state: bytes))
        let heard = first.play(frames: 48_000, block: 240, notes)
        #expect(Self.firstDifference(heard, reference) == nil)
        #expect(heard.contains { abs($0) > 0.05 })
        // The shipped shapes on their own play something else (so the state is what made it so).
        let shipped = try #require(CLAPPlugin())
        #expect(Self.firstDifference(shipped.play(frames: 48_000, block: 240, notes), reference) != nil)

        // Fidelity set by the host, saved with the state, restored in a new instance.
        let list = EventList()
        list.parameter(4, 0, 7)
        first.process(0, list)
        let saved = try #require(first.save())
        #expect(saved.starts(with: try Instrument(state: bytes, library: Fixtures.library, sampleRate: Self.rate).state()))
        let second = try #require(CLAPPlugin(state: saved))
        var value = 0.0
        #expect(second.ext("clap.params", clap_plugin_params_t.self).pointee.get_value(second.plugin, 4, &value) && value == 7)
        let third = try #require(CLAPPlugin(state: bytes))
        third.process(0, list)
        #expect(Self.firstDifference(second.play(frames: 48_000, block: 240, notes), third.play(frames: 48_000, block: 240, notes)) == nil)
    }

    @Test("a state loaded while the instance plays takes over from the next block, as a fresh instance with it plays")
    func loadWhilePlaying() throws {
        let (bytes, _) = try Self.state(of: Self.sweep)
        func notes(_ start: Int, _ count: Int, _ list: EventList) {
            if start == 0 { list.note(Int32(CLAP_EVENT_NOTE_ON), 0, id: 3, key: 62, velocity: 0.6) }
        }
        let playing = try #require(CLAPPlugin())
        _ = playing.play(frames: 4800, block: 240, notes)
        #expect(playing.load(bytes))
        #expect(playing.load(bytes))  // twice before a block: the first never plays, the second does
        let heard = playing.play(frames: 24_000, block: 240, notes)
        let fresh = try #require(CLAPPlugin(state: bytes))
        #expect(Self.firstDifference(heard, fresh.play(frames: 24_000, block: 240, notes)) == nil)
        let saved = try #require(playing.save())
        #expect(saved.starts(with: try Instrument(state: bytes, library: Fixtures.library, sampleRate: Self.rate).state()))
    }

    @Test("hostile state bytes are refused (false) and the instance plays on as before")
    func hostileState() throws {
        let source = try #require(CLAPPlugin())
        let good = try #require(source.save())
        var generator = SystemRandomNumberGenerator()
        var spoiled: [[UInt8]] = [[], [0], Array("{}".utf8), Array(good.prefix(good.count / 2)),
                                  good + Array("\0toneshaper-clap-controls 1\n999 1\n".utf8),
                                  Array(good.prefix(while: { $0 != 0 })) + Array("\0toneshaper-clap-controls 1\n4 nan\n".utf8),
                                  Array(good.prefix(while: { $0 != 0 })) + Array("\0other 1\n".utf8),
                                  [UInt8](repeating: 0x7B, count: InstrumentState.maximumBytes + 5000)]
        for _ in 0..<40 {
            var b = good
            for _ in 0..<8 { b[Int.random(in: 0..<b.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            spoiled.append(b)
        }
        let plugin = try #require(CLAPPlugin())
        let untouched = try #require(CLAPPlugin())
        func notes(_ start: Int, _ count: Int, _ list: EventList) {
            if start == 0 { list.note(Int32(CLAP_EVENT_NOTE_ON), 0, key: 64, velocity: 0.7) }
        }
        for bytes in spoiled where bytes != good { _ = plugin.load(bytes) }
        #expect(!plugin.load([]) && !plugin.load(Array("{}".utf8)))
        #expect(Self.firstDifference(plugin.play(frames: 9600, block: 256, notes), untouched.play(frames: 9600, block: 256, notes)) == nil)
    }

    // MARK: - Real time and hostile hosts

    @Test("process allocates nothing: notes, MIDI, expressions, parameters, modulation, note ends")
    func noAllocation() throws {
        let plugin = try #require(CLAPPlugin(state: try Self.state(of: Self.sweep).bytes))
        let list = EventList()
        func fill(_ i: Int) {
            list.clear()
            list.note(Int32(CLAP_EVENT_NOTE_ON), 3, id: Int32(i), channel: i % 3, key: 40 + i % 30, velocity: 0.5)
            list.midi(10, [0x91, UInt8(50 + i % 20), 90])
            list.expression(Int32(CLAP_NOTE_EXPRESSION_TUNING), 20, note: Int32(i), 0.5)
            list.expression(Int32(CLAP_NOTE_EXPRESSION_PRESSURE), 30, note: Int32(i), 0.6)
            list.expression(Int32(CLAP_NOTE_EXPRESSION_VOLUME), 35, note: Int32(i), 1.5)
            list.expression(Int32(CLAP_NOTE_EXPRESSION_BRIGHTNESS), 40, note: Int32(i), Double(i % 5) / 4)
            list.parameter(4, 50, Double(10 + i))
            list.modulation(0, 60, 0.1)
            list.modulation(4, 70, -3, note: Int32(i))
            list.note(Int32(CLAP_EVENT_NOTE_OFF), 200, id: Int32(i - 2), channel: (i - 2) % 3, key: 40 + (i - 2) % 30, velocity: 0)
            list.midi(210, [0x81, UInt8(50 + (i - 3) % 20), 0])
        }
        for i in 0..<40 { fill(i); plugin.process(256, list) }  // warm: every path taken once
        var allocations: Int64 = 0
        for i in 40..<200 {
            fill(i)
            allocation_counter_start()
            plugin.process(256, list)
            allocations += allocation_counter_stop()
        }
        #expect(allocations == 0)
        #expect(plugin.output.count > 0)
    }

    @Test("a hostile host: no buffers, zero frames, unknown and short events, out-of-range ids and keys, events out of order, thousands in a block")
    func hostileHost() throws {
        let plugin = try #require(CLAPPlugin())
        let list = EventList()
        list.note(Int32(CLAP_EVENT_NOTE_ON), 100, id: 1, channel: 40, key: 300, velocity: .nan)
        list.note(Int32(CLAP_EVENT_NOTE_ON), 50, id: 2, channel: -1, key: -1, velocity: 2)
        list.note(Int32(CLAP_EVENT_NOTE_ON), 10, id: 3, key: 60, velocity: .infinity)
        list.note(Int32(CLAP_EVENT_NOTE_OFF), 5, id: 99, key: -1)
        list.note(Int32(CLAP_EVENT_NOTE_CHOKE), 5_000_000, channel: -1, key: -1)
        list.expression(77, 3, note: 3, 1)
        list.expression(Int32(CLAP_NOTE_EXPRESSION_TUNING), 3, note: 3, .infinity)
        list.expression(Int32(CLAP_NOTE_EXPRESSION_TUNING), 3, channel: 99, key: 999, 1e300)
        list.expression(Int32(CLAP_NOTE_EXPRESSION_BRIGHTNESS), 3, channel: -1, key: -1, -5)
        list.parameter(12345, 0, 1)
        list.parameter(100, 0, 1e9)
        list.parameter(4, 0, -.infinity)
        list.modulation(100, 0, 3)
        list.modulation(4, 0, .nan, note: 3)
        list.midi(0, [0xF0, 0x7E, 0x7F])
        list.midi(0, [0xFF, 0xFF, 0xFF])
        list.add(clap_event_header_t(size: 4, time: 0, space_id: 0, type: UInt16(CLAP_EVENT_NOTE_ON), flags: 0))  // too short
        list.add(clap_event_header_t(size: 16, time: 0, space_id: 7, type: 1, flags: 0))  // another space
        list.add(clap_event_header_t(size: 16, time: 0, space_id: 0, type: 999, flags: 0))  // unknown
        plugin.process(256, list)
        plugin.process(0, list)
        // No output buffers, then a channel of them missing.
        withUnsafeMutablePointer(to: &list.list) { input in
            var p = clap_process_t(steady_time: 0, frames_count: 5000, transport: nil, audio_inputs: nil, audio_outputs: nil,
                                   audio_inputs_count: 0, audio_outputs_count: 0, in_events: input, out_events: nil)
            _ = plugin.plugin.pointee.process(plugin.plugin, &p)
            var one = clap_audio_buffer_t(data32: plugin.channels, data64: nil, channel_count: 1, latency: 0, constant_mask: 0)
            withUnsafeMutablePointer(to: &one) { buffer in
                p.frames_count = 3000; p.audio_outputs = buffer; p.audio_outputs_count = 1
                p.in_events = nil
                _ = plugin.plugin.pointee.process(plugin.plugin, &p)
            }
        }
        #expect(plugin.plugin.pointee.process(plugin.plugin, nil) == clap_process_status(CLAP_PROCESS_ERROR))
        list.clear()
        for i in 0..<5000 { list.midi(i % 200, [0x90 | UInt8(i % 16), UInt8(i % 128), UInt8(1 + i % 127)]) }  // out of order, many
        plugin.process(256, list)
        list.clear()
        let out = plugin.play(frames: 4800, block: 256)
        #expect(out.allSatisfy { $0.isFinite && abs($0) <= 1 })
        #expect(out.contains { $0 != 0 })  // still playing its notes
    }

    @Test("several instances in one process play independently")
    func instancesApart() throws {
        let plugins = try (0..<4).map { _ in try #require(CLAPPlugin()) }
        let outs = plugins.enumerated().map { i, plugin in
            plugin.play(frames: 4800, block: 256) { start, _, list in
                if start == 0 { list.note(Int32(CLAP_EVENT_NOTE_ON), 0, key: 60 + 12 * (i % 2), velocity: 0.8) }
            }
        }
        #expect(Self.firstDifference(outs[0], outs[2]) == nil && Self.firstDifference(outs[1], outs[3]) == nil)
        #expect(Self.firstDifference(outs[0], outs[1]) != nil)
    }
}
