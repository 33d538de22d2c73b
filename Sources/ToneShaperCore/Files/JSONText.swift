import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A JSON document's values as written, found by path: what an error quotes ("field 'points[3][2]'
/// = "expo"") and which fields were written as `null` (a shape refuses them by name, where the
/// decoder would take its default).
///
/// Hand-written because the Codable decoder reads values, not their text, and the one reader of
/// whole JSON trees on Linux, Foundation's JSONSerialization, is not in FoundationEssentials: the
/// DSP core and the plugins built on it link Essentials only (no ICU data, tens of MB lighter).
/// It only scans a document JSONDecoder has already read: any malformed input ends the scan with
/// nothing found; nesting is followed without recursion, so no depth can exhaust the stack.
enum JSONText {
    /// The byte range of the value at `path` (object keys, or array indices as digits), or nil.
    static func value(at path: [String], in bytes: [UInt8]) -> Range<Int>? {
        var i = skipSpace(bytes, 0)
        guard i < bytes.count else { return nil }
        for key in path {
            guard let end = valueEnd(bytes, i) else { return nil }
            if bytes[i] == UInt8(ascii: "{") {
                guard let member = members(bytes, i..<end)?.last(where: { $0.key == key }) else { return nil }
                i = member.value.lowerBound
            } else if bytes[i] == UInt8(ascii: "["), let index = Int(key), index >= 0 {
                guard let elements = elements(bytes, i..<end), index < elements.count else { return nil }
                i = elements[index].lowerBound
            } else {
                return nil
            }
        }
        return valueEnd(bytes, i).map { i..<$0 }
    }

    /// The keys and value ranges of the object at `range` (in the order written), or nil when it is no object.
    static func members(_ bytes: [UInt8], _ range: Range<Int>) -> [(key: String, value: Range<Int>)]? {
        var found: [(key: String, value: Range<Int>)] = []
        let whole = items(bytes, range, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { i in
            guard let keyEnd = valueEnd(bytes, i), bytes[i] == UInt8(ascii: "\""), let key = string(bytes, i..<keyEnd) else { return nil }
            let colon = skipSpace(bytes, keyEnd)
            guard colon < range.upperBound, bytes[colon] == UInt8(ascii: ":") else { return nil }
            let start = skipSpace(bytes, colon + 1)
            guard let end = valueEnd(bytes, start) else { return nil }
            found.append((key, start..<end))
            return end
        }
        return whole ? found : nil
    }

    /// Whether the value at `range` is the literal `null`.
    static func isNull(_ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        bytes[range].elementsEqual("null".utf8)
    }

    /// The value at `range` as compact JSON: as written, without the spaces and line breaks between tokens.
    static func compact(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        var inString = false, escaped = false
        for b in bytes[range] {
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
                out.append(b)
            } else if b == UInt8(ascii: "\"") {
                inString = true
                out.append(b)
            } else if !isSpace(b) {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The string at `range` (quotes included) with its escapes resolved, or nil when it is no valid string.
    static func string(_ bytes: [UInt8], _ range: Range<Int>) -> String? {
        guard range.count >= 2, bytes[range.lowerBound] == UInt8(ascii: "\""), bytes[range.upperBound - 1] == UInt8(ascii: "\"") else { return nil }
        var units: [UInt16] = []
        var i = range.lowerBound + 1
        let end = range.upperBound - 1
        while i < end {
            let b = bytes[i]
            if b != UInt8(ascii: "\\") {
                // A run of plain bytes: UTF-8 to UTF-16 as written.
                var j = i
                while j < end, bytes[j] != UInt8(ascii: "\\") { j += 1 }
                units += String(decoding: bytes[i..<j], as: UTF8.self).utf16
                i = j
                continue
            }
            guard i + 1 < end else { return nil }
            switch bytes[i + 1] {
            case UInt8(ascii: "\""): units.append(0x22)
            case UInt8(ascii: "\\"): units.append(0x5C)
            case UInt8(ascii: "/"): units.append(0x2F)
            case UInt8(ascii: "b"): units.append(0x08)
            case UInt8(ascii: "f"): units.append(0x0C)
            case UInt8(ascii: "n"): units.append(0x0A)
            case UInt8(ascii: "r"): units.append(0x0D)
            case UInt8(ascii: "t"): units.append(0x09)
            case UInt8(ascii: "u"):
                guard i + 6 <= end, let unit = UInt16(String(decoding: bytes[(i + 2)..<(i + 6)], as: UTF8.self), radix: 16) else { return nil }
                units.append(unit)
                i += 4
            default: return nil
            }
            i += 2
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// Whether the bytes hold `null` anywhere: most documents do not, and need no scan.
    static func mentionsNull(_ bytes: [UInt8]) -> Bool {
        let null = Array("null".utf8)
        guard bytes.count >= 4 else { return false }
        for i in 0...(bytes.count - 4) where bytes[i] == null[0] && bytes[i + 1] == null[1] && bytes[i + 2] == null[2] && bytes[i + 3] == null[3] {
            return true
        }
        return false
    }

    // MARK: Scanning

    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }

    static func skipSpace(_ bytes: [UInt8], _ start: Int) -> Int {
        var i = start
        while i < bytes.count, isSpace(bytes[i]) { i += 1 }
        return i
    }

    /// The ranges of the array's elements at `range`, or nil when it is no array.
    static func elements(_ bytes: [UInt8], _ range: Range<Int>) -> [Range<Int>]? {
        var found: [Range<Int>] = []
        let whole = items(bytes, range, open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { i in
            guard let end = valueEnd(bytes, i) else { return nil }
            found.append(i..<end)
            return end
        }
        return whole ? found : nil
    }

    /// Walks the comma-separated items between `open` at `range`'s start and `close`: `item` reads
    /// one from where it starts and says where it ends (nil: malformed). True when all were read.
    static func items(_ bytes: [UInt8], _ range: Range<Int>, open: UInt8, close: UInt8, item: (Int) -> Int?) -> Bool {
        guard range.lowerBound < bytes.count, bytes[range.lowerBound] == open else { return false }
        var i = skipSpace(bytes, range.lowerBound + 1)
        if i < range.upperBound, bytes[i] == close { return true }
        while i < range.upperBound {
            guard let end = item(i) else { return false }
            i = skipSpace(bytes, end)
            guard i < range.upperBound else { return false }
            if bytes[i] == close { return true }
            guard bytes[i] == UInt8(ascii: ",") else { return false }
            i = skipSpace(bytes, i + 1)
        }
        return false
    }

    /// Where the value starting at `start` ends (one past its last byte); nil when it does not end.
    /// Arrays and objects are skipped by counting brackets outside strings: no recursion.
    static func valueEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        var i = start
        var depth = 0
        repeat {
            guard i < bytes.count else { return nil }
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                guard i < bytes.count else { return nil }
                i += 1
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                i += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                guard depth > 0 else { return nil }
                depth -= 1
                i += 1
            default:
                if depth > 0 {
                    i += 1
                } else {
                    // A number or a literal: up to the next delimiter.
                    while i < bytes.count, !isSpace(bytes[i]), bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "]"),
                          bytes[i] != UInt8(ascii: "}") { i += 1 }
                    guard i > start else { return nil }
                }
            }
        } while depth > 0
        return i
    }
}
