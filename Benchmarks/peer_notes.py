"""The dense file's notes as every peer plays them, and the check that a peer's output is those notes.

Shared by compare-peers.py, scsynth_score.py and ref-kernel.c's event list (Debian's Python 3 with
numpy, soundfile and mido; MIDI through Tests/Shared/toneshaper_smf.py, audio through libsndfile).

- read_midi(path): the Standard MIDI File as notes (channel, key, velocity, on and off in seconds)
  and pitch bends (channel, time, semitones at a range of +-2, ToneShaper's and Csound's default).
- CURVE: ToneShaper's article-curve preset (Presets/12-article-curve.json): 54 -> 460 -> 54 -> 360 Hz,
  Hz linear in time between the points, one pass per second from each note's start, looping; a
  note's frequency is curve(t) x 2^((key - 69) / 12) x 2^(bend / 12).
- check_pitch(wav, kind): the pitch probe. Every program first renders a one-note file
  (write_probe_midi: A5, held 2 s, no bend); its strongest partial must follow the curve (FluidSynth,
  which plays a piano and not the curve: stay at the key) within 3 % at 11 moments through all three
  segments and into the second pass. A semitone off (6 %), an octave off, a curve run at the wrong
  speed or not at all, or silence fails. (A check on the dense render itself, tried first, could not
  tell the right notes from notes a semitone off: 64 gliding voices fill the spectrum.)
- check_output(wav, length): every dense render, every round: a WAV at 48 kHz lasting at least the
  file's length, with sound (RMS > -60 dBFS) in every second of it.
- write_events(midi, path): the notes and bends as ref-kernel.c's event list.
"""
import os
import struct
import sys

import mido
import numpy as np
import soundfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Shared"))
import toneshaper_smf  # noqa: E402

CURVE = ((0.0, 54.0), (0.231, 460.0), (0.846, 54.0), (1.0, 360.0))
ATTACK, RELEASE = 0.005, 0.08


def read_midi(path):
    """(notes, bends, length_s): notes = [(channel, key, velocity, on_s, off_s)], bends = [(channel, s, semitones)].
    The file is read by the tests' one MIDI reader (Tests/Shared/toneshaper_smf.py, over mido), at
    the times render plays each message; the length is mido's, to the end of the last track."""
    events = toneshaper_smf.read(path)
    length = mido.MidiFile(path).length
    held, notes, bends = {}, [], []
    for event in events:
        status, data = event.data[0], event.data
        hi, ch = status & 0xF0, status & 0x0F
        if hi == 0x90 and data[2] > 0:
            held[(ch, data[1])] = (event.seconds, data[2])
        elif hi in (0x80, 0x90):
            on = held.pop((ch, data[1]), None)
            if on:
                notes.append((ch, data[1], on[1], on[0], event.seconds))
        elif hi == 0xE0:
            bends.append((ch, event.seconds, ((data[2] << 7 | data[1]) - 8192) / 8192 * 2))
    notes.extend((ch, key, vel, on, length) for (ch, key), (on, vel) in held.items())
    notes.sort(key=lambda n: (n[3], n[0], n[1]))
    return notes, bends, length


def curve_hz(t):
    """The article curve at t seconds from a note's start (array or float), looping each second."""
    u = np.mod(t, 1.0)
    xs, ys = zip(*CURVE)
    return np.interp(u, xs, ys)


def read_wav(path):
    """(mono float samples, rate) through libsndfile (python3-soundfile): channels summed."""
    x, rate = soundfile.read(path, dtype="float64", always_2d=True)
    return x.sum(axis=1), rate


PROBE_KEY = 81                    # A5: ratio 2, the curve at 108 -> 920 -> 108 -> 720 Hz
PROBE_MOMENTS = (0.06, 0.12, 0.18, 0.30, 0.45, 0.60, 0.75, 0.92, 1.12, 1.40, 1.70)


