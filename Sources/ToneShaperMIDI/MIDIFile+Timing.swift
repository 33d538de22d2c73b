extension MIDIFile {
    /// Every channel message of every track, in playing order, stamped with its sample frame.
    ///
    /// Format 0 and 1 tracks play together through one tempo map merged from all tracks;
    /// format 2 tracks play one after another, each through its own tempo events. Messages at
    /// the same tick keep track order, then file order, so a note-off written before a note-on
    /// of the same key stays before it.
    ///
    /// Nothing is left sounding at the end: every key still down when the performance ends gets
    /// a note-off (velocity 64), and every channel whose sustain pedal (CC 64) is still down gets
    /// CC 64 = 0, at the frame of `durationSeconds`, after everything else, channel by channel
    /// (keys from low to high, then the pedal). A file can leave notes on by mistake, or because
    /// the events that end them come after a mid-track End of Track, where reading stops (SMF
    /// 1.0). A key is down from a note-on until a note-off of the same channel and key, or All
    /// Sound Off / All Notes Off (CC 120, 123...127) on its channel, as the engine plays them; the
    /// pedal is down from CC 64 ≥ 64 until CC 64 < 64 or Reset All Controllers (CC 121). Format 2
    /// files are closed once, at the end of their last track.
    ///
    /// Memory: the result is reserved once (its messages plus room for the closing ones) and
    /// filled by merging the tracks, which are already in tick order, so nothing else grows with
    /// the number of events.
    public func timedMessages(sampleRate: Double) -> [TimedMIDIMessage] {
        precondition(sampleRate > 0 && sampleRate.isFinite, "sample rate must be positive")
        let schedule = Schedule(self)
        var result: [TimedMIDIMessage] = []
        result.reserveCapacity(tracks.reduce(0) { $0 + $1.channelMessageCount } + HeldNotes.maxClosingMessages)
        var held = HeldNotes()
        func emit(_ tick: Int, _ track: Int, _ message: MIDIMessage) {
            let seconds = schedule.seconds(atTick: tick, track: track)
            result.append(TimedMIDIMessage(frame: sampleFrame(atSeconds: seconds, sampleRate: sampleRate), message: message))
            held.observe(message)
        }
        if schedule.sequential {
            for (index, track) in tracks.enumerated() {
                var cursor = ChannelMessageCursor(track)
                while let (tick, message) = cursor.next() { emit(tick, index, message) }
            }
        } else {
            var merge = TrackMerge(tracks)
            while let (tick, track, message) = merge.next() { emit(tick, track, message) }
        }
        let end = sampleFrame(atSeconds: schedule.duration(of: self), sampleRate: sampleRate)
        held.close { result.append(TimedMIDIMessage(frame: end, message: $0)) }
        return result
    }

    /// Time of the last event of the performance, End of Track included.
    ///
    /// Always finite and ≥ 0, and as exact as a Double allows (tick arithmetic is integer and
    /// saturating), even for absurd files: 1 tick per quarter at the slowest tempo (0xFFFFFF µs)
    /// with maximal delta times gives about 4.5e9 s per event, and a file can hold millions of
    /// them. Such a duration times a sample rate does not fit an `Int`: a caller that turns it
    /// into a frame count must bound it first (refuse the file, or cap the render), as
    /// `timedMessages` does by saturating frames at `Int64.max`.
    public var durationSeconds: Double {
        Schedule(self).duration(of: self)
    }
}

/// Which keys and sustain pedals are down, following channel messages in playing order.
struct HeldNotes {
    /// Bit `key % 64` of word `channel * 2 + key / 64`.
    private var keys = [UInt64](repeating: 0, count: 32)
    /// Bit `channel`.
    private var pedals: UInt16 = 0

    /// At most one note-off per key and one pedal release per channel.
    static let maxClosingMessages = 16 * 128 + 16

    mutating func observe(_ message: MIDIMessage) {
        switch message {
        case .noteOn(let c, let note, let velocity): setKey(c, note, down: velocity > 0)
        case .noteOff(let c, let note, _): setKey(c, note, down: false)
        case .controlChange(let c, 64, let value) where c < 16:
            if value >= 64 { pedals |= 1 << c } else { pedals &= ~(1 << c) }
        case .controlChange(let c, 121, _) where c < 16: pedals &= ~(1 << c)
        case .controlChange(let c, let controller, _) where c < 16 && (controller == 120 || controller >= 123):
            keys[Int(c) * 2] = 0
            keys[Int(c) * 2 + 1] = 0
        default: break
        }
    }

