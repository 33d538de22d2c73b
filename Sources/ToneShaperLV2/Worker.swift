import CLV2
import Glibc
import ToneShaperCore
import ToneShaperInstrument
import ToneShaperMIDI

/// The files a host's file chooser sets (patch:writable parameters of type atom:Path): a shape, as
/// `render --preset FILE.json` plays it on every channel; a Scala scale and keyboard map, as
/// `render --tuning FILE.scl --keymap FILE.kbm` tune the keys.
enum FileProperty: Int, CaseIterable {
    case shape, scale, keymap

    /// Every property, as one bit each: for the audio thread, where `allCases` would build an array.
    static let allBits = (1 << allCases.count) - 1

    /// The parameter's URI (LV2Turtle.fileParameters lists the same).
    var uri: String { LV2Turtle.fileParameters[rawValue].uri }
    /// Where a state keeps the file's name (its content is in the instrument's state).
    var stateKey: String { "urn:toneshaper:lv2:state#\(LV2Turtle.fileParameters[rawValue].symbol)" }
    var noun: String {
        switch self {
        case .shape: "shape"
        case .scale: "scale"
        case .keymap: "keyboard map"
        }
    }
}

/// What `run` asks of the worker, copied by the host: a file to load (its property and path,
/// whose bytes follow), a setup to free, or a file that cannot be asked for (its path too long, its
/// value not a path).
struct WorkRequest {
    enum Kind: UInt32 { case load, retire, tooLong, notAPath, drainSettings }
    var kind: UInt32
    var property: UInt32
    var length: UInt32
    var setup: UnsafeMutableRawPointer?
    static let size = MemoryLayout<WorkRequest>.stride
    /// The longest path sent (a host's worker queue holds a few KB per message).
    static let maximumPath = 4000
}

/// The worker's answer: a new setup, built for the state as it was after `restores` restores.
struct WorkResponse {
    var setup: UnsafeMutableRawPointer
    var restores: Int
    var property: UInt32
}

/// Why a file was not loaded: one line naming it.
struct FileRefusal: Error { let line: String }

extension Plugin {
    // MARK: Audio thread

    /// A patch message on the input: a Set of one of the file properties goes to the worker, a
    /// Get marks the properties to announce. Anything else is not ours.
    func patchMessage(_ atom: UnsafeRawPointer) {
        var property: LV2_URID = 0, path: UnsafePointer<CChar>?, length: UInt32 = 0
        let kind = clv2_patch_read(patch, atom.assumingMemoryBound(to: LV2_Atom.self), &property, &path, &length)
        // A loop, not `firstIndex(of:)`: the generic algorithm allocates its iteration when unspecialized (a debug build).
        var index: Int?
        for i in 0..<propertyURIDs.count where propertyURIDs[i] == property { index = i }
        switch kind {
        case 1, 3:
            guard let index, let schedule, let work = schedule.pointee.schedule_work else { return }
            var header = WorkRequest(kind: WorkRequest.Kind.load.rawValue, property: UInt32(index), length: length, setup: nil)
            if kind == 3 { header.kind = WorkRequest.Kind.notAPath.rawValue; header.length = 0 }
            else if Int(length) > WorkRequest.maximumPath { header.kind = WorkRequest.Kind.tooLong.rawValue }
            request.storeBytes(of: header, as: WorkRequest.self)
            let bytes = header.kind == WorkRequest.Kind.load.rawValue ? Int(length) : 0
            if bytes > 0, let path { (request + WorkRequest.size).copyMemory(from: path, byteCount: bytes) }
            _ = work(schedule.pointee.handle, UInt32(WorkRequest.size + bytes), request)
        case 2:
            words[0] |= index.map { 1 << $0 } ?? (property == 0 ? FileProperty.allBits : 0)
        default:
            return
        }
    }

