/// An indexed-colour picture drawn pixel by pixel and written out as a PNG: the raster form of a
/// chart, for viewers and documents that take images but not SVG.
public struct Raster: Sendable {
    public let width: Int
    public let height: Int
    /// Palette indices, row after row from the top.
    public private(set) var pixels: [UInt8]

    /// The chart palette: the level colour scale in `levels` steps, then the inks.
    public static let levels = 240
    public enum Ink: UInt8, Sendable { case paper = 240, text, frame, caption }
    public static let palette: [ColorMap.RGB] = (0..<levels).map { ColorMap.color(at: Double($0) / Double(levels - 1)) } + [
        ColorMap.RGB(r: 255, g: 255, b: 255), ColorMap.RGB(r: 0x22, g: 0x22, b: 0x22),
        ColorMap.RGB(r: 0x44, g: 0x44, b: 0x44), ColorMap.RGB(r: 0x55, g: 0x55, b: 0x55),
    ]

    /// The raster palette entry for a 0...255 `ColorMap` index.
    @inline(__always) public static func level(_ index: UInt8) -> UInt8 {
        UInt8((Int(index) * (levels - 1) + 127) / 255)
    }

    public init(width: Int, height: Int, background: Ink = .paper) {
        precondition(width >= 1 && height >= 1)
        self.width = width
        self.height = height
        pixels = [UInt8](repeating: background.rawValue, count: width * height)
    }

    public subscript(x: Int, y: Int) -> UInt8 { pixels[y * width + x] }

    /// Sets one pixel; outside the picture nothing happens.
    public mutating func set(_ x: Int, _ y: Int, _ color: UInt8) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        pixels[y * width + x] = color
    }

    /// Fills the rectangle [x, x + w) × [y, y + h), clipped to the picture.
    public mutating func fill(x: Int, y: Int, width w: Int, height h: Int, _ color: UInt8) {
        let x0 = max(0, x), x1 = min(width, x + w), y0 = max(0, y), y1 = min(height, y + h)
        guard x0 < x1 else { return }
        for row in y0..<max(y0, y1) {
            for i in (row * width + x0)..<(row * width + x1) { pixels[i] = color }
        }
    }

    /// The outline of [x, x + w) × [y, y + h), one pixel wide.
    public mutating func frame(x: Int, y: Int, width w: Int, height h: Int, _ color: UInt8) {
        fill(x: x, y: y, width: w, height: 1, color)
        fill(x: x, y: y + h - 1, width: w, height: 1, color)
        fill(x: x, y: y, width: 1, height: h, color)
        fill(x: x + w - 1, y: y, width: 1, height: h, color)
    }

    /// Text in the 5 × 7 bitmap font, `y` its top edge, `x` placed by `anchor`.
    public mutating func text(_ string: String, x: Int, y: Int, anchor: SVGWriter.TextAnchor = .start,
                              scale: Int = 1, _ color: UInt8 = Ink.text.rawValue) {
        let w = BitmapFont.width(of: string, scale: scale)
        let left = anchor == .start ? x : anchor == .middle ? x - w / 2 : x - w
        BitmapFont.forEachPixel(of: string, scale: scale) { px, py in set(left + px, y + py, color) }
    }

    /// Text turned a quarter turn anticlockwise (read from bottom to top, like a y-axis title),
    /// centred on (`centerX`, `centerY`).
    public mutating func verticalText(_ string: String, centerX: Int, centerY: Int, scale: Int = 1,
                                      _ color: UInt8 = Ink.text.rawValue) {
        let w = BitmapFont.width(of: string, scale: scale), h = BitmapFont.glyphHeight * scale
        let left = centerX - h / 2, bottom = centerY + w / 2
        BitmapFont.forEachPixel(of: string, scale: scale) { px, py in set(left + py, bottom - px, color) }
    }

    public func png() -> [UInt8] {
        PNGEncoder.encodeIndexed(width: width, height: height, pixels: pixels, palette: Self.palette)
    }
}
