import Foundation
import ToneShaperCore
import ToneShaperLibrary

/// A refused request: the status, the one line the page shows, and the shape field it is about
/// (`(request)` when it is not a field). Bad shapes carry the file loader's own line.
struct EditorError: Error, Encodable, Sendable {
    var status: Int
    var error: String
    var field: String

    init(status: Int = 422, _ message: String, field: String = "(request)") {
        self.status = status; error = message; self.field = field
    }

    init(_ shapeError: ShapeError) {
        var e = shapeError
        e.file = nil
        self.init(e.description, field: e.field)
    }

    /// Any error as the page should see it: shape errors keep their field.
    init(_ error: any Error, status: Int = 422) {
        if let shapeError = error as? ShapeError { self.init(shapeError) } else { self.init(status: status, "\(error)") }
    }
}

/// Shapes on the wire are exactly preset files: decoding goes through the file loader, so a bad
/// edit is refused with the same line a bad file gets.
enum ShapeWire {
    static func decode(_ data: Data) throws(EditorError) -> Shape {
        do {
            return try ShapeFile.decode(data, file: nil, fallbackName: "untitled")
        } catch {
            throw EditorError(error)
        }
    }

    /// The JSON object of a shape (to embed in a larger answer).
    static func object(_ shape: Shape) -> Any {
        (try? JSONSerialization.jsonObject(with: ShapeFile.encode(shape))) ?? [:]
    }
}
