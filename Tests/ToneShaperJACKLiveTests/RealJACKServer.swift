import Testing

/// The suites that run against a jackd of their own, one test at a time: libjack keeps
/// process-wide state, and clients of two servers at once in one test process failed to connect
/// their ports ('cannot connect JACK port ...') when these suites ran in parallel.
@Suite("Against a real jackd (dummy driver), one server at a time", .serialized)
enum RealJACKServer {}
