import ToneShaperMIDI

/// The instrument's controls as last set, kept from the MIDI the engine applied, so a saved session
/// (NSM, a plugin's state) comes back with every knob where the player left it.
///
/// It keeps, per channel, the last message of each kind that leaves a lasting setting: every
/// controller, the program, the bend, the channel pressure, the pitch-bend range and MPE zone
/// messages (RPN 0 and 6, each kept with its selection), and poly pressure mapped to a channel
/// parameter. Notes, the sustain pedal and the channel mode messages that only stop notes are not
/// settings and are left out. `messages` replays them in the order they were last set: each kind
/// overwrites what it sets, so the last of each, in that order, sets the engine exactly as the
/// whole performance did.
///
/// Except across a change of MPE zones: a zone manager's messages reach its whole zone, so what one
/// reached under the old layout is not what its repeat reaches under the new. A zone change is
/// therefore a barrier: what came before it is kept as it was (the last of each, in order) and
/// replayed before it, and only what follows is folded into it. Bounded: at most
/// `maximumPerChannel` messages per channel after the last zone change, and as many before it (beyond that, older barriers are
/// folded away: a restore may then differ where a zone manager's messages crossed them).
///
/// Fed off the audio thread (the live rig's control thread, from what the audio thread reports it
/// applied); not thread-safe itself.
public struct ControlMirror: Sendable {
    /// Slots per channel: 128 controllers, then program, bend, pressure, poly pressure, RPN 0
    /// coarse, RPN 0 fine, RPN 6.
    static let slotsPerChannel = 135
    static let program = 128, bend = 129, pressure = 130, polyPressure = 131
    static let bendRangeCoarse = 132, bendRangeFine = 133, zoneMembers = 134

    public let controllerMap: ControllerMap
    /// Last value per channel × slot (a poly pressure's note in bits 8...15, a bend as 0...16383).
    private var values: [Int32]
    /// When each slot was last set (0: never), from `clock`.
    private var stamps: [UInt64]
    private var clock: UInt64 = 0
    /// The registered parameter each channel has selected (MSB, LSB), as the engine tracks it.
    private var selection: [UInt8]
    /// Grows with every setting observed: a saved state is current while this has not moved.
    public private(set) var revision = 0
    /// The settings before the last zone change, as replayed, the zone change last.
    private var frozen: [MIDIMessage] = []
    /// Most messages kept from before the last zone change: one full mirror's worth.
    static let maximumFrozen = 16 * maximumPerChannel
    /// Most messages one channel's settings replay as: 126 controllers, two mapped data entries of
    /// five, four more kinds, two RPNs of three, a zone change of three.
    public static let maximumPerChannel = 126 + 2 * 5 + 4 + 2 * 3 + 3

    /// Whether a zone change is a barrier (the fold of too many of them ignores them).
    private let barriers: Bool

    /// Programs a program change selects a preset for (one that selects none is ignored, as the engine does).
    private let selectable: [Bool]

    /// A mirror of `engine`'s settings: its map, and the programs its program changes select.
    public init(engine: Engine) {
        self.init(controllerMap: engine.controllerMap, selectable: (0..<128).map { engine.presetIndex(program: $0) != nil }, barriers: true)
    }

    /// A mirror for an engine with `controllerMap` on which every program selects a preset.
    public init(controllerMap: ControllerMap) {
        self.init(controllerMap: controllerMap, selectable: Array(repeating: true, count: 128), barriers: true)
    }

    private init(controllerMap: ControllerMap, selectable: [Bool], barriers: Bool) {
        self.controllerMap = controllerMap
        self.selectable = selectable
        self.barriers = barriers
        values = [Int32](repeating: 0, count: 16 * Self.slotsPerChannel)
        stamps = [UInt64](repeating: 0, count: 16 * Self.slotsPerChannel)
        selection = [UInt8](repeating: 127, count: 32)
    }

    /// Takes one applied message; those that set nothing lasting are ignored.
    public mutating func observe(_ message: MIDIMessage) {
        let c = Int(message.channel & 15)
        switch message {
        case .noteOn, .noteOff:
            return
        case .programChange(_, let program):
            guard selectable[Int(program & 127)] else { return }
            set(c, Self.program, Int32(program & 127))
        case .pitchBend(_, let value):
            set(c, Self.bend, Int32(min(max(Int(value), -8192), 8191) + 8192))
        case .channelPressure(_, let pressure):
            if isPedal(c, .channelPressure, 0) { return }
            set(c, Self.pressure, Int32(pressure & 127))
        case .polyPressure(_, let note, let pressure):
            // On amplitude it is one sounding note's level, gone with the note.
            guard let a = controllerMap.assignment(channel: UInt8(c), source: .polyPressure),
                  a.parameter != .amplitude, a.parameter != .sustain else { return }
            set(c, Self.polyPressure, Int32(note & 127) << 8 | Int32(pressure & 127))
        case .controlChange(_, let controller, let value):
            let cc = Int(controller & 127), v = Int32(value & 127)
            let msb = selection[2 * c], lsb = selection[2 * c + 1]
            switch cc {
            case 120, 123, 124, 125, 126, 127:
                return  // they stop notes and set nothing
            case 121:
                selection[2 * c] = 127; selection[2 * c + 1] = 127
            case 101: selection[2 * c] = UInt8(v)
            case 100: selection[2 * c + 1] = UInt8(v)
            case 98, 99: selection[2 * c] = 127; selection[2 * c + 1] = 127
            // The data entries the engine reads, as the engine reads them (Engine.controlChange).
            // Each is replayed with its selection, which the selection's own messages then need not repeat.
            case 6 where msb == 0 && lsb == 0:
                unset(c, 101); unset(c, 100)
                set(c, Self.bendRangeCoarse, v); return
            case 38 where msb == 0 && lsb == 0:
                unset(c, 101); unset(c, 100)
                set(c, Self.bendRangeFine, v); return
            case 6 where msb == 0 && lsb == 6 && (c == 0 || c == 15) && v <= 15:
                unset(c, 101); unset(c, 100)
                if barriers { freeze(zoneChange: message) } else { set(c, Self.zoneMembers, v) }
                return
            case 6, 38:
                // Data entry for a parameter the engine does not take goes to the map, if it maps it:
                // kept with the selection it came under, which its replay must not meet.
                guard let a = controllerMap.assignment(channel: UInt8(c), controller: controller), a.parameter != .sustain else { return }
                set(c, cc, v | Int32(msb) << 8 | Int32(lsb) << 16)
                return
            default:
                if isPedal(c, .controlChange, controller) { return }
            }
            set(c, cc, v)
        }
    }

