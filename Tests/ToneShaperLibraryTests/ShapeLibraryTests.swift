import Foundation
import Testing
import ToneShaperCore
import ToneShaperLibrary

/// A scratch folder with a built-in library and a user library in it.
struct Libraries {
    let root: URL
    var builtIn: String { root.appendingPathComponent("builtin").path }
    var user: UserLibrary { UserLibrary(directory: root.appendingPathComponent("user").path) }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-library-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: root.appendingPathComponent("builtin").path, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.appendingPathComponent("user").path, withIntermediateDirectories: true)
    }

    static func shape(_ name: String, program: Int, frequency: Double) -> Shape {
        var s = Shape.constant(frequency)
        s.name = name; s.program = program
        return s
    }

    func write(_ shape: Shape, to folder: String, file: String? = nil) throws {
        try ShapeFile.encode(shape).write(to: URL(fileURLWithPath: folder).appendingPathComponent(file ?? "\(shape.name).json"))
    }

    func load() throws -> ShapeLibrary { try ShapeLibrary.load(builtIn: builtIn, user: user) }
    func remove() { try? FileManager.default.removeItem(at: root) }
}

@Suite("Where shapes come from: built-in, the user's library, files")
struct ShapeLibraryTests {
    @Test("the user library lives under XDG_DATA_HOME, else ~/.local/share; a relative XDG_DATA_HOME is ignored")
    func userLibraryPlace() {
        #expect(UserLibrary.standard(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/a"]).directory == "/data/toneshaper/presets")
        #expect(UserLibrary.standard(environment: ["HOME": "/home/a"]).directory == "/home/a/.local/share/toneshaper/presets")
        #expect(UserLibrary.standard(environment: ["XDG_DATA_HOME": "rel", "HOME": "/home/a"]).directory == "/home/a/.local/share/toneshaper/presets")
    }

    @Test("both libraries are listed with their source; a user shape with a built-in's name replaces it, said once")
    func overrides() throws {
        let l = try Libraries(); defer { l.remove() }
        try l.write(Libraries.shape("siren", program: 1, frequency: 300), to: l.builtIn)
        try l.write(Libraries.shape("drone", program: 3, frequency: 100), to: l.builtIn)
        try l.write(Libraries.shape("siren", program: 1, frequency: 555), to: l.user.directory)
        try l.write(Libraries.shape("mine", program: 20, frequency: 777), to: l.user.directory)
        let library = try l.load()
        #expect(library.entries.map(\.shape.name) == ["siren", "drone", "mine"])
        #expect(library.entries.map(\.source) == [.user, .builtIn, .user])
        #expect(library.entry(named: "siren")?.shape.points[0].frequency == 555)
        #expect(library.entry(named: "siren")?.overrides == true)
        #expect(library.entry(program: 20)?.shape.name == "mine")
        #expect(library.notes.count == 1)
        #expect(library.notes[0].contains("user shape 'siren'") && library.notes[0].contains("overrides the built-in"))
    }

    @Test("a program clash is one line: the user's shape keeps the program, the other plays by name")
    func programClash() throws {
        let l = try Libraries(); defer { l.remove() }
        try l.write(Libraries.shape("drone", program: 3, frequency: 100), to: l.builtIn)
        try l.write(Libraries.shape("bell", program: 3, frequency: 900), to: l.user.directory)
        let library = try l.load()
        #expect(library.entry(program: 3)?.shape.name == "bell")
        #expect(library.entry(named: "drone")?.answersToProgram == false)
        #expect(library.notes == ["program 3: user shape 'bell' keeps it; built-in shape 'drone' is played by name only"])
        // The engine's presets follow the same order: program 3 selects the user's shape.
        let presets = try library.presetLibrary()
        #expect(presets.shape(program: 3)?.name == "bell")
        #expect(presets.shapes.map(\.name) == library.entries.map(\.shape.name))
    }

