/// Which frequencies the engine plays: the one rule the voices obey and the load-time report
/// states, so a key the report calls silent is exactly a key that stays silent.
///
/// A tuning can put a key anywhere (a scale of one 2/1 per key puts key 127 near 4e22 Hz; a step
/// of 999999 cents puts it at infinity), and bends and vibrato multiply on top. A note sounds only
/// when its ratio is finite and not 40 octaves down, its shape, transposed, has nothing above
/// `ceiling` (the shape files' own 100 kHz limit), and some of it lies below Nyquist: a key on
/// which all of the shape lies at or above Nyquist has nothing a sample rate can carry, whatever
/// the wave (the band-limited tables keep no partial there; the sine, the naive waves and the
/// Fourier sums would only fold it back as a tone the shape never drew). A shape only partly
/// above Nyquist plays: the band-limited waves drop that part, the others alias there as they
/// always have. Noise is exempt from Nyquist: its samples do not follow the phase, so every key
/// plays the same noise and none is more out of reach than another; the ceiling still holds it,
/// since its phase is walked like any other. Once sounding, a note's bends are held under the
/// ceiling.
///
/// Why the ceiling keeps the phase walk exact: within a segment the phase is a quadratic in the
/// sample count from its anchor, and a segment lasts at most a ten-minute pass; at 100 kHz that
/// is 6e7 cycles, under 2^26, so a Double keeps 26 bits of the fraction (better than 1e-7 of a
/// cycle) and `fractionalPart` never meets a value no Int64 holds.
public enum PlayableRange {
    /// The highest frequency a voice plays: the shape files' limit (`Shape.maximumFrequency`),
    /// which no tuning, transposition, bend or vibrato takes a shape past.
    public static let ceiling = Shape.maximumFrequency
    /// The smallest transposition ratio a voice plays at (40 octaves down): below it a shape is a
    /// standstill, and a ratio that rounded to 0 would divide the next change into infinity.
    public static let lowestRatio = 0x1p-40

    /// Whether a shape spanning `lowest...highest` Hz sounds when transposed by `ratio`: the ratio
    /// is finite and not vanishing, none of the shape lies above `ceiling`, and some of it lies
    /// below `audible` (see `audibleLimit`). False for NaN and infinities.
    @inline(__always) public static func sounds(ratio: Double, lowest: Double, highest: Double, audible: Double) -> Bool {
        ratio >= lowestRatio && highest * ratio <= ceiling && lowest * ratio < audible
    }

    /// Below which frequency a wave has anything to play: Nyquist for every wave but noise,
    /// which sounds the same on every key (see above).
    @inline(__always) public static func audibleLimit(wave: WaveType, sampleRate: Double) -> Double {
        wave == .noise ? .infinity : 0.5 * sampleRate
    }

    /// `ratio` held within [lowestRatio, cap] (NaN: cap): a sounding voice's bends and vibrato
    /// can take it no higher than the shape's ceiling allows, and no further down than the floor.
    @inline(__always) static func bounded(_ ratio: Double, cap: Double) -> Double {
        if ratio <= cap { return ratio >= lowestRatio ? ratio : lowestRatio }
        return cap
    }
}

/// The keys of a tuning that cannot sound a shape, by reason: what the one-line note at load says.
/// A key beyond both Nyquist and the ceiling is named under both.
public struct SilentKeys: Equatable, Sendable {
    /// Keys transposed more than 40 octaves down from the shape's root (or to a ratio of 0).
    public var tooLow: [Int] = []
    /// Keys on which all of the shape lies at or above Nyquist (never for noise).
    public var aboveNyquist: [Int] = []
    /// Keys on which some of the shape lies above the ceiling (an infinite ratio among them).
    public var aboveCeiling: [Int] = []
    /// Keys with no pitch at all (a NaN ratio: an infinite pitch on both the key and the root).
    public var unpitched: [Int] = []
    public var all: [Int] { Array(Set(tooLow + aboveNyquist + aboveCeiling + unpitched)).sorted() }
    public var isEmpty: Bool { tooLow.isEmpty && aboveNyquist.isEmpty && aboveCeiling.isEmpty && unpitched.isEmpty }

    /// Only those of `keys`: what a known performance (a file, a script) will meet.
    public func among(_ keys: Set<Int>) -> SilentKeys {
        SilentKeys(tooLow: tooLow.filter(keys.contains), aboveNyquist: aboveNyquist.filter(keys.contains),
                   aboveCeiling: aboveCeiling.filter(keys.contains), unpitched: unpitched.filter(keys.contains))
    }

