import AllocationCounter
import Foundation
import Testing
import TestSupport
import ToneShaperCore
@testable import ToneShaperLV2

/// The LV2 plugin's audio thread: `run` with a host's file choosers at work (patch:Set of a shape,
/// a scale, a keyboard map, handed to the worker; patch:Get answered on the notify port) and
/// `work_response` swapping the worker's instrument in. The worker may allocate; these may not.
@Suite("The LV2 plugin's run() with patch messages")
struct LV2RunTests {
    static var repository: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path + "/"
    }

    /// A shape file holding one frequency, played at its root note.
    static func shapeFile(_ frequency: Double, in folder: URL, name: String) throws -> String {
        let shape = Shape(name: name, points: [.init(time: 0, frequency: frequency), .init(time: 1, frequency: frequency)], duration: 1,
                          minFrequency: 20, maxFrequency: 2000, amplitude: 0.5, fidelity: 1000)
        let path = folder.appendingPathComponent("\(name).json").path
        try ShapeFile.encode(shape).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// One round of what a musician does with the file choosers, block by block, every audio turn
    /// counted: move knobs, set a shape, a scale and a map; ask for all three; play the root note.
    static func round(_ host: LV2TestHost, shape: String, scale: String, keymap: String)
        -> (allocations: Int64, audio: [Float], answered: [Int: String]) {
        var allocations: Int64 = 0, audio: [Float] = [], answered: [Int: String] = [:]
        func block(_ events: [LV2TestHost.Event]) -> [Int: String] {
            host.fill(events)
            host.audioTurn(frames: 256, before: { allocation_counter_start() }, after: { allocations += allocation_counter_stop() })
            audio += UnsafeBufferPointer(start: host.left, count: 256)
            host.workerTurn()
            return host.announced()
        }
        // Knobs moved (volume, a sweep of the mod wheel, a bend): kept for the worker, which is
        // asked to take them once half its room is used.
        _ = block([.midi(frame: 0, [0xB0, 7, 127]), .midi(frame: 1, [0xE0, 0, 64])]
                  + (0..<2_100).map { .midi(frame: Int64($0 / 10), [0xB0, 1, UInt8($0 % 3)]) })
        _ = block([.set(frame: 0, property: FileProperty.shape.rawValue, path: shape)])
        _ = block([.set(frame: 3, property: FileProperty.scale.rawValue, path: scale),
                   .set(frame: 9, property: FileProperty.keymap.rawValue, path: keymap)])
        _ = block([])  // the scale's and the map's instruments are swapped in here
        answered = block([.get(frame: 0, property: nil)])
        let start = audio.count
        _ = block([.midi(frame: 0, [0x90, 69, 100])])
        for _ in 0..<40 { _ = block([]) }
        _ = block([.midi(frame: 0, [0x80, 69, 0]), .get(frame: 100, property: FileProperty.shape.rawValue)])
        for _ in 0..<10 { _ = block([]) }
        return (allocations, Array(audio[start...]), answered)
    }

    @Test("run and work_response allocate nothing while knobs move, patch:Set loads a shape, scale and keyboard map and patch:Get is answered; the new shape plays")
    func patchMessagesAllocateNothing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-lv2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // 12-tone equal temperament and the standard map: the tuning files load, the pitch stays.
        let scale = folder.appendingPathComponent("et.scl").path, keymap = folder.appendingPathComponent("std.kbm").path
        try ("12-tone equal\n12\n" + (1...12).map { "\($0 * 100).0\n" }.joined()).write(toFile: scale, atomically: true, encoding: .utf8)
        try "0\n0\n127\n60\n69\n440.0\n0\n".write(toFile: keymap, atomically: true, encoding: .utf8)
        let first = try Self.shapeFile(330, in: folder, name: "first"), second = try Self.shapeFile(495, in: folder, name: "second")

        let host = try LV2TestHost(bundle: Self.repository)
        let warm = Self.round(host, shape: first, scale: scale, keymap: keymap)  // every path taken once
        let heard = Self.round(host, shape: second, scale: scale, keymap: keymap)

        #expect(heard.allocations == 0, "\(heard.allocations) allocations on the audio thread")
        #expect(host.loads == 6, "\(host.loads) files asked of the worker")
        #expect(host.retires >= 6, "\(host.retires) setups handed back to the worker to free")
        #expect(host.drains == 2, "\(host.drains) drains of the settings played")
        #expect(heard.answered == [FileProperty.shape.rawValue: second, FileProperty.scale.rawValue: scale,
                                   FileProperty.keymap.rawValue: keymap])
        let f1 = try #require(ZeroCrossings.frequency(warm.audio, rate: LV2TestHost.rate, in: 2_000..<9_000))
        let f2 = try #require(ZeroCrossings.frequency(heard.audio, rate: LV2TestHost.rate, in: 2_000..<9_000))
        #expect(abs(f1 - 330) < 0.5, "\(f1) Hz")
        #expect(abs(f2 - 495) < 0.5, "\(f2) Hz")
    }
    /// One 256-frame block with `events` (the worker's turn after it); the left channel.
    static func block(_ host: LV2TestHost, _ events: [LV2TestHost.Event]) -> [Float] {
        host.fill(events)
        host.audioTurn(frames: 256)
        host.workerTurn()
        return Array(UnsafeBufferPointer(start: host.left, count: 256))
    }

    /// A4 played for 31 blocks and released: the RMS of a steady stretch of it.
    static func noteLoudness(_ host: LV2TestHost) -> Double {
        var audio = block(host, [.midi(frame: 0, [0x90, 69, 100])])
        for _ in 0..<30 { audio += block(host, []) }
        _ = block(host, [.midi(frame: 0, [0x80, 69, 0])])
        for _ in 0..<20 { _ = block(host, []) }
        let steady = audio[2_000..<7_000]
        return (steady.reduce(0) { $0 + Double($1 * $1) } / Double(steady.count)).squareRoot()
    }

    /// The root note's loudness (RMS of a steady stretch) before and after a shape file is loaded,
    /// with `first` sent before anything else.
    static func loudness(_ host: LV2TestHost, first: [LV2TestHost.Event], shape: String) -> (before: Double, after: Double) {
        func block(_ events: [LV2TestHost.Event]) -> [Float] { Self.block(host, events) }
        func note() -> Double { noteLoudness(host) }
        _ = block(first)
        let before = note()
        _ = block([.set(frame: 0, property: FileProperty.shape.rawValue, path: shape)])
        _ = block([])  // swapped in here
        return (before, note())
    }

    @Test("a controller moved over MIDI (CC 7, volume) holds across a shape file's load: the new instrument starts where the player left it")
    func controllersCarryOverAFileLoad() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-lv2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let shape = try Self.shapeFile(440, in: folder, name: "steady")
        // Then a long mod-wheel move: the worker takes the settings before any file is loaded.
        let wheel: [LV2TestHost.Event] = (0..<2_100).map { .midi(frame: Int64($0 / 10), [0xB0, 1, 0]) }
        let quietHost = try LV2TestHost(bundle: Self.repository), plainHost = try LV2TestHost(bundle: Self.repository)
        let quiet = Self.loudness(quietHost, first: [.midi(frame: 0, [0xB0, 7, 40])] + wheel, shape: shape)
        let plain = Self.loudness(plainHost, first: wheel, shape: shape)
        #expect(quietHost.drains == 1 && plainHost.drains == 1)
        let turnedDown = quiet.before / plain.before
        #expect(turnedDown < 0.8, "CC 7 = 40 left the note at \(turnedDown) of its loudness")
        #expect(abs(quiet.after / plain.after - turnedDown) < 0.01,
                "after the load: \(quiet.after / plain.after) of its loudness, before: \(turnedDown)")
    }

    @Test("a controller moved over MIDI (CC 7, volume) is in the state the host saves: a session reopened in a new instance plays as quietly as it was left")
    func controllersAreSaved() throws {
        func note(_ host: LV2TestHost, first: [LV2TestHost.Event]) -> Double {
            _ = Self.block(host, first)
            return Self.noteLoudness(host)
        }
        let played = try LV2TestHost(bundle: Self.repository), plain = try LV2TestHost(bundle: Self.repository)
        let quiet = note(played, first: [.midi(frame: 0, [0xB0, 7, 40])])
        let full = note(plain, first: [])
        #expect(played.drains == 0, "nothing asked the worker for the settings before the save")
        let state = try played.saveState()
        let reopened = try LV2TestHost(bundle: Self.repository)
        try reopened.restoreState(state)
        let again = note(reopened, first: [])
        #expect(quiet / full < 0.8, "CC 7 = 40 left the note at \(quiet / full) of its loudness")
        #expect(abs(again / full - quiet / full) < 0.01, "reopened: \(again / full) of its loudness, as left: \(quiet / full)")
    }
}
