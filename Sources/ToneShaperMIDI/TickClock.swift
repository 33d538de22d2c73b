/// Converts ticks to seconds for one division and one list of tempo changes.
///
/// Piecewise linear: each tempo change starts a segment whose start time is the sum of the
/// segments before it, so a tempo change never moves the events that precede it.
struct TickClock {
    /// From `tick` on, seconds = `seconds` + (t − tick) × numerator / denominator. Numerator and
    /// denominator are kept apart (instead of one rounded seconds-per-tick) so whole-number
    /// tempos and divisions give exact results.
    private struct Segment {
        let tick: Int
        let seconds: Double
        let numerator: Double
        let denominator: Double

        func seconds(at t: Int) -> Double {
            seconds + Double(t - tick) * numerator / denominator
        }
    }

    /// The tempo a metrical file has until its first Set Tempo event: 120 quarter notes per minute.
    static let defaultMicrosecondsPerQuarter = 500_000

    private let segments: [Segment]

    /// - Parameter tempoChanges: (tick, µs per quarter) in the order they take effect; at equal
    ///   ticks the last one wins. Ignored for SMPTE division, whose ticks are absolute time.
    ///
    /// Reading rule: a tempo of 0 µs per quarter (or less) is ignored, and the tempo before it
    /// stays. Taken literally it would make every later tick last no time, so all the rest of the
    /// performance would sound in one instant (mido's and FluidSynth's clocks stop so); a tempo
    /// is never a divisor here, so nothing else could go wrong with it.
    init(division: MIDIFile.Division, tempoChanges: [(tick: Int, microsecondsPerQuarter: Int)]) {
        switch division {
        case .smpte(let framesPerSecond, let ticksPerFrame):
            // "29" means 29.97 drop-frame: 30000/1001 frames per second in real time.
            let (numerator, framesDenominator): (Double, Double) =
                framesPerSecond == 29 ? (1001, 30000) : (1, Double(framesPerSecond))
            segments = [Segment(tick: 0, seconds: 0, numerator: numerator,
                                denominator: framesDenominator * Double(ticksPerFrame))]
        case .ticksPerQuarterNote(let ticksPerQuarter):
            let denominator = Double(ticksPerQuarter) * 1_000_000
            var built = [Segment(tick: 0, seconds: 0,
                                 numerator: Double(Self.defaultMicrosecondsPerQuarter), denominator: denominator)]
            for change in tempoChanges where change.microsecondsPerQuarter > 0 {
                let last = built[built.count - 1]
                let start = Segment(tick: change.tick, seconds: last.seconds(at: change.tick),
                                    numerator: Double(change.microsecondsPerQuarter), denominator: denominator)
                if last.tick == change.tick {
                    built[built.count - 1] = start
                } else {
                    built.append(start)
                }
            }
            segments = built
        }
    }

    func seconds(atTick tick: Int) -> Double {
        // Binary search for the last segment starting at or before `tick`.
        var low = 0
        var high = segments.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if segments[mid].tick <= tick { low = mid } else { high = mid - 1 }
        }
        return segments[low].seconds(at: tick)
    }
}