    /// The files announced on the notify port (patch:Set of each path): after a load, on patch:Get.
    func announce() {
        guard words[0] != 0, patch.pointee.writing != 0 else { return }
        let setup = playing
        // By index: `FileProperty.allCases` would build an array here, on the audio thread.
        for bit in 0..<propertyURIDs.count where words[0] & (1 << bit) != 0 {
            let written = setup.paths[bit].withUnsafeBufferPointer { path in
                path.isEmpty || path.withMemoryRebound(to: CChar.self) {
                    clv2_notify_path(patch, propertyURIDs[bit], $0.baseAddress, UInt32($0.count)) != 0
                }
            }
            if written { words[0] &= ~(1 << bit) }
        }
    }

    /// Keeps one lasting setting for the worker (see `settings`); at half full, asks it to take
    /// them, so a long session of knob moves between two file loads loses none. When the worker is
    /// late and the ring full, the setting is not kept (the sound has it; a later load may not).
    func keepSetting(_ status: UInt8, _ data1: UInt8, _ data2: UInt8) {
        let written = settingsWritten.load(ordering: .relaxed)
        let pending = written - settingsRead.load(ordering: .acquiring)
        if pending < Self.settingsCapacity {
            settings[written % Self.settingsCapacity] = UInt32(status) << 16 | UInt32(data1) << 8 | UInt32(data2)
            settingsWritten.store(written + 1, ordering: .releasing)
        }
        guard pending >= Self.settingsCapacity / 2, !drainAsked.load(ordering: .relaxed),
              let schedule, let work = schedule.pointee.schedule_work else { return }
        var message = WorkRequest(kind: WorkRequest.Kind.drainSettings.rawValue, property: 0, length: 0, setup: nil)
        if work(schedule.pointee.handle, UInt32(WorkRequest.size), &message) == LV2_WORKER_SUCCESS {
            drainAsked.store(true, ordering: .relaxed)
        }
    }

    /// The worker's side: the settings `run` kept since the last call, into `mirror` (made first,
    /// when there is none yet, from the state of the setup built last or else the one playing).
    func drainSettings() {
        if mirror == nil {
            let base: Setup
            if let latest { base = latest } else {
                let held = holdPlaying()
                base = held.takeUnretainedValue()
                held.release()  // `base` holds it now
            }
            var made = ControlMirror(engine: base.instrument.engine)
            if let state = try? InstrumentState(bytes: try base.instrument.state()) {
                for message in state.controls { made.observe(message) }
            }
            mirror = made
        }
        let written = settingsWritten.load(ordering: .acquiring)
        var read = settingsRead.load(ordering: .relaxed)
        while read < written {
            let word = settings[read % Self.settingsCapacity]
            let status = UInt8(word >> 16 & 0xFF), data1 = UInt8(word >> 8 & 0xFF), data2 = UInt8(word & 0xFF)
            let short = status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0
            if let message = MIDIMessage(status: status, data1: data1, data2: short ? 0 : data2) { mirror!.observe(message) }
            read += 1
        }
        settingsRead.store(read, ordering: .releasing)
        drainAsked.store(false, ordering: .relaxed)
    }

    /// Hands a setup no longer played to the worker to free; false when its queue is full.
    func scheduleRetire(_ setup: UnsafeMutableRawPointer) -> Bool {
        guard let schedule, let work = schedule.pointee.schedule_work else { return false }
        var message = WorkRequest(kind: WorkRequest.Kind.retire.rawValue, property: 0, length: 0, setup: setup)
        return work(schedule.pointee.handle, UInt32(WorkRequest.size), &message) == LV2_WORKER_SUCCESS
    }

    /// Frees `setup` off the audio thread: through the worker, or kept to ask again next block
    /// (with every place taken it is never freed rather than freed here).
    func retire(_ setup: UnsafeMutableRawPointer) {
        if scheduleRetire(setup) { return }
        for i in 0..<Self.retiringCapacity where retiring[i] == nil {
            retiring[i] = setup
            return
        }
    }

    /// The worker's new setup, swapped in by pointer between blocks; the old one goes back to the
    /// worker. The controls the host has moved are applied to it again from the next block.
    func workResponse(_ body: UnsafeRawPointer, _ size: Int) {
        guard size == MemoryLayout<WorkResponse>.size else { return }
        let response = body.loadUnaligned(as: WorkResponse.self)
        guard response.restores == words[1] else { return retire(response.setup) }
        if let old = clv2_exchange(current, response.setup) { retire(old) }
        (applied + 1).update(from: defaults + 1, count: controlCount - 1)
        words[0] |= 1 << Int(response.property)
    }

