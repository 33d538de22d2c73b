import ArgumentParser
import Foundation
import ToneShaperCore

@main
struct ToneShaperCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "toneshaper",
        abstract: "A MIDI-controlled instrument that plays drawn frequency curves (tone shapes).",
        discussion: """
            A tone shape is a curve of instantaneous frequency over time. Each key plays the shape \
            transposed to that key; knobs change amplitude, duration, fidelity and more.
            Built-in shapes live in the Presets folder; `toneshaper presets` lists them.
            """,
        subcommands: [PresetsCommand.self, RenderShapeCommand.self, RenderCommand.self, PlotCommand.self, PlayCommand.self, LearnCommand.self, EditCommand.self])

    /// The subcommands that play live, and so need every wave's band-limited tables before the
    /// first note (a render builds only the waves its file can reach, when it has read the file).
    static func playsLive(_ command: String) -> Bool { command == "play" || command == "edit" }

    /// Runs a subcommand and reports any failure as one line: "toneshaper: what went wrong".
    static func main() {
        // A session manager that starts its clients by name alone (nsmd, Agordejo) gives no
        // arguments: under one (NSM_URL), that is the instrument on JACK, as its other clients are.
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.isEmpty && SessionStart.wanted { arguments = ["play", "--jack"] }
        // Live play needs the band-limited tables (a few ms of work): they are built on a thread of
        // their own from the start, while the arguments, presets and files are read.
        if let command = arguments.first, playsLive(command) {
            BandLimitedTables.buildInBackground()
        }
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is CleanExit {
                exit(withError: error)  // --help and --version print normally
            }
            let message = message(for: error)
            // A usage error's first line is the error (the rest is usage help); the program's own
            // errors are one line by design, so a newline in them is part of a value (a file
            // name) and is shown escaped rather than cutting the line.
            let oneLine = code == .validationFailure
                ? message.split(separator: "\n").first.map(String.init) ?? message
                : message.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
            FileHandle.standardError.write(Data("toneshaper: \(oneLine)\n".utf8))
            Foundation.exit(code == .success ? 1 : code.rawValue)
        }
    }
}

/// A failure the program explains itself, in one line.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
