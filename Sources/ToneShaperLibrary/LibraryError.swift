/// A problem finding, reading or writing shapes, said in one line that names the file or value.
public struct LibraryError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
