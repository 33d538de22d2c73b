/// Pitch measured on rendered audio, independently of the engine: rising zero crossings,
/// interpolated between samples. One meter for every test target.
public enum ZeroCrossings {
    /// Times (in samples, fractional) where `x` crosses zero going up within `range`.
    public static func rising(_ x: [Float], in range: Range<Int>? = nil) -> [Double] {
        let r = range ?? 0..<x.count
        var result: [Double] = []
        guard r.count >= 2 else { return result }
        for i in (r.lowerBound + 1)..<r.upperBound where x[i - 1] < 0 && x[i] >= 0 {
            let a = Double(x[i - 1]), b = Double(x[i])
            result.append(Double(i - 1) + a / (a - b))
        }
        return result
    }

    /// Mean frequency over `range`: whole periods between the first and last rising crossing.
    public static func frequency(_ x: [Float], rate: Double, in range: Range<Int>? = nil) -> Double? {
        let z = rising(x, in: range)
        guard z.count >= 3 else { return nil }
        return Double(z.count - 1) / (z.last! - z.first!) * rate
    }
}
