import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads controller mappings: one assignment per line, so an error can name its line.
///
/// ```
/// # source        parameter   min    max   [curve]        [channel]
/// cc 7            amplitude   0      1
/// cc 71           duration    0.05   8     exponential
/// cc 74           fidelity    1      2000  exponential   channel 2
/// pressure        amplitude   0      1                    # channel pressure (aftertouch)
/// polypressure    amplitude   0      1                    # one key's pressure: that note's level
/// ```
/// Channels are written 1...16 as on a keyboard's display; without one, the line applies to all.
public enum ControllerMapFile {
    /// The largest mapping file read: one line per controller, channel and parameter is far less.
    public static let maximumFileBytes = 1 << 20

    public static func load(path: String) throws(MappingError) -> ControllerMap {
        let data: [UInt8]
        do {
            data = try BoundedRead.contents(of: path, limit: maximumFileBytes)
        } catch {
            throw MappingError(file: path, line: 0, message: error.description(tooLarge: "; not a controller mapping"))
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw MappingError(file: path, line: 0, message: "is not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String = "(mapping)") throws(MappingError) -> ControllerMap {
        var assignments: [ControllerAssignment] = []
        for (i, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let lineNumber = i + 1
            func fail(_ message: String) -> MappingError { MappingError(file: file, line: lineNumber, message: message) }
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
            if words.isEmpty { continue }
            guard let source = ControllerAssignment.Source(rawValue: words[0]) else {
                throw fail("expected 'cc', 'pressure' or 'polypressure', found '\(words[0])'")
            }
            // A CC line names its controller; the pressure sources are one per channel.
            let p = source == .controlChange ? 2 : 1
            guard words.count >= p + 3 else {
                let form = source == .controlChange ? "cc NUMBER" : source.rawValue
                throw fail("expected '\(form) PARAMETER MIN MAX [CURVE] [channel N]', found \(words.count) fields")
            }
            var cc: UInt8 = 0
            if source == .controlChange {
                guard let number = UInt8(words[1]), number < 120 else {
                    throw fail("controller '\(words[1])' is not a number 0...119 (120...127 are channel mode messages)")
                }
                cc = number
            }
            guard let parameter = Parameter(rawValue: words[p]) else {
                throw fail("unknown parameter '\(words[p])' (expected one of \(Parameter.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            guard let minimum = Double(words[p + 1]), minimum.isFinite else { throw fail("minimum '\(words[p + 1])' is not a number") }
            guard let maximum = Double(words[p + 2]), maximum.isFinite else { throw fail("maximum '\(words[p + 2])' is not a number") }
            var curve = ControllerCurve.linear
            var channel: UInt8?
            var k = p + 3
            while k < words.count {
                if let c = ControllerCurve(rawValue: words[k]) {
                    curve = c; k += 1
                } else if words[k] == "channel" {
                    guard k + 1 < words.count, let ch = UInt8(words[k + 1]), (1...16).contains(ch) else {
                        throw fail("channel '\(k + 1 < words.count ? words[k + 1] : "")' is not 1...16")
                    }
                    channel = ch - 1; k += 2
                } else {
                    throw fail("unexpected '\(words[k])' (expected linear, exponential or 'channel N')")
                }
            }
            for (name, v) in [("minimum", minimum), ("maximum", maximum)] where !parameter.limits.contains(v) {
                throw fail("\(name) \(v) is outside \(parameter.rawValue)'s range \(parameter.limits.lowerBound)...\(parameter.limits.upperBound)")
            }
            if curve == .exponential && (minimum <= 0 || maximum <= 0) {
                throw fail("an exponential curve needs minimum and maximum > 0")
            }
            assignments.append(ControllerAssignment(source: source, controller: cc, channel: channel, parameter: parameter,
                                                    minimum: minimum, maximum: maximum, curve: curve))
        }
        return ControllerMap(assignments)
    }
}

extension ControllerMapFile {
    /// A map in the file's own form, one line per assignment, in order: `parse` reads it back to
    /// the same map (numbers are written so they read back exactly). A saved state keeps its map so.
    public static func text(_ map: ControllerMap) -> String {
        map.assignments.map { a in
            var words = [a.source.rawValue]
            if a.source == .controlChange { words.append("\(a.controller)") }
            words += [a.parameter.rawValue, "\(a.minimum)", "\(a.maximum)", a.curve.rawValue]
            if let channel = a.channel { words += ["channel", "\(Int(channel) + 1)"] }
            return words.joined(separator: " ") + "\n"
        }.joined()
    }
}

/// A bad mapping file: which file, which line, what is wrong.
public struct MappingError: Error, CustomStringConvertible, Equatable {
    public var file: String
    public var line: Int
    public var message: String
    public var description: String { line > 0 ? "\(file):\(line): \(message)" : "\(file): \(message)" }
}
