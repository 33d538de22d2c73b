// libFuzzer entry point for ToneShaper's seven readers of untrusted input.
//
// Not a SwiftPM target: Tests/Fuzz/run.sh compiles it with swiftc -sanitize=fuzzer,address together
// with the readers' own sources (see the comment at the top of run.sh). One binary holds every
// target; TONESHAPER_FUZZ_TARGET picks the reader:
//
//   midi    Standard MIDI File  MIDIFile.parse, then timedMessages and durationSeconds
//   shape   shape (preset) JSON ShapeFile.decode, then validate, an engine, 768 frames of two notes
//   map     controller mapping  ControllerMapFile.parse, then every assignment through an engine
//   script  event script        EventScript.parse, then timedMessages
//   scl     Scala scale         ScalaScale.parse, a Tuning, every key of the keyboard and full bends through an engine (three shapes)
//   kbm     Scala key mapping   KeyboardMapping.parse on two scales, then the same as scl
//   state   instrument state    InstrumentState(bytes:) (a saved NSM session), re-encoded and read back to the
//                               same bytes, then an engine on it with its controls restored and a note played
//
// Anything that traps is a finding; so is a broken promise the readers make (an error offset outside
// the file, frames out of order, a sample that is not finite), turned into a trap here.

import Foundation
import ToneShaperMIDI

enum FuzzTarget: String, CaseIterable {
    case midi, shape, map, script, scl, kbm, state

    /// Read once: the environment does not change while libFuzzer runs.
    static let chosen: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["TONESHAPER_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("set TONESHAPER_FUZZ_TARGET=\(names) (got '\(name)')\n".utf8))
            exit(2)
        }
        return target
    }()
}

/// A broken invariant: trap, so libFuzzer saves the input.
func broken(_ message: @autoclosure () -> String) -> Never {
    fatalError("fuzz invariant: \(message())")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func toneShaperFuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch FuzzTarget.chosen {
    case .midi: fuzzMIDIFile(bytes)
    case .shape: fuzzShapeFile(bytes)
    case .map: fuzzControllerMap(bytes)
    case .script: fuzzEventScript(bytes)
    case .scl: fuzzScalaScale(bytes)
    case .kbm: fuzzKeyboardMapping(bytes)
    case .state: fuzzInstrumentState(bytes)
    }
    return 0
}

func fuzzMIDIFile(_ bytes: [UInt8]) {
    let file: MIDIFile
    do {
        file = try MIDIFile.parse(bytes)
    } catch let error as MIDIFileError {
        if !(0...bytes.count).contains(error.offset) { broken("error offset outside the file: \(error)") }
        return
    } catch {
        broken("not a MIDIFileError: \(error)")
    }
    let frames = file.timedMessages(sampleRate: 48_000).map(\.frame)
    for (a, b) in zip(frames, frames.dropFirst()) where a > b { broken("frames out of order: \(a) before \(b)") }
    if let first = frames.first, first < 0 { broken("negative frame \(first)") }
    let duration = file.durationSeconds
    if !(duration >= 0) { broken("duration \(duration)") }
}

/// Every shape that loads is played: middle C, then the highest key bent up (the furthest a shape is
/// transposed) stealing its voice, then a release. A loaded file must sound, or be refused, never trap.
let noteOn = [EngineEvent(offset: 0, .noteOn(channel: 0, note: 60, velocity: 100))]
let highest = [EngineEvent(offset: 0, .pitchBend(channel: 0, value: 8191)),
               EngineEvent(offset: 0, .noteOn(channel: 0, note: 127, velocity: 127)),
               EngineEvent(offset: 128, .noteOff(channel: 0, note: 127, velocity: 64))]

func checkSamples(_ samples: [Float], _ what: String) {
    for (i, s) in samples.enumerated() where !(abs(s) <= 1) { broken("\(what): sample \(i) is \(s)") }
}

func fuzzShapeFile(_ bytes: [UInt8]) {
    let shape: Shape
    do {
        shape = try ShapeFile.decode(Data(bytes), file: "fuzz.json", fallbackName: "fuzz")
    } catch {
        return  // typed throws: a ShapeError naming the field, which is the point
    }
    do {
        try shape.validate()
    } catch {
        broken("decode accepted a shape validate refuses: \(error)")
    }
    let engine: Engine
    do {
        engine = try ShapeExport.engine(for: shape, sampleRate: 48_000)
    } catch {
        broken("a valid shape makes no engine: \(error)")
    }
    checkSamples(engine.render(frames: 512, events: noteOn), "shape, note 60")
    checkSamples(engine.render(frames: 256, events: highest), "shape, note 127 bent up")
}

