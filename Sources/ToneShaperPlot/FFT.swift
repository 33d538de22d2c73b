import Foundation

/// Radix-2 FFT of real input: an N/2-point complex FFT of the even/odd samples packed as
/// (re, im), then one split pass to recover the N/2 + 1 bins of the real signal.
///
/// Half the work of a complex FFT of the same length, and no dependency. Twiddles and the
/// bit-reversal table are computed once per size, so a spectrogram reuses one instance.
public final class RealFFT {
    public let size: Int
    let half: Int
    /// exp(−2πi·j/half) for j < half/2 (the complex FFT's twiddles).
    let twiddleRe: [Double], twiddleIm: [Double]
    /// exp(−2πi·k/size) for k ≤ half (the split pass).
    let splitRe: [Double], splitIm: [Double]
    let bitReverse: [Int]
    var re: [Double], im: [Double]

    public init(size: Int) {
        precondition(size >= 4 && size & (size - 1) == 0, "FFT size \(size) must be a power of two ≥ 4")
        self.size = size
        half = size / 2
        twiddleRe = (0..<max(1, half / 2)).map { cos(-2 * Double.pi * Double($0) / Double(size / 2)) }
        twiddleIm = (0..<max(1, half / 2)).map { sin(-2 * Double.pi * Double($0) / Double(size / 2)) }
        splitRe = (0...half).map { cos(-2 * Double.pi * Double($0) / Double(size)) }
        splitIm = (0...half).map { sin(-2 * Double.pi * Double($0) / Double(size)) }
        let bits = half.trailingZeroBitCount
        bitReverse = (0..<half).map { i in
            var r = 0
            for b in 0..<bits where i & (1 << b) != 0 { r |= 1 << (bits - 1 - b) }
            return r
        }
        re = Array(repeating: 0, count: half)
        im = Array(repeating: 0, count: half)
    }

    /// Bins 0...size/2 of the DFT X[k] = Σ x[n]·e^(−2πi·kn/N) of `input` (exactly `size` samples).
    public func transform(_ input: [Double]) -> (re: [Double], im: [Double]) {
        var outRe = [Double](repeating: 0, count: half + 1)
        var outIm = [Double](repeating: 0, count: half + 1)
        input.withUnsafeBufferPointer { x in
            outRe.withUnsafeMutableBufferPointer { r in
                outIm.withUnsafeMutableBufferPointer { i in transform(x, re: r, im: i) }
            }
        }
        return (outRe, outIm)
    }

    /// As `transform(_:)`, into caller-owned buffers of size/2 + 1 (no allocation per frame).
    public func transform(_ x: UnsafeBufferPointer<Double>, re outRe: UnsafeMutableBufferPointer<Double>,
                          im outIm: UnsafeMutableBufferPointer<Double>) {
        precondition(x.count == size && outRe.count == half + 1 && outIm.count == half + 1)
        re.withUnsafeMutableBufferPointer { zr in
            im.withUnsafeMutableBufferPointer { zi in
                bitReverse.withUnsafeBufferPointer { rev in
                    // Pack even samples as real parts, odd as imaginary, in bit-reversed order.
                    for m in 0..<half {
                        let r = rev[m]
                        zr[r] = x[2 * m]
                        zi[r] = x[2 * m + 1]
                    }
                }
                butterflies(zr, zi)
                splitRe.withUnsafeBufferPointer { wr in
                    splitIm.withUnsafeBufferPointer { wi in
                        for k in 0...half {
                            let a = k == half ? 0 : k
                            let b = k == 0 ? 0 : half - k
                            // Even part E = (Z[k] + conj Z[M−k]) / 2, odd part O = (Z[k] − conj Z[M−k]) / 2i.
                            let er = (zr[a] + zr[b]) * 0.5, ei = (zi[a] - zi[b]) * 0.5
                            let or = (zi[a] + zi[b]) * 0.5, oi = (zr[b] - zr[a]) * 0.5
                            outRe[k] = er + or * wr[k] - oi * wi[k]
                            outIm[k] = ei + or * wi[k] + oi * wr[k]
                        }
                    }
                }
            }
        }
    }

    /// In-place iterative radix-2 decimation-in-time on bit-reversed input.
    private func butterflies(_ zr: UnsafeMutableBufferPointer<Double>, _ zi: UnsafeMutableBufferPointer<Double>) {
        twiddleRe.withUnsafeBufferPointer { wr in
            twiddleIm.withUnsafeBufferPointer { wi in
                var length = 2
                while length <= half {
                    let halfLength = length / 2
                    let stride = half / length
                    var start = 0
                    while start < half {
                        for j in 0..<halfLength {
                            let w = j * stride
                            let p = start + j, q = p + halfLength
                            let tr = zr[q] * wr[w] - zi[q] * wi[w]
                            let ti = zr[q] * wi[w] + zi[q] * wr[w]
                            zr[q] = zr[p] - tr; zi[q] = zi[p] - ti
                            zr[p] += tr; zi[p] += ti
                        }
                        start += length
                    }
                    length *= 2
                }
            }
        }
    }
}
