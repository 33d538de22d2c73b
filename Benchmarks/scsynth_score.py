#!/usr/bin/env python3
"""The dense file as an scsynth non-real-time score, with its SynthDefs written here (no sclang).

sclang, SuperCollider's language, is what normally compiles SynthDefs, but it wants a display and a
large install; the SynthDef binary format is small and documented ("SynthDef File Format" in
SuperCollider's help, version 2), so this writes it directly. Everything big-endian:

  file:     'SCgf', int32 version (2), int16 number of defs, the defs
  def:      pstring name; int32 K, float32 x K constants; int32 P, float32 x P initial control values;
            int32 N, N x (pstring name, int32 index) control names; int32 U, U x ugen; int16 variants (0)
  ugen:     pstring class; int8 rate (0 scalar, 1 control, 2 audio); int32 inputs; int32 outputs;
            int16 special index; inputs x (int32 ugen index or -1 for a constant, int32 output or
            constant index); outputs x int8 rate
  (pstring = one length byte, then the characters)

Each def plays one note the way compare-peers.py's Csound instrument does (its CSD is the model):

  ratio, amp, bend, gate  controls: 2^((key - 69)/12), velocity/127 x 0.05, 2^(bend/12), the gate
  Phasor.ar -> BufRd.ar   the article curve from buffer 0 (8192 points over one second, Hz linear
                          between the points), read with linear interpolation EVERY SAMPLE from the
                          note's start, looping each second: the frequency follows the curve per
                          sample, as ToneShaper's and Csound's at ksmps = 1 do
                          ("...-kr" defs: Phasor.kr -> BufRd.kr, the frequency once per 64-sample block)
  x ratio x bend          the key and the channel's bend (/n_set to the channel's notes at each bend)
  Saw.ar or SinOsc.ar     SuperCollider's band-limited sawtooth (or its table sine) at that frequency
  Linen.kr                attack 5 ms, release 80 ms on gate 0, frees the node when done
  Out.ar(0, [sig, sig])   stereo, no pan, no echo (Csound's instrument has neither)

The score: /d_recv of the defs, /b_alloc + /b_setn of the curve at time 0, then per note /s_new at its
start and /n_set gate 0 at its end, the bends as /n_set, and a last bundle 2 s after the file's end.

Usage: scsynth_score.py MIDI SCORE.osc [saw|sine|saw-kr]
then:  scsynth -N SCORE.osc _ OUT.wav 48000 WAV float -o 2 -z 64 -D 0
(-D 0: load no SynthDefs from disk; the score carries its own. Checked with scsynth 3.13 (Debian 12):
it loads these defs and plays the curve; compare-peers.py's pitch probe checks it on every run.)
"""
import struct
import sys

import numpy as np

import peer_notes

CURVE_POINTS = 8192


def pstring(s):
    b = s.encode()
    return bytes([len(b)]) + b


def synthdef(name, osc, rate_of_curve=2):
    """One note's SynthDef (see the module's comment); osc is 'Saw' or 'SinOsc'."""
    consts = [0.0, CURVE_POINTS / 48000.0, float(CURVE_POINTS), 1.0, 2.0, 0.005, 0.08]
    c = {v: i for i, v in enumerate(consts)}
    K = lambda v: (-1, c[v])
    cr = rate_of_curve
    step = CURVE_POINTS / 48000.0 * (64 if cr == 1 else 1)
    if step not in c:
        c[step] = len(consts); consts.append(step)
    # (class, rate, inputs, outputs, special)
    ugens = [
        ("Control", 1, [], 4, 0),                                           # 0: ratio amp bend gate
        ("Phasor", cr, [K(0.0), K(step), K(0.0), K(float(CURVE_POINTS)), K(0.0)], 1, 0),   # 1
        ("BufRd", cr, [K(0.0), (1, 0), K(1.0), K(2.0)], 1, 0),              # 2: buffer 0, loop, linear
        ("BinaryOpUGen", 1, [(0, 0), (0, 2)], 1, 2),                        # 3: ratio * bend
        ("BinaryOpUGen", cr, [(2, 0), (3, 0)], 1, 2),                       # 4: curve * 3 = frequency
        (osc, 2, [(4, 0)] + ([K(0.0)] if osc == "SinOsc" else []), 1, 0),   # 5
        ("Linen", 1, [(0, 3), K(0.005), K(1.0), K(0.08), K(2.0)], 1, 0),    # 6: doneAction 2
        ("BinaryOpUGen", 1, [(0, 1), (6, 0)], 1, 2),                        # 7: amp * envelope
        ("BinaryOpUGen", 2, [(5, 0), (7, 0)], 1, 2),                        # 8
        ("Out", 2, [K(0.0), (8, 0), (8, 0)], 0, 0),                         # 9
    ]
    out = pstring(name)
    out += struct.pack(">i", len(consts)) + struct.pack(f">{len(consts)}f", *consts)
    params = [("ratio", 1.0), ("amp", 0.05), ("bend", 1.0), ("gate", 1.0)]
    out += struct.pack(">i", len(params)) + struct.pack(f">{len(params)}f", *(v for _, v in params))
    out += struct.pack(">i", len(params)) + b"".join(pstring(n) + struct.pack(">i", i) for i, (n, _) in enumerate(params))
    out += struct.pack(">i", len(ugens))
    for cls, rate, inputs, outputs, special in ugens:
        out += pstring(cls) + struct.pack(">biih", rate, len(inputs), outputs, special)
        out += b"".join(struct.pack(">ii", a, b) for a, b in inputs)
        out += bytes([rate]) * outputs
    return out + struct.pack(">h", 0)


