import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import ToneShaperMIDI

/// The whole instrument as bytes: what a session manager (NSM) saves and a plugin host will keep as
/// the plugin's state, so it comes back as it was, on this machine or another.
///
/// It holds what the command line set up and what the player changed since:
/// - the shapes in use, by content (a session reopens the same without the user's library, and
///   unchanged when a built-in preset changes later): the preset each channel started on and the
///   preset each program change in `controls` (or a `pN=` remap) selects;
/// - the controller map (in the mapping file's own form), the tuning (the .scl and .kbm text), the
///   MPE zones, the channel listened to, the gain and the voices;
/// - `controls`: the controls as last set (`ControlMirror.messages`), restored into the new engine
///   before anything plays (`Engine.restore`).
///
/// Versioned JSON. Reading is for hostile bytes: at most `maximumBytes`, every count capped, every
/// field checked by the same readers as the files it stands for; one `StateError` line names the
/// field and the value, and nothing traps. No file I/O here: the caller reads and writes the bytes.
public struct InstrumentState: Sendable {
    public static let format = "toneshaper-state"
    /// The version written; a state of a newer version is refused by name.
    public static let version = 1
    /// The largest state read or written: a few shapes of the most points a shape may have, or a
    /// session's worth of ordinary ones.
    public static let maximumBytes = 4 << 20
    /// One shape per channel and per program at most.
    public static let maximumShapes = 16 + 128
    /// `ControlMirror` keeps at most `maximumPerChannel` messages per channel after the last zone
    /// change, and as many before it.
    public static let maximumControls = 2 * 16 * ControlMirror.maximumPerChannel

    /// Every shape the state names, each once.
    public var shapes: [Shape]
    /// Index into `shapes` of the preset each channel starts on (16).
    public var channelPresets: [Int]
    /// Index into `shapes` of the preset a program change selects, for the programs pinned.
    public var programPresets: [Int: Int]
    /// `--preset`: one preset for every channel; program changes are ignored.
    public var ignoresProgramChanges: Bool
    /// The controller map, as a mapping file's text (`ControllerMapFile.text`).
    public var mapText: String
    /// The Scala scale and keyboard mapping as their files' text; nil: equal temperament, linear mapping.
    public var scale: String?
    public var keymap: String?
    /// The zones the engine starts with (RPN 6 messages in `controls` may change them).
    public var mpe: MPEZones
    /// The one channel listened to (0-based), nil for all.
    public var channelFilter: UInt8?
    /// Master gain in dB, as `--gain` takes it.
    public var gain: Double
    public var voices: Int
    /// The controls as last set, replayed in this order.
    public var controls: [MIDIMessage]

    /// The map and tuning `mapText`, `scale` and `keymap` read as.
    public let controllerMap: ControllerMap
    public let tuning: Tuning

    /// A state of everything set by hand: checks what a file would check (map and tuning text).
    public init(shapes: [Shape], channelPresets: [Int], programPresets: [Int: Int] = [:], ignoresProgramChanges: Bool = false,
                mapText: String, scale: String? = nil, keymap: String? = nil, mpe: MPEZones = .off,
                channelFilter: UInt8? = nil, gain: Double = -6, voices: Int = 32, controls: [MIDIMessage] = [],
                file: String = "(state)") throws(StateError) {
        self.shapes = shapes; self.channelPresets = channelPresets; self.programPresets = programPresets
        self.ignoresProgramChanges = ignoresProgramChanges
        self.mapText = mapText; self.scale = scale; self.keymap = keymap; self.mpe = mpe
        self.channelFilter = channelFilter; self.gain = gain; self.voices = voices; self.controls = controls
        do {
            controllerMap = try ControllerMapFile.parse(mapText, file: "\(file): map")
        } catch {
            throw StateError(error.description)
        }
        if let scale {
            do {
                tuning = Tuning(scale: try ScalaScale.parse(scale, file: "\(file): scale"),
                                mapping: try keymap.map { text throws(TuningError) in try KeyboardMapping.parse(text, file: "\(file): keymap") })
            } catch {
                throw StateError(error.description)
            }
        } else {
            guard keymap == nil else { throw StateError("\(file): a keymap without a scale maps nothing; give 'scale' too") }
            tuning = .equal
        }
        try check(file: file)
    }

