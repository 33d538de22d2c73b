import Testing
@testable import ToneShaperMIDI

@Suite("Variable-length quantities")
struct VariableLengthQuantityTests {
    static let cases: [(value: Int, bytes: [UInt8])] = [
        (0, [0x00]), (0x7F, [0x7F]), (0x80, [0x81, 0x00]), (0x2000, [0xC0, 0x00]),
        (0x3FFF, [0xFF, 0x7F]), (0x4000, [0x81, 0x80, 0x00]), (0x0FFF_FFFF, [0xFF, 0xFF, 0xFF, 0x7F]),
    ]

    @Test("encodes to the shortest form given in the SMF specification's table", arguments: cases)
    func encode(value: Int, bytes: [UInt8]) {
        #expect(VariableLengthQuantity.encode(value) == bytes)
    }

    @Test("decodes each encoding back to its value and consumes exactly its bytes", arguments: cases)
    func decode(value: Int, bytes: [UInt8]) {
        let input = bytes + [0x55]
        var index = 0
        #expect(VariableLengthQuantity.decode(input, at: &index, end: input.count) == .value(value))
        #expect(index == bytes.count)
    }

    @Test("a continuation bit at the end of the region is truncation; a fifth byte is too long")
    func malformed() {
        var index = 0
        #expect(VariableLengthQuantity.decode([0x81, 0x80], at: &index, end: 2) == .truncated)
        index = 0
        #expect(VariableLengthQuantity.decode([0x81, 0x00], at: &index, end: 1) == .truncated)
        index = 0
        #expect(VariableLengthQuantity.decode([0x81, 0x80, 0x80, 0x80, 0x00], at: &index, end: 5) == .tooLong)
        index = 0
        #expect(VariableLengthQuantity.decode([0x80, 0x80, 0x80, 0x00], at: &index, end: 4) == .value(0))
    }

    @Test("delta times of 0, 0x7F, 0x80 and 0x0FFFFFFF give those ticks in a parsed file")
    func deltaTimesInFile() throws {
        let text: [UInt8] = [0xFF, 0x01, 0x00]   // an empty text event after each delta
        let body = [0x00] + text + [0x7F] + text + [0x81, 0x00] + text + [0xFF, 0xFF, 0xFF, 0x7F] + text
        let file = try MIDIFile.parse(SMFBytes.file(format: 0, tracks: [body]))
        #expect(file.tracks[0].events.map(\.tick) == [0, 0x7F, 0xFF, 0xFF + 0x0FFF_FFFF])
    }

    @Test("a 5-byte delta time is rejected with its offset")
    func fiveByteDelta() {
        let bytes = SMFBytes.file(format: 0, tracks: [[0x00, 0xFF, 0x01, 0x00, 0x81, 0x80, 0x80, 0x80, 0x00, 0xFF, 0x2F, 0x00]])
        let error = parseError(bytes)
        #expect(error?.message == "variable-length quantity longer than 4 bytes in track 1")
        #expect(error?.offset == 26)
    }

    @Test("a 5-byte meta length is rejected too")
    func fiveByteLength() {
        let error = parseError(SMFBytes.file(format: 0, tracks: [[0x00, 0xFF, 0x01, 0x8F, 0xFF, 0xFF, 0xFF, 0x7F]]))
        #expect(error?.description == "variable-length quantity longer than 4 bytes in track 1 at byte 25")
    }
}
