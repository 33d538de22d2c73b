extension MIDIFile {
    /// Every channel message of every track, in playing order, stamped with its sample frame.
    ///
    /// Format 0 and 1 tracks play together through one tempo map merged from all tracks;
    /// format 2 tracks play one after another, each through its own tempo events. Messages at
    /// the same tick keep track order, then file order, so a note-off written before a note-on
    /// of the same key stays before it.
    public func timedMessages(sampleRate: Double) -> [TimedMIDIMessage] {
        precondition(sampleRate > 0 && sampleRate.isFinite, "sample rate must be positive")
        let schedule = Schedule(self)
        var entries: [(group: Int, tick: Int, track: Int, index: Int, message: MIDIMessage)] = []
        for (trackIndex, track) in tracks.enumerated() {
            for (index, event) in track.events.enumerated() {
                if case .channel(let message) = event.kind {
                    entries.append((schedule.group(ofTrack: trackIndex), event.tick, trackIndex, index, message))
                }
            }
        }
        entries.sort { ($0.group, $0.tick, $0.track, $0.index) < ($1.group, $1.tick, $1.track, $1.index) }
        return entries.map { entry in
            let seconds = schedule.seconds(atTick: entry.tick, track: entry.track)
            return TimedMIDIMessage(frame: sampleFrame(atSeconds: seconds, sampleRate: sampleRate), message: entry.message)
        }
    }

    /// Time of the last event of the performance, End of Track included.
    public var durationSeconds: Double {
        let schedule = Schedule(self)
        var duration = 0.0
        for (index, track) in tracks.enumerated() {
            duration = max(duration, schedule.seconds(atTick: track.lastTick, track: index))
        }
        return duration
    }
}

/// Where each track sits in time: one shared clock (formats 0 and 1) or one clock per
/// track with the tracks laid end to end (format 2).
private struct Schedule {
    private let clocks: [TickClock]
    private let offsets: [Double]
    private let sequential: Bool

    init(_ file: MIDIFile) {
        sequential = file.format == .sequentialTracks
        if sequential {
            var clocks: [TickClock] = []
            var offsets: [Double] = []
            var start = 0.0
            for track in file.tracks {
                let clock = TickClock(division: file.division, tempoChanges: Self.tempoChanges(in: [track]))
                clocks.append(clock)
                offsets.append(start)
                start += clock.seconds(atTick: track.lastTick)
            }
            self.clocks = clocks
            self.offsets = offsets
        } else {
            clocks = [TickClock(division: file.division, tempoChanges: Self.tempoChanges(in: file.tracks))]
            offsets = [0]
        }
    }

    /// Messages are ordered by group first: all tracks share group 0 unless they play in sequence.
    func group(ofTrack track: Int) -> Int { sequential ? track : 0 }

    func seconds(atTick tick: Int, track: Int) -> Double {
        let slot = sequential ? track : 0
        return offsets[slot] + clocks[slot].seconds(atTick: tick)
    }

    /// Tempo events of the given tracks, by tick; equal ticks keep track order then file order.
    private static func tempoChanges(in tracks: [MIDIFile.Track]) -> [(tick: Int, microsecondsPerQuarter: Int)] {
        var changes: [(tick: Int, order: Int, tempo: Int)] = []
        for track in tracks {
            for event in track.events {
                if case .tempo(let tempo) = event.kind {
                    changes.append((event.tick, changes.count, tempo))
                }
            }
        }
        changes.sort { ($0.tick, $0.order) < ($1.tick, $1.order) }
        return changes.map { ($0.tick, $0.tempo) }
    }
}

/// Seconds to the nearest sample frame, saturating instead of trapping on absurd times.
func sampleFrame(atSeconds seconds: Double, sampleRate: Double) -> Int64 {
    let frames = (seconds * sampleRate).rounded()
    guard frames < 9.2e18 else { return Int64.max }  // also catches NaN
    guard frames > -9.2e18 else { return Int64.min }
    return Int64(frames)
}
