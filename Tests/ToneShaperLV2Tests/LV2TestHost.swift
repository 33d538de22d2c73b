import CLV2
import Foundation
import ToneShaperInstrument
@testable import ToneShaperLV2

/// An LV2 host in the test's own process, driving the plugin through its C ABI (`lv2_descriptor`):
/// urid:map, a worker whose `work` the test runs between blocks (as a host's worker thread would),
/// the input sequence forged as a host's generic interface forges it, and a notify port read back.
/// Everything the audio thread touches (the request and response queues) is allocated up front,
/// so `schedule_work` and `respond` copy into it without allocating.
final class LV2TestHost {
    static let rate = 48_000.0
    static let maxFrames = 1024

    let descriptor: UnsafePointer<LV2_Descriptor>
    var worker: UnsafePointer<LV2_Worker_Interface>!
    var handle: LV2_Handle!
    private var uris: [String] = []
    private let map = UnsafeMutablePointer<LV2_URID_Map>.allocate(capacity: 1)
    private let schedule = UnsafeMutablePointer<LV2_Worker_Schedule>.allocate(capacity: 1)
    private let mapFeature = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
    private let scheduleFeature = UnsafeMutablePointer<LV2_Feature>.allocate(capacity: 1)
    private let forge = UnsafeMutablePointer<LV2_Atom_Forge>.allocate(capacity: 1)

    let left = UnsafeMutablePointer<Float>.allocate(capacity: maxFrames)
    let right = UnsafeMutablePointer<Float>.allocate(capacity: maxFrames)
    static let sequenceBytes = 1 << 16
    private let input = UnsafeMutableRawPointer.allocate(byteCount: sequenceBytes, alignment: 16)
    private let notify = UnsafeMutableRawPointer.allocate(byteCount: sequenceBytes, alignment: 16)
    private let controls: UnsafeMutablePointer<Float>
    private let controlCount: Int

    /// Messages for the worker (from `schedule_work`) and its answers (from `respond`): bytes and sizes.
    private let requests = Queue(), responses = Queue()
    /// What the worker was asked, counted: loads (files), retires (setups to free), drains (of the settings played).
    private(set) var loads = 0, retires = 0, drains = 0

