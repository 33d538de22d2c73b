#!/usr/bin/python3
"""Compares two audio files sample for sample (read back with libsndfile, as float32).
Prints 'same' or the first frame where they differ; exit 0 when that is what --expect asks:
  compare.py A B                   A equals B (same length, every sample)
  compare.py A B --first-diff F    A equals B before frame F and differs at F
Also fails when A is silent: equal silence proves nothing."""
import sys

import numpy as np
import soundfile

a, _ = soundfile.read(sys.argv[1], dtype="float32", always_2d=True)
b, _ = soundfile.read(sys.argv[2], dtype="float32", always_2d=True)
want = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--first-diff" else None
if not np.abs(a).max() > 0.01:
    sys.exit(f"{sys.argv[1]} is silent (peak {np.abs(a).max()})")
if a.shape != b.shape:
    sys.exit(f"{sys.argv[1]}: {a.shape[0]} frames, {sys.argv[2]}: {b.shape[0]}: lengths differ")
diff = np.nonzero((a != b).any(axis=1))[0]
if len(diff) == 0:
    print("same, sample for sample")
    sys.exit(0 if want is None else 1)
print(f"first difference at frame {diff[0]} ({a[diff[0]]} vs {b[diff[0]]})")
sys.exit(0 if want == diff[0] else 1)
