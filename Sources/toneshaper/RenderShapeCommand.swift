import ArgumentParser
import Foundation
import ToneShaperCore
import ToneShaperInstrument

struct RenderShapeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-shape",
        abstract: "Write a tone shape to an audio file: N cycles of its duration at one note (the article's ToneWriter).")

    @Argument(help: "Preset name or program number (see `toneshaper presets`), or a shape .json file.", completion: .shapeNames)
    var preset: String

    @Option(name: .long, parsing: .unconditional, help: "How many passes through the shape.")
    var cycles: Int = 1

    @Option(name: .long, parsing: .unconditional, help: "MIDI note to play (the preset's root note plays it untransposed).")
    var note: Int?

    @Option(name: .long, parsing: .unconditional, help: "Velocity 1...127.")
    var velocity: Int = 127

    @OptionGroup var audio: AudioOutputOptions

    @OptionGroup var limit: LengthLimit

    func validate() throws {
        guard (1...10_000).contains(cycles) else { throw ValidationError("--cycles \(cycles) must be 1...10000") }
        if let note, !(0...127).contains(note) { throw ValidationError("--note \(note) must be a MIDI note 0...127") }
        guard (1...127).contains(velocity) else { throw ValidationError("--velocity \(velocity) must be 1...127") }
    }

    func run() throws {
        let shape = try Resources.shape(preset)
        _ = try limit.frames(seconds: Double(cycles) * shape.duration + shape.release, rate: audio.rate,
                             what: "\(cycles) cycles of '\(shape.name)'")
        Self.noteIfSilent(shape, note: note, sampleRate: Double(audio.rate))
        // The editor's Export renders through the same call: the two files are equal sample for sample.
        let (renderer, messages, frames) = try ShapeExport.renderer(
            for: shape, cycles: cycles, note: note ?? shape.rootNote, velocity: velocity, sampleRate: audio.rate,
            gainDecibels: audio.gain)
        try audio.write(renderer, messages: messages, frames: frames)
    }

    /// A key that transposes the shape out of what can be played (or a shape wholly above Nyquist
    /// on its own root) renders silence: said once, in the load-time note's words.
    static func noteIfSilent(_ shape: Shape, note: Int?, sampleRate: Double) {
        let key = note ?? shape.rootNote
        guard Tuning.equal.silentKeys(for: shape, sampleRate: sampleRate).all.contains(key),
              let line = Tuning.equal.silentKeysNote(label: note.map { "--note \($0)" } ?? "root note \(key)", shapes: [shape],
                                                     sampleRate: sampleRate) else { return }
        FileHandle.standardError.write(Data("toneshaper: note: \(line)\n".utf8))
    }
}
