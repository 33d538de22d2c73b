/// Running trapezoidal integral of a sampled function, one buffer at a time.
///
/// The article's point: the trapezoidal rule needs only the previous sample and the previous
/// integral, so integrating buffer after buffer (carrying both across the boundary) equals the
/// one-shot integral to rounding. Simpson's rule looks two samples back and loses this property.
public struct PiecewiseIntegrator: Sendable {
    /// Sample spacing (1/sampleRate for audio).
    public let step: Double
    /// The integral up to the last sample seen.
    public private(set) var integral: Double = 0
    /// The last sample seen (the overlap carried to the next buffer).
    public private(set) var lastValue: Double = 0
    public private(set) var hasStarted = false

    public init(step: Double) { self.step = step }

    /// Starts from a known first sample with integral 0 (the article's C[0] = 0).
    public mutating func start(value: Double, integral: Double = 0) {
        lastValue = value
        self.integral = integral
        hasStarted = true
    }

    /// Adds one sample: C[n] = C[n−1] + step·(A[n−1] + A[n])/2. Returns C[n].
    @inline(__always) public mutating func advance(to value: Double) -> Double {
        integral += (lastValue + value) * (0.5 * step)
        lastValue = value
        return integral
    }

    /// Integrates a buffer, writing the running integral for each of its samples.
    ///
    /// The first sample ever gets integral 0; every later buffer continues from the carried state.
    public mutating func integrate(_ values: UnsafeBufferPointer<Double>, into output: UnsafeMutableBufferPointer<Double>) {
        precondition(output.count >= values.count)
        var i = 0
        if !hasStarted, let first = values.first {
            start(value: first)
            output[0] = 0
            i = 1
        }
        var c = integral, last = lastValue
        let h = 0.5 * step
        while i < values.count {
            let v = values[i]
            c += (last + v) * h
            last = v
            output[i] = c
            i += 1
        }
        integral = c
        lastValue = last
    }

    /// Drops whole cycles from the integral: a unit function has period 1, so only the fraction
    /// matters, and keeping it small keeps Double precision for hours of play.
    @inline(__always) public mutating func wrapToUnitInterval() {
        integral = fractionalPart(integral)
    }

    /// Whole-array reference (vDSP_vtrapzD's definition), for comparison in tests.
    public static func integrateWhole(_ values: [Double], step: Double) -> [Double] {
        var result = [Double](repeating: 0, count: values.count)
        for n in values.indices.dropFirst() {
            result[n] = result[n - 1] + step * (values[n - 1] + values[n]) / 2
        }
        return result
    }
}
