import Foundation

/// Runs the built `toneshaper` program, as a user would, and collects what it printed.
struct ProgramRunner {
    /// The repository root (this file is Tests/toneshaperTests/ProgramRunner.swift).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The binary built with the tests: next to the test bundle (SwiftPM puts every product of a
    /// build in one folder), else the usual build folders of the checkout.
    static let executable: URL? = {
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("toneshaper"))
        candidates.append(runner.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("toneshaper"))
        if let main = Bundle.main.executableURL {
            candidates.append(main.deletingLastPathComponent().appendingPathComponent("toneshaper"))
        }
        for scratch in [".build-live", ".build"] {
            candidates.append(root.appendingPathComponent("\(scratch)/debug/toneshaper"))
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    struct Result {
        var status: Int32
        var reason: Process.TerminationReason
        var stdout: String
        var stderr: String
    }

    /// A started program whose output is being collected.
    final class Running: @unchecked Sendable {
        let process = Process()
        private let out = Pipe(), err = Pipe()
        private let lock = NSLock()
        private var outData = Data(), errData = Data()
        private let outDone = DispatchSemaphore(value: 0), errDone = DispatchSemaphore(value: 0)
        private let firstLine = DispatchSemaphore(value: 0)
        private var sawLine = false

        init(_ arguments: [String], environment: [String: String], stdin: String?, in folder: URL) throws {
            guard let executable = ProgramRunner.executable else { throw RunnerError("the toneshaper binary was not built next to the tests") }
            process.executableURL = executable
            process.arguments = arguments
            process.currentDirectoryURL = folder
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = out
            process.standardError = err
            let input = Pipe()
            process.standardInput = input
            try process.run()
            if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
            try input.fileHandleForWriting.close()
            collect(out.fileHandleForReading, isOut: true)
            collect(err.fileHandleForReading, isOut: false)
        }

        private func collect(_ handle: FileHandle, isOut: Bool) {
            let thread = Thread { [self] in
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    lock.lock()
                    if isOut { outData.append(chunk) } else { errData.append(chunk) }
                    let signal = isOut && !sawLine && chunk.contains(UInt8(ascii: "\n"))
                    if signal { sawLine = true }
                    lock.unlock()
                    if signal { firstLine.signal() }
                }
                if isOut { firstLine.signal() }
                (isOut ? outDone : errDone).signal()
            }
            thread.start()
        }

        /// Waits until the program printed its first line on stdout (or closed it).
        func waitForFirstLine() { firstLine.wait() }

        /// What the program has printed on stdout so far.
        var stdoutSoFar: String {
            lock.lock()
            defer { lock.unlock() }
            return String(decoding: outData, as: UTF8.self)
        }

        func finish() -> Result {
            process.waitUntilExit()
            outDone.wait()
            errDone.wait()
            lock.lock()
            defer { lock.unlock() }
            return Result(status: process.terminationStatus, reason: process.terminationReason,
                          stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
        }
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
                    in folder: URL) throws -> Result {
        try Running(arguments, environment: environment, stdin: stdin, in: folder).finish()
    }
}

struct RunnerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A temporary folder with an alsa-lib configuration defining the `capture` PCM (a `file` PCM over
/// `null`), reached through ALSA_CONFIG_PATH as a user would configure it.
struct Workspace {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("toneshaper-e2e-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try "pcm.capture { type file; slave.pcm \"null\"; file \"\(path("out.raw"))\"; format \"raw\" }\n"
            .write(toFile: path("capture.conf"), atomically: true, encoding: .utf8)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The capture device, and a user library of the workspace's own (never the user's real one).
    var alsaEnvironment: [String: String] {
        ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:" + path("capture.conf"), "XDG_DATA_HOME": path("data")]
    }

    /// The workspace's user library, where `edit` saves and every command looks.
    var userPresets: String { path("data/toneshaper/presets") }

    func run(_ arguments: [String], stdin: String? = nil) throws -> ProgramRunner.Result {
        try ProgramRunner.run(arguments, environment: alsaEnvironment, stdin: stdin, in: folder)
    }

    func start(_ arguments: [String], stdin: String? = nil) throws -> ProgramRunner.Running {
        try ProgramRunner.Running(arguments, environment: alsaEnvironment, stdin: stdin, in: folder)
    }

    func floats(_ name: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path(name)))
        return data.withUnsafeBytes { raw in
            (0..<(data.count / 4)).map { Float(bitPattern: raw.loadUnaligned(fromByteOffset: 4 * $0, as: UInt32.self)) }
        }
    }

    func remove() { try? FileManager.default.removeItem(at: folder) }
}