def write_probe_midi(path):
    """One note (PROBE_KEY, velocity 100) held 2 s on channel 1, no bend: the pitch probe's file."""
    track = (b"\x00\xFF\x51\x03" + (500_000).to_bytes(3, "big") + b"\x00\xC0\x00"
             + bytes([0, 0x90, PROBE_KEY, 100]) + bytes([0x8F, 0x00, 0x80, PROBE_KEY, 64])  # 1920 ticks = 2 s
             + b"\x00\xFF\x2F\x00")
    with open(path, "wb") as f:
        f.write(b"MThd" + struct.pack(">IHHH", 6, 0, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track)


def _read_at(path, rate):
    """(samples, None) when `path` is a sound file at `rate`; else (None, why). libsndfile's errors
    are RuntimeErrors (soundfile.LibsndfileError)."""
    try:
        x, r = read_wav(path)
    except (OSError, ValueError, RuntimeError) as e:
        return None, f"{path}: {e}"
    if r != rate:
        return None, f"{path}: {r} Hz, expected {rate}"
    return x, None


def check_pitch(path, kind, rate=48000, n=1024):
    """(ok, message): the probe render's strongest partial follows the curve (or stays at the key's
    pitch for 'fixed') within 3 % (a semitone is 6 %) at each of PROBE_MOMENTS: 1024-sample Hann
    frames centred there, the peak bin refined by a parabola through its neighbours' log magnitudes."""
    x, problem = _read_at(path, rate)
    if problem:
        return False, problem
    r = rate
    worst, bad = 0.0, []
    for t in PROBE_MOMENTS:
        start = int(t * rate) - n // 2
        frame = x[start:start + n]
        if len(frame) < n:
            return False, f"{path}: ends before {t} s"
        mag = np.abs(np.fft.rfft(frame * np.hanning(n)))
        mag[:2] = 0
        k = int(np.argmax(mag))
        if mag[k] < 1e-6:
            return False, f"{path}: silent at {t} s"
        a, b, c = np.log(mag[k - 1:k + 2] + 1e-30)
        peak = (k + 0.5 * (a - c) / (a - 2 * b + c)) * rate / n
        want = 440.0 * 2 ** ((PROBE_KEY - 69) / 12) * (1.0 if kind == "fixed" else curve_hz(t) / 440.0)
        error = peak / want - 1
        worst = max(worst, abs(error))
        if abs(error) > 0.03:
            bad.append(f"{peak:.0f} Hz at {t} s, expected {want:.0f}")
    if bad:
        return False, f"{path}: wrong pitch: " + "; ".join(bad)
    return True, f"pitch within {worst:.1%} of the {'key' if kind == 'fixed' else 'curve'} at {len(PROBE_MOMENTS)} moments"


def check_output(path, length, rate=48000):
    """(ok, message): the dense render is sound, lasting at least the file's length, not clipped to silence."""
    x, problem = _read_at(path, rate)
    if problem:
        return False, problem
    r = rate
    seconds = len(x) / r
    if seconds < length - 0.01:
        return False, f"{path}: {seconds:.2f} s of audio, expected at least {length:.2f}"
    quiet = [s for s in range(int(length)) if not np.sqrt(np.mean(x[s * r:(s + 1) * r] ** 2)) > 1e-3]
    if quiet:
        return False, f"{path}: silent in second(s) {quiet[:5]}"
    return True, f"{seconds:.1f} s, sound in every second"


def write_events(midi, path, rate=48000):
    """The file's notes and bends as ref-kernel.c reads them: one event a line, in time order."""
    notes, bends, _ = read_midi(midi)
    events = []
    for ch, key, vel, on, off in notes:
        events.append((round(on * rate), 2, f"on {ch} {key} {vel}"))
        events.append((round(off * rate), 0, f"off {ch} {key}"))
    events += [(round(t * rate), 1, f"bend {ch} {semis!r}") for ch, t, semis in bends]
    with open(path, "w") as f:
        f.writelines(f"{sample} {text}\n" for sample, _, text in sorted(events))


def write_wav(path, x, rate=48000):
    """Mono 32-bit float WAV (the self-test's signals), through libsndfile."""
    soundfile.write(path, np.asarray(x, "float32"), rate, subtype="FLOAT")


def self_test(directory):
    """The checks must pass the right notes and fail wrong ones: signals made here, each through its check.
    Returns a list of failures (empty: the checks discriminate)."""
    rate, seconds = 48000, 2.5
    t = np.arange(int(seconds * rate)) / rate
    ratio = 2.0 ** ((PROBE_KEY - 69) / 12)
    sine_on = lambda f: np.sin(2 * np.pi * np.cumsum(f) / rate) * 0.3
    saw_on = lambda f: sum(sine_on(k * f) / k for k in range(1, 8) if k * 920 * ratio < rate / 2)
    cases = [  # (name, signal, kind, should pass)
        ("sine on the curve", sine_on(curve_hz(t) * ratio), "sine", True),
        ("saw on the curve", saw_on(curve_hz(t) * ratio), "saw", True),
        ("sine a semitone sharp", sine_on(curve_hz(t) * ratio * 2 ** (1 / 12)), "sine", False),
        ("saw an octave low", saw_on(curve_hz(t) * ratio / 2), "saw", False),
        ("curve at half speed", sine_on(curve_hz(t / 2) * ratio), "sine", False),
        ("the key without the curve", sine_on(np.full_like(t, 440 * ratio)), "sine", False),
        ("the key, for FluidSynth", sine_on(np.full_like(t, 440 * ratio)), "fixed", True),
        ("the curve, for FluidSynth", sine_on(curve_hz(t) * ratio), "fixed", False),
        ("silence", np.zeros_like(t), "sine", False),
    ]
    failures = []
    for name, x, kind, should in cases:
        path = os.path.join(directory, "self-test.wav")
        write_wav(path, x, rate)
        ok, why = check_pitch(path, kind)
        if ok != should:
            failures.append(f"pitch check on {name}: {'passed' if ok else 'failed'} ({why})")
    long = sine_on(np.full(int(3 * rate), 440.0))
    for name, x, should in (("3 s of sound", long, True), ("2.5 s of sound", long[:int(2.5 * rate)], False),
                            ("a silent second", np.concatenate([long[:rate], np.zeros(rate), long[:rate]]), False)):
        path = os.path.join(directory, "self-test.wav")
        write_wav(path, x, rate)
        ok, why = check_output(path, 3.0)
        if ok != should:
            failures.append(f"output check on {name}: {'passed' if ok else 'failed'} ({why})")
    return failures


if __name__ == "__main__":
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        problems = self_test(d)
    print("\n".join(problems) or "peer_notes: the checks pass the right notes and fail the wrong ones")
    sys.exit(1 if problems else 0)