    /// "96-99, 101, 120-127": runs of neighbouring keys as ranges.
    public static func describe(_ keys: [Int]) -> String {
        var runs: [String] = []
        var i = 0
        while i < keys.count {
            var j = i
            while j + 1 < keys.count && keys[j + 1] == keys[j] + 1 { j += 1 }
            runs.append(j == i ? "\(keys[i])" : "\(keys[i])-\(keys[j])")
            i = j + 1
        }
        return runs.joined(separator: ", ")
    }
}

extension Tuning {
    /// The keys that stay silent when `shape` is played in this tuning at `sampleRate`, by the
    /// engine's own rule (`PlayableRange`); keys the tuning leaves unmapped on purpose (Scala's
    /// 'x') are not among them.
    public func silentKeys(for shape: Shape, sampleRate: Double) -> SilentKeys {
        let frequencies = shape.points.map(\.frequency)
        let lowest = frequencies.min() ?? 0, highest = frequencies.max() ?? 0
        let root = min(max(shape.rootNote, 0), 127)
        // An unmapped root stands where equal temperament puts it, as in the engine.
        let rootPitch = semitones[root] ?? Double(root - 60)
        let audible = PlayableRange.audibleLimit(wave: shape.wave, sampleRate: sampleRate)
        var silent = SilentKeys()
        for key in 0..<128 {
            guard let pitch = semitones[key] else { continue }
            let ratio = _exp2((pitch - rootPitch) / 12)
            if PlayableRange.sounds(ratio: ratio, lowest: lowest, highest: highest, audible: audible) { continue }
            if ratio.isNaN { silent.unpitched.append(key); continue }
            if ratio < PlayableRange.lowestRatio { silent.tooLow.append(key); continue }
            // Noise has no Nyquist limit (an infinite `audible`), even on an infinite ratio.
            let beyondNyquist = audible.isFinite && lowest * ratio >= audible
            if beyondNyquist { silent.aboveNyquist.append(key) }
            // Whatever `sounds` refused that Nyquist does not explain is above the ceiling.
            if !(highest * ratio <= PlayableRange.ceiling) || !beyondNyquist { silent.aboveCeiling.append(key) }
        }
        return silent
    }

    /// One line for the note printed at load, or nil when every mapped key sounds every shape:
    /// "tuning o.scl: keys 0-4, 53-127 stay silent with shape 'drone' (0-4 over 40 octaves below
    /// its root; 53-127 wholly above 24000 Hz, the Nyquist frequency at 48000 Hz; 55-127 above
    /// 100 kHz, the highest a shape may reach)". A key can have both of the last two reasons.
    /// `label` names the tuning ("tuning o.scl"); `shapes` are the shapes the performance can play;
    /// `played`, when the performance is known, the keys it plays: only those are named, so a
    /// file that never reaches a silent key says nothing.
    public func silentKeysNote(label: String, shapes: [Shape], sampleRate: Double, played: Set<Int>? = nil) -> String? {
        /// 24000, 22050, 5512.5: a sample rate's Nyquist frequency as a person writes it.
        func hertz(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? "\(Int(x))" : "\(x)" }
        var clauses: [String] = []
        var seen = Set<String>()
        for shape in shapes where seen.insert(shape.name).inserted {
            let every = silentKeys(for: shape, sampleRate: sampleRate)
            let silent = played.map { every.among($0) } ?? every
            if silent.isEmpty { continue }
            var reasons: [String] = []
            if !silent.tooLow.isEmpty { reasons.append("\(SilentKeys.describe(silent.tooLow)) over 40 octaves below its root") }
            if !silent.aboveNyquist.isEmpty {
                reasons.append("\(SilentKeys.describe(silent.aboveNyquist)) wholly above \(hertz(sampleRate / 2)) Hz, the Nyquist frequency at \(hertz(sampleRate)) Hz")
            }
            if !silent.aboveCeiling.isEmpty {
                reasons.append("\(SilentKeys.describe(silent.aboveCeiling)) above \(hertz(PlayableRange.ceiling / 1000)) kHz, the highest a shape may reach")
            }
            if !silent.unpitched.isEmpty { reasons.append("\(SilentKeys.describe(silent.unpitched)) no pitch at all") }
            let all = silent.all
            clauses.append("\(all.count == 1 ? "key" : "keys") \(SilentKeys.describe(all)) \(all.count == 1 ? "stays" : "stay") silent with shape '\(shape.name)' (\(reasons.joined(separator: "; ")))")
        }
        return clauses.isEmpty ? nil : "\(label): " + clauses.joined(separator: "; ")
    }
}
