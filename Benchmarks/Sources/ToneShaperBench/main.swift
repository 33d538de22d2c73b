#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ToneShaperCore
import CCrossCore

// toneshaper-bench [--runs N] [--seconds S] [--dense-seconds S] [--quick] [--only a,b,c,d]
//                  [--waves sine,saw,fourier,fsquare,ftriangle] [--voices 64,256,1024,4096] [--block N]
// toneshaper-bench --cross-core   (only the core-to-core round trip between CPUs 0 and 1: CCrossCore)
//   a: held sine / band-limited saw / Fourier saw voices through Engine.render
//   b: dense performance (OfflineRenderer)   c: C reference vs Swift   d: aliasing floor of the band-limited waves
//   --block N: the held voices' block and control period (256; the program's is 128): a voice's
//   cost per period (its set-up, its sink's) shows as the difference between two runs' figures.

var runs = 5, seconds = 10.0, denseSeconds = 30.0
var only: Set<String> = ["a", "b", "c", "d"]
var waveFilter: Set<String> = ["sine", "saw", "fourier"]
var voiceCounts = [64, 256, 1024, 4096]
var heldBlock = 256
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--runs": runs = Int(args.popFirst() ?? "") ?? runs
    case "--seconds": seconds = Double(args.popFirst() ?? "") ?? seconds
    case "--dense-seconds": denseSeconds = Double(args.popFirst() ?? "") ?? denseSeconds
    case "--waves": waveFilter = Set((args.popFirst() ?? "").split(separator: ",").map(String.init))
    case "--voices": voiceCounts = (args.popFirst() ?? "").split(separator: ",").compactMap { Int($0) }
    case "--block": heldBlock = max(8, (Int(args.popFirst() ?? "") ?? heldBlock) / 8 * 8)
    case "--quick": runs = 2; seconds = 2; denseSeconds = 5
    case "--only": only = Set((args.popFirst() ?? "").split(separator: ",").map(String.init))
    case "--cross-core":
        let trip = cross_core_round_trip(0, 1, 50_000, 5)
        print(trip < 0 ? "cross-core round trip: cannot pin threads to CPUs 0 and 1" : "cross-core round trip \(Int(trip.rounded())) ns")
        exit(0)
    case "-h", "--help":
        print("usage: toneshaper-bench [--runs N] [--seconds S] [--dense-seconds S] [--quick] [--only a,b,c,d] [--waves sine,saw,fourier,fsquare,ftriangle] [--voices 64,256,1024,4096] [--block N] | --cross-core")
        exit(0)
    default:
        print("toneshaper-bench: unknown argument \(a)"); exit(2)
    }
}

func fmt(_ x: Double, _ digits: Int = 2) -> String {
    var s = String(Int((x * pow(10, Double(digits))).rounded()))
    if digits > 0 {
        while s.count <= digits { s = "0" + s }
        s.insert(".", at: s.index(s.endIndex, offsetBy: -digits))
    }
    return s
}
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }

/// Machine-readable lines, printed together at the end: `BENCH key=value ...`.
final class Summary: @unchecked Sendable { var lines: [String] = [] }
let summary = Summary()
func record(_ figure: String, _ fields: [(String, String)]) {
    summary.lines.append("BENCH figure=\(figure) " + fields.map { "\($0.0)=\($0.1)" }.joined(separator: " "))
}
func runsText(_ all: [Double]) -> String { all.map { fmt($0 * 1000, 1) }.joined(separator: "/") + " ms" }

print("ToneShaper benchmark — release build, 48 kHz, \(heldBlock)-frame blocks for held voices, median of \(runs) runs")
print("(held-voice figures: \(fmt(seconds, 1)) s of audio per run; dense: \(fmt(denseSeconds, 1)) s)")
print("")

