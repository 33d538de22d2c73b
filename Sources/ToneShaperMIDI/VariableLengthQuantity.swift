/// The variable-length quantities of Standard MIDI Files: 7 bits per byte, most significant
/// first, high bit set on every byte but the last, at most 4 bytes (so at most 0x0FFFFFFF).
enum VariableLengthQuantity {
    static let maxValue = 0x0FFF_FFFF
    static let maxLength = 4

    enum Decoded: Equatable {
        case value(Int)
        /// The region ended while a continuation bit was still set.
        case truncated
        /// A fifth byte would be needed: the file is corrupt (the spec caps lengths at 4 bytes).
        case tooLong
    }

    /// Reads one quantity starting at `index`, advancing it past the bytes consumed.
    static func decode(_ bytes: [UInt8], at index: inout Int, end: Int) -> Decoded {
        var value = 0
        for _ in 0..<maxLength {
            guard index < end else { return .truncated }
            let byte = bytes[index]
            index += 1
            value = value << 7 | Int(byte & 0x7F)
            if byte & 0x80 == 0 { return .value(value) }
        }
        return .tooLong
    }

    /// The shortest encoding of `value`, which must be in 0...maxValue.
    static func encode(_ value: Int) -> [UInt8] {
        precondition((0...maxValue).contains(value), "VLQ out of range: \(value)")
        var result = [UInt8(value & 0x7F)]
        var rest = value >> 7
        while rest > 0 {
            result.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
            rest >>= 7
        }
        return result
    }
}