    /// The state of a playing engine: its presets, map and configuration, and `mirror`'s controls.
    /// The tuning's text, the channel filter and the gain are what the engine was built from.
    public init(engine: Engine, mirror: ControlMirror, scale: String?, keymap: String?, channelFilter: UInt8?,
                ignoresProgramChanges: Bool, gain: Double) throws(StateError) {
        let config = engine.configuration
        let library = engine.library.shapes
        var shapes: [Shape] = []
        var placed: [Int: Int] = [:]  // library index → index in shapes
        func place(_ index: Int) -> Int {
            if let i = placed[index] { return i }
            shapes.append(library[index])
            placed[index] = shapes.count - 1
            return shapes.count - 1
        }
        // The presets the engine started its channels on, as Engine.init chose them.
        let channels = (0..<16).map { p in
            place(min(max(p < config.channelPresets.count ? config.channelPresets[p] : 0, 0), library.count - 1))
        }
        var programs: [Int: Int] = [:]
        for program in Set(config.programPresets.keys.filter { (0..<128).contains($0) } + mirror.programs).sorted() {
            if let index = engine.presetIndex(program: program) { programs[program] = place(index) }
        }
        try self.init(shapes: shapes, channelPresets: channels, programPresets: programs,
                      ignoresProgramChanges: ignoresProgramChanges, mapText: ControllerMapFile.text(engine.controllerMap),
                      scale: scale, keymap: keymap, mpe: config.mpe, channelFilter: channelFilter, gain: gain,
                      voices: config.voices, controls: mirror.messages)
    }

    /// The counts and ranges every state keeps to, whoever made it.
    private func check(file: String) throws(StateError) {
        func fail(_ field: String, _ value: String, _ reason: String) -> StateError {
            StateError("\(file): field '\(field)' = \(value): \(reason)")
        }
        guard !shapes.isEmpty, shapes.count <= Self.maximumShapes else {
            throw fail("shapes", "\(shapes.count) shapes", "must be 1...\(Self.maximumShapes)")
        }
        guard channelPresets.count == 16 else { throw fail("channels", "\(channelPresets.count) entries", "must name the 16 channels' presets") }
        for (i, index) in channelPresets.enumerated() where !shapes.indices.contains(index) {
            throw fail("channels[\(i)]", "\(index)", "is not a shape of 'shapes' (0...\(shapes.count - 1))")
        }
        for (program, index) in programPresets.sorted(by: { $0.key < $1.key }) {
            guard (0..<128).contains(program) else { throw fail("programs", "\"\(program)\"", "is not a program 0...127") }
            guard shapes.indices.contains(index) else {
                throw fail("programs.\(program)", "\(index)", "is not a shape of 'shapes' (0...\(shapes.count - 1))")
            }
        }
        if let channelFilter, channelFilter > 15 { throw fail("channel", "\(Int(channelFilter) + 1)", "must be 1...16") }
        guard gain.isFinite, (-60...24).contains(gain) else { throw fail("gain", "\(gain)", "must be -60...24 dB") }
        guard (1...4096).contains(voices) else { throw fail("voices", "\(voices)", "must be 1...4096") }
        guard controls.count <= Self.maximumControls else {
            throw fail("controls", "\(controls.count) entries", "more than the \(Self.maximumControls) settings a state holds")
        }
        for (i, message) in controls.enumerated() {
            switch message {
            case .noteOn, .noteOff: throw fail("controls[\(i)]", "a note", "notes are not settings")
            default: break
            }
        }
    }

    // MARK: - Bytes

