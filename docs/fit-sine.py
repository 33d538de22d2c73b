#!/usr/bin/env python3
"""Fits the render kernel's sine (fastSin2Pi in Sources/ToneShaperCore/DSP/Math.swift): run with numpy.

sin 2πs = s·(1 − 4s²)·R(s²) for s in [−½, ½]; R is the near-minimax polynomial of degree 4 on
x = s² in [0, ¼] for the absolute error of the sine (Remez exchange, in Double, which is ample for
Float coefficients). Prints the fitted error, the coefficients as Float (lowest power first) and
times 4 (Math.swift's: (s·(¼ − x))·4R, the same roundings as (s·(1 − 4x))·R), and the worst and RMS
error of the kernel evaluated in Float exactly as Math.swift does (Horner) against libm's sine,
over every s = k·2⁻²⁵ in [−½, ½]."""
import numpy as np

X = 0.25
DEGREE = 4

def R(x):
    s = np.sqrt(x)
    out = np.full_like(x, 2 * np.pi)
    big = x > 1e-12
    out[big] = np.sin(2 * np.pi * s[big]) / (s[big] * (1 - 4 * x[big]))
    return out

def W(x):
    return np.sqrt(x) * (1 - 4 * x)

def remez(n, iters=40):
    m = n + 2
    xs = X / 2 * (1 - np.cos(np.pi * np.arange(m) / (m - 1)))
    xs[0], xs[-1] = X * 1e-6, X * (1 - 1e-6)
    grid = np.linspace(X * 1e-7, X * (1 - 1e-7), 200001)
    for _ in range(iters):
        A = np.zeros((m, m))
        for j in range(n + 1):
            A[:, j] = xs ** j
        A[:, n + 1] = (-1.0) ** np.arange(m) / W(xs)
        c = np.linalg.solve(A, R(xs))[:n + 1]
        es = W(grid) * (R(grid) - np.polyval(c[::-1], grid))
        # the new reference: alternating local extrema of the error
        peaks = [i for i in range(len(es))
                 if (i == 0 or abs(es[i]) >= abs(es[i - 1])) and (i == len(es) - 1 or abs(es[i]) >= abs(es[i + 1]))]
        alt = []
        for i in peaks:
            if alt and np.sign(es[i]) == np.sign(es[alt[-1]]):
                if abs(es[i]) > abs(es[alt[-1]]):
                    alt[-1] = i
            else:
                alt.append(i)
        if len(alt) >= m:
            while len(alt) > m:
                alt.pop(0 if abs(es[alt[0]]) < abs(es[alt[-1]]) else -1)
            xs = grid[alt]
    return c, np.max(np.abs(es))

c, e = remez(DEGREE)
cf = [np.float32(v) for v in c]
print("fitted error %.3e" % e)
print("coefficients (x^0 first):", ", ".join(str(v) for v in cf))
cf = [v * np.float32(4) for v in cf]
print("times 4, as in Math.swift:", ", ".join(str(v) for v in cf))

f32 = np.float32
s = (np.arange(-2**24, 2**24 + 1, dtype=np.float64) / 2**25).astype(f32)
x = s * s
r = cf[DEGREE]
for k in range(DEGREE - 1, -1, -1):
    r = r * x + cf[k]
out = (s * (f32(0.25) - x)) * r
err = np.abs(out.astype(np.float64) - np.sin(2 * np.pi * s.astype(np.float64)))
print("Float kernel against libm: worst %.3e (at s = %r), RMS %.3e" % (err.max(), float(s[err.argmax()]), np.sqrt((err ** 2).mean())))
