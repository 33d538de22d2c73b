import ArgumentParser
import Foundation
import ToneShaperCore
import ToneShaperMIDI

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a Standard MIDI File through the instrument to an audio file (same engine as live play).",
        discussion: """
            Program changes in the file pick presets by program number. --preset plays every channel \
            with one preset (program changes are then ignored); --presets assigns presets per channel, \
            e.g. --presets "1=siren,2=drone,10=wind" (channels 1-16).
            """)

    @Argument(help: "The .mid file to render.")
    var midiFile: String

    @Option(name: .long, help: "Play every channel with this preset (name or program number).")
    var preset: String?

    @Option(name: .long, help: "Per-channel presets: \"CHANNEL=PRESET,...\" with channels 1-16.")
    var presets: String?

    @Option(name: .long, help: "Controller mapping file (default: Mappings/default.map).")
    var map: String?

    @Option(name: .long, help: "Voices in the pool.")
    var voices: Int = 32

    @Option(name: .long, help: "Seconds rendered after the last event, for releases and echoes.")
    var tail: Double = 2

    @OptionGroup var audio: AudioOutputOptions

    func validate() throws {
        guard (1...4096).contains(voices) else { throw ValidationError("--voices \(voices) must be 1...4096") }
        guard tail >= 0, tail <= 600 else { throw ValidationError("--tail \(tail) must be 0...600 seconds") }
        if preset != nil && presets != nil { throw ValidationError("use either --preset or --presets, not both") }
    }

    func run() throws {
        let library = try Resources.presetLibrary()
        let controllerMap = try Resources.controllerMap(path: map)
        guard let data = FileManager.default.contents(atPath: midiFile) else {
            throw CLIError("\(midiFile): cannot be read")
        }
        let file: MIDIFile
        do { file = try MIDIFile.parse([UInt8](data)) } catch { throw CLIError("\(midiFile): \(error)") }
        var messages = file.timedMessages(sampleRate: Double(audio.rate))

        var config = EngineConfiguration(sampleRate: Double(audio.rate), voices: voices)
        config.masterGain = audio.linearGain
        if let preset {
            let shape = try Resources.shape(preset, in: library)
            guard let index = library.index(named: shape.name) else { throw CLIError("preset '\(preset)' is not in the library") }
            config.channelPresets = Array(repeating: index, count: 16)
            messages.removeAll { if case .programChange = $0.message { return true } else { return false } }
        } else if let presets {
            config.channelPresets = try Self.channelPresets(presets, library: library)
        }
        let engine = Engine(library: library, configuration: config, controllerMap: controllerMap)
        let frames = Int((file.durationSeconds + tail) * Double(audio.rate))
        try audio.write(OfflineRenderer(engine: engine), messages: messages, frames: max(1, frames),
                        progressLabel: "rendering")
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