var engineSine64 = 0.0
if only.contains("a") {
    print("a. Held voices through Engine.render (all engine costs, pool = voices, 16 channels, echo off)")
    print("   " + pad("workload", 28) + lpad("ns/voice-sample", 16) + lpad("voices/core", 13) + lpad("allocs", 8) + "   runs")
    for (name, program, key) in [("sine", 0, "sine"), ("band-limited saw", 1, "saw"), ("Fourier saw, 10 terms", 3, "fourier"),
                                  ("Fourier square, 10 terms", 4, "fsquare"), ("Fourier triangle, 10 terms", 5, "ftriangle")]
        where waveFilter.contains(key) {
        for r in benchHeld(wave: program, voiceCounts: voiceCounts, seconds: seconds, runs: runs, block: heldBlock) {
            let voices = r.voices
            if program == 0 && voices == 64 { engineSine64 = r.nsPerVoiceSample }
            print("   " + pad("\(name), \(voices) voices", 28) + lpad(fmt(r.nsPerVoiceSample), 16)
                  + lpad(fmt(r.voicesPerCore, 0), 13) + lpad(String(r.allocations), 8) + "   " + runsText(r.all))
            let figure = ["sine": "sine", "saw": "blsaw", "fourier": "fouriersaw", "fsquare": "fouriersquare", "ftriangle": "fouriertriangle"][key]!
            var fields = [("ns_per_voice_sample", fmt(r.nsPerVoiceSample, 3)), ("voices_per_core", fmt(r.voicesPerCore, 0)),
                          ("voices", "\(voices)"), ("frames", "\(r.frames)"), ("allocations", "\(r.allocations)")]
            if program == 0 { fields.append(("target_ns", "10")); fields.append(("meets_target", r.nsPerVoiceSample <= 10 ? "yes" : "no")) }
            record("held_\(figure)_\(voices)", fields)
        }
    }
    print("   voices/core = 1e9 / (ns per voice-sample × 48000): voices one core sustains in real time (no headroom).")
    print("")
}

if only.contains("b") {
    print("b. Dense performance through OfflineRenderer (64 held voices, band-limited saw, echo on via CC 91,")
    print("   chord changes every second per channel, pitch bends, pool 128; every cost included)")
    let d = benchDense(seconds: denseSeconds, runs: runs)
    print("   ×real-time: \(fmt(d.realTime, 1))   (target ≥ 20×)        render time: \(fmt(d.median, 3)) s for \(fmt(d.seconds, 0)) s of audio")
    print("   ns per voice-sample: \(fmt(d.nsPerVoiceSample))   (target ≤ 15; average sounding voices \(fmt(d.averageVoices, 1)))")
    print("   allocations during the render: \(d.allocations) (OfflineRenderer's sort/event list, not Engine.render); stolen voices: \(d.stolen)")
    print("   runs: " + runsText(d.all))
    // The same render on every core (RenderCrew: parts shared out per block, bit-identical output).
    let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    if cores > 1 {
        let p = benchDense(seconds: denseSeconds, runs: runs, threads: cores)
        print("   on \(cores) threads: ×real-time \(fmt(p.realTime, 1)), \(fmt(d.median / p.median, 2))× the one-thread speed (target ≥ 1.8× on 2 cores); runs: " + runsText(p.all))
        record("dense_blsaw_echo_64_threads", [("threads", "\(cores)"), ("x_realtime", fmt(p.realTime, 2)),
                                               ("speedup", fmt(d.median / p.median, 3)), ("allocations", "\(p.allocations)")])
    }
    record("dense_blsaw_echo_64", [("x_realtime", fmt(d.realTime, 2)), ("ns_per_voice_sample", fmt(d.nsPerVoiceSample, 3)),
                                   ("average_voices", fmt(d.averageVoices, 2)), ("audio_seconds", fmt(d.seconds, 1)),
                                   ("render_seconds", fmt(d.median, 4)), ("allocations", "\(d.allocations)"),
                                   ("target_x_realtime", "20"), ("meets_target", d.realTime >= 20 && d.nsPerVoiceSample <= 15 ? "yes" : "no")])
    print("")
}