    /// The state as versioned JSON (keys sorted, so an unchanged state saves the same bytes).
    public func encoded(file: String = "(state)") throws(StateError) -> [UInt8] {
        let doc = Document(
            format: Self.format, version: Self.version, shapes: shapes.map(ShapeFile.document), channels: channelPresets,
            programs: programPresets.isEmpty ? nil : Dictionary(uniqueKeysWithValues: programPresets.map { ("\($0.key)", $0.value) }),
            programChangesIgnored: ignoresProgramChanges, map: mapText, scale: scale, keymap: keymap,
            mpe: Zones(lower: mpe.lowerMembers, upper: mpe.upperMembers), channel: channelFilter.map { Int($0) + 1 },
            gain: gain, voices: voices, controls: controls.map(Control.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do { data = try encoder.encode(doc) } catch { throw StateError("\(file): cannot be encoded (\(error))") }
        guard data.count <= Self.maximumBytes else {
            throw StateError("\(file): the state would be \(data.count) bytes, more than the \(BoundedRead.size(Self.maximumBytes)) a state may have (shapes with fewer points make it smaller)")
        }
        return [UInt8](data)
    }

    /// Reads a state; any fault is one `StateError` naming `file` and what is wrong.
    public init(bytes: [UInt8], file: String = "(state)") throws(StateError) {
        guard bytes.count <= Self.maximumBytes else {
            throw StateError("\(file): is larger than \(BoundedRead.size(Self.maximumBytes)), more than any state needs; not read")
        }
        let data = Data(bytes)
        // Format and version first: a newer version's fields are not this version's to judge.
        let header: Header
        do { header = try JSONDecoder().decode(Header.self, from: data) } catch {
            throw StateError("\(file): is not a ToneShaper state (not a JSON object with \"format\": \"\(Self.format)\")")
        }
        guard header.format == Self.format else {
            throw StateError("\(file): is not a ToneShaper state (\"format\" is \(header.format.map { "'\($0)'" } ?? "missing"), not '\(Self.format)')")
        }
        guard let version = header.version, version >= 1 else {
            throw StateError("\(file): field 'version' = \(header.version.map(String.init) ?? "(missing)"): must be a version 1 or later")
        }
        guard version <= Self.version else {
            throw StateError("\(file): was saved by a newer ToneShaper (state version \(version); this one reads version \(Self.version))")
        }
        let doc: Document
        do {
            doc = try JSONDecoder().decode(Document.self, from: data)
        } catch let error as DecodingError {
            let e = ShapeFile.describe(error, file: nil, data: data)
            throw StateError("\(file): field '\(e.field)' = \(e.value): \(e.reason)")
        } catch {
            throw StateError("\(file): \(error)")
        }
        func missing(_ field: String) -> StateError { StateError("\(file): field '\(field)' is missing") }
        guard let shapeDocs = doc.shapes else { throw missing("shapes") }
        guard shapeDocs.count <= Self.maximumShapes else {
            throw StateError("\(file): field 'shapes' = \(shapeDocs.count) shapes: must be 1...\(Self.maximumShapes)")
        }
        // A shape field written as null is refused by name, as in a shape file.
        let bytes = [UInt8](data)
        let mentionsNull = JSONText.mentionsNull(bytes)
        var shapes: [Shape] = []
        for (i, shapeDoc) in shapeDocs.enumerated() {
            do {
                if mentionsNull { try ShapeFile.refuseNulls(bytes, at: ["shapes", "\(i)"], file: nil, fieldPrefix: "shapes[\(i)].") }
                shapes.append(try ShapeFile.shape(from: shapeDoc, file: nil, fallbackName: "shape \(i)", fieldPrefix: "shapes[\(i)].",
                                                  data: data, dataPath: ["shapes", "\(i)"]))
            } catch {
                throw StateError("\(file): \(error.description)")
            }
        }
        guard let channels = doc.channels else { throw missing("channels") }
        var programs: [Int: Int] = [:]
        for (key, index) in (doc.programs ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let program = Int(key), (0..<128).contains(program) else {
                throw StateError("\(file): field 'programs' = \"\(key.prefix(40))\": is not a program 0...127")
            }
            programs[program] = index
        }
        guard let map = doc.map else { throw missing("map") }
        guard map.utf8.count <= ControllerMapFile.maximumFileBytes else {
            throw StateError("\(file): field 'map' is larger than \(BoundedRead.size(ControllerMapFile.maximumFileBytes)); not a controller mapping")
        }
        for (name, text) in [("scale", doc.scale), ("keymap", doc.keymap)] {
            if let text, text.utf8.count > TuningError.maximumFileBytes {
                throw StateError("\(file): field '\(name)' is larger than \(BoundedRead.size(TuningError.maximumFileBytes)); not a tuning")
            }
        }
        let zones: MPEZones
        do { zones = try MPEZones(lower: doc.mpe?.lower ?? 0, upper: doc.mpe?.upper ?? 0) } catch {
            throw StateError("\(file): field 'mpe': \(error.description)")
        }
        var filter: UInt8?
        if let channel = doc.channel {
            guard (1...16).contains(channel) else { throw StateError("\(file): field 'channel' = \(channel): must be 1...16") }
            filter = UInt8(channel - 1)
        }
        guard let gain = doc.gain else { throw missing("gain") }
        guard let voices = doc.voices else { throw missing("voices") }
        let controlDocs = doc.controls ?? []
        guard controlDocs.count <= Self.maximumControls else {
            throw StateError("\(file): field 'controls' = \(controlDocs.count) entries: more than the \(Self.maximumControls) settings a state holds")
        }
        var controls: [MIDIMessage] = []
        for (i, control) in controlDocs.enumerated() {
            controls.append(try control.message(field: "\(file): field 'controls[\(i)]'"))
        }
        try self.init(shapes: shapes, channelPresets: channels, programPresets: programs,
                      ignoresProgramChanges: doc.programChangesIgnored ?? false, mapText: map, scale: doc.scale,
                      keymap: doc.keymap, mpe: zones, channelFilter: filter, gain: gain, voices: voices,
                      controls: controls, file: file)
    }

    // MARK: - Into an engine

    /// Where a restored state's shapes are: `base` (the machine's library, which program changes
    /// not pinned by the state still reach) with the state's shapes after it, played by index only.
    public struct Placement: Sendable {
        public var library: PresetLibrary
        /// Library index per channel and per pinned program.
        public var channelPresets: [Int]
        public var programPresets: [Int: Int]
    }

    public func placed(onto base: PresetLibrary) -> Placement {
        let listed = Array(base.shapes[..<base.listedCount])
        let unlisted = Array(base.shapes[base.listedCount...])
        let offset = base.shapes.count
        let library: PresetLibrary
        do {
            library = try PresetLibrary(shapes: listed, unlisted: unlisted + shapes)
        } catch {
            preconditionFailure("a library's own listed shapes clash: \(error)")  // they were checked when it was made
        }
        return Placement(library: library, channelPresets: channelPresets.map { $0 + offset },
                         programPresets: programPresets.mapValues { $0 + offset })
    }

    /// An engine configuration for the state at `sampleRate` (threads and the rest as given).
    public func configuration(_ placement: Placement, sampleRate: Double, threads: Int = 1) -> EngineConfiguration {
        var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
        config.masterGain = _pow(10, gain / 20)
        config.threads = threads
        config.channelPresets = placement.channelPresets
        config.programPresets = placement.programPresets
        config.tuning = tuning
        config.mpe = mpe
        return config
    }

    /// An engine for the state, placed after `base`, with its controls restored (`Engine.restore`).
    public func engine(onto base: PresetLibrary, sampleRate: Double, threads: Int = 1) -> Engine {
        let placement = placed(onto: base)
        let engine = Engine(library: placement.library, configuration: configuration(placement, sampleRate: sampleRate, threads: threads),
                            controllerMap: controllerMap)
        engine.restore(controls)
        return engine
    }

    // MARK: - The JSON form

    struct Header: Decodable {
        var format: String?
        var version: Int?
    }

    struct Document: Codable {
        var format: String?
        var version: Int?
        var shapes: [ShapeFile.Document]?
        var channels: [Int]?
        var programs: [String: Int]?
        var programChangesIgnored: Bool?
        var map: String?
        var scale: String?
        var keymap: String?
        var mpe: Zones?
        var channel: Int?
        var gain: Double?
        var voices: Int?
        var controls: [Control]?
    }

    struct Zones: Codable {
        var lower: Int
        var upper: Int
    }

    /// One setting: {"channel": 1-16, and "cc"+"value", "program", "bend", "pressure", or "note"+"pressure"}.
    struct Control: Codable {
        var channel: Int
        var cc: Int?
        var value: Int?
        var program: Int?
        var bend: Int?
        var note: Int?
        var pressure: Int?

        init(_ message: MIDIMessage) {
            channel = Int(message.channel & 15) + 1
            switch message {
            case .controlChange(_, let controller, let v): cc = Int(controller); value = Int(v)
            case .programChange(_, let p): program = Int(p)
            case .pitchBend(_, let v): bend = Int(v)
            case .channelPressure(_, let p): pressure = Int(p)
            case .polyPressure(_, let n, let p): note = Int(n); pressure = Int(p)
            case .noteOn(_, let n, _), .noteOff(_, let n, _): note = Int(n)  // refused by `check` before encoding
            }
        }

        func message(field: String) throws(StateError) -> MIDIMessage {
            guard (1...16).contains(channel) else { throw StateError("\(field).channel = \(channel): must be 1...16") }
            let c = UInt8(channel - 1)
            func byte(_ v: Int, _ name: String) throws(StateError) -> UInt8 {
                guard (0...127).contains(v) else { throw StateError("\(field).\(name) = \(v): must be 0...127") }
                return UInt8(v)
            }
            switch (cc, value, program, bend, note, pressure) {
            case (let cc?, let value?, nil, nil, nil, nil):
                return .controlChange(channel: c, controller: try byte(cc, "cc"), value: try byte(value, "value"))
            case (nil, nil, let program?, nil, nil, nil):
                return .programChange(channel: c, program: try byte(program, "program"))
            case (nil, nil, nil, let bend?, nil, nil):
                guard (-8192...8191).contains(bend) else { throw StateError("\(field).bend = \(bend): must be -8192...8191") }
                return .pitchBend(channel: c, value: Int16(bend))
            case (nil, nil, nil, nil, nil, let pressure?):
                return .channelPressure(channel: c, pressure: try byte(pressure, "pressure"))
            case (nil, nil, nil, nil, let note?, let pressure?):
                return .polyPressure(channel: c, note: try byte(note, "note"), pressure: try byte(pressure, "pressure"))
            default:
                throw StateError("\(field): is not one setting (\"cc\" with \"value\", \"program\", \"bend\", \"pressure\", or \"note\" with \"pressure\")")
            }
        }
    }
}

/// A state that cannot be read or written: one line naming the file, the field and the value.
public struct StateError: Error, CustomStringConvertible, Equatable {
    public let description: String

    /// Control characters in a value quoted from the state (a string with line breaks) are written
    /// as escapes, and a long one is cut: the line stays one line, of a readable length.
    public init(_ description: String) {
        var line = ""
        for scalar in description.unicodeScalars {
            switch scalar {
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}":
                line += "\\u{\(String(scalar.value, radix: 16))}"
            default: line.unicodeScalars.append(scalar)
            }
            if line.count > Self.maximumLength { line = String(line.prefix(Self.maximumLength)) + "…"; break }
        }
        self.description = line
    }

    static let maximumLength = 400
}

extension Engine {
    /// The library index a program change to `program` selects, nil for none (fixed at init, so
    /// any thread may ask).
    public func presetIndex(program: Int) -> Int? {
        guard (0..<128).contains(program) else { return nil }
        let index = programPresets[program]
        return index >= 0 ? index : nil
    }
}