/// One engine for every map input would not see the map; the map is an `init` argument.
let mapShape = Shape.constant(440)

func fuzzControllerMap(_ bytes: [UInt8]) {
    let map: ControllerMap
    do {
        map = try ControllerMapFile.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz.map")
    } catch {
        return
    }
    guard !map.assignments.isEmpty else { return }
    var events: [EngineEvent] = [EngineEvent(offset: 0, .noteOn(channel: 0, note: 60, velocity: 100))]
    for (k, a) in map.assignments.prefix(64).enumerated() {
        for value: UInt8 in [0, 64, 127] {
            let v = a.value(for: value)
            if !a.parameter.limits.contains(v) { broken("\(a) gives \(v) for \(value), outside \(a.parameter.limits)") }
        }
        let channel = a.channel ?? 0
        for (i, value) in [UInt8(0), 127].enumerated() {
            let message: MIDIMessage
            switch a.source {
            case .controlChange: message = .controlChange(channel: channel, controller: a.controller, value: value)
            case .channelPressure: message = .channelPressure(channel: channel, pressure: value)
            case .polyPressure: message = .polyPressure(channel: channel, note: 60, pressure: value)
            }
            events.append(EngineEvent(offset: 2 * k + i, message))
        }
    }
    // 8 kHz: the map does not depend on the rate, and the echo lines (2 s per part) stay small enough
    // to build one engine per input at a useful rate.
    var config = EngineConfiguration(sampleRate: 8_000, voices: 2)
    config.channelPresets = Array(repeating: 0, count: 16)
    let library: PresetLibrary
    do { library = try PresetLibrary(shapes: [mapShape]) } catch { broken("\(error)") }
    let engine = Engine(library: library, configuration: config, controllerMap: map)
    checkSamples(engine.render(frames: 256, events: events), "map")
}

func fuzzEventScript(_ bytes: [UInt8]) {
    let script: EventScript
    do {
        script = try EventScript.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz")
    } catch {
        return
    }
    let frames = script.timedMessages(sampleRate: 48_000).map(\.frame)
    for (a, b) in zip(frames, frames.dropFirst()) where a > b { broken("frames out of order: \(a) before \(b)") }
    if let first = frames.first, first < 0 { broken("negative frame \(first)") }
    _ = script.durationSeconds
}

func fuzzScalaScale(_ bytes: [UInt8]) {
    let scale: ScalaScale
    do {
        scale = try ScalaScale.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz.scl")
    } catch {
        return
    }
    playEveryKey(Tuning(scale: scale), "scale")
}

/// A mapping means nothing without a scale: it is tried on a 12-note just scale and on one of a
/// single 2/1 per degree (which sends the mapping's far keys out of range).
let mappedScales = [
    try! ScalaScale.parse("just\n 12\n 16/15\n 9/8\n 6/5\n 5/4\n 4/3\n 45/32\n 3/2\n 8/5\n 5/3\n 9/5\n 15/8\n 2/1\n"),
    try! ScalaScale.parse("octaves\n 1\n 2/1\n"),
]

func fuzzKeyboardMapping(_ bytes: [UInt8]) {
    let mapping: KeyboardMapping
    do {
        mapping = try KeyboardMapping.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz.kbm")
    } catch {
        return
    }
    for scale in mappedScales { playEveryKey(Tuning(scale: scale, mapping: mapping), "mapping") }
}

/// Shapes drawn on key 60, each with its own library (tuned keys are the part of the engine's input
/// a tuning decides; the libraries are built once): a band-limited sweep over 30...3000 Hz, wide
/// enough that some keys of a stretched tuning are partly above Nyquist and others wholly; a sine
/// rising to 90 kHz, a step from the 100 kHz ceiling; noise, which Nyquist does not silence.
let tunedShapes = [
    Shape(name: "fuzz-sweep", points: [Shape.Point(time: 0, frequency: 30), Shape.Point(time: 0.5, frequency: 3000),
                                       Shape.Point(time: 1, frequency: 300)],
          duration: 1, minFrequency: 30, maxFrequency: 3000, wave: .bandLimitedSawtooth, fidelity: 1000, rootNote: 60),
    Shape(name: "fuzz-rise", points: [Shape.Point(time: 0, frequency: 100), Shape.Point(time: 1, frequency: 90_000)],
          duration: 1, minFrequency: 100, maxFrequency: 90_000, wave: .sine, fidelity: 1000, rootNote: 60),
    Shape(name: "fuzz-noise", points: [Shape.Point(time: 0, frequency: 500), Shape.Point(time: 1, frequency: 5000)],
          duration: 1, minFrequency: 500, maxFrequency: 5000, wave: .noise, fidelity: 1000, rootNote: 60),
]
let tunedLibraries = tunedShapes.map { try! PresetLibrary(shapes: [$0]) }

