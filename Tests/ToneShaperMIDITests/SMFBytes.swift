import Testing
@testable import ToneShaperMIDI

/// Hand-assembly of Standard MIDI Files for tests: the chunk framing only, so every event
/// byte in a test stays visible where the test states it.
enum SMFBytes {
    static func header(format: UInt16, tracks: UInt16, division: UInt16) -> [UInt8] {
        Array("MThd".utf8) + [0, 0, 0, 6] + be16(format) + be16(tracks) + be16(division)
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        return Array(type.utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
    }

    static func track(_ body: [UInt8]) -> [UInt8] { chunk("MTrk", body) }

    /// A whole file: header plus one MTrk chunk per body.
    static func file(format: UInt16 = 1, division: UInt16 = 480, tracks: [[UInt8]]) -> [UInt8] {
        header(format: format, tracks: UInt16(tracks.count), division: division) + tracks.flatMap(track)
    }

    static let endOfTrack: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]

    private static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
}

/// Parses `bytes`, expecting a MIDIFileError; returns it (or nil, after recording an issue).
func parseError(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> MIDIFileError? {
    do {
        let file = try MIDIFile.parse(bytes)
        Issue.record("expected an error, parsed \(file.tracks.count) track(s)", sourceLocation: sourceLocation)
        return nil
    } catch let error as MIDIFileError {
        return error
    } catch {
        Issue.record("unexpected error type \(type(of: error))", sourceLocation: sourceLocation)
        return nil
    }
}

/// The channel messages of one track, in file order.
func channelMessages(_ track: MIDIFile.Track) -> [MIDIMessage] {
    track.events.compactMap { if case .channel(let m) = $0.kind { m } else { nil } }
}

extension MIDIFile {
    /// The timed messages that come from the file's own events: `timedMessages` without the
    /// note-offs and pedal releases it adds at the end for what is still held (tested on their
    /// own in HeldNotesTests), so timing tests can state just the file's messages.
    func fileMessages(sampleRate: Double) -> [TimedMIDIMessage] {
        Array(timedMessages(sampleRate: sampleRate).prefix(tracks.reduce(0) { $0 + $1.channelMessageCount }))
    }
}
