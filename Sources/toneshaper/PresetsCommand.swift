import ArgumentParser
import ToneShaperCore

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets", abstract: "List the built-in tone shapes with their program numbers.")

    @Option(name: .long, help: "Folder of preset files (default: the built-in Presets folder).")
    var directory: String?

    func run() throws {
        let library = try Resources.presetLibrary(directory: directory)
        let width = library.shapes.map(\.name.count).max() ?? 0
        for s in library.shapes {
            let program = String(s.program).leftPadded(to: 3)
            let wave = s.wave.rawValue.padding(toLength: 21, withPad: " ", startingAt: 0)
            print("\(program)  \(s.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(wave)  \(s.description)")
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