    private mutating func setKey(_ channel: UInt8, _ note: UInt8, down: Bool) {
        guard channel < 16, note < 128 else { return }
        let word = Int(channel) * 2 + Int(note) / 64
        let bit: UInt64 = 1 << (note % 64)
        if down { keys[word] |= bit } else { keys[word] &= ~bit }
    }

    /// The messages that release everything still down, channel by channel: keys low to high, then the pedal.
    func close(_ send: (MIDIMessage) -> Void) {
        for channel: UInt8 in 0..<16 {
            for half in 0..<2 {
                var bits = keys[Int(channel) * 2 + half]
                while bits != 0 {
                    let note = UInt8(half * 64 + bits.trailingZeroBitCount)
                    send(.noteOff(channel: channel, note: note, velocity: 64))
                    bits &= bits - 1
                }
            }
            if pedals & (1 << channel) != 0 {
                send(.controlChange(channel: channel, controller: 64, value: 0))
            }
        }
    }
}

/// Walks the channel messages of one track in file order, with their absolute ticks.
struct ChannelMessageCursor {
    private let events: [PackedEvent]
    private var position = 0
    private var tick = 0

    init(_ track: MIDIFile.Track) { events = track.packed }

    /// Tick of the next channel message, without moving; nil when none is left.
    mutating func peekTick() -> Int? {
        while position < events.count {
            let event = events[position]
            if event.isChannelMessage { return tick.addingSaturating(Int(event.delta)) }
            tick = tick.addingSaturating(Int(event.delta))
            position += 1
        }
        return nil
    }

    mutating func next() -> (tick: Int, message: MIDIMessage)? {
        while position < events.count {
            let event = events[position]
            position += 1
            tick = tick.addingSaturating(Int(event.delta))
            if let message = event.channelMessage { return (tick, message) }
        }
        return nil
    }
}

/// The channel messages of tracks that play together, merged by tick; equal ticks keep track
/// order, and each track keeps its file order. A binary heap of one cursor per track: O(log tracks)
/// per message and no copy of the events.
struct TrackMerge {
    private var cursors: [ChannelMessageCursor]
    /// Heap of (tick of next message, track index); smallest first.
    private var heap: [(tick: Int, track: Int)] = []

    init(_ tracks: [MIDIFile.Track]) {
        cursors = tracks.map(ChannelMessageCursor.init)
        for index in cursors.indices {
            if let tick = cursors[index].peekTick() { push((tick, index)) }
        }
    }

    mutating func next() -> (tick: Int, track: Int, message: MIDIMessage)? {
        guard let top = heap.first else { return nil }
        guard let (tick, message) = cursors[top.track].next() else { return nil }  // peeked, so present
        if let following = cursors[top.track].peekTick() {
            heap[0] = (following, top.track)
            siftDown(0)
        } else {
            let last = heap.removeLast()
            if !heap.isEmpty { heap[0] = last; siftDown(0) }
        }
        return (tick, top.track, message)
    }

    private static func precedes(_ a: (tick: Int, track: Int), _ b: (tick: Int, track: Int)) -> Bool {
        a.tick != b.tick ? a.tick < b.tick : a.track < b.track
    }

    private mutating func push(_ entry: (tick: Int, track: Int)) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            var smallest = parent
            let left = 2 * parent + 1
            if left < heap.count && Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if left + 1 < heap.count && Self.precedes(heap[left + 1], heap[smallest]) { smallest = left + 1 }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// Where each track sits in time: one shared clock (formats 0 and 1) or one clock per
/// track with the tracks laid end to end (format 2).
private struct Schedule {
    private let clocks: [TickClock]
    private let offsets: [Double]
    let sequential: Bool

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

    /// Time of the latest event of any track, End of Track included.
    func duration(of file: MIDIFile) -> Double {
        var duration = 0.0
        for (index, track) in file.tracks.enumerated() {
            duration = max(duration, seconds(atTick: track.lastTick, track: index))
        }
        return duration
    }

    func seconds(atTick tick: Int, track: Int) -> Double {
        let slot = sequential ? track : 0
        return offsets[slot] + clocks[slot].seconds(atTick: tick)
    }

    /// Tempo events of the given tracks, by tick; equal ticks keep track order then file order.
    private static func tempoChanges(in tracks: [MIDIFile.Track]) -> [(tick: Int, microsecondsPerQuarter: Int)] {
        var changes: [(tick: Int, order: Int, tempo: Int)] = []
        for track in tracks {
            var tick = 0
            for event in track.packed {
                tick = tick.addingSaturating(Int(event.delta))
                if event.status == PackedEvent.tempoTag {
                    changes.append((tick, changes.count, event.tempo))
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
