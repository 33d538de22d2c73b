/// What a recording ended with: every captured frame is either written or counted as dropped.
public struct RecordingReport: Equatable, Sendable, CustomStringConvertible {
    public let path: String
    public let framesWritten: Int
    /// Frames the audio thread offered while the ring was full; they are not in the file.
    public let framesDropped: Int

    public init(path: String, framesWritten: Int, framesDropped: Int) {
        self.path = path
        self.framesWritten = framesWritten
        self.framesDropped = framesDropped
    }

    public var description: String {
        framesDropped == 0
            ? "\(path): \(framesWritten) frames written"
            : "\(path): \(framesWritten) frames written, \(framesDropped) frames DROPPED (disk too slow)"
    }
}
