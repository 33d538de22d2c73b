/// A minimal SVG builder: elements are appended as text in drawing order.
///
/// Hand-written so the module needs no dependency; every attribute value and text
/// node goes through `escape`, so preset names and file paths cannot break the XML.
public struct SVGWriter: Sendable {
    public let width: Double
    public let height: Double
    private var definitions: [String] = []
    private var body: [String] = []
    private var depth = 1

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    public enum TextAnchor: String, Sendable { case start, middle, end }

    /// Appends `<name attributes…/>` or, with content, `<name …>content</name>` (content escaped).
    public mutating func element(_ name: String, _ attributes: [(String, String)], content: String? = nil) {
        var s = String(repeating: "  ", count: depth) + "<" + name
        for (key, value) in attributes { s += " \(key)=\"\(Self.escape(value))\"" }
        if let content { s += ">" + Self.escape(content) + "</\(name)>" } else { s += "/>" }
        body.append(s)
    }

    public mutating func beginGroup(_ attributes: [(String, String)]) {
        var s = String(repeating: "  ", count: depth) + "<g"
        for (key, value) in attributes { s += " \(key)=\"\(Self.escape(value))\"" }
        body.append(s + ">")
        depth += 1
    }

    public mutating func endGroup() {
        precondition(depth > 1, "endGroup without beginGroup")
        depth -= 1
        body.append(String(repeating: "  ", count: depth) + "</g>")
    }

    /// Declares a rectangular clip path other elements refer to with `clip-path="url(#id)"`.
    public mutating func clipRect(id: String, x: Double, y: Double, width: Double, height: Double) {
        definitions.append("    <clipPath id=\"\(Self.escape(id))\"><rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" "
                           + "width=\"\(Self.number(width))\" height=\"\(Self.number(height))\"/></clipPath>")
    }

    public mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String = "none",
                              stroke: String? = nil, strokeWidth: Double = 1, extra: [(String, String)] = []) {
        var a: [(String, String)] = [("x", Self.number(x)), ("y", Self.number(y)),
                                     ("width", Self.number(width)), ("height", Self.number(height)), ("fill", fill)]
        if let stroke { a += [("stroke", stroke), ("stroke-width", Self.number(strokeWidth))] }
        element("rect", a + extra)
    }

    public mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String,
                              strokeWidth: Double = 1, extra: [(String, String)] = []) {
        element("line", [("x1", Self.number(x1)), ("y1", Self.number(y1)), ("x2", Self.number(x2)),
                         ("y2", Self.number(y2)), ("stroke", stroke), ("stroke-width", Self.number(strokeWidth))] + extra)
    }

    public mutating func text(_ string: String, x: Double, y: Double, anchor: TextAnchor = .start, size: Double = 12,
                              rotate: Double? = nil, fill: String = "#222", extra: [(String, String)] = []) {
        var a: [(String, String)] = [("x", Self.number(x)), ("y", Self.number(y)), ("font-size", Self.number(size)),
                                     ("text-anchor", anchor.rawValue), ("fill", fill)]
        if let rotate { a.append(("transform", "rotate(\(Self.number(rotate)) \(Self.number(x)) \(Self.number(y)))")) }
        element("text", a + extra, content: string)
    }

    public mutating func polyline(_ points: [(x: Double, y: Double)], stroke: String, strokeWidth: Double = 1.5,
                                  extra: [(String, String)] = []) {
        let list = points.map { Self.number($0.x) + "," + Self.number($0.y) }.joined(separator: " ")
        element("polyline", [("points", list), ("fill", "none"), ("stroke", stroke),
                             ("stroke-width", Self.number(strokeWidth)), ("stroke-linejoin", "round")] + extra)
    }

    public mutating func circle(cx: Double, cy: Double, r: Double, fill: String, stroke: String? = nil,
                                extra: [(String, String)] = []) {
        var a: [(String, String)] = [("cx", Self.number(cx)), ("cy", Self.number(cy)), ("r", Self.number(r)), ("fill", fill)]
        if let stroke { a += [("stroke", stroke), ("stroke-width", "1")] }
        element("circle", a + extra)
    }

    /// The finished document, with an XML declaration so any XML tool accepts it.
    public func render() -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(Self.number(width))\" "
            + "height=\"\(Self.number(height))\" viewBox=\"0 0 \(Self.number(width)) \(Self.number(height))\" "
            + "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
        if !definitions.isEmpty { out += "  <defs>\n" + definitions.joined(separator: "\n") + "\n  </defs>\n" }
        out += body.joined(separator: "\n")
        out += "\n</svg>\n"
        return out
    }

    /// Coordinates with at most two decimals: sub-pixel precision without bloating long paths.
    public static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let scaled = (value * 100).rounded()
        if scaled == 0 { return "0" }
        let negative = scaled < 0
        let magnitude = Int64(abs(scaled))
        var s = String(magnitude / 100)
        let cents = magnitude % 100
        if cents != 0 {
            s += cents % 10 == 0 ? "." + String(cents / 10) : (cents < 10 ? ".0" : ".") + String(cents)
        }
        return negative ? "-" + s : s
    }

    /// XML-escapes text and attribute values (both quote kinds, so any context is safe).
    public static func escape(_ string: String) -> String {
        var out = ""
        out.reserveCapacity(string.utf8.count)
        for c in string.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default:
                // XML 1.0 forbids most control characters even when escaped; drop them.
                if c.value < 0x20 && c != "\n" && c != "\t" { continue }
                out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
