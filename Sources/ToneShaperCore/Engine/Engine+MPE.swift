/// MIDI Polyphonic Expression: zones, the manager channel speaking for its zone, per-note pressure.
///
/// Each MIDI channel is a part, so in MPE — one note per member channel — a member part's state
/// (bend, pressure, CC 74 through the map, its own shape slot and bus) is that note's own. What
/// MPE adds is small: members add their manager's bend, a manager's messages reach the whole
/// zone, RPN 6 sets the zones and RPN 0 on a member sets every member's range.
extension Engine {
    /// The parts a channel message on `p` reaches: a zone manager's whole zone (manager and
    /// members), otherwise `p` alone.
    @inline(__always) func reach(of p: Int) -> ClosedRange<Int> {
        zones.zone(managedBy: p) ?? p...p
    }

    /// The MPE Configuration Message (RPN 6 on channel 1 or 16): sets that zone's member count,
    /// 0 turning it off; the other zone shrinks if the two would overlap.
    func configureZone(lower: Bool, members: Int) {
        var layout = zones
        layout.configure(lower: lower, members: members)
        setZones(layout, configuring: lower ? 0...members : (15 - members)...15)
    }

    /// Takes a zone layout. Members learn their manager; the channels of the zone just configured
    /// take the spec's default bend ranges (members ±48, manager ±2), and so does any channel whose
    /// role changed (one that left MPE goes back to an ordinary channel's ±2).
    func setZones(_ layout: MPEZones, configuring configured: ClosedRange<Int>) {
        let previous = zones
        zones = layout
        for p in 0..<16 {
            let manager = layout.manager(ofMember: p) ?? -1
            let wasManager = previous.zone(managedBy: p) != nil, isManager = layout.zone(managedBy: p) != nil
            if configured.contains(p) || manager != parts[p].manager || wasManager != isManager {
                parts[p].bendRange = layout.defaultBendRange(part: p)
            }
            parts[p].manager = manager
            refreshRatio(part: p)
        }
    }

    /// RPN 0 (pitch-bend sensitivity). The spec keeps one range for all members of a zone, so on a
    /// member channel it sets every member's; on a manager or an ordinary channel, that channel's.
    func setBendRange(_ semitones: Double, part p: Int) {
        let members = zones.manager(ofMember: p) != nil ? zones.members(ofZoneWith: p) ?? p...p : p...p
        for q in members { parts[q].bendRange = semitones }
    }

    /// Polyphonic key pressure through the map. On `amplitude` it is that one note's level: the
    /// expression gain of the voices playing `note` on this channel (or, from a manager, anywhere in
    /// its zone). Every other parameter lives in the channel (its shape slot, bus or bend), so it
    /// moves for the channel: the note's own when it has the channel to itself, as in MPE.
    func keyPressure(part p: Int, note: UInt8, pressure: UInt8) {
        guard let a = controllerMap.assignment(channel: UInt8(p), source: .polyPressure) else { return }
        let value = a.value(for: pressure)
        let reached = reach(of: p)
        guard a.parameter == .amplitude else {
            for q in reached { setParameter(a.parameter, value, part: q) }
            return
        }
        for i in 0..<voiceCount where voices[i].stage != .idle && voices[i].note == note && reached.contains(voices[i].part) {
            setExpression(value, voice: voices + i)
        }
    }

    /// A voice's own expression gain, ramped from where its gain is now (an attack under way
    /// carries on to the new level, taking at least the parameter ramp time, so nothing clicks).
    func setExpression(_ value: Double, voice v: UnsafeMutablePointer<Voice>) {
        v.pointee.expression = value
        rampToLevel(voice: v)
    }

    /// A voice's own volume (a host's per-note volume), ramped as its expression gain is.
    func setVolume(_ value: Double, voice v: UnsafeMutablePointer<Voice>) {
        v.pointee.volume = Float(value)
        rampToLevel(voice: v)
    }

    /// Ramps a playing voice to velocity × expression × volume.
    private func rampToLevel(voice v: UnsafeMutablePointer<Voice>) {
        // A released note (or one fading to make room for another) keeps falling.
        guard v.pointee.stage == .playing else { return }
        v.pointee.ramp(to: v.pointee.level, samples: max(v.pointee.rampLeft, Int(rampSamples)))
    }
}
