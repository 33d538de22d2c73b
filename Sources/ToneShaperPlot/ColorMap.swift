/// A dark-to-bright colour scale for levels: black, violet, red, orange, pale yellow.
///
/// Brightness rises monotonically, so the picture still reads in greyscale print, and the
/// palette has exactly 256 entries so the spectrogram can be an indexed-colour PNG.
public enum ColorMap {
    public struct RGB: Sendable, Equatable {
        public var r: UInt8, g: UInt8, b: UInt8
        public init(r: UInt8, g: UInt8, b: UInt8) { self.r = r; self.g = g; self.b = b }
        public var hex: String {
            let digits = Array("0123456789abcdef")
            return "#" + [r, g, b].map { String(digits[Int($0 >> 4)]) + String(digits[Int($0 & 15)]) }.joined()
        }
        /// Rec. 709 luma, 0...255.
        public var luma: Double { 0.2126 * Double(r) + 0.7152 * Double(g) + 0.0722 * Double(b) }
    }

    /// Anchor colours at evenly spaced positions, interpolated linearly.
    static let anchors: [(Double, Double, Double)] = [
        (0, 0, 4), (40, 11, 84), (101, 21, 110), (159, 42, 99),
        (212, 72, 66), (245, 125, 21), (250, 193, 39), (252, 255, 164),
    ]

    public static let palette: [RGB] = (0..<256).map { color(at: Double($0) / 255) }

    /// The colour at position `t` in 0...1 (clamped).
    public static func color(at t: Double) -> RGB {
        let x = min(1, max(0, t)) * Double(anchors.count - 1)
        let i = min(anchors.count - 2, Int(x))
        let f = x - Double(i)
        let a = anchors[i], b = anchors[i + 1]
        func mix(_ p: Double, _ q: Double) -> UInt8 { UInt8((p + (q - p) * f).rounded()) }
        return RGB(r: mix(a.0, b.0), g: mix(a.1, b.1), b: mix(a.2, b.2))
    }

    /// Palette index of a level between `floor` (index 0) and `ceiling` (index 255).
    public static func index(level: Float, floor: Float, ceiling: Float) -> UInt8 {
        let t = (level - floor) / (ceiling - floor)
        if t.isNaN { return 0 }  // a corrupt sample must not crash the picture
        return UInt8(min(255, max(0, (t * 255).rounded())))
    }
}