if only.contains("c") {
    print("c. Same per-sample algorithm, sine, 64 voices, one bus (curve interp + trapezoid + wrap + gain + mix)")
    let cLibm = benchCReference(voices: 64, seconds: seconds, runs: runs, poly: false)
    let cPoly = benchCReference(voices: 64, seconds: seconds, runs: runs, poly: true)
    let sLibm = SwiftReference.bench(voices: 64, seconds: seconds, runs: runs, poly: false)
    let sPoly = SwiftReference.bench(voices: 64, seconds: seconds, runs: runs, poly: true)
    if engineSine64 == 0 { engineSine64 = benchHeld(wave: 0, voiceCounts: [64], seconds: seconds, runs: runs)[0].nsPerVoiceSample }
    print("   " + pad("kernel", 52) + lpad("ns/voice-sample", 16))
    print("   " + pad("C -O3, libm sin, double phase (the reference)", 52) + lpad(fmt(cLibm.ns), 16))
    print("   " + pad("C -O3, engine's float polynomial sin", 52) + lpad(fmt(cPoly.ns), 16))
    print("   " + pad("Swift -O, same loop, libm sin", 52) + lpad(fmt(sLibm.ns), 16))
    print("   " + pad("Swift -O, same loop, polynomial sin", 52) + lpad(fmt(sPoly.ns), 16))
    print("   " + pad("ToneShaper Engine.render, sine, 64 voices (a)", 52) + lpad(fmt(engineSine64), 16))
    print("   Swift/C time ratio: engine vs C reference \(fmt(engineSine64 / cLibm.ns)) "
          + "(< 1 = engine faster); same loop libm \(fmt(sLibm.ns / cLibm.ns)), same loop polynomial \(fmt(sPoly.ns / cPoly.ns))")
    record("c_reference_sine_64", [("c_libm_ns", fmt(cLibm.ns, 3)), ("c_poly_ns", fmt(cPoly.ns, 3)),
                                   ("swift_libm_ns", fmt(sLibm.ns, 3)), ("swift_poly_ns", fmt(sPoly.ns, 3)),
                                   ("engine_ns", fmt(engineSine64, 3))])
    record("swift_c_ratio", [("engine_over_c_libm", fmt(engineSine64 / cLibm.ns, 3)),
                             ("same_loop_libm", fmt(sLibm.ns / cLibm.ns, 3)), ("same_loop_poly", fmt(sPoly.ns / cPoly.ns, 3))])
    print("")
}

if only.contains("d") {
    print("d. Aliasing floor of the band-limited waves: steady notes every sixth of an octave, 20 Hz–20 kHz,")
    print("   all energy off the harmonics re the fundamental (the measurement AliasingFloorTests gates at −110 dB)")
    for (name, wave, key) in [("saw", WaveType.bandLimitedSawtooth, "saw"), ("square", .bandLimitedSquare, "square"),
                              ("triangle", .bandLimitedTriangle, "triangle")] {
        var line = "   " + pad(name, 10)
        for rate in [44_100.0, 48_000] {
            let w = AliasingFloor.worst(wave: wave, rate: rate)
            line += "  \(Int(rate)) Hz: worst \(fmt(w.db, 1)) dB (at \(Int(w.frequency.rounded())) Hz)"
            record("aliasing_floor_\(key)_\(Int(rate))", [("worst_db", fmt(w.db, 2)), ("at_hz", fmt(w.frequency, 1))])
        }
        print(line)
    }
    print("")
}

print("Timing: wall clock (CLOCK_MONOTONIC), median run; the process was off-CPU for \(fmt(100 * timingLog.worstOffCPU, 1)) % of")
print("its worst timed run (wall vs. thread CPU time): above a few % the machine was busy and figures are pessimistic.")
print("")
print("Summary (machine-readable):")
for line in summary.lines { print(line) }
