import ArgumentParser
import Foundation
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a Standard MIDI File through the instrument to an audio file (same engine as live play).",
        discussion: """
            Program changes in the file pick presets by program number. --preset plays every channel \
            with one preset (program changes are then ignored); --presets starts channels on presets \
            and remaps programs, e.g. --presets "1=siren,10=wind,p33=glide-bass" (channels 1-16, \
            programs 0-127: program change 33 then selects glide-bass).
            """)

    @Argument(help: "The .mid file to render.")
    var midiFile: String

    @Option(name: .long, parsing: .unconditional, help: "Threads that render voices (default: one per core). The output is the same, sample for sample, whatever the number.")
    var threads: Int?

    /// Cores this process may run on.
    static var processorCount: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    @OptionGroup var instrument: InstrumentOptions

    @Option(name: .long, parsing: .unconditional, help: "Seconds rendered after the last event, for releases and echoes.")
    var tail: Double = 2

    @OptionGroup var audio: AudioOutputOptions

    @OptionGroup var limit: LengthLimit

    func validate() throws {
        guard tail >= 0, tail <= 600 else { throw ValidationError("--tail \(tail) must be 0...600 seconds") }
        if let threads, !(1...64).contains(threads) { throw ValidationError("--threads \(threads) must be 1...64") }
    }

    func run() throws {
        let setup = try instrument.load()
        if URL(fileURLWithPath: audio.output).standardizedFileURL.resolvingSymlinksInPath()
            == URL(fileURLWithPath: midiFile).standardizedFileURL.resolvingSymlinksInPath() {
            throw CLIError("\(audio.output): is the MIDI file being rendered; choose another output")
        }
        // The bytes live only while parsing: a large file is not kept twice through the render.
        let file = try InputFiles.midiFile(midiFile)
        let frames = try limit.frames(seconds: file.durationSeconds + tail, rate: audio.rate, what: midiFile)
        var messages = file.timedMessages(sampleRate: Double(audio.rate))
        if setup.ignoresProgramChanges {
            messages.removeAll { if case .programChange = $0.message { return true } else { return false } }
        }
        setup.noteSilentKeys(sampleRate: Double(audio.rate), messages: messages)
        var config = setup.configuration(sampleRate: Double(audio.rate), voices: instrument.voices, masterGain: audio.linearGain,
                                         threads: threads ?? Self.processorCount)
        config.buildsEveryTable = false  // the renderer builds the waves this file can reach
        let frontDoor = Instrument(library: setup.library, configuration: config, controllerMap: setup.controllerMap)
        try withExtendedLifetime(frontDoor) {
            try audio.write(OfflineRenderer(instrument: frontDoor), messages: messages, frames: frames,
                            progressLabel: "rendering")
            // Rendered, written and reported: the process ends here, and the engine's memory and
            // threads go back to the system with it. (Left to itself, Swift ends the engine after
            // its last use: joining its helper and unmapping its echo lines first cost 0.85 ms.)
            Foundation.exit(0)
        }
    }
}
