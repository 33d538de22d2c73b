import ArgumentParser
import Dispatch
import Foundation
import Synchronization
import ToneShaperALSA
import ToneShaperCore
import ToneShaperLive
import ToneShaperMIDI

struct LearnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "Move a knob: print its controller number and a ready mapping line for a parameter.",
        discussion: """
            Opens the same sequencer input as `play` ("ToneShaper"), waits for the next control \
            change and prints e.g.
              cc 21 channel 1 (value 64)
              cc 21  fidelity  1 2000 exponential
            Paste the second line into a copy of Mappings/default.map and pass it to play --map. \
            Parameters: \(Parameter.allCases.map(\.rawValue).joined(separator: ", ")).
            --midi-in reads the first control change from a .mid file or, with '-', from an event \
            script on stdin (see `toneshaper play --help`) instead.
            """)

    @Argument(help: "The parameter the knob should control (omit to just identify the knob).")
    var parameter: String?

    @Option(name: .long, help: "Sequencer source to connect from: CLIENT:PORT or a client name (repeatable).")
    var connect: [String] = []

    @Option(name: .long, parsing: .unconditional, help: "Listen to this MIDI channel only (1-16); the mapping line is then for that channel.")
    var channel: Int?

    @Option(name: .customLong("midi-in"), help: "Take the first control change from this .mid file, or from an event script on stdin with '-'.")
    var midiIn: String?

    func validate() throws {
        if let parameter, Parameter(rawValue: parameter) == nil {
            throw ValidationError("unknown parameter '\(parameter)' (expected one of \(Parameter.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        if let channel, !(1...16).contains(channel) { throw ValidationError("--channel \(channel) must be 1...16") }
        if midiIn != nil && !connect.isEmpty { throw ValidationError("--connect needs the sequencer; it cannot be used with --midi-in") }
    }

    func run() throws {
        let target = parameter.flatMap(Parameter.init(rawValue:))
        let channelFilter = channel.map { UInt8($0 - 1) }
        let learnt: (channel: UInt8, controller: UInt8, value: UInt8)
        if let midiIn {
            let performance = try Performance.load(midiIn)
            let messages = performance.timedMessages(sampleRate: 48_000).map(\.message)
                .filter { channelFilter == nil || $0.channel == channelFilter }
            guard let first = ControllerLearning.firstControlChange(in: messages) else {
                throw CLIError("\(performance.name): no control change\(channel.map { " on channel \($0)" } ?? "")")
            }
            learnt = first
        } else {
            learnt = try listen(channelFilter: channelFilter)
        }
        Console.out(ControllerLearning.describe(channel: learnt.channel, controller: learnt.controller, value: learnt.value))
        if let target {
            Console.out(ControllerLearning.mappingLine(controller: learnt.controller, parameter: target, channel: channelFilter))
        } else {
            Console.out("cc \(learnt.controller)  PARAMETER  MIN MAX [linear|exponential]   "
                + "# toneshaper learn PARAMETER prints a ready line; PARAMETER: "
                + Parameter.allCases.map(\.rawValue).joined(separator: ", "))
        }
    }

    /// Waits on the sequencer for the first learnable control change (Ctrl-C gives up).
    private func listen(channelFilter: UInt8?) throws -> (channel: UInt8, controller: UInt8, value: UInt8) {
        let sequencer = try SequencerInput(channelFilter: channelFilter)
        defer { sequencer.close() }
        for source in connect { try sequencer.connect(from: source) }
        let catcher = FirstControlChange()
        sequencer.onEvent = { event, _ in
            if case .message(let message, _) = event { catcher.offer(message) }
        }
        let signals = StopSignals()
        defer { signals.restore() }
        try sequencer.start()
        Console.error("move a knob: listening on ToneShaper input \(sequencer.clientID):\(sequencer.portID)"
            + (connect.isEmpty ? " (connect a keyboard with: aconnect KEYBOARD \(sequencer.clientID):\(sequencer.portID))" : "")
            + "; Ctrl-C gives up")
        while !signals.raised {
            if let found = catcher.wait(seconds: 0.1) { return found }
        }
        throw CLIError("stopped before any control change arrived")
    }
}

/// The first learnable control change seen by the sequencer thread, handed to the main thread.
private final class FirstControlChange: @unchecked Sendable {
    private let found = Mutex<(channel: UInt8, controller: UInt8, value: UInt8)?>(nil)
    private let arrived = DispatchSemaphore(value: 0)

    /// Called on the sequencer thread; keeps only the first.
    func offer(_ message: MIDIMessage) {
        guard let cc = ControllerLearning.firstControlChange(in: [message]) else { return }
        let isFirst = found.withLock { value -> Bool in
            guard value == nil else { return false }
            value = cc
            return true
        }
        if isFirst { arrived.signal() }
    }

    func wait(seconds: Double) -> (channel: UInt8, controller: UInt8, value: UInt8)? {
        guard arrived.wait(timeout: .now() + seconds) == .success else { return nil }
        return found.withLock { $0 }
    }
}
