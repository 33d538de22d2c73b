#!/usr/bin/env python3
"""Fits the polynomials of sinCos2Pi's seeds (Sources/ToneShaperCore/DSP/Math.swift): run with mpmath.
Prints each polynomial's weighted maximum error and its coefficients, highest power first."""
# Near-minimax polynomials for the seeds of sinCos2Pi, fitted here (Remez exchange in mpmath):
# sin r = r + r^3 * P(r^2), cos r = 1 - r^2/2 + r^4 * Q(r^2), |r| <= pi/4, P and Q of degree 5.
import mpmath as mp
mp.mp.dps = 50
Z = (mp.pi / 4) ** 2

def g_sin(z):
    if z == 0: return mp.mpf(-1) / 6
    r = mp.sqrt(z); return (mp.sin(r) - r) / (r * z)
def g_cos(z):
    if z == 0: return mp.mpf(1) / 24
    r = mp.sqrt(z); return (mp.cos(r) - 1 + z / 2) / (z * z)
def w_sin(z):  # error of r^3 P relative to sin r: weight r^3/sin r ~ z
    if z == 0: return mp.mpf(0)
    r = mp.sqrt(z); return r * z / mp.sin(r)
def w_cos(z):
    return z * z / mp.cos(mp.sqrt(z))

def remez(f, w, n, iters=30):
    # minimise max |w(z) (f(z) - p(z))| over [0, Z], p of degree n
    m = n + 2
    xs = [Z / 2 * (1 - mp.cos(mp.pi * i / (m - 1))) for i in range(m)]
    xs[0] = Z * mp.mpf('1e-6')
    for _ in range(iters):
        A = mp.matrix(m, m); b = mp.matrix(m, 1)
        for i, x in enumerate(xs):
            for j in range(n + 1): A[i, j] = x ** j
            A[i, n + 1] = (-1) ** i / w(x)
            b[i] = f(x)
        sol = mp.lu_solve(A, b)
        c = [sol[j] for j in range(n + 1)]
        err = lambda x: w(x) * (f(x) - sum(c[j] * x ** j for j in range(n + 1)))
        grid = [Z * i / 4000 for i in range(1, 4001)]
        es = [err(x) for x in grid]
        # new reference: local extrema of alternating sign
        ext = []
        for i in range(len(grid)):
            left = es[i - 1] if i > 0 else None
            right = es[i + 1] if i + 1 < len(es) else None
            if (left is None or abs(es[i]) >= abs(left)) and (right is None or abs(es[i]) >= abs(right)):
                ext.append((grid[i], es[i]))
        # keep alternating extrema
        alt = []
        for x, e in ext:
            if alt and mp.sign(e) == mp.sign(alt[-1][1]):
                if abs(e) > abs(alt[-1][1]): alt[-1] = (x, e)
            else:
                alt.append((x, e))
        if len(alt) >= m:
            while len(alt) > m:
                alt.pop(0 if abs(alt[0][1]) < abs(alt[-1][1]) else -1)
            xs = [x for x, _ in alt]
    return c, max(abs(e) for e in es)

for name, f, w in [("sin", g_sin, w_sin), ("cos", g_cos, w_cos)]:
    c, e = remez(f, w, 5)
    print(name, "max weighted error", mp.nstr(e, 5))
    for j in reversed(range(6)):
        print("  ", repr(float(c[j])))