    final class Queue {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 16)
        let sizes = UnsafeMutablePointer<Int>.allocate(capacity: 1024)
        var count = 0, used = 0
        /// Copies one message in; false when full (a host's ring would refuse it too).
        func push(_ data: UnsafeRawPointer, _ size: Int) -> Bool {
            guard count < 1024, used + size <= 1 << 20 else { return false }
            (bytes + used).copyMemory(from: data, byteCount: size)
            sizes[count] = size
            count += 1
            used += (size + 15) & ~15
            return true
        }
        func drain(_ body: (UnsafeRawPointer, Int) -> Void) {
            var offset = 0
            for i in 0..<count { body(bytes + offset, sizes[i]); offset += (sizes[i] + 15) & ~15 }
            count = 0
            used = 0
        }
    }

    enum Event {
        case midi(frame: Int64, [UInt8])
        /// patch:Set of a file property (FileProperty order) to a path.
        case set(frame: Int64, property: Int, path: String)
        /// patch:Get of one property, or of all (nil).
        case get(frame: Int64, property: Int?)
    }

    init(bundle: String) throws {
        let descriptor = try lv2Descriptor(0).unwrap("no descriptor")
        self.descriptor = descriptor
        let table = InstrumentParameter.table
        controlCount = 1 + table.count
        controls = .allocate(capacity: controlCount)
        controls[0] = 0
        for row in table { controls[1 + row.id] = Float(row.defaultValue) }

        let me = Unmanaged.passUnretained(self).toOpaque()
        map.initialize(to: LV2_URID_Map(handle: me, map: { handle, uri in
            let host = Unmanaged<LV2TestHost>.fromOpaque(handle!).takeUnretainedValue()
            return host.urid(String(cString: uri!))
        }))
        schedule.initialize(to: LV2_Worker_Schedule(handle: me, schedule_work: { handle, size, data in
            let host = Unmanaged<LV2TestHost>.fromOpaque(handle!).takeUnretainedValue()
            return host.requests.push(data!, Int(size)) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
        }))
        mapFeature.initialize(to: LV2_Feature(URI: strdup("http://lv2plug.in/ns/ext/urid#map"), data: UnsafeMutableRawPointer(map)))
        scheduleFeature.initialize(to: LV2_Feature(URI: strdup("http://lv2plug.in/ns/ext/worker#schedule"),
                                                   data: UnsafeMutableRawPointer(schedule)))
        lv2_atom_forge_init(forge, map)
        let features: [UnsafePointer<LV2_Feature>?] = [UnsafePointer(mapFeature), UnsafePointer(scheduleFeature), nil]
        handle = try features.withUnsafeBufferPointer { list in
            try descriptor.pointee.instantiate(descriptor, Self.rate, bundle, list.baseAddress).unwrap("instantiate refused")
        }
        let interface = descriptor.pointee.extension_data("http://lv2plug.in/ns/ext/worker#interface")
        worker = try interface.unwrap("no worker interface").assumingMemoryBound(to: LV2_Worker_Interface.self)
        descriptor.pointee.connect_port(handle, 0, input)
        descriptor.pointee.connect_port(handle, 1, left)
        descriptor.pointee.connect_port(handle, 2, right)
        for c in 0..<controlCount { descriptor.pointee.connect_port(handle, UInt32(3 + c), controls + c) }
        descriptor.pointee.connect_port(handle, UInt32(3 + controlCount), notify)
    }

    deinit {
        descriptor.pointee.cleanup(handle)
        left.deallocate(); right.deallocate(); input.deallocate(); notify.deallocate(); controls.deallocate()
        free(UnsafeMutableRawPointer(mutating: mapFeature.pointee.URI)); free(UnsafeMutableRawPointer(mutating: scheduleFeature.pointee.URI))
        map.deallocate(); schedule.deallocate(); mapFeature.deallocate(); scheduleFeature.deallocate(); forge.deallocate()
    }

    func urid(_ uri: String) -> LV2_URID {
        if let index = uris.firstIndex(of: uri) { return LV2_URID(index + 1) }
        uris.append(uri)
        return LV2_URID(uris.count)
    }

    /// Forges `events` into the input port's sequence (the host's side: may allocate).
    func fill(_ events: [Event]) {
        lv2_atom_forge_set_buffer(forge, input.assumingMemoryBound(to: UInt8.self), Self.sequenceBytes)
        var sequence = LV2_Atom_Forge_Frame()
        lv2_atom_forge_sequence_head(forge, &sequence, 0)
        let midiType = urid("http://lv2plug.in/ns/ext/midi#MidiEvent")
        for event in events {
            switch event {
            case .midi(let frame, let bytes):
                lv2_atom_forge_frame_time(forge, frame)
                lv2_atom_forge_atom(forge, UInt32(bytes.count), midiType)
                bytes.withUnsafeBytes { _ = lv2_atom_forge_write(forge, $0.baseAddress, UInt32($0.count)) }
            case .set(let frame, let property, let path):
                lv2_atom_forge_frame_time(forge, frame)
                var object = LV2_Atom_Forge_Frame()
                lv2_atom_forge_object(forge, &object, 0, urid("http://lv2plug.in/ns/ext/patch#Set"))
                lv2_atom_forge_key(forge, urid("http://lv2plug.in/ns/ext/patch#property"))
                lv2_atom_forge_urid(forge, urid(LV2Turtle.fileParameters[property].uri))
                lv2_atom_forge_key(forge, urid("http://lv2plug.in/ns/ext/patch#value"))
                lv2_atom_forge_path(forge, path, UInt32(path.utf8.count))
                lv2_atom_forge_pop(forge, &object)
            case .get(let frame, let property):
                lv2_atom_forge_frame_time(forge, frame)
                var object = LV2_Atom_Forge_Frame()
                lv2_atom_forge_object(forge, &object, 0, urid("http://lv2plug.in/ns/ext/patch#Get"))
                if let property {
                    lv2_atom_forge_key(forge, urid("http://lv2plug.in/ns/ext/patch#property"))
                    lv2_atom_forge_urid(forge, urid(LV2Turtle.fileParameters[property].uri))
                }
                lv2_atom_forge_pop(forge, &object)
            }
        }
        lv2_atom_forge_pop(forge, &sequence)
    }

    /// The audio thread's turn, as a host takes it: the worker's answers delivered
    /// (`work_response`), then `run`. Nothing else happens between `before` and `after`.
    func audioTurn(frames: Int, before: () -> Void = {}, after: () -> Void = {}) {
        notify.assumingMemoryBound(to: LV2_Atom.self).pointee = LV2_Atom(size: UInt32(Self.sequenceBytes), type: 0)
        before()
        responses.drain { body, size in _ = worker.pointee.work_response(handle, UInt32(size), body) }
        descriptor.pointee.run(handle, UInt32(frames))
        after()
    }

    /// The worker thread's turn: every request made during the last blocks, answered into `responses`.
    func workerTurn() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        requests.drain { data, size in
            let kind = data.loadUnaligned(as: UInt32.self)
            switch WorkRequest.Kind(rawValue: kind) {
            case .retire: retires += 1
            case .drainSettings: drains += 1
            default: loads += 1
            }
            _ = worker.pointee.work(handle, { handle, size, body in
                let host = Unmanaged<LV2TestHost>.fromOpaque(handle!).takeUnretainedValue()
                return host.responses.push(body!, Int(size)) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
            }, me, UInt32(size), data)
        }
    }

    /// A saved state as a host keeps it: each key's value bytes and type.
    typealias State = [UInt32: (value: [UInt8], type: UInt32)]

    /// The plugin's state, saved through its state:interface as a host saves a session.
    func saveState() throws -> State {
        let interface = try descriptor.pointee.extension_data("http://lv2plug.in/ns/ext/state#interface")
            .unwrap("no state interface").assumingMemoryBound(to: LV2_State_Interface.self)
        final class Box { var state: State = [:] }
        let box = Box()
        let status = interface.pointee.save(handle, { handle, key, value, size, type, _ in
            let box = Unmanaged<Box>.fromOpaque(handle!).takeUnretainedValue()
            box.state[key] = (Array(UnsafeRawBufferPointer(start: value, count: size)), type)
            return LV2_STATE_SUCCESS
        }, Unmanaged.passUnretained(box).toOpaque(), 0, nil)
        guard status == LV2_STATE_SUCCESS else { throw LV2TestError(description: "save returned \(status)") }
        return box.state
    }

    /// Restores `state` (another instance's, a session reopened) through the state:interface.
    func restoreState(_ state: State) throws {
        let interface = try descriptor.pointee.extension_data("http://lv2plug.in/ns/ext/state#interface")
            .unwrap("no state interface").assumingMemoryBound(to: LV2_State_Interface.self)
        final class Box {
            let values: [UInt32: (pointer: UnsafeMutableRawPointer, size: Int, type: UInt32)]
            init(_ state: State) {
                values = state.mapValues { entry in
                    let p = UnsafeMutableRawPointer.allocate(byteCount: max(1, entry.value.count), alignment: 16)
                    entry.value.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                    return (p, entry.value.count, entry.type)
                }
            }
            deinit { for entry in values.values { entry.pointer.deallocate() } }
        }
        let box = Box(state)
        let status = interface.pointee.restore(handle, { handle, key, size, type, flags in
            let box = Unmanaged<Box>.fromOpaque(handle!).takeUnretainedValue()
            guard let entry = box.values[key] else { return nil }
            size?.pointee = entry.size; type?.pointee = entry.type
            flags?.pointee = UInt32(LV2_STATE_IS_POD.rawValue | LV2_STATE_IS_PORTABLE.rawValue)
            return UnsafeRawPointer(entry.pointer)
        }, Unmanaged.passUnretained(box).toOpaque(), 0, nil)
        withExtendedLifetime(box) {}
        guard status == LV2_STATE_SUCCESS else { throw LV2TestError(description: "restore returned \(status)") }
    }

    /// The patch:Set messages on the notify port after the last block: property index → path.
    func announced() -> [Int: String] {
        var found: [Int: String] = [:]
        let sequence = notify.assumingMemoryBound(to: LV2_Atom_Sequence.self)
        let end = MemoryLayout<LV2_Atom>.size + Int(sequence.pointee.atom.size)
        var offset = MemoryLayout<LV2_Atom_Sequence>.size
        let pathType = urid("http://lv2plug.in/ns/ext/atom#Path"), uridType = urid("http://lv2plug.in/ns/ext/atom#URID")
        while offset + MemoryLayout<LV2_Atom_Event>.size <= end {
            let event = (notify + offset).assumingMemoryBound(to: LV2_Atom_Event.self)
            let size = Int(event.pointee.body.size)
            // The object's body: otype, then properties (key, context, value atom), each padded to 8.
            let body = notify + offset + MemoryLayout<LV2_Atom_Event>.size
            var property: Int?, path: String?
            var p = MemoryLayout<LV2_Atom_Object_Body>.size
            while p + MemoryLayout<LV2_Atom_Property_Body>.size <= size {
                let prop = (body + p).assumingMemoryBound(to: LV2_Atom_Property_Body.self)
                let valueSize = Int(prop.pointee.value.size)
                let value = body + p + MemoryLayout<LV2_Atom_Property_Body>.size
                if prop.pointee.value.type == uridType {
                    let target = value.loadUnaligned(as: LV2_URID.self)
                    property = LV2Turtle.fileParameters.firstIndex { urid($0.uri) == target }
                } else if prop.pointee.value.type == pathType {
                    path = String(cString: value.assumingMemoryBound(to: CChar.self))
                }
                p += MemoryLayout<LV2_Atom_Property_Body>.size + ((valueSize + 7) & ~7)
            }
            if let property, let path { found[property] = path }
            offset += MemoryLayout<LV2_Atom_Event>.size + ((size + 7) & ~7)
        }
        return found
    }
}

struct LV2TestError: Error, CustomStringConvertible {
    let description: String
}

extension Optional {
    func unwrap(_ why: String) throws -> Wrapped {
        guard let self else { throw LV2TestError(description: why) }
        return self
    }
}
