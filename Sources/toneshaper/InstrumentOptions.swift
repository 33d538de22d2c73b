import ArgumentParser
import ToneShaperCore

/// The instrument's set-up, the same for `play` and `render`: which presets the channels start
/// on, which knob map, how many voices.
struct InstrumentOptions: ParsableArguments {
    @Option(name: .long, help: "Play every channel with this preset (name or program number); program changes are then ignored.")
    var preset: String?

    @Option(name: .long, help: "Start channels on these presets: \"CHANNEL=PRESET,...\" with channels 1-16; program changes still apply.")
    var presets: String?

    @Option(name: .long, help: "Controller mapping file (default: Mappings/default.map).")
    var map: String?

    @Option(name: .long, help: "Voices in the pool.")
    var voices: Int = 32

    func validate() throws {
        guard (1...4096).contains(voices) else { throw ValidationError("--voices \(voices) must be 1...4096") }
        if preset != nil && presets != nil { throw ValidationError("use either --preset or --presets, not both") }
    }

    /// The loaded presets and map and what the options ask of them.
    struct Instrument {
        let library: PresetLibrary
        let controllerMap: ControllerMap
        /// Library index per channel, when the options choose them.
        let channelPresets: [Int]?
        /// --preset: one preset for everything, so program changes must not switch it.
        let ignoresProgramChanges: Bool

        func configuration(sampleRate: Double, voices: Int, masterGain: Double) -> EngineConfiguration {
            var config = EngineConfiguration(sampleRate: sampleRate, voices: voices)
            config.masterGain = masterGain
            if let channelPresets { config.channelPresets = channelPresets }
            return config
        }
    }

    /// Reads the presets and the map; every error names the option, file or value at fault.
    func load() throws -> Instrument {
        let library = try Resources.presetLibrary()
        let controllerMap = try Resources.controllerMap(path: map)
        var channelPresets: [Int]?
        if let preset {
            let shape = try Resources.shape(preset, in: library)
            guard let index = library.index(named: shape.name) else { throw CLIError("preset '\(preset)' is not in the library") }
            channelPresets = Array(repeating: index, count: 16)
        } else if let presets {
            channelPresets = try Self.channelPresets(presets, library: library)
        }
        return Instrument(library: library, controllerMap: controllerMap, channelPresets: channelPresets,
                          ignoresProgramChanges: preset != nil)
    }

    /// "1=siren,10=wind" → library index per channel (others: program 0's preset).
    static func channelPresets(_ spec: String, library: PresetLibrary) throws -> [Int] {
        var result = Array(repeating: library.index(program: 0) ?? 0, count: 16)
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let channel = Int(parts[0]), (1...16).contains(channel) else {
                throw CLIError("--presets: '\(item)' is not CHANNEL=PRESET with CHANNEL 1-16")
            }
            let shape = try Resources.shape(parts[1], in: library)
            result[channel - 1] = library.index(named: shape.name)!
        }
        return result
    }
}