    // MARK: Worker

    func work(_ data: UnsafeRawPointer, _ size: Int, respond: LV2_Worker_Respond_Function,
              _ handle: LV2_Worker_Respond_Handle?) -> LV2_Worker_Status {
        guard size >= WorkRequest.size else { return LV2_WORKER_ERR_UNKNOWN }
        let request = data.loadUnaligned(as: WorkRequest.self)
        guard let kind = WorkRequest.Kind(rawValue: request.kind) else { return LV2_WORKER_ERR_UNKNOWN }
        pthread_mutex_lock(workerLock)  // not while save reads the mirror
        defer { pthread_mutex_unlock(workerLock) }
        if kind == .retire {
            guard let setup = request.setup else { return LV2_WORKER_ERR_UNKNOWN }
            let retired = Unmanaged<Setup>.fromOpaque(setup)
            if latest === retired.takeUnretainedValue() { latest = nil }
            pthread_mutex_lock(lock)  // not while save holds it
            retired.release()
            pthread_mutex_unlock(lock)
            return LV2_WORKER_SUCCESS
        }
        if kind == .drainSettings {
            drainSettings()
            return LV2_WORKER_SUCCESS
        }
        guard let property = FileProperty(rawValue: Int(request.property)) else { return LV2_WORKER_ERR_UNKNOWN }
        switch kind {
        case .tooLong:
            report("a \(property.noun) file's path of \(request.length) bytes is longer than the \(WorkRequest.maximumPath) taken; not loaded")
        case .notAPath:
            report("the \(property.noun) file was set to a value that is not a file path (atom:Path); not loaded")
        default:
            let count = min(Int(request.length), size - WorkRequest.size)
            let path = String(decoding: UnsafeRawBufferPointer(start: data + WorkRequest.size, count: count), as: UTF8.self)
            do throws(FileRefusal) {
                let setup = try loaded(property, path: Array(UnsafeRawBufferPointer(start: data + WorkRequest.size, count: count)),
                                       named: path)
                let pointer = Unmanaged.passRetained(setup).toOpaque()
                var response = WorkResponse(setup: pointer, restores: words[1], property: UInt32(property.rawValue))
                guard respond(handle, UInt32(MemoryLayout<WorkResponse>.size), &response) == LV2_WORKER_SUCCESS else {
                    Unmanaged<Setup>.fromOpaque(pointer).release()
                    report("\(path): the host took no answer from the worker; not loaded")
                    return LV2_WORKER_ERR_NO_SPACE
                }
                latest = setup
            } catch {
                report(error.line)
            }
        }
        return LV2_WORKER_SUCCESS
    }

