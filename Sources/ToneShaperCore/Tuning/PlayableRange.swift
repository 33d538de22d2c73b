/// Which frequencies the engine plays: the one rule the voices obey and the load-time report
/// states, so a key the report calls silent is exactly a key that stays silent.
///
/// A tuning can put a key anywhere (a scale of one 2/1 per key puts key 127 near 4e22 Hz; a step
/// of 999999 cents puts it at infinity), bends and vibrato multiply on top, and the phase walk is
/// exact only while its phase stays far below 2^51 cycles. So a note sounds only when its shape,
/// transposed, has nothing above `ceiling` and is not 40 octaves down; once sounding, its bends are
/// held under the ceiling. Per wave, Nyquist: a band-limited wave has no partial left above it, so
/// a key on which all of its shape lies above Nyquist is silent (and said so); the sine, the naive
/// waves and the Fourier sums alias there, as they always have, and are played.
public enum PlayableRange {
    /// The highest frequency a voice plays: ten octaves above the shape files' 100 kHz limit, the
    /// headroom the phase walk was built with (a ten-minute pass at this frequency stays near 2^36
    /// cycles, exact in a Double).
    public static let ceiling = Shape.maximumFrequency * 1024
    /// The smallest transposition ratio a voice plays at (40 octaves down): below it a shape is a
    /// standstill, and a ratio that rounded to 0 would divide the next change into infinity.
    public static let lowestRatio = 0x1p-40

    /// Whether a shape spanning `lowest...highest` Hz sounds when transposed by `ratio`: the ratio
    /// is finite and not vanishing, none of the shape lies above `ceiling`, and some of it lies
    /// below `audible` (see `audibleLimit`). False for NaN and infinities.
    @inline(__always) public static func sounds(ratio: Double, lowest: Double, highest: Double, audible: Double) -> Bool {
        ratio >= lowestRatio && highest * ratio <= ceiling && lowest * ratio < audible
    }

    /// Below which frequency a wave has anything to play: Nyquist for the band-limited waves
    /// (their tables keep no partial above it), no limit for the others (they alias).
    @inline(__always) public static func audibleLimit(wave: WaveType, sampleRate: Double) -> Double {
        wave.isBandLimited ? 0.5 * sampleRate : .infinity
    }

    /// `ratio` held within [lowestRatio, cap] (NaN: cap): a sounding voice's bends and vibrato
    /// can take it no higher than the shape's ceiling allows, and no further down than the floor.
    @inline(__always) static func bounded(_ ratio: Double, cap: Double) -> Double {
        if ratio <= cap { return ratio >= lowestRatio ? ratio : lowestRatio }
        return cap
    }
}

/// The keys of a tuning that cannot sound a shape, by reason: what the one-line note at load says.
public struct SilentKeys: Equatable, Sendable {
    /// Keys transposed more than 40 octaves down from the shape's root (or to a ratio of 0).
    public var tooLow: [Int] = []
    /// Keys on which some of the shape lies above the ceiling (an infinite ratio among them), or,
    /// for a band-limited wave, all of it at or above Nyquist.
    public var tooHigh: [Int] = []
    /// Keys with no pitch at all (a NaN ratio: an infinite pitch on both the key and the root).
    public var unpitched: [Int] = []
    public var all: [Int] { (tooLow + tooHigh + unpitched).sorted() }
    public var isEmpty: Bool { tooLow.isEmpty && tooHigh.isEmpty && unpitched.isEmpty }

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
        var silent = SilentKeys()
        for key in 0..<128 {
            guard let pitch = semitones[key] else { continue }
            let ratio = _exp2((pitch - rootPitch) / 12)
            if PlayableRange.sounds(ratio: ratio, lowest: lowest, highest: highest,
                                    audible: PlayableRange.audibleLimit(wave: shape.wave, sampleRate: sampleRate)) { continue }
            if ratio.isNaN { silent.unpitched.append(key) } else if ratio < PlayableRange.lowestRatio { silent.tooLow.append(key) } else { silent.tooHigh.append(key) }
        }
        return silent
    }

    /// One line for the note printed at load, or nil when every mapped key sounds every shape:
    /// "tuning o.scl: keys 0-4, 65-127 stay silent with shape 'drone' (0-4 over 40 octaves below
    /// its root; 65-127 above 102.4 MHz, the highest a voice plays)". `label` names the tuning
    /// ("tuning o.scl"); `shapes` are the shapes the performance can play.
    public func silentKeysNote(label: String, shapes: [Shape], sampleRate: Double) -> String? {
        var clauses: [String] = []
        var seen = Set<String>()
        for shape in shapes where seen.insert(shape.name).inserted {
            let silent = silentKeys(for: shape, sampleRate: sampleRate)
            if silent.isEmpty { continue }
            var reasons: [String] = []
            if !silent.tooLow.isEmpty { reasons.append("\(SilentKeys.describe(silent.tooLow)) over 40 octaves below its root") }
            if !silent.tooHigh.isEmpty {
                reasons.append("\(SilentKeys.describe(silent.tooHigh)) "
                               + (shape.wave.isBandLimited ? "wholly above \(Int(sampleRate / 2)) Hz, the Nyquist frequency at \(Int(sampleRate)) Hz"
                                                           : "above \(PlayableRange.ceiling / 1e6) MHz, the highest a voice plays"))
            }
            if !silent.unpitched.isEmpty { reasons.append("\(SilentKeys.describe(silent.unpitched)) no pitch at all") }
            clauses.append("keys \(SilentKeys.describe(silent.all)) stay silent with shape '\(shape.name)' (\(reasons.joined(separator: "; ")))")
        }
        return clauses.isEmpty ? nil : "\(label): " + clauses.joined(separator: "; ")
    }
}
