import Foundation
import ToneShaperCore
import ToneShaperMIDI

/// The performances a command reads (MIDI files, event scripts), each with a size bound checked
/// before it is parsed: `render /dev/zero` or `yes | play --midi-in -` is one line, not all memory.
enum InputFiles {
    /// The largest MIDI file read: orchestral files are a few hundred KB, the densest "black MIDI"
    /// showpieces tens of MB.
    static let maximumMIDIFileBytes = 64 << 20
    /// The largest event script read (about a million events).
    static let maximumScriptBytes = 16 << 20

    /// A Standard MIDI File; every error names the file.
    static func midiFile(_ path: String) throws -> MIDIFile {
        let bytes: [UInt8]
        do {
            bytes = try BoundedRead.contents(of: path, limit: maximumMIDIFileBytes)
        } catch {
            throw CLIError("\(path): \(error.description(tooLarge: "; not read"))")
        }
        do { return try MIDIFile.parse(bytes) } catch { throw CLIError("\(path): \(error)") }
    }

    /// An event script from stdin.
    static func scriptFromStandardInput() throws -> EventScript {
        let bytes: [UInt8]
        do {
            bytes = try BoundedRead.contents(of: STDIN_FILENO, limit: maximumScriptBytes)
        } catch {
            throw CLIError("stdin: the event script \(error.description(tooLarge: "; not read"))")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CLIError("stdin: the event script is not UTF-8 text") }
        return try EventScript.parse(text, source: "stdin")
    }
}
