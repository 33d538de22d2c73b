import Foundation
import ArgumentParser
import ToneShaperCore
import ToneShaperLibrary
import ToneShaperMIDI

/// The instrument's set-up, the same for `play` and `render`: which presets the channels start
/// on, which knob map, how many voices, which tuning and MPE zones.
struct InstrumentOptions: ParsableArguments {
    @Option(name: .long, help: "Play every channel with this preset (name, program number or shape .json file); program changes are then ignored.",
            completion: .shapeNames)
    var preset: String?

    @Option(name: .long, help: ArgumentHelp(
        "Presets per channel and per program: \"CHANNEL=PRESET\" (channels 1-16) starts a channel on a preset (name, program or FILE.json), \"pPROGRAM=PRESET\" (programs 0-127) makes that program change select it; comma-separated.",
        valueName: "list"))
    var presets: String?

    @Option(name: .long, help: "Controller mapping file, or a shipped one by name (default, mpe); default: Mappings/default.map.",
            completion: .mappingNames)
    var map: String?

    // Unconditional: "-1" is read as the value, so its own check says what is wrong with it
    // (otherwise it looks like an option and the message is "Missing value").
    @Option(name: .long, parsing: .unconditional, help: "Voices in the pool.")
    var voices: Int = 32

    @Option(name: .long, help: "Scala scale (.scl file, or the name of one in the Tunings folder, e.g. 19-edo) the keys are tuned to; default: 12-tone equal temperament.",
            completion: .tuningNames)
    var tuning: String?

    @Option(name: .long, help: "Scala keyboard mapping (.kbm) for --tuning; default: degree 0 on middle C, one degree per key.",
            completion: .keymapNames)
    var keymap: String?

    @Option(name: .long, help: ArgumentHelp(
        "MIDI Polyphonic Expression zones: lower (manager channel 1, members 2-16), upper (manager 16, members 15-1), lower:N or upper:N (N member channels), lower:N,upper:M, or off (the default; an MPE controller's configuration message, RPN 6, sets zones too).",
        valueName: "zones"))
    var mpe: String?

    func validate() throws {
        guard (1...4096).contains(voices) else { throw ValidationError("--voices \(voices) must be 1...4096") }
        _ = try mpeZones()
        if preset != nil && presets != nil { throw ValidationError("use either --preset or --presets, not both") }
        if keymap != nil && tuning == nil { throw ValidationError("--keymap maps a scale onto the keys; give --tuning FILE.scl too") }
    }

    /// The loaded presets and map and what the options ask of them.
    struct Instrument {
        let library: PresetLibrary
        let controllerMap: ControllerMap
        /// Library index per channel, when the options choose them.
        let channelPresets: [Int]?
        /// Library index per remapped program.
        let programPresets: [Int: Int]
        /// --preset: one preset for everything, so program changes must not switch it.
        let ignoresProgramChanges: Bool
        let tuning: Tuning
        /// How the note on silent keys names the tuning: "tuning FILE" or equal temperament.
        let tuningLabel: String
        let mpe: MPEZones

        /// The one line said at load about keys the tuning leaves silent (their pitch is not
        /// finite, or beyond what `sampleRate` can play) on the shapes the channels start on and
        /// those the performance's program changes select; nil when every key sounds. With
        /// `played` (a known performance) only the keys it plays are named.
        func silentKeysNote(sampleRate: Double, programs: [UInt8] = [], played: Set<Int>? = nil) -> String? {
            var indices = channelPresets ?? [0]
            if !ignoresProgramChanges {
                for program in Set(programs).sorted() {
                    if let index = programPresets[Int(program)] ?? library.shapes[..<library.listedCount].firstIndex(where: { $0.program == Int(program) }) {
                        indices.append(index)
                    }
                }
            }
            let shapes = indices.filter { library.shapes.indices.contains($0) }.map { library.shapes[$0] }
            return tuning.silentKeysNote(label: tuningLabel, shapes: shapes, sampleRate: sampleRate, played: played)
        }