    /// Whether the map makes this source a sustain pedal on channel `c`: held notes are not restored,
    /// so neither is a pedal holding them.
    private func isPedal(_ c: Int, _ source: ControllerAssignment.Source, _ controller: UInt8) -> Bool {
        controllerMap.assignment(channel: UInt8(c), source: source, controller: controller)?.parameter == .sustain
    }

    private mutating func unset(_ channel: Int, _ slot: Int) {
        stamps[channel * Self.slotsPerChannel + slot] = 0
    }

    /// A zone change: everything so far is kept as it is, then the change, and folding starts anew.
    private mutating func freeze(zoneChange: MIDIMessage) {
        revision += 1
        frozen += foldedMessages
        frozen += Self.expand(zoneChange)
        for i in stamps.indices { stamps[i] = 0 }
        guard frozen.count > Self.maximumFrozen else { return }
        // Too many zone changes: fold the oldest part across its barriers (the bound wins).
        var folded = ControlMirror(controllerMap: controllerMap, selectable: selectable, barriers: false)
        for message in frozen { folded.observe(message) }
        frozen = folded.messages
    }

    /// A zone change with its selection, as `messages` replays it.
    private static func expand(_ zoneChange: MIDIMessage) -> [MIDIMessage] {
        guard case .controlChange(let channel, _, let value) = zoneChange else { return [zoneChange] }
        return [.controlChange(channel: channel, controller: 101, value: 0), .controlChange(channel: channel, controller: 100, value: 6),
                .controlChange(channel: channel, controller: 6, value: value)]
    }

    private mutating func set(_ channel: Int, _ slot: Int, _ value: Int32) {
        clock += 1
        revision += 1
        values[channel * Self.slotsPerChannel + slot] = value
        stamps[channel * Self.slotsPerChannel + slot] = clock
    }

    /// Every setting, oldest first, as the messages that make it: played into a fresh engine built
    /// the same way, they leave it set as this one was.
    public var messages: [MIDIMessage] { frozen + foldedMessages }

    /// What came after the last zone change, the last of each kind in order.
    private var foldedMessages: [MIDIMessage] {
        var order: [(stamp: UInt64, index: Int)] = []
        for i in stamps.indices where stamps[i] > 0 { order.append((stamps[i], i)) }
        order.sort { $0.stamp < $1.stamp }
        var out: [MIDIMessage] = []
        for (_, i) in order {
            let channel = UInt8(i / Self.slotsPerChannel), slot = i % Self.slotsPerChannel, v = values[i]
            func cc(_ controller: UInt8, _ value: Int32) -> MIDIMessage {
                .controlChange(channel: channel, controller: controller, value: UInt8(value & 127))
            }
            switch slot {
            case Self.program: out.append(.programChange(channel: channel, program: UInt8(v & 127)))
            case Self.bend: out.append(.pitchBend(channel: channel, value: Int16(v - 8192)))
            case Self.pressure: out.append(.channelPressure(channel: channel, pressure: UInt8(v & 127)))
            case Self.polyPressure: out.append(.polyPressure(channel: channel, note: UInt8(v >> 8 & 127), pressure: UInt8(v & 127)))
            case Self.bendRangeCoarse: out += [cc(101, 0), cc(100, 0), cc(6, v)]
            case Self.bendRangeFine: out += [cc(101, 0), cc(100, 0), cc(38, v)]
            case Self.zoneMembers: out += [cc(101, 0), cc(100, 6), cc(6, v)]
            case 6, 38:
                out += [cc(101, 127), cc(100, 127), cc(UInt8(slot), v & 127), cc(101, v >> 8 & 127), cc(100, v >> 16 & 127)]
            default: out.append(cc(UInt8(slot), v))
            }
        }
        return out
    }

    /// The programs the kept program changes select, each once: a saved state pins their presets.
    public var programs: [Int] {
        Array(Set(messages.compactMap { if case .programChange(_, let program) = $0 { Int(program) } else { nil } })).sorted()
    }
}
