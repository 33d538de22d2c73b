import Testing
@testable import ToneShaperMIDI

/// One malformed file and what the reader must say about it.
struct MalformedFile: CustomTestStringConvertible, Sendable {
    let name: String
    let bytes: [UInt8]
    let fragment: String
    let offset: Int
    var testDescription: String { name }
}

@Suite("Malformed files are rejected with a clear message and offset")
struct MalformedFileTests {
    typealias S = SMFBytes
    static let eot = SMFBytes.endOfTrack
    static let head0 = S.header(format: 0, tracks: 1, division: 480)   // bytes 0..<14; a track body starts at 22

    static let corpus: [MalformedFile] = [
        .init(name: "empty input", bytes: [], fragment: "not a Standard MIDI File (no MThd header)", offset: 0),
        .init(name: "a RIFF wrapper", bytes: Array("RIFF".utf8) + [0, 0, 0, 4], fragment: "no MThd header", offset: 0),
        .init(name: "MThd and nothing else", bytes: Array("MThd".utf8), fragment: "truncated chunk header (4 of 8 bytes)", offset: 0),
        .init(name: "MThd length 0xFFFFFFFF", bytes: Array("MThd".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1, 1, 0xE0],
              fragment: "chunk length 4294967295 exceeds file size (6 bytes left)", offset: 4),
        .init(name: "MThd length 4", bytes: Array("MThd".utf8) + [0, 0, 0, 4, 0, 0, 0, 1],
              fragment: "MThd length 4 is shorter than 6", offset: 4),
        .init(name: "format 3", bytes: S.header(format: 3, tracks: 1, division: 96) + S.track(eot),
              fragment: "unsupported MIDI file format 3", offset: 8),
        .init(name: "division 0", bytes: S.header(format: 0, tracks: 1, division: 0) + S.track(eot),
              fragment: "division of 0 ticks per quarter note", offset: 12),
        .init(name: "SMPTE at 23 fps", bytes: S.header(format: 0, tracks: 1, division: 0xE928) + S.track(eot),
              fragment: "unsupported SMPTE frame rate 23", offset: 12),
        .init(name: "SMPTE with 0 ticks per frame", bytes: S.header(format: 0, tracks: 1, division: 0xE700) + S.track(eot),
              fragment: "SMPTE division with 0 ticks per frame", offset: 13),
        .init(name: "two tracks declared, one present", bytes: S.header(format: 1, tracks: 2, division: 96) + S.track(eot),
              fragment: "file ends before track 2 of 2", offset: 26),
        .init(name: "a partial chunk header after MThd", bytes: head0 + Array("MTr".utf8),
              fragment: "truncated chunk header (3 of 8 bytes)", offset: 14),
        .init(name: "MTrk length 0xFFFFFFFF", bytes: head0 + Array("MTrk".utf8) + [0xFF, 0xFF, 0xFF, 0xFF] + eot,
              fragment: "chunk length 4294967295 exceeds file size (4 bytes left)", offset: 18),
        .init(name: "MTrk length one more than the data", bytes: head0 + Array("MTrk".utf8) + [0, 0, 0, 5] + eot,
              fragment: "chunk length 5 exceeds file size (4 bytes left)", offset: 18),
        .init(name: "unknown chunk with a huge length", bytes: head0 + S.chunk("XFIH", []).prefix(4) + [0x7F, 0xFF, 0xFF, 0xFF] + S.track(eot),
              fragment: "chunk length 2147483647 exceeds file size", offset: 18),
        .init(name: "note-on cut short by the chunk end", bytes: S.file(format: 0, tracks: [[0x00, 0x90, 0x3C]]),
              fragment: "truncated track 1", offset: 25),
        .init(name: "delta time and nothing after it", bytes: S.file(format: 0, tracks: [[0x00]]),
              fragment: "truncated track 1", offset: 23),
        .init(name: "delta time cut inside its VLQ", bytes: S.file(format: 0, tracks: [[0x81]]),
              fragment: "truncated track 1", offset: 23),
        .init(name: "meta event cut before its type", bytes: S.file(format: 0, tracks: [[0x00, 0xFF]]),
              fragment: "truncated track 1", offset: 24),
        .init(name: "second track truncated", bytes: S.file(format: 1, tracks: [eot, [0x00, 0xC0]]),
              fragment: "truncated track 2", offset: 36),
        .init(name: "data byte first in a track", bytes: S.file(format: 0, tracks: [[0x00, 0x3C, 0x40] + eot]),
              fragment: "data byte 0x3C without running status in track 1", offset: 23),
        .init(name: "running status carried into the next track", bytes: S.file(format: 1, tracks: [[0x00, 0x90, 0x3C, 0x40] + eot, [0x00, 0x3C, 0x00] + eot]),
              fragment: "data byte 0x3C without running status in track 2", offset: 39),
        .init(name: "5-byte delta time", bytes: S.file(format: 0, tracks: [[0x80, 0x80, 0x80, 0x80, 0x00] + eot]),
              fragment: "variable-length quantity longer than 4 bytes in track 1", offset: 22),
        .init(name: "meta length past the chunk end", bytes: S.file(format: 0, tracks: [[0x00, 0xFF, 0x01, 0x7F, 0x41]]),
              fragment: "truncated track 1: meta event declares 127 bytes, 1 left", offset: 25),
        .init(name: "maximal sysex length", bytes: S.file(format: 0, tracks: [[0x00, 0xF0, 0xFF, 0xFF, 0xFF, 0x7F, 0xF7]]),
              fragment: "truncated track 1: sysex event declares 268435455 bytes, 1 left", offset: 24),
        .init(name: "escape length past the chunk end", bytes: S.file(format: 0, tracks: [[0x00, 0xF7, 0x05, 0xF8]]),
              fragment: "truncated track 1: sysex escape event declares 5 bytes, 1 left", offset: 24),
        .init(name: "system common status in a track", bytes: S.file(format: 0, tracks: [[0x00, 0xF4] + eot]),
              fragment: "unexpected status byte 0xF4 in track 1", offset: 23),
        .init(name: "real-time status in a track", bytes: S.file(format: 0, tracks: [[0x00, 0xF8] + eot]),
              fragment: "unexpected status byte 0xF8 in track 1", offset: 23),
        .init(name: "status byte where a data byte belongs", bytes: S.file(format: 0, tracks: [[0x00, 0x90, 0x91, 0x40] + eot]),
              fragment: "expected a data byte after status 0x90, found 0x91 in track 1", offset: 24),
        .init(name: "second data byte is a status", bytes: S.file(format: 0, tracks: [[0x00, 0xB0, 0x07, 0xFF, 0x2F, 0x00]]),
              fragment: "expected a data byte after status 0xB0, found 0xFF", offset: 25),
    ]

    @Test("each malformed file throws its own message at its own byte", arguments: corpus)
    func rejected(_ entry: MalformedFile) {
        guard let error = parseError(entry.bytes) else { return }
        #expect(error.description.contains(entry.fragment), "\(error)")
        #expect(error.offset == entry.offset, "\(error)")
        #expect(error.description.hasSuffix(" at byte \(entry.offset)"))
    }

    @Test("a prefix of a valid file is rejected, never read as a shorter valid file")
    func everyPrefixRejected() throws {
        let bytes = S.file(format: 1, tracks: [
            [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + Self.eot,
            [0x00, 0xF0, 0x02, 0x01, 0xF7, 0x00, 0x90, 0x3C, 0x40, 0x60, 0x3C, 0x00] + Self.eot,
        ])
        _ = try MIDIFile.parse(bytes)
        for length in 0..<bytes.count {
            #expect(throws: MIDIFileError.self, "prefix of \(length) bytes") {
                try MIDIFile.parse(Array(bytes.prefix(length)))
            }
        }
    }
}