        /// Prints `silentKeysNote` on stderr, when there is one. `messages` is the performance
        /// (a file or a script), nil for live input, where any key may come.
        func noteSilentKeys(sampleRate: Double, messages: [TimedMIDIMessage]?) {
            let programs = (messages ?? []).compactMap { if case .programChange(_, let program) = $0.message { program } else { nil } }
            let played = messages.map { Set($0.compactMap { if case .noteOn(_, let note, let velocity) = $0.message, velocity > 0 { Int(note & 127) } else { nil } }) }
            if let note = silentKeysNote(sampleRate: sampleRate, programs: programs, played: played) {
                FileHandle.standardError.write(Data("toneshaper: note: \(note)\n".utf8))
            }
        }

        func configuration(sampleRate: Double, voices: Int, masterGain: Double, threads: Int = 1) -> EngineConfiguration {
            var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
            config.masterGain = masterGain
            config.threads = threads
            if let channelPresets { config.channelPresets = channelPresets }
            config.programPresets = programPresets
            config.tuning = tuning
            config.mpe = mpe
            return config
        }
    }

    /// The `--mpe` zones (off without the option); a bad value is one line naming it.
    func mpeZones() throws -> MPEZones {
        guard let mpe else { return .off }
        do {
            return try MPEZones(parsing: mpe)
        } catch {
            throw ValidationError("--mpe \(mpe): \(error.description)")
        }
    }

    /// Reads the presets and the map; every error names the option, file or value at fault.
    func load() throws -> Instrument {
        var shapes = try Resources.shapeLibrary()
        let controllerMap = try Resources.controllerMap(path: map)
        var channelPresets: [Int]?
        var programPresets: [Int: Int] = [:]
        if let preset {
            channelPresets = Array(repeating: try shapes.resolve(preset), count: 16)
        } else if let presets {
            (channelPresets, programPresets) = try Self.presetMap(presets, shapes: &shapes)
        }
        var tuning = Tuning.equal
        if let scale = self.tuning {
            tuning = Tuning(scale: try ScalaScale.load(path: Self.tuningFile(scale, ext: "scl")),
                            mapping: try keymap.map { try KeyboardMapping.load(path: Self.tuningFile($0, ext: "kbm")) })
        }
        return Instrument(library: try shapes.presetLibrary(), controllerMap: controllerMap, channelPresets: channelPresets,
                          programPresets: programPresets, ignoresProgramChanges: preset != nil, tuning: tuning,
                          tuningLabel: self.tuning.map { "tuning \($0)" } ?? "12-tone equal temperament", mpe: try mpeZones())
    }

    /// The --tuning and --keymap files' text, as a saved session keeps them (nil: not given).
    func tuningText() throws -> (String?, String?) {
        (try tuning.map { try TuningError.read(Self.tuningFile($0, ext: "scl")) },
         try keymap.map { try TuningError.read(Self.tuningFile($0, ext: "kbm")) })
    }

    /// A tuning file as given, or by name from the shipped Tunings folder ("19-edo" → Tunings/19-edo.scl).
    static func tuningFile(_ spec: String, ext: String) -> String {
        guard !spec.contains("/"), !FileManager.default.fileExists(atPath: spec),
              let folder = try? InstallLayout.folder(.tunings) else { return spec }
        let named = folder + "/" + (spec.hasSuffix("." + ext) ? spec : spec + "." + ext)
        return FileManager.default.fileExists(atPath: named) ? named : spec
    }

    /// "1=siren,10=wind,p33=glide-bass" → library index per channel, and per remapped program.
    /// Channels not named start on what program 0 selects, as a file without program changes expects.
    static func presetMap(_ spec: String, shapes: inout ShapeLibrary) throws -> (channels: [Int], programs: [Int: Int]) {
        var channels = [Int?](repeating: nil, count: 16)
        var programs: [Int: Int] = [:]
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else {
                throw CLIError("--presets: '\(item)' is not CHANNEL=PRESET (channel 1-16) or pPROGRAM=PRESET (program 0-127)")
            }
            let index = try shapes.resolve(parts[1])
            if parts[0].lowercased().hasPrefix("p"), let program = Int(parts[0].dropFirst()), (0...127).contains(program) {
                programs[program] = index
            } else if let channel = Int(parts[0]), (1...16).contains(channel) {
                channels[channel - 1] = index
            } else {
                throw CLIError("--presets: '\(item)' is not CHANNEL=PRESET (channel 1-16) or pPROGRAM=PRESET (program 0-127)")
            }
        }
        let start = programs[0] ?? shapes.index(program: 0) ?? 0
        return (channels.map { $0 ?? start }, programs)
    }
}
