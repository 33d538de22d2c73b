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
  fluidsynth          `fluidsynth -F` with a General MIDI soundfont (sample playback; reverb and
                      chorus off)

Times are user + system CPU seconds of the whole process (start-up, MIDI reading, WAV writing
included), measured with wait4(). Each round runs every program once, in turn; the report gives the
median of the rounds and their range. ns per voice-sample = CPU time / (64 voices x 48,000 x the
file's 30 s). ratio = the program's CPU time / ToneShaper saw's (one thread): > 1 means ToneShaper
is faster.

With --probe (toneshaper-bench), each round also measures the core-to-core round trip just before
the all-cores render and the report lists the rounds one by one: on a VM the two vCPUs may sit on
cores that share a cache or not, and the two-thread speed-up follows.

Usage: compare-peers.py TONESHAPER [--rounds N] [--seconds S] [--baseline OTHER_TONESHAPER] [--probe BENCH]
                        [--toneshaper-only]
(needs csound, fluidsynth, a .sf2 unless --toneshaper-only; --baseline adds another build's saw and sine
renders to every round)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

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
instr 1
  inote notnum
  iamp veloc 0, 0.05
  iratio = cpsmidinn(inote) / cpsmidinn(69)
  kbend pchbend 0, 2
  kphase phasor 1
  kcurve tablei kphase, giCurve, 1
  kenv madsr 0.005, 0, 1, 0.08
  asig vco2 iamp * kenv, kcurve * iratio * semitone(kbend)
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
    """Runs argv; returns (user + system CPU seconds, wall seconds)."""
    import time
    start = time.monotonic()
    with open(os.devnull, "wb") as null:
        p = subprocess.Popen(argv, stdout=null, stderr=null)
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("compare-peers: failed: " + " ".join(argv))
    return usage.ru_utime + usage.ru_stime, wall


def audio_seconds(path):
    with wave.open(path) as w:
        return w.getnframes() / w.getframerate()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("toneshaper")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--baseline", help="another toneshaper build to time in the same rounds")
    parser.add_argument("--probe", help="toneshaper-bench, to measure the core-to-core round trip each round")
    parser.add_argument("--toneshaper-only", action="store_true",
                        help="time ToneShaper's renders (and --baseline's) only: an A/B of two builds without the peers")
    args = parser.parse_args()
    for tool in () if args.toneshaper_only else ("csound", "fluidsynth"):
        if shutil.which(tool) is None:
            sys.exit(f"compare-peers: {tool} is not installed")
    work = tempfile.mkdtemp(prefix="toneshaper-peers-")
    try:
        midi = os.path.join(work, "dense.mid")
        subprocess.run([sys.executable, os.path.join(HERE, "make-dense.py"), midi, str(args.seconds)], check=True)
        with open(os.path.join(ROOT, "Presets", "12-article-curve.json")) as f:
            sine = json.load(f)
        sine.update(name="article-curve-sine", wave="sine", program=100)
        sine_path = os.path.join(work, "article-curve-sine.json")
        with open(sine_path, "w") as f:
            json.dump(sine, f)
        length = args.seconds + 2
        csds = {}
        for ksmps in (64, 1):
            path = os.path.join(work, f"vco2-k{ksmps}.csd")
            with open(path, "w") as f:
                f.write(CSD.format(out=os.path.join(work, f"cs{ksmps}.wav"), midi=midi, ksmps=ksmps, length=length))
            csds[ksmps] = path
        cores = os.cpu_count() or 1
        ts = [args.toneshaper, "render", midi, "--voices", "128", "--rate", "48000"]
        programs = [
            ("toneshaper saw", ts + ["-o", os.path.join(work, "ts.wav"), "--preset", "article-curve", "--threads", "1"], "ts.wav"),
            (f"toneshaper saw, {cores} threads", ts + ["-o", os.path.join(work, "tsn.wav"), "--preset", "article-curve",
                                                       "--threads", str(cores)], "tsn.wav"),
            ("toneshaper sine", ts + ["-o", os.path.join(work, "tss.wav"), "--preset", sine_path, "--threads", "1"], "tss.wav"),
            ("csound vco2 ksmps=64", ["csound", csds[64]], "cs64.wav"),
            ("csound vco2 ksmps=1", ["csound", csds[1]], "cs1.wav"),
        ]
        if not args.toneshaper_only:
            programs.append(("fluidsynth", ["fluidsynth", "-ni", "-R", "0", "-C", "0", "-r", "48000", "-F",
                                            os.path.join(work, "fs.wav"), soundfont(), midi], "fs.wav"))
        else:
            programs = programs[:3]
        if args.baseline:
            old = [args.baseline] + ts[1:]
            programs[3:3] = [
                ("baseline saw", old + ["-o", os.path.join(work, "bs.wav"), "--preset", "article-curve", "--threads", "1"], "bs.wav"),
                ("baseline sine", old + ["-o", os.path.join(work, "bss.wav"), "--preset", sine_path, "--threads", "1"], "bss.wav"),
            ]
        cpu = {name: [] for name, _, _ in programs}
        wall = {name: [] for name, _, _ in programs}
        trips = []
        all_cores = f"toneshaper saw, {cores} threads"
        for _ in range(args.rounds):
            for name, argv, _ in programs:
                if name == all_cores and args.probe:
                    out = subprocess.run([args.probe, "--cross-core"], capture_output=True, text=True).stdout.split()
                    trips.append(float(out[-2]) if len(out) >= 2 and out[-2].isdigit() else float("nan"))
                c, w = cpu_seconds(argv)
                cpu[name].append(c)
                wall[name].append(w)
        voice_samples = 64 * 48_000 * args.seconds
        base = statistics.median(cpu["toneshaper saw"])
        print(f"Same notes ({args.seconds} s, 64 voices, 48 kHz WAV), CPU time of the whole render, "
              f"median of {args.rounds} interleaved rounds [range]")
        print(f"{'program':34} {'audio s':>8} {'CPU s':>22} {'ns/voice-sample':>24} {'ratio':>7} {'wall s':>8}")
        bench = []
        for name, _, output in programs:
            c = cpu[name]
            med = statistics.median(c)
            ns = [x * 1e9 / voice_samples for x in c]
            audio = audio_seconds(os.path.join(work, output))
            print(f"{name:34} {audio:8.1f} {med:8.3f} [{min(c):.3f}-{max(c):.3f}] "
                  f"{statistics.median(ns):10.2f} [{min(ns):.2f}-{max(ns):.2f}] {med / base:7.2f} "
                  f"{statistics.median(wall[name]):8.3f}")
            key = name.replace(" ", "_").replace(",", "").replace("=", "")
            bench.append(f"BENCH figure=peer program={key} cpu_s={med:.4f} cpu_min={min(c):.4f} cpu_max={max(c):.4f} "
                         f"wall_s={statistics.median(wall[name]):.4f} ns_per_voice_sample={statistics.median(ns):.3f} "
                         f"audio_s={audio:.2f} ratio={med / base:.3f}")
        print("ratio = CPU time / ToneShaper saw's (one thread); > 1: ToneShaper is faster. wall = elapsed time (with "
              "threads: less than the CPU time). Output lengths differ a little (FluidSynth renders until its voices "
              "have died away).")
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
