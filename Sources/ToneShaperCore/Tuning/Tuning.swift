import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Which pitch each key plays: the one question a tuning answers (amsynth's TuningMap asks the
/// same). Twelve-tone equal temperament by default; a Scala scale (.scl) with an optional Scala
/// keyboard mapping (.kbm) otherwise, read the way Scala, Surge XT and FluidSynth read them.
///
/// The engine needs only ratios between keys: a shape drawn for its root note plays on key k at
/// `ratio(k) / ratio(root)`, so the mapping's reference frequency cancels out.
public struct Tuning: Sendable, Equatable {
    /// Each key's pitch in (possibly fractional) semitones from the mapping's middle note; nil
    /// for an unmapped key. Semitones, so equal temperament is whole numbers and its ratios are
    /// computed exactly as 2^((note − root)/12).
    public let semitones: [Double?]

    public static let equal = Tuning(semitones: (0..<128).map { Double($0 - 60) })

    public init(semitones: [Double?]) {
        precondition(semitones.count == 128)
        self.semitones = semitones
    }

    /// The frequency ratio from `root` to `note`, nil when either key is unmapped.
    public func ratio(note: Int, root: Int) -> Double? {
        guard let a = semitones[min(max(note, 0), 127)], let b = semitones[min(max(root, 0), 127)] else { return nil }
        return exp2((a - b) / 12)
    }

    /// A scale on a keyboard mapping (nil: the linear mapping, degree 0 on note 60, one degree per key).
    public init(scale: ScalaScale, mapping: KeyboardMapping? = nil) {
        let map = mapping ?? .linear
        let octaveDegree = map.octaveDegree == 0 ? scale.count : map.octaveDegree
        let octave = scale.log2Ratio(degree: octaveDegree)
        var pitches = [Double?](repeating: nil, count: 128)  // log2 from the middle note
        for key in max(0, map.firstNote)...min(127, max(map.lastNote, map.firstNote)) {
            let offset = key - map.middleNote
            if map.entries.isEmpty {
                pitches[key] = scale.log2Ratio(degree: offset)
            } else {
                let size = map.entries.count
                let cycles = Int((Double(offset) / Double(size)).rounded(.down))
                guard let degree = map.entries[offset - cycles * size] else { continue }
                // (cycles 0 adds nothing, even to an octave too wide for a Double: 0 × ∞ would be NaN)
                pitches[key] = scale.log2Ratio(degree: degree) + (cycles == 0 ? 0 : Double(cycles) * octave)
            }
        }
        self.init(semitones: pitches.map { $0.map { 12 * $0 } })
    }
}

/// A Scala scale file: a description, then N pitches above the implied 1/1, the last one the
/// period (usually 2/1). Each pitch is cents when it holds a '.', else a ratio `a/b` or `a`.
public struct ScalaScale: Sendable, Equatable {
    public let description: String
    /// log2 of each pitch after 1/1; the last is the period.
    public let log2Ratios: [Double]
    public var count: Int { log2Ratios.count }

    /// Degree d (any integer): whole periods plus a step within the scale.
    public func log2Ratio(degree d: Int) -> Double {
        let n = log2Ratios.count
        guard n > 0 else { return 0 }  // a scale of no notes but the implied 1/1: every degree is 1/1
        let periods = Int((Double(d) / Double(n)).rounded(.down))
        let step = d - periods * n
        return (periods == 0 ? 0 : Double(periods) * log2Ratios[n - 1]) + (step == 0 ? 0 : log2Ratios[step - 1])
    }

    public static func load(path: String) throws(TuningError) -> ScalaScale {
        try parse(try TuningError.read(path), file: path)
    }

    public static func parse(_ text: String, file: String = "(scale)") throws(TuningError) -> ScalaScale {
        let all = TuningError.lines(text).filter { !$0.text.hasPrefix("!") }
        guard let description = all.first else { throw TuningError(file: file, line: 1, "no description line") }
        // The description may be blank; blank lines after it carry nothing.
        var lines = all.dropFirst().filter { !$0.text.isEmpty }.makeIterator()
        guard let countLine = lines.next() else { throw TuningError(file: file, line: nil, "no note count after the description (line \(description.number))") }
        let countText = countLine.text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
        // 0 is legal Scala ("degree 0 of 1/1 is implicit"): every key then plays the 1/1.
        guard let count = Int(countText), (0...4096).contains(count) else {
            throw TuningError(file: file, line: countLine.number, "note count '\(countText)' must be a whole number 0...4096")
        }
        var ratios: [Double] = []
        while ratios.count < count, let line = lines.next() {
            let word = line.text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
            ratios.append(try pitch(word, file: file, line: line.number))
        }
        guard ratios.count == count else {
            throw TuningError(file: file, line: nil, "the scale promises \(count) pitches but lists \(ratios.count)")
        }
        guard count == 0 || ratios[count - 1] > 0 else {
            throw TuningError(file: file, line: nil, "the period (the last pitch) must be above 1/1")
        }
        return ScalaScale(description: description.text, log2Ratios: ratios)
    }

    /// One pitch as log2 of its ratio. Any finite number of cents and any positive whole numbers
    /// are legal Scala (the format sets no upper limit): a pitch far out of range is read, and the
    /// keys it puts beyond what can be played stay silent (see `PlayableRange`).
    static func pitch(_ word: String, file: String, line: Int) throws(TuningError) -> Double {
        if word.contains(".") {
            guard let cents = Double(word), cents.isFinite else {
                throw TuningError(file: file, line: line, "pitch '\(word)' is not a finite number of cents")
            }
            return cents / 1200
        }
        let parts = word.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy({ $0 >= "0" && $0 <= "9" }) }),
              let a = wholeNumberLog2(parts[0]), let b = parts.count == 2 ? wholeNumberLog2(parts[1]) : 0 else {
            throw TuningError(file: file, line: line, "pitch '\(word)' is not cents (with a '.') or a ratio a/b of positive whole numbers")
        }
        // Numbers a Double holds exactly (below 2^53) divide first, as before: 9/8 is exactly 9.0/8.
        if parts.allSatisfy({ $0.count <= 15 }), let x = Double(parts[0]), let y = parts.count == 2 ? Double(parts[1]) : 1 {
            return log2(x / y)
        }
        return a - b
    }

    /// log2 of a positive whole number written in decimal, however many digits (a 400-digit
    /// numerator is about 2^1329: finite in the log, infinite as a Double); nil for zero.
    static func wholeNumberLog2(_ digits: Substring) -> Double? {
        let significant = digits.drop { $0 == "0" }
        guard !significant.isEmpty else { return nil }
        guard significant.count > 17, let lead = Double(significant.prefix(17)) else { return Double(significant).map { log2($0) } }
        return log2(lead) + Double(significant.count - 17) * log2(10.0)
    }
}

