#!/usr/bin/env python3
"""ToneShaper against its peers on the same notes: CPU time of whole renders, interleaved rounds.

Every program renders the dense MIDI file (make-dense.py: 16 channels x 4-note chords, 64 notes
sounding, 30 s) to a 48 kHz WAV file:

  toneshaper saw      `render --preset article-curve --threads 1`: the article's curve
                      54->460->54->360 Hz looping every second on every note (transposed by its key),
                      band-limited sawtooth, echo on through the file's CC 91
  toneshaper saw, all cores   the same with --threads = every core
  toneshaper sine     the same curve as a sine (one thread)
  csound vco2 k64     Csound's band-limited `vco2` saw on the same curve (GEN27 table read by a phasor
                      from the note's start, pitch bend, the same attack/release), ksmps = 64: the
                      frequency changes once per 64 samples, stepped
  csound vco2 k1      the same with ksmps = 1: the frequency follows the curve every sample, as
                      ToneShaper's does
  csound poscil k1/k64  the same instrument with `poscil` (a table sine, linear interpolation) instead
                      of vco2: ToneShaper's sine's peer
  scsynth Saw / SinOsc  scsynth in non-real-time mode (-N, -z 64) playing a score written by
                      scsynth_score.py: SynthDefs written here in Python, the curve from a buffer read by
                      BufRd.ar EVERY SAMPLE (per-sample frequency, as ToneShaper's); "Saw, curve per
                      block" reads it with BufRd.kr, once per 64-sample block
  C kernel            ref-kernel.c, built here by clang -O3 (plain and -ffast-math) and by gcc -O3
                      (plain, -ffast-math, and -fno-tree-vectorize), -march=native: the same notes and curve, mip-mapped saw
                      tables with linear interpolation, per-sample frequency: the limit
  fluidsynth          `fluidsynth -F` with a General MIDI soundfont (sample playback; reverb and
                      chorus off)

Before any time counts, every program renders a one-note probe file (peer_notes.write_probe_midi) and
its pitch must follow the curve (FluidSynth: the key) within 3 % at 11 moments; and every dense
render, every round, must last the file's length with sound in every second (peer_notes.py). A
program that fails is left out of the table, with the reason printed (ToneShaper failing stops
the run). The checks themselves are tried first on signals made for the purpose (peer_notes.self_test:
the curve passes; a semitone sharp, an octave low, half speed, no curve, silence, a short or
partly silent file fail), and the run stops if they do not discriminate.

Times are user + system CPU seconds of the whole process (start-up, MIDI reading, WAV writing
included), measured with wait4(). Each round runs every program once, in turn; the report gives the
median of the rounds and their range. ns per voice-sample = CPU time / (64 voices x 48,000 x the
file's 30 s). ratio = the program's CPU time / ToneShaper saw's (one thread): > 1 means ToneShaper
is faster; the sine rows also give the ratio to ToneShaper sine's. For the C kernels the report
also gives the render loop's own CPU time (ref-kernel prints it), without start-up and tables.

With --probe (toneshaper-bench), each round also measures the core-to-core round trip just before
the all-cores render and the report lists the rounds one by one: on a VM the two vCPUs may sit on
cores that share a cache or not, and the two-thread speed-up follows.

Usage: compare-peers.py TONESHAPER [--rounds N] [--seconds S] [--baseline OTHER_TONESHAPER] [--probe BENCH]
                        [--toneshaper-only] [--skip PEER,...]
(needs csound, scsynth, fluidsynth, a .sf2, clang and gcc unless --toneshaper-only or --skip csound,
scsynth,fluidsynth,clang,gcc; --baseline adds another build's saw and sine renders to every round)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import peer_notes  # noqa: E402
import scsynth_score  # noqa: E402

CSD = """<CsoundSynthesizer>
<CsOptions>
-d -m0 -W -o {out} -F {midi}
</CsOptions>
<CsInstruments>
sr = 48000
ksmps = {ksmps}
nchnls = 2
0dbfs = 1
massign 0, 1
; The article's curve as ToneShaper's article-curve preset draws it, one second per pass.
giCurve ftgen 0, 0, 8193, -27, 0, 54, 1892, 460, 6930, 54, 8192, 360
giSine ftgen 0, 0, 8192, 10, 1
instr 1
  inote notnum
  iamp veloc 0, 0.05
  iratio = cpsmidinn(inote) / cpsmidinn(69)
  kbend pchbend 0, 2
  kphase phasor 1
  kcurve tablei kphase, giCurve, 1
  kenv madsr 0.005, 0, 1, 0.08
  asig {osc} iamp * kenv, kcurve * iratio * semitone(kbend){table}
  outs asig, asig
