#!/usr/bin/env python3
"""How exact are the Fourier series' seeds? sinCos2Pi (Sources/ToneShaperCore/DSP/Math.swift) against
mpmath, in units in the last place of the correctly rounded value, over a million phases or more.

Builds Math.swift as it is in the working tree (or at git revisions given with --rev, e.g. `--rev main
--rev HEAD` to compare two) with a small driver (swiftc -O; --cpu adds -target-cpu, as release builds
do), feeds it the phases and reads back its sines and cosines. The phases: every edge that a
reduction could get wrong (0, the quarters and eighths and the few Doubles either side of each,
1 − ulp, tiny phases), an even grid and uniform random Doubles in [0, 1).
Prints, per revision, the largest and the RMS error of the sine and the cosine and where the largest
is; a true zero (sin 0, sin π, cos ±π/2) must come out exactly 0. Needs mpmath and numpy.

Usage: python3 docs/check-sincos.py [--count N] [--rev REV ...] [--cpu skylake-avx512] [--lock FILE]
"""
import argparse, os, struct, subprocess, sys, tempfile
import numpy as np
import mpmath as mp

DRIVER = r'''
import Glibc
// stdin: Doubles, a multiple of eight; stdout: for each, its sine then its cosine.
var input = [Double](repeating: 0, count: 8)
var output = [Double](repeating: 0, count: 16)
while fread(&input, 8, 8, stdin) == 8 {
    var y = SIMD8<Double>()
    for i in 0..<8 { y[i] = input[i] }
    let (s, c) = sinCos2Pi(y)
    for i in 0..<8 { output[2 * i] = s[i]; output[2 * i + 1] = c[i] }
    fwrite(&output, 8, 16, stdout)
}
'''

def phases(count, seed=23):
    ys = []
    for e in [0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1]:
        up = dn = float(e)
        if e < 1: ys.append(up)
        for _ in range(16):
            up = np.nextafter(up, 2); dn = np.nextafter(dn, -1)
            if up < 1: ys.append(float(up))
            if dn >= 0: ys.append(float(dn))
    ys += [2.0 ** -k for k in range(1, 1075)]  # down to the smallest subnormal
    rng = np.random.default_rng(seed)
    half = count // 2
    ys += list(np.arange(half) / half)
    ys += list(rng.random(count - half))
    while len(ys) % 8: ys.append(0.3)
    return np.array(ys, dtype=np.float64)

def build(rev, cpu, workdir, lock):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = "Sources/ToneShaperCore/DSP/Math.swift"
    if rev:
        text = subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], check=True, capture_output=True, text=True).stdout
    else:
        text = open(os.path.join(repo, path)).read()
    name = (rev or "worktree").replace("/", "_")
    d = os.path.join(workdir, name); os.makedirs(d)
    open(os.path.join(d, "Math.swift"), "w").write(text)
    open(os.path.join(d, "main.swift"), "w").write(DRIVER)
    exe = os.path.join(d, "check")
    cmd = ["swiftc", "-O", "-wmo"] + (["-target-cpu", cpu] if cpu else []) + \
          [os.path.join(d, "Math.swift"), os.path.join(d, "main.swift"), "-o", exe]
    subprocess.run((["flock", lock] if lock else []) + cmd, check=True)
    return exe

def ulp_errors(values, refs):
    """(value − ref) / ulp(ref rounded to Double); a zero ref wants an exact zero (else inf)."""
    out = np.empty(len(values))
    for i, (v, r) in enumerate(zip(values, refs)):
        if r == 0:
            out[i] = 0.0 if v == 0 else np.inf
        else:
            out[i] = float((mp.mpf(v) - r) / np.spacing(abs(float(r))))
    return out

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--rev", action="append", default=[])
    ap.add_argument("--cpu", default="")
    ap.add_argument("--lock", default="", help="compile under flock on this file (a machine shared by builds)")
    a = ap.parse_args()
    mp.mp.dps = 30
    ys = phases(a.count)
    print(f"{len(ys)} phases; reference: mpmath sinpi/cospi(2y) at {mp.mp.dps} digits", flush=True)
    sin_ref = [mp.sinpi(2 * mp.mpf(float(y))) for y in ys]
    cos_ref = [mp.cospi(2 * mp.mpf(float(y))) for y in ys]
    previous = None
    with tempfile.TemporaryDirectory() as work:
        for rev in a.rev or [None]:
            exe = build(rev, a.cpu, work, a.lock)
            res = subprocess.run([exe], input=ys.tobytes(), capture_output=True, check=True).stdout
            sc = np.frombuffer(res, dtype=np.float64).reshape(-1, 2)
            assert len(sc) == len(ys)
            for k, (name, ref) in enumerate([("sin", sin_ref), ("cos", cos_ref)]):
                e = ulp_errors(sc[:, k], ref)
                worst = int(np.argmax(np.abs(e)))
                print(f"{rev or 'worktree'} {name}: max {abs(e[worst]):.3f} ulp at y = {float(ys[worst])!r}, "
                      f"RMS {np.sqrt(np.mean(e * e)):.4f} ulp, {int(np.sum(np.abs(e) > 1))} above 1 ulp", flush=True)
            if previous is not None:
                differ = int(np.sum(np.any(sc.view(np.uint64) != previous.view(np.uint64), axis=1)))
                print(f"{rev}: {differ} of {len(ys)} phases give other bits than the revision before", flush=True)
            previous = sc.copy()

if __name__ == "__main__":
    main()
