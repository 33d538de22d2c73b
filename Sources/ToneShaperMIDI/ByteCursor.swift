/// A bounds-checked read position inside one region of a byte array.
///
/// Every read checks the bytes left before touching memory or allocating, so a hostile
/// length field can only produce `nil`, never a trap or a huge allocation.
struct ByteCursor {
    let bytes: [UInt8]
    /// Absolute position of the next byte to read.
    private(set) var offset: Int
    /// Absolute position one past the last readable byte.
    let end: Int

    init(_ bytes: [UInt8], from start: Int = 0, to end: Int? = nil) {
        self.bytes = bytes
        self.offset = start
        self.end = end ?? bytes.count
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    func peekByte() -> UInt8? {
        isAtEnd ? nil : bytes[offset]
    }

    mutating func readByte() -> UInt8? {
        guard let byte = peekByte() else { return nil }
        offset += 1
        return byte
    }

    /// Big-endian unsigned integer of `width` bytes (at most 4), as chunk headers use.
    mutating func readBigEndian(width: Int) -> Int? {
        guard width <= 4, width <= remaining else { return nil }
        var value = 0
        for _ in 0..<width {
            value = value << 8 | Int(bytes[offset])
            offset += 1
        }
        return value
    }

    /// Copies `count` bytes; `nil` (and no allocation) when fewer than `count` are left.
    mutating func readBytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= remaining else { return nil }
        let result = Array(bytes[offset..<offset + count])
        offset += count
        return result
    }

    /// The next `count` bytes as a slice of the input (no copy); `nil` when fewer are left.
    mutating func readSlice(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= remaining else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// Moves past `count` bytes; false (and no move) when fewer are left.
    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, count <= remaining else { return false }
        offset += count
        return true
    }

    mutating func readVariableLengthQuantity() -> VariableLengthQuantity.Decoded {
        VariableLengthQuantity.decode(bytes, at: &offset, end: end)
    }
}