endin
</CsInstruments>
<CsScore>
f 0 {length}
</CsScore>
</CsoundSynthesizer>
"""


def soundfont():
    for package in ("timgm6mb-soundfont", "fluid-soundfont-gm"):
        files = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True).stdout.split()
        for f in files:
            if f.lower().endswith(".sf2"):
                return f
    sys.exit("compare-peers: no .sf2 soundfont installed (timgm6mb-soundfont or fluid-soundfont-gm)")


def cpu_seconds(argv):
    """Runs argv; returns (user + system CPU seconds, wall seconds, stdout)."""
    import time
    start = time.monotonic()
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as out:
        p = subprocess.Popen(argv, stdout=out, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        out.seek(0)
        text = out.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("compare-peers: failed: " + " ".join(argv))
    return usage.ru_utime + usage.ru_stime, wall, text


KERNEL_BUILDS = [  # (name, compiler, flags)
    ("C kernel, clang -O3", "clang", ["-O3", "-march=native"]),
    ("C kernel, clang -O3 -ffast-math", "clang", ["-O3", "-march=native", "-ffast-math"]),
    ("C kernel, gcc -O3", "gcc", ["-O3", "-march=native"]),
    ("C kernel, gcc -O3 -ffast-math", "gcc", ["-O3", "-march=native", "-ffast-math"]),
    ("C kernel, gcc -O3 no vectorising", "gcc", ["-O3", "-march=native", "-fno-tree-vectorize"]),
]


def find_clang():
    return shutil.which("clang") or (os.path.exists("/opt/swift/usr/bin/clang") and "/opt/swift/usr/bin/clang") or None


def programs_for(args, work, midi, tag, length, sine_path, compilers, skip):
    """(name, argv, output WAV, pitch kind, setup) for every program on `midi`; tag keeps outputs apart.
    setup (or None) is run once before (scsynth's score)."""
    out = lambda name: os.path.join(work, f"{tag}-{name}.wav")
    cores = os.cpu_count() or 1
    ts = [args.toneshaper, "render", midi, "--voices", "128", "--rate", "48000"]
    programs = [
        ("toneshaper saw", ts + ["-o", out("ts"), "--preset", "article-curve", "--threads", "1"], out("ts"), "saw"),
        (f"toneshaper saw, {cores} threads", ts + ["-o", out("tsn"), "--preset", "article-curve", "--threads", str(cores)],
         out("tsn"), "saw"),
        ("toneshaper sine", ts + ["-o", out("tss"), "--preset", sine_path, "--threads", "1"], out("tss"), "sine"),
    ]
    if args.baseline:
        old = [args.baseline] + ts[1:]
        programs += [
            ("baseline saw", old + ["-o", out("bs"), "--preset", "article-curve", "--threads", "1"], out("bs"), "saw"),
            ("baseline sine", old + ["-o", out("bss"), "--preset", sine_path, "--threads", "1"], out("bss"), "sine"),
        ]
    if "csound" not in skip:
        for osc, kind in (("vco2", "saw"), ("poscil", "sine")):
            for ksmps in (64, 1):
                path = os.path.join(work, f"{tag}-{osc}-k{ksmps}.csd")
                with open(path, "w") as f:
                    f.write(CSD.format(out=out(f"cs-{osc}{ksmps}"), midi=midi, ksmps=ksmps, length=length + 2,
                                       osc=osc, table=", giSine" if osc == "poscil" else ""))
                programs.append((f"csound {osc} ksmps={ksmps}", ["csound", path], out(f"cs-{osc}{ksmps}"), kind))
    if "scsynth" not in skip:
        for kind, label in (("saw", "scsynth Saw"), ("saw-kr", "scsynth Saw, curve per block"), ("sine", "scsynth SinOsc")):
            score = os.path.join(work, f"{tag}-{kind}.osc")
            with open(score, "wb") as f:
                f.write(scsynth_score.score(midi, kind))
            programs.append((label, ["scsynth", "-N", score, "_", out(f"sc-{kind}"), "48000", "WAV", "float",
                                     "-o", "2", "-z", "64", "-D", "0"], out(f"sc-{kind}"), "sine" if kind == "sine" else "saw"))
    events = os.path.join(work, f"{tag}.events")
    peer_notes.write_events(midi, events)
    for name, binary in compilers:
        programs.append((name, [binary, events, out(name.replace(" ", "_")), f"{length + 2}"],
                         out(name.replace(" ", "_")), "saw"))
    if "fluidsynth" not in skip:
        programs.append(("fluidsynth", ["fluidsynth", "-ni", "-R", "0", "-C", "0", "-r", "48000", "-F",
                                        out("fs"), soundfont(), midi], out("fs"), "fixed"))
    return programs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("toneshaper")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--baseline", help="another toneshaper build to time in the same rounds")
    parser.add_argument("--probe", help="toneshaper-bench, to measure the core-to-core round trip each round")
    parser.add_argument("--toneshaper-only", action="store_true",
                        help="time ToneShaper's renders (and --baseline's) only: an A/B of two builds without the peers")
    parser.add_argument("--skip", default="", help="peers to leave out: csound,scsynth,fluidsynth,clang,gcc")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if args.toneshaper_only:
        skip |= {"csound", "scsynth", "fluidsynth", "clang", "gcc"}
    for tool in ("csound", "scsynth", "fluidsynth", "gcc"):
        if tool not in skip and shutil.which(tool) is None:
            sys.exit(f"compare-peers: {tool} is not installed (or pass --skip {tool})")
    if "clang" not in skip and find_clang() is None:
        sys.exit("compare-peers: clang is not installed (or pass --skip clang)")
    work = tempfile.mkdtemp(prefix="toneshaper-peers-")
    try:
        problems = peer_notes.self_test(work)  # the checks below must be able to fail
        if problems:
            sys.exit("compare-peers: the output checks do not discriminate:\n" + "\n".join(problems))
        midi = os.path.join(work, "dense.mid")
        subprocess.run([sys.executable, os.path.join(HERE, "make-dense.py"), midi, str(args.seconds)], check=True)
        _, _, length = peer_notes.read_midi(midi)
        probe_midi = os.path.join(work, "probe.mid")
        peer_notes.write_probe_midi(probe_midi)
        with open(os.path.join(ROOT, "Presets", "12-article-curve.json")) as f:
            sine = json.load(f)
        sine.update(name="article-curve-sine", wave="sine", program=100)
        sine_path = os.path.join(work, "article-curve-sine.json")
        with open(sine_path, "w") as f:
            json.dump(sine, f)
        compilers = []
        for name, cc, flags in KERNEL_BUILDS:
            if cc in skip:
                continue
            binary = os.path.join(work, name.replace(" ", "_").replace(",", ""))
            cc_path = find_clang() if cc == "clang" else shutil.which(cc)
            subprocess.run([cc_path, "-std=c11", *flags, "-o", binary, os.path.join(HERE, "ref-kernel.c"), "-lm"], check=True)
            version = subprocess.run([cc_path, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
            print(f"{name}: {cc_path} {' '.join(flags)} ({version})")
            compilers.append((name, binary))
        cores = os.cpu_count() or 1
        # The pitch probe: every program plays one note; one that does not follow the curve is no peer.
        dropped = {}
        for name, argv, output, kind in programs_for(args, work, probe_midi, "probe", 2, sine_path, compilers, skip):
            cpu_seconds(argv)
            ok, why = peer_notes.check_pitch(output, kind)
            print(f"pitch probe: {name:34} {'ok' if ok else 'FAILED'}: {why}")
            if not ok:
                dropped[name] = why
        programs = [p for p in programs_for(args, work, midi, "dense", length, sine_path, compilers, skip)
                    if p[0] not in dropped]
        cpu = {name: [] for name, *_ in programs}
        wall = {name: [] for name, *_ in programs}
        loop = {name: [] for name, *_ in programs}
        trips = []
        all_cores = f"toneshaper saw, {cores} threads"
        for _ in range(args.rounds):
            for name, argv, output, _ in programs:
                if name in dropped:
                    continue
                if name == all_cores and args.probe:
                    out = subprocess.run([args.probe, "--cross-core"], capture_output=True, text=True).stdout.split()
                    trips.append(float(out[-2]) if len(out) >= 2 and out[-2].isdigit() else float("nan"))
                c, w, text = cpu_seconds(argv)
                ok, why = peer_notes.check_output(output, length)
                if not ok:
                    dropped[name] = why
                    continue
                cpu[name].append(c)
                wall[name].append(w)
                for line in text.splitlines():
                    if line.startswith("loop_cpu_s "):
                        loop[name].append(float(line.split()[1]))
        for name, why in dropped.items():
            print(f"left out: {name}: {why}")
            if name.startswith("toneshaper"):
                sys.exit(f"compare-peers: ToneShaper's own render failed its check: {why}")
        programs = [p for p in programs if p[0] not in dropped]
        voice_samples = 64 * 48_000 * args.seconds
        base = statistics.median(cpu["toneshaper saw"])
        base_sine = statistics.median(cpu["toneshaper sine"])
        print(f"\nSame notes ({args.seconds} s, 64 voices, 48 kHz WAV), CPU time of the whole render, "
              f"median of {args.rounds} interleaved rounds [range]")
        print(f"{'program':36} {'audio s':>7} {'CPU s':>22} {'ns/voice-sample':>24} {'ratio':>6} {'÷sine':>6} {'wall s':>7}")
        bench = []
        for name, _, output, kind in programs:
            c = cpu[name]
            med = statistics.median(c)
            ns = [x * 1e9 / voice_samples for x in c]
            x, rate = peer_notes.read_wav(output)
            audio = len(x) / rate
            sine_ratio = f"{med / base_sine:6.2f}" if kind == "sine" else f"{'':6}"
            print(f"{name:36} {audio:7.1f} {med:8.3f} [{min(c):.3f}-{max(c):.3f}] "
                  f"{statistics.median(ns):10.2f} [{min(ns):.2f}-{max(ns):.2f}] {med / base:6.2f} {sine_ratio} "
                  f"{statistics.median(wall[name]):7.3f}")
            key = name.replace(" ", "_").replace(",", "").replace("=", "")
            extra = ""
            if loop[name]:
                lns = [v * 1e9 / voice_samples for v in loop[name]]
                print(f"{'':36} {'':7} render loop alone: {statistics.median(loop[name]):.3f} s CPU, "
                      f"{statistics.median(lns):.2f} [{min(lns):.2f}-{max(lns):.2f}] ns per voice-sample")
                extra = f" loop_ns_per_voice_sample={statistics.median(lns):.3f}"
            bench.append(f"BENCH figure=peer program={key} cpu_s={med:.4f} cpu_min={min(c):.4f} cpu_max={max(c):.4f} "
                         f"wall_s={statistics.median(wall[name]):.4f} ns_per_voice_sample={statistics.median(ns):.3f} "
                         f"audio_s={audio:.2f} ratio={med / base:.3f}" + extra)
        print("ratio = CPU time / ToneShaper saw's (one thread); ÷sine = CPU time / ToneShaper sine's; > 1: ToneShaper "
              "is faster. wall = elapsed time (with threads: less than the CPU time). Output lengths differ a little "
              "(FluidSynth renders until its voices have died away).")
        if trips:
            one, many = wall["toneshaper saw"], wall[all_cores]
            ratios = [a / b for a, b in zip(one, many)]
            print(f"\nRound by round: one thread's wall time, {cores} threads', the ratio, and the core-to-core round trip "
                  "measured just before")
            for k, (a, b, r, t) in enumerate(zip(one, many, ratios, trips)):
                print(f"  round {k + 1:2}: {a:.3f} s  {b:.3f} s  {r:.2f}x  {t:.0f} ns")
            near = min(trips) * 2
            for label, pick in (("cores sharing a cache (round trip < 2x the fastest)", lambda t: t < near),
                                ("cores further apart", lambda t: t >= near)):
                chosen = [r for r, t in zip(ratios, trips) if pick(t)]
                if chosen:
                    print(f"  {label}: {len(chosen)} rounds, ratio median {statistics.median(chosen):.2f}x "
                          f"[{min(chosen):.2f}-{max(chosen):.2f}]")
                    key = "near" if label.startswith("cores sharing") else "far"
                    bench.append(f"BENCH figure=threads cores={key} rounds={len(chosen)} ratio={statistics.median(chosen):.3f} "
                                 f"ratio_min={min(chosen):.3f} ratio_max={max(chosen):.3f}")
            bench.append(f"BENCH figure=threads cores=all rounds={len(ratios)} ratio={statistics.median(ratios):.3f} "
                         f"ratio_min={min(ratios):.3f} ratio_max={max(ratios):.3f} "
                         f"round_trip_ns_min={min(trips):.0f} round_trip_ns_max={max(trips):.0f}")
        print("\n".join(bench))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