/// A Scala keyboard mapping: which keys are retuned, which scale degree each key of one
/// mapping cycle plays ('x': none), the middle note (degree 0) and the formal octave.
public struct KeyboardMapping: Sendable, Equatable {
    public var firstNote: Int
    public var lastNote: Int
    public var middleNote: Int
    public var referenceNote: Int
    public var referenceFrequency: Double
    /// The degree one mapping cycle spans (0: the scale's period).
    public var octaveDegree: Int
    /// One entry per key of a cycle; empty for the linear mapping (one degree per key).
    public var entries: [Int?]

    public static let linear = KeyboardMapping(firstNote: 0, lastNote: 127, middleNote: 60, referenceNote: 69,
                                               referenceFrequency: 440, octaveDegree: 0, entries: [])

    public static func load(path: String) throws(TuningError) -> KeyboardMapping {
        try parse(try TuningError.read(path), file: path)
    }

    public static func parse(_ text: String, file: String = "(mapping)") throws(TuningError) -> KeyboardMapping {
        let lines = TuningError.lines(text).filter { !$0.text.hasPrefix("!") && !$0.text.isEmpty }
        let names = ["map size", "first note", "last note", "middle note", "reference note", "reference frequency", "formal octave degree"]
        guard lines.count >= names.count else {
            throw TuningError(file: file, line: nil, "a keyboard mapping needs 7 header values (\(names.joined(separator: ", "))); found \(lines.count)")
        }
        var header: [Double] = []
        for (i, name) in names.enumerated() {
            let word = lines[i].text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
            guard let value = Double(word), value.isFinite, i == 5 ? value > 0 : (value >= 0 && value == value.rounded()) else {
                throw TuningError(file: file, line: lines[i].number, "\(name) '\(word)' is not \(i == 5 ? "a positive frequency" : "a whole number ≥ 0")")
            }
            if [1, 2, 3, 4].contains(i), value > 127 {
                throw TuningError(file: file, line: lines[i].number, "\(name) \(word) is not a MIDI note 0...127")
            }
            header.append(value)
        }
        let size = Int(min(header[0], 128))
        guard header[0] <= 128 else { throw TuningError(file: file, line: lines[0].number, "map size \(header[0]) is above 128") }
        var entries: [Int?] = []
        for line in lines.dropFirst(names.count).prefix(size) {
            let word = line.text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? ""
            if word.lowercased() == "x" { entries.append(nil); continue }
            guard let degree = Int(word), abs(degree) < 100_000 else {
                throw TuningError(file: file, line: line.number, "map entry '\(word)' is not a scale degree or 'x'")
            }
            entries.append(degree)
        }
        // Scala lets a file stop early: the missing entries are unmapped.
        while entries.count < size { entries.append(nil) }
        // Scala's formal octave is a scale degree; a scale has at most 4096 of them, so a degree
        // beyond any scale is refused here rather than met as a number no Int holds.
        guard header[6] <= 100_000 else {
            throw TuningError(file: file, line: lines[6].number, "formal octave degree \(lines[6].text.split(whereSeparator: \.isWhitespace).first.map(String.init) ?? "") is above 100000, beyond any scale")
        }
        return KeyboardMapping(firstNote: Int(header[1]), lastNote: Int(header[2]), middleNote: Int(header[3]),
                               referenceNote: Int(header[4]), referenceFrequency: header[5],
                               octaveDegree: Int(header[6]), entries: entries)
    }
}

