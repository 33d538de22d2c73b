import ArgumentParser
import ToneShaperCore
import ToneShaperLibrary

struct PresetsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presets",
        abstract: "List the tone shapes: the built-in ones and your own, with program numbers and where each comes from.",
        discussion: """
            Your own shapes live in $XDG_DATA_HOME/toneshaper/presets (default ~/.local/share/toneshaper/presets), \
            one .json file each; `toneshaper edit` saves there. A shape of yours with a built-in's name replaces \
            it; when two shapes claim a program number, yours keeps it and the other is played by name only.
            """)

    @Option(name: .long, help: "Folder of built-in preset files (default: the shipped Presets folder).")
    var directory: String?

    func run() throws {
        let library = try Resources.shapeLibrary(builtIn: directory)
        let width = library.entries.map(\.shape.name.count).max() ?? 0
        for e in library.entries {
            let program = e.answersToProgram ? String(e.shape.program).leftPadded(to: 3) : "  -"
            let name = e.shape.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let wave = e.shape.wave.rawValue.padding(toLength: 21, withPad: " ", startingAt: 0)
            let source = (e.overrides ? "user*" : e.source.rawValue).padding(toLength: 8, withPad: " ", startingAt: 0)
            print("\(program)  \(name)  \(wave)  \(source)  \(e.shape.description)")
        }
        let builtIn = try directory ?? InstallLayout.builtInPresets()
        let users = library.entries.filter { $0.source == .user }.count
        print("built-in: \(builtIn)")
        print("user:     \(library.userLibrary.directory) (\(users) shape\(users == 1 ? "" : "s")\(library.entries.contains(where: \.overrides) ? "; * overrides a built-in" : ""))")
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
