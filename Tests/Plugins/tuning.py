#!/usr/bin/python3
"""Measures, with numpy's FFT, what a tuning note expression at a frame did to two held voices:
the two strongest spectral peaks over the half second before FRAME, and over half a second from
FRAME + 0.1 s (the expression may glide in, as MPE's bend does). The lower voice must sound at
RATIO times its frequency after the frame, with its old frequency gone, and the upper voice must
keep its own; before the frame nothing may have moved (both peaks where they were 0.6 s earlier).
Prints what it measured. Usage: tuning.py OUT.wav FRAME RATIO"""
import sys

import numpy as np
import soundfile

RATE = 48000
audio, rate = soundfile.read(sys.argv[1], dtype="float64", always_2d=True)
frame, ratio = int(sys.argv[2]), float(sys.argv[3])
if rate != RATE:
    sys.exit(f"{sys.argv[1]}: {rate} Hz, not {RATE}")
mono = audio.mean(axis=1)
half = RATE // 2


def spectrum(start):
    """Magnitude over frequency of half a second from start (Hann window, zero-padded ×8)."""
    if start < 0 or start + half > len(mono):
        sys.exit(f"{sys.argv[1]}: no half second of audio at frame {start} ({len(mono)} frames)")
    chunk = mono[start:start + half] * np.hanning(half)
    size = 8 * half
    return np.abs(np.fft.rfft(chunk, size)), RATE / size


def peaks(start):
    """The two strongest peaks, low first, each refined by a parabola through its three bins."""
    mag, step = spectrum(start)
    found = []
    m = mag.copy()
    for _ in range(2):
        i = int(np.argmax(m[1:-1])) + 1
        a, b, c = np.log(mag[i - 1:i + 2] + 1e-30)
        found.append((i + 0.5 * (a - c) / (a - 2 * b + c)) * step)
        m[max(0, i - 40):i + 40] = 0  # 40 bins = 5 Hz: the same peak's skirt
    return sorted(found)


def level(start, freq):
    """The magnitude at freq (the largest within 1 %), relative to the window's strongest peak."""
    mag, step = spectrum(start)
    lo, hi = int(freq * 0.99 / step), int(freq * 1.01 / step) + 1
    return mag[lo:hi].max() / mag.max()


def near(a, b, tolerance=0.01):
    return abs(a / b - 1) < tolerance


earlier = peaks(frame - half - int(0.6 * RATE))
before = peaks(frame - half)
after = peaks(frame + RATE // 10)
drop_db = 20 * np.log10(level(frame + RATE // 10, before[0]) / level(frame - half, before[0]))
print(f"earlier {earlier[0]:.2f} Hz {earlier[1]:.2f} Hz; before {before[0]:.2f} Hz {before[1]:.2f} Hz; "
      f"after {after[0]:.2f} Hz {after[1]:.2f} Hz; the lower voice's old frequency {drop_db:.1f} dB after")
failures = []
if not (near(before[0], earlier[0]) and near(before[1], earlier[1])):
    failures.append("the voices moved before the frame")
moved = [f for f in after if near(f, before[0] * ratio)]
kept = [f for f in after if near(f, before[1])]
if not moved:
    failures.append(f"no voice at {ratio} × {before[0]:.2f} Hz after the frame")
if not kept:
    failures.append(f"the other voice left {before[1]:.2f} Hz")
if drop_db > -30:
    failures.append(f"the lower voice's old frequency is still there ({drop_db:.1f} dB, want below -30 dB)")
if failures:
    sys.exit("; ".join(failures))