/// Every key of the keyboard, one at a time, then the largest bend range bent fully up and down
/// with every voice held, for each of `tunedShapes`. A key sounds exactly when the load-time note
/// does not call it silent, and every sample is finite.
func playEveryKey(_ tuning: Tuning, _ what: String) {
    for (shape, library) in zip(tunedShapes, tunedLibraries) { playEveryKey(tuning, shape, library, "\(what), \(shape.name)") }
}

func playEveryKey(_ tuning: Tuning, _ shape: Shape, _ library: PresetLibrary, _ what: String) {
    var config = EngineConfiguration(sampleRate: 8_000, voices: 128)
    config.tuning = tuning
    config.mpe = try! MPEZones(lower: 15, upper: 0)
    let engine = Engine(library: library, configuration: config)
    let silent = Set(tuning.silentKeys(for: shape, sampleRate: 8_000).all)
    var sounding = 0
    for key in 0..<128 {
        let out = engine.render(frames: 8, events: [EngineEvent(offset: 0, .noteOn(channel: 1, note: UInt8(key), velocity: 100))])
        checkSamples(out, "\(what), key \(key)")
        let sounds = tuning.semitones[key] != nil && !silent.contains(key)
        if sounds { sounding += 1 }
        if engine.activeVoiceCount != sounding {
            broken("\(what): after key \(key) \(engine.activeVoiceCount) voices sound; by the note, \(sounding) (key \(key) \(sounds ? "sounds" : "is silent"))")
        }
    }
    var bends: [EngineEvent] = []
    for channel: UInt8 in [0, 1] {
        bends += [EngineEvent(offset: 0, .controlChange(channel: channel, controller: 101, value: 0)),
                  EngineEvent(offset: 0, .controlChange(channel: channel, controller: 100, value: 0)),
                  EngineEvent(offset: 0, .controlChange(channel: channel, controller: 6, value: 127)),
                  EngineEvent(offset: 0, .controlChange(channel: channel, controller: 1, value: 127)),
                  EngineEvent(offset: 0, .pitchBend(channel: channel, value: 8191)),
                  EngineEvent(offset: 128, .pitchBend(channel: channel, value: -8192))]
    }
    bends.sort { $0.offset < $1.offset }
    checkSamples(engine.render(frames: 256, events: bends), "\(what), bent")
    // However far a bend reaches, no voice plays its shape past the ceiling.
    for i in 0..<engine.voiceCount where engine.voices[i].stage != .idle {
        let ratio = engine.voices[i].frequencyRatio
        if !(ratio * shape.maxFrequency <= PlayableRange.ceiling * (1 + 1e-12)) {
            broken("\(what): key \(engine.voices[i].note) bent to a ratio of \(ratio), its shape past \(PlayableRange.ceiling) Hz")
        }
    }
}

/// The library a restored state is placed after: one shape, as on a machine without the user's own.
let stateBase = try! PresetLibrary(shapes: [Shape.constant(440)])

func fuzzInstrumentState(_ bytes: [UInt8]) {
    let state: InstrumentState
    do {
        state = try InstrumentState(bytes: bytes, file: "fuzz.json")
    } catch {
        if error.description.contains("\n") { broken("a refusal of more than one line: \(error)") }
        return
    }
    // What was read writes back, and reads back to the same bytes.
    let again: [UInt8]
    do {
        again = try state.encoded()
        if try InstrumentState(bytes: again).encoded() != again { broken("a state does not read back to its own bytes") }
    } catch {
        broken("an accepted state cannot be written or read back: \(error)")
    }
    let engine = state.engine(onto: stateBase, sampleRate: 48_000)
    checkSamples(engine.render(frames: 256, events: noteOn), "state, restored, note 60")
}