def synthdef_file(defs):
    return b"SCgf" + struct.pack(">ih", 2, len(defs)) + b"".join(defs)


def osc_string(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 4)


def osc_message(address, *args):
    tags, body = ",", b""
    for a in args:
        if isinstance(a, bytes):
            tags += "b"; body += struct.pack(">i", len(a)) + a + b"\0" * (-len(a) % 4)
        elif isinstance(a, str):
            tags += "s"; body += osc_string(a)
        elif isinstance(a, int):
            tags += "i"; body += struct.pack(">i", a)
        else:
            tags += "f"; body += struct.pack(">f", a)
    return osc_string(address) + osc_string(tags) + body


def bundle(seconds, messages):
    whole = int(seconds)
    frac = int(round((seconds - whole) * 2 ** 32))
    if frac >= 2 ** 32:
        whole, frac = whole + 1, 0
    b = b"#bundle\0" + struct.pack(">II", whole, frac)
    for m in messages:
        b += struct.pack(">i", len(m)) + m
    return struct.pack(">i", len(b)) + b


def score(midi, kind):
    notes, bends, length = peer_notes.read_midi(midi)
    name = {"saw": "ts-saw", "sine": "ts-sine", "saw-kr": "ts-saw-kr"}[kind]
    osc = "SinOsc" if kind == "sine" else "Saw"
    defs = synthdef_file([synthdef(name, osc, 1 if kind.endswith("-kr") else 2)])
    curve = peer_notes.curve_hz(np.arange(CURVE_POINTS) / CURVE_POINTS)
    start = [osc_message("/d_recv", defs), osc_message("/b_alloc", 0, CURVE_POINTS + 1, 1)]
    # one more point than the loop's length: BufRd's linear interpolation reads past the last one
    values = list(curve) + [float(curve[0])]
    start.append(osc_message("/b_setn", 0, 0, len(values), *[float(v) for v in values]))
    events = []  # (seconds, order, message)
    bend_now = {}
    node_of = []  # (channel, node, on, off)
    for i, (ch, key, vel, on, off) in enumerate(notes):
        node = 1000 + i
        node_of.append((ch, node, on, off))
    timeline = sorted([(on, 1, ("on", i)) for i, (_, _, _, on, _) in enumerate(notes)]
                      + [(off, 0, ("off", i)) for i, (_, _, _, _, off) in enumerate(notes)]
                      + [(t, 0, ("bend", j)) for j, (_, t, _) in enumerate(bends)])
    for t, order, (what, i) in timeline:
        if what == "on":
            ch, key, vel, on, off = notes[i]
            events.append((t, 2, osc_message("/s_new", name, 1000 + i, 0, 0,
                                             "ratio", float(2 ** ((key - 69) / 12)), "amp", float(vel / 127 * 0.05),
                                             "bend", float(2 ** (bend_now.get(ch, 0.0) / 12)))))
        elif what == "off":
            events.append((t, 0, osc_message("/n_set", 1000 + i, "gate", 0.0)))
        else:
            ch, _, semis = bends[i]
            bend_now[ch] = semis
            # the channel's held notes and those still in their release
            for c, node, on, off in node_of:
                if c == ch and on <= t < off + 0.06:
                    events.append((t, 1, osc_message("/n_set", node, "bend", float(2 ** (semis / 12)))))
    events.sort(key=lambda e: (e[0], e[1]))
    out = bundle(0.0, start)
    k = 0
    while k < len(events):
        t = events[k][0]
        group = []
        while k < len(events) and events[k][0] == t:
            group.append(events[k][2]); k += 1
        out += bundle(t, group)
    out += bundle(length + 2.0, [osc_message("/c_set", 0, 0)])
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kind = sys.argv[3] if len(sys.argv) > 3 else "saw"
    with open(sys.argv[2], "wb") as f:
        f.write(score(sys.argv[1], kind))


if __name__ == "__main__":
    main()