    /// The setup playing (or the one last built, not yet swapped in) with `property` set to the
    /// file at `path`: read within its reader's bound, checked by the same readers as the command
    /// line's, built into a new instrument through the state it will save.
    func loaded(_ property: FileProperty, path bytes: [UInt8], named path: String) throws(FileRefusal) -> Setup {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FileRefusal(line: "\(path): cannot be read (\(String(cString: strerror(errno)))); still playing the \(property.noun) it had")
        }
        // Only a regular file: a FIFO would block the worker, a device or a folder is no shape.
        guard info.st_mode & S_IFMT == S_IFREG else {
            let what = info.st_mode & S_IFMT == S_IFDIR ? "is a folder" : "is not a regular file"
            throw FileRefusal(line: "\(path): \(what), not a \(property.noun) file; still playing the \(property.noun) it had")
        }
        let base: Setup
        if let latest { base = latest } else {
            let held = holdPlaying()
            base = held.takeUnretainedValue()
            held.release()  // `base` holds it now
        }
        do {
            let state = try InstrumentState(bytes: try base.instrument.state())
            // The controls as the player left them: the state's, then every setting played since.
            drainSettings()
            var shapes = state.shapes, channels = state.channelPresets, programs = state.programPresets
            var scale = state.scale, keymap = state.keymap, controls = mirror?.messages ?? state.controls
            switch property {
            case .shape:
                let shape: Shape
                do { shape = try ShapeFile.load(path: path) } catch { throw FileRefusal(line: error.description) }
                // Every channel plays it (a program change the state replays would choose another).
                shapes = []
                programs = [:]
                for (program, index) in state.programPresets.sorted(by: { $0.key < $1.key }) {
                    shapes.append(state.shapes[index])
                    programs[program] = shapes.count - 1
                }
                shapes.append(shape)
                channels = Array(repeating: shapes.count - 1, count: 16)
                controls.removeAll { if case .programChange = $0 { true } else { false } }
            case .scale:
                scale = try Self.tuningText(path) { text throws(TuningError) in try ScalaScale.parse(text, file: path) }
            case .keymap:
                keymap = try Self.tuningText(path) { text throws(TuningError) in try KeyboardMapping.parse(text, file: path) }
                // A map alone maps the keys onto 12-tone equal temperament, Scala's scale by default.
                if scale == nil { scale = Self.twelveTone }
            }
            let changed = try InstrumentState(shapes: shapes, channelPresets: channels, programPresets: programs,
                                              ignoresProgramChanges: state.ignoresProgramChanges, mapText: state.mapText,
                                              scale: scale, keymap: keymap, mpe: state.mpe, channelFilter: state.channelFilter,
                                              gain: state.gain, voices: state.voices, controls: controls, file: path)
            let instrument = try Instrument(state: try changed.encoded(file: path), library: library, sampleRate: sampleRate)
            // The new instrument's controls are the mirror's from now on (a program change a shape
            // file dropped stays dropped at the next load).
            var next = ControlMirror(engine: instrument.engine)
            for message in controls { next.observe(message) }
            mirror = next
            var paths = base.paths
            paths[property.rawValue] = bytes
            return Setup(instrument: instrument, paths: paths)
        } catch let error as FileRefusal {
            throw FileRefusal(line: "\(error.line); still playing the \(property.noun) it had")
        } catch {
            throw FileRefusal(line: "\(path): \(error); still playing the \(property.noun) it had")
        }
    }

    /// A scale or keyboard-map file's text, read within the tuning readers' bound and parsed by
    /// `check` (the command line's parser) before anything is built; a refusal is that parser's line.
    static func tuningText<T>(_ path: String, check: (String) throws(TuningError) -> T) throws(FileRefusal) -> String {
        do {
            let text = try TuningError.read(path)
            _ = try check(text)
            return text
        } catch { throw FileRefusal(line: error.description) }
    }

    /// Scala's 12-tone equal temperament, the scale a keyboard map loaded alone maps.
    static let twelveTone = "12-tone equal temperament\n12\n" + (1...12).map { "\($0 * 100).0\n" }.joined()

    /// One line through the host's log (log:Error), or on stderr when it gave none; never two lines.
    func report(_ line: String) {
        let text = "toneshaper.lv2: " + String(line.map { $0.isNewline || $0 == "\t" ? " " : $0 }.prefix(400))
        guard let log else { return say(String(text.dropFirst("toneshaper.lv2: ".count))) }
        text.withCString { clv2_log_line(log, urids.error, $0) }
    }
}

let workerScheduleURI = "http://lv2plug.in/ns/ext/worker#schedule"
let workerInterfaceURI = "http://lv2plug.in/ns/ext/worker#interface"
let logURI = "http://lv2plug.in/ns/ext/log#log"
let logErrorURI = "http://lv2plug.in/ns/ext/log#Error"

nonisolated(unsafe) var workerInterface = LV2_Worker_Interface(
    work: { handle, respond, respondHandle, size, data in
        guard let respond, let data else { return LV2_WORKER_ERR_UNKNOWN }
        return plugin(handle).work(data, Int(size), respond: respond, respondHandle)
    },
    work_response: { handle, size, body in
        guard let body else { return LV2_WORKER_ERR_UNKNOWN }
        plugin(handle).workResponse(body, Int(size))
        return LV2_WORKER_SUCCESS
    },
    end_run: nil)
