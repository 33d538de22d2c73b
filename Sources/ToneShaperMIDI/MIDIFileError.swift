/// Why a Standard MIDI File could not be read, and where.
///
/// One line, meant for a person: `message` says what is wrong in the file's own terms
/// ("truncated track 2", "chunk length 4294967295 exceeds file size") and `offset` is the
/// 0-based byte position where the problem was found, so a hex dump leads straight to it.
public struct MIDIFileError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What is wrong, without the position.
    public let message: String
    /// 0-based byte offset in the file at which the problem was detected.
    public let offset: Int

    public init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) at byte \(offset)" }
}
