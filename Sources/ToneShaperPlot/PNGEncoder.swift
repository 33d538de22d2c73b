/// Writes indexed-colour PNG files with uncompressed (stored) zlib blocks.
///
/// Enough for a spectrogram embedded in an SVG: one byte per pixel plus a 256-colour palette,
/// no compression library. Any PNG reader accepts stored deflate blocks.
public enum PNGEncoder {
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `pixels` are palette indices, row after row from the top, `width × height` of them.
    public static func encodeIndexed(width: Int, height: Int, pixels: [UInt8], palette: [ColorMap.RGB]) -> [UInt8] {
        precondition(width >= 1 && height >= 1 && pixels.count == width * height, "pixels must be width × height")
        precondition(!palette.isEmpty && palette.count <= 256, "a PNG palette has 1...256 entries")
        var out = signature
        var header: [UInt8] = []
        header += bigEndian(UInt32(width))
        header += bigEndian(UInt32(height))
        header += [8, 3, 0, 0, 0]  // bit depth 8, colour type 3 (indexed), deflate, adaptive filters, no interlace
        appendChunk("IHDR", header, to: &out)
        appendChunk("PLTE", palette.flatMap { [$0.r, $0.g, $0.b] }, to: &out)
        // Each scanline starts with its filter type; 0 = none (filters buy nothing without compression).
        var raw: [UInt8] = []
        raw.reserveCapacity((width + 1) * height)
        for y in 0..<height {
            raw.append(0)
            raw += pixels[(y * width)..<((y + 1) * width)]
        }
        appendChunk("IDAT", zlibStored(raw), to: &out)
        appendChunk("IEND", [], to: &out)
        return out
    }

    /// A zlib stream of stored (uncompressed) deflate blocks of at most 65,535 bytes each.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]  // deflate, 32 K window; (0x78 << 8 | 0x01) % 31 == 0
        var start = 0
        repeat {
            let count = min(65_535, data.count - start)
            let final: UInt8 = start + count == data.count ? 1 : 0
            out.append(final)  // BFINAL, BTYPE = 00
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[start..<(start + count)]
            start += count
        } while start < data.count
        out += bigEndian(adler32(data))
        return out
    }

    static func appendChunk(_ type: String, _ data: [UInt8], to out: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        precondition(typeBytes.count == 4)
        out += bigEndian(UInt32(data.count))
        out += typeBytes
        out += data
        out += bigEndian(crc32(typeBytes + data))
    }

    static func bigEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }

    /// CRC-32 as PNG defines it (reflected polynomial 0xEDB88320), table-driven.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = crcTable[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }

    static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// Adler-32 checksum of the uncompressed data, as zlib's trailer requires.
    public static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var i = 0
        while i < bytes.count {
            // 5552 bytes is the most that can be summed before b could overflow 32 bits.
            let end = min(bytes.count, i + 5552)
            while i < end { a += UInt32(bytes[i]); b += a; i += 1 }
            a %= 65_521; b %= 65_521
        }
        return b << 16 | a
    }

    /// Standard base64, for `data:` URIs.
    public static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let v = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(v >> 18)], alphabet[Int((v >> 12) & 63)], alphabet[Int((v >> 6) & 63)], alphabet[Int(v & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let v = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out += [alphabet[Int(v >> 18)], alphabet[Int((v >> 12) & 63)]]
            out += rest == 2 ? [alphabet[Int((v >> 6) & 63)], UInt8(ascii: "=")] : [UInt8(ascii: "="), UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
