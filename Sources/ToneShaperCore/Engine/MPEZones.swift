/// MIDI Polyphonic Expression zones (MMA RP-053, now M1-100): which channels are a zone's manager
/// and which are its members.
///
/// An MPE controller plays each note on a member channel of its own, so that channel's bend,
/// pressure and timbre (CC 74) are that note's alone; the manager channel carries what the whole
/// zone shares (its bend, pedal, program). The lower zone is managed from channel 1 with members
/// 2, 3, … upward; the upper zone from channel 16 with members 15, 14, … downward. Channels here
/// are parts, 0-based: the lower manager is part 0, the upper manager part 15.
public struct MPEZones: Sendable, Equatable {
    /// Member channels of the lower zone, 0 (off) ... 15.
    public private(set) var lowerMembers = 0
    /// Member channels of the upper zone, 0 (off) ... 15.
    public private(set) var upperMembers = 0

    /// No zones: every channel is an ordinary MIDI channel.
    public static let off = MPEZones()

    /// The spec's default bend ranges, taken whenever a zone is configured.
    public static let memberBendRange = 48.0
    public static let managerBendRange = 2.0

    public init() {}

    /// Both zones at once, as given (e.g. from `--mpe`): they must not overlap.
    public init(lower: Int, upper: Int) throws(MPEZonesError) {
        for (name, count) in [("lower", lower), ("upper", upper)] where !(0...15).contains(count) {
            throw MPEZonesError("\(name):\(count) — a zone has 0...15 member channels")
        }
        guard lower == 0 || upper == 0 || lower + upper <= 14 else {
            throw MPEZonesError("lower:\(lower) and upper:\(upper) overlap — with both zones on, their members share the 14 channels between the two managers")
        }
        lowerMembers = lower
        upperMembers = upper
    }

    public var isOn: Bool { lowerMembers > 0 || upperMembers > 0 }

    /// What the MPE Configuration Message (RPN 6 on channel 1 or 16) does: sets one zone's member
    /// count (0 turns it off). The other zone, if the two would now share a channel, shrinks to
    /// fit, and turns off when nothing is left of it: the newest message wins, as the spec says.
    public mutating func configure(lower: Bool, members: Int) {
        let count = min(max(members, 0), 15)
        if lower {
            lowerMembers = count
            if count > 0 && upperMembers > 0 && count + upperMembers > 14 { upperMembers = max(0, 14 - count) }
        } else {
            upperMembers = count
            if count > 0 && lowerMembers > 0 && count + lowerMembers > 14 { lowerMembers = max(0, 14 - count) }
        }
    }

    /// The zone a manager part speaks for (manager and members, always contiguous), nil when `part`
    /// manages no zone.
    public func zone(managedBy part: Int) -> ClosedRange<Int>? {
        if part == 0 && lowerMembers > 0 { return 0...lowerMembers }
        if part == 15 && upperMembers > 0 { return (15 - upperMembers)...15 }
        return nil
    }

    /// The member parts of the zone `part` belongs to (as manager or member), nil outside MPE.
    public func members(ofZoneWith part: Int) -> ClosedRange<Int>? {
        if lowerMembers > 0 && (0...lowerMembers).contains(part) { return 1...lowerMembers }
        if upperMembers > 0 && ((15 - upperMembers)...15).contains(part) { return (15 - upperMembers)...14 }
        return nil
    }

    /// The manager part of a member part, nil for a manager or an ordinary channel.
    public func manager(ofMember part: Int) -> Int? {
        if lowerMembers > 0 && (1...lowerMembers).contains(part) { return 0 }
        if upperMembers > 0 && ((15 - upperMembers)...14).contains(part) { return 15 }
        return nil
    }

    /// The bend range a part starts with under this layout: ±48 for members, ±2 otherwise.
    func defaultBendRange(part: Int) -> Double {
        manager(ofMember: part) == nil ? Self.managerBendRange : Self.memberBendRange
    }
}

extension MPEZones {
    /// Reads the `--mpe` option: `lower` or `upper` (15 members), `lower:N`, `upper:N`,
    /// `lower:N,upper:M`, or `off`.
    public init(parsing text: String) throws(MPEZonesError) {
        let spec = text.lowercased().filter { !$0.isWhitespace }
        if spec == "off" || spec == "none" { self = .off; return }
        var counts: [String: Int] = [:]
        for item in spec.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard ["lower", "upper"].contains(parts[0]), counts[parts[0]] == nil else {
                throw MPEZonesError("'\(text)' is not lower[:N], upper[:N], lower:N,upper:M or off")
            }
            if parts.count == 1 {
                counts[parts[0]] = 15
            } else if let n = Int(parts[1]) {
                counts[parts[0]] = n
            } else {
                throw MPEZonesError("'\(parts[1])' in '\(text)' is not a number of member channels (0...15)")
            }
        }
        try self.init(lower: counts["lower"] ?? 0, upper: counts["upper"] ?? 0)
    }
}

/// A zone layout that cannot be: says which value and why.
public struct MPEZonesError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