/// A refused tuning file: which file, which line, what is wrong — one line.
public struct TuningError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(file: String, line: Int?, _ reason: String) {
        description = line.map { "\(file):\($0): \(reason)" } ?? "\(file): \(reason)"
    }

    /// The largest tuning file read: the Scala archive's largest scale is a few KB.
    public static let maximumFileBytes = 1 << 20

    /// A tuning file's text as the readers take it (at most `maximumFileBytes`; Latin-1 read as ASCII).
    public static func read(_ path: String) throws(TuningError) -> String {
        let data: [UInt8]
        do {
            data = try BoundedRead.contents(of: path, limit: maximumFileBytes)
        } catch {
            throw TuningError(file: path, line: nil, error.description(tooLarge: "; not a tuning file"))
        }
        // Scala files are often Latin-1 (descriptions with accents): read them as such when not UTF-8.
        return String(validating: data, as: UTF8.self) ?? String(decoding: data.map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// Lines with their numbers, whatever the line ends (LF, CRLF, CR), without the spaces and tabs
    /// at either end (the parsers read them as they come from here).
    static func lines(_ text: String) -> [(number: Int, text: String)] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .map { (number: $0.offset + 1, text: String($0.element).trimmingSpaces()) }
    }
}

extension StringProtocol {
    /// Without the spaces and tabs at either end (a Scala line's padding; CharacterSet's
    /// `.whitespaces` is not in FoundationEssentials).
    func trimmingSpaces() -> String {
        let isSpace = { (c: Character) in c.isWhitespace && !c.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