    @Test("a broken user file is skipped with a note naming it; a broken built-in is an error")
    func brokenFiles() throws {
        let l = try Libraries(); defer { l.remove() }
        try l.write(Libraries.shape("drone", program: 3, frequency: 100), to: l.builtIn)
        try Data(#"{"duration": -1, "points": [[0, 100], [1, 200]]}"#.utf8).write(to: URL(fileURLWithPath: l.user.path(for: "bad")))
        let library = try l.load()
        #expect(library.entries.count == 1)
        #expect(library.notes.count == 1 && library.notes[0].contains("bad.json") && library.notes[0].contains("field 'duration' = -1.0"))
        try Data("{".utf8).write(to: URL(fileURLWithPath: l.builtIn + "/broken.json"))
        #expect(throws: ShapeError.self) { try l.load() }
    }

    @Test("a FILE.json plays its own content, never a library shape of the same name, and its program clashes with nothing")
    func fileNamedOnTheCommandLine() throws {
        let l = try Libraries(); defer { l.remove() }
        try l.write(Libraries.shape("siren", program: 1, frequency: 300), to: l.builtIn)
        let elsewhere = l.root.appendingPathComponent("siren.json").path
        try l.write(Libraries.shape("siren", program: 1, frequency: 999), to: l.root.path)
        var library = try l.load()
        let index = try library.resolve(elsewhere)
        #expect(library.entries[index].shape.points[0].frequency == 999)
        #expect(library.entries[index].source == .file)
        #expect(try library.resolve(elsewhere) == index)  // named twice, loaded once
        #expect(library.entries[try library.resolve("siren")].shape.points[0].frequency == 300)
        #expect(library.entries[try library.resolve("1")].shape.points[0].frequency == 300)
        let presets = try library.presetLibrary()
        #expect(presets.shapes[index].points[0].frequency == 999)
        #expect(presets.shape(program: 1)?.points[0].frequency == 300)
        #expect(throws: LibraryError("shape file 'nowhere/x.json': no such file")) { try library.resolve("nowhere/x.json") }
        #expect(throws: LibraryError.self) { try library.resolve("no-such-shape") }
    }
}

@Suite("Saving to the user library")
struct UserLibrarySaveTests {
    @Test("a saved shape reads back equal, and the folder holds only the finished file")
    func saveReadsBack() throws {
        let l = try Libraries(); defer { l.remove() }
        var shape = Libraries.shape("my shape", program: 42, frequency: 261.6255653005986)
        shape.points.insert(.init(time: 0.3333333333333333, frequency: 523.2511306011972), at: 1)
        shape.maxFrequency = 600; shape.description = "drawn"; shape.envelope = .exponentialDecay(rate: 2.5)
        let path = try l.user.save(shape)
        #expect(path == l.user.directory + "/my shape.json")
        #expect(try ShapeFile.load(path: path) == shape)
        #expect(try FileManager.default.contentsOfDirectory(atPath: l.user.directory) == ["my shape.json"])
    }

    @Test("nothing invalid is saved: a bad field or a bad name leaves the library untouched, with the loader's line")
    func refusesInvalid() throws {
        let l = try Libraries(); defer { l.remove() }
        var bad = Libraries.shape("ok", program: 1, frequency: 440)
        bad.duration = 0
        #expect(throws: ShapeError(file: nil, field: "duration", value: "0.0", reason: "must be > 0")) { try l.user.save(bad) }
        for name in ["", "../escape", ".hidden", "a/b", String(repeating: "x", count: 65)] {
            var s = Libraries.shape("x", program: 1, frequency: 440)
            s.name = name
            #expect(throws: ShapeError.self) { try l.user.save(s) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: l.user.directory).isEmpty)
    }

    @Test("saving over a shape replaces it whole (written beside it, then renamed)")
    func replaces() throws {
        let l = try Libraries(); defer { l.remove() }
        try l.user.save(Libraries.shape("a", program: 1, frequency: 440))
        try l.user.save(Libraries.shape("a", program: 1, frequency: 220))
        #expect(try ShapeFile.load(path: l.user.path(for: "a")).points[0].frequency == 220)
        #expect(try FileManager.default.contentsOfDirectory(atPath: l.user.directory) == ["a.json"])
    }
}
