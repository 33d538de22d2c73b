#!/usr/bin/env python3
"""Checks what the VM test (Tests/VM/README.md) left in its results folder.

usage: check.py RESULTS [--period N] [--periods N] [--rate HZ]

Prints one line per check, "vm: PASS|FAIL <check> — <numbers>", indented detail lines where they
help, and "vm: N passed, M failed"; exits 1 if any check failed. The same report is written to
RESULTS/report.txt. Issue numbers in brackets ([10.1] ...) say which point of issue 10 a check
belongs to.
"""
import argparse
import os
import re
import sys
import warnings

import numpy as np
from scipy import signal
from scipy.io import wavfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Shared"))
import toneshaper_smf  # noqa: E402

# Onsets: the live instrument's events must sit at a constant latency from the reference, ± this.
JITTER_BOUND_MS = 0.1
# Notes must have stopped this long after their source left (the probe tone's release is 2 ms).
SILENCE_WITHIN_S = 0.3
# Below the level a note had while held by this much: "released". Within this: "still sounding".
RELEASED_DB = 40.0
SOUNDING_DB = 3.0
# The song's notes, each aligned on its own start, must match the reference this closely (dB re
# the reference's peak). Not exact: the previous note's release tail (about -40 dB re its peak)
# overlaps the next note's start and is shifted by that earlier note's own deviation.
NOTE_MATCH_DB = -40.0
# Absolute floor for "silent" (dBFS, whole-signal RMS over a 5 ms window).
SILENT_DBFS = -70.0
# Probe-tone keys (Tests/VM/probe.json: 1000 Hz at key 69).
PROBE_HZ = {57: 500.0, 69: 1000.0, 81: 2000.0}


class Report:
    def __init__(self, path):
        self.lines = []
        self.passed = 0
        self.failed = 0
        self.path = path

    def say(self, line):
        print(line, flush=True)
        self.lines.append(line)

    def check(self, ok, name, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        self.say(f"vm: {'PASS' if ok else 'FAIL'} {name}" + (f" — {detail}" if detail else ""))
        return ok

    def detail(self, line):
        self.say(f"      {line}")

    def finish(self):
        self.say(f"vm: {self.passed} passed, {self.failed} failed")
        with open(self.path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        return 1 if self.failed else 0


# --- reading ---------------------------------------------------------------------------------------

def read_wav(path):
    """(rate, float64 frames × channels, LSB size in full-scale units) of a WAV file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # libsndfile's PEAK chunk
        rate, data = wavfile.read(path)
    if data.ndim == 1:
        data = data[:, None]
    if data.dtype == np.int32:
        return rate, data.astype(np.float64) / 2.0**31, 2.0**-31
    if data.dtype == np.int16:
        return rate, data.astype(np.float64) / 2.0**15, 2.0**-15
    return rate, data.astype(np.float64), 0.0


def mono(x):
    return x.mean(axis=1)


def timeline(folder):
    """The guest's marks: name → epoch seconds (the first of each name)."""
    marks = {}
    path = os.path.join(folder, "timeline")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) == 2 and parts[0] not in marks:
                marks[parts[0]] = float(parts[1])
    return marks


def text(path):
    return open(path, errors="replace").read() if os.path.exists(path) else ""


def exit_status(folder):
    t = text(os.path.join(folder, "play.rc")).strip()
    return int(t) if t.lstrip("-").isdigit() else None


def smf_notes(path):
    """Note events of a Standard MIDI File, all tracks merged: (seconds, key, is_on), in playing
    order at the times render gives them (Tests/Shared/toneshaper_smf.py, the tests' one reader)."""
    events = []
    for event in toneshaper_smf.read(path):
        kind = event.data[0] & 0xF0
        if kind == 0x90 and event.data[2] > 0:
            events.append((event.seconds, event.data[1], True))
        elif kind in (0x80, 0x90):
            events.append((event.seconds, event.data[1], False))
    return events


def note_lengths(events):
    """Seconds from each note-on to the next note-off of its key."""
    open_notes, lengths = {}, []
    for t, key, on in events:
        if on:
            open_notes.setdefault(key, []).append(t)
        elif open_notes.get(key):
            lengths.append(t - open_notes[key].pop(0))
    return np.array(lengths)


# --- analysis --------------------------------------------------------------------------------------

def lag_of(a, b):
    """The lag L at which a[i + L] best matches b[i] (cross-correlation of the mono signals)."""
    x = signal.correlate(a, b, mode="full", method="fft")
    return int(np.argmax(x)) - (len(b) - 1)


def overlap(a, b, lag):
    """a and b cut to where a[i + lag] and b[i] both exist."""
    if lag >= 0:
        a = a[lag:]
    else:
        b = b[-lag:]
    n = min(len(a), len(b))
    return a[:n], b[:n]


def onsets(x, threshold, gap):
    """Frames where |x| first exceeds threshold after at least `gap` frames below it."""
    idx = np.flatnonzero(np.abs(x) > threshold)
    if len(idx) == 0:
        return idx
    d = np.diff(idx, prepend=-(10**12))
    return idx[d > gap]


def db(v):
    return 20 * np.log10(max(v, 1e-12))


def tone_track(x, rate, hz, window=0.01, hop=0.002):
    """(times s, amplitude dBFS) of one sine frequency over time: a Hann-windowed projection."""
    n = int(window * rate)
    h = int(hop * rate)
    w = np.hanning(n)
    t = np.arange(n) / rate
    c = w * np.exp(-2j * np.pi * hz * t)
    scale = 2 / w.sum()
    times, levels = [], []
    for start in range(0, len(x) - n, h):
        seg = x[start:start + n]
        times.append((start + n / 2) / rate)
        levels.append(db(abs(np.dot(seg, c)) * scale))
    return np.array(times), np.array(levels)


def rms_track(x, rate, window=0.005, hop=0.001):
    n = int(window * rate)
    h = int(hop * rate)
    times, levels = [], []
    for start in range(0, len(x) - n, h):
        seg = x[start:start + n]
        times.append((start + n / 2) / rate)
        levels.append(db(np.sqrt(np.mean(seg**2))))
    return np.array(times), np.array(levels)


def level_in(track, t0, t1):
    """Median level of a (times, levels) track between two capture times; None if empty."""
    times, levels = track
    sel = (times >= t0) & (times <= t1)
    return float(np.median(levels[sel])) if sel.any() else None


def stopped_after(track, t_event, before_level, t_end, look_back=0.5):
    """Seconds from t_event to the end of the track's last window above the floor (RELEASED_DB
    below before_level, or silent), looking from look_back seconds before t_event up to t_end:
    negative when the sound had already stopped at t_event; None if it never stops before t_end."""
    times, levels = track
    floor = max(before_level - RELEASED_DB, SILENT_DBFS)
    sel = (times >= t_event - look_back) & (times <= t_end)
    ts, ls = times[sel], levels[sel]
    loud = np.flatnonzero(ls > floor)
    if len(loud) == 0:
        return -look_back
    if loud[-1] == len(ls) - 1:
        return None
    return float(ts[loud[-1] + 1] - t_event)


def when(s, event):
    """A stopped_after result in words."""
    if s is None:
        return f"never stopped after {event}"
    if s <= -0.49:
        return f"was already silent at {event}"
    return f"stopped {s:+.3f} s after {event}"


class Capture:
    """A capture with its timeline anchored: guest epoch time → capture seconds.

    The anchor is the first onset in the capture, taken to be the sound of the first note sent at
    the timeline mark `anchor`; the latency between a MIDI event and its sound (a period or three)
    is then the same for every later mark, so it cancels out.
    """

    def __init__(self, folder, name, anchor, anchor_epoch=None):
        self.ok = False
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            self.problem = f"no {name}"
            return
        self.rate, frames, self.lsb = read_wav(path)
        self.x = mono(frames)
        if len(self.x) < self.rate * 0.1:
            self.problem = f"{name} is empty ({len(self.x)} frames)"
            return
        self.marks = timeline(folder)
        on = onsets(self.x, 10 ** (-50 / 20), int(0.005 * self.rate))
        if len(on) == 0 or (anchor_epoch is None and anchor not in self.marks):
            self.problem = f"no sound in {name}" if len(on) == 0 else f"no '{anchor}' mark"
            return
        self.first_onset = on[0] / self.rate
        self.anchor_time = anchor_epoch if anchor_epoch is not None else self.marks[anchor]
        self.ok = True

    def at(self, mark_or_epoch):
        epoch = self.marks[mark_or_epoch] if isinstance(mark_or_epoch, str) else mark_or_epoch
        return self.first_onset + (epoch - self.anchor_time)

    def tone(self, hz):
        return tone_track(self.x, self.rate, hz)

    def rms(self):
        return rms_track(self.x, self.rate)


def sender_exit_time(path):
    m = re.search(r"exiting at ([0-9.]+)", text(path))
    return float(m.group(1)) if m else None


def sender_on_time(*paths):
    """When the earliest of these seqtool senders had sent its notes (its own clock reading): a
    better anchor than a mark taken before the program started, which takes a while to start."""
    times = [float(m.group(1)) for p in paths for m in [re.search(r" on [0-9 ]+ at ([0-9.]+)", text(p))] if m]
    return min(times) if times else None


def show_output(r, path, label):
    t = text(path).rstrip("\n")
    r.detail(f"{label}:" if t else f"{label}: (nothing)")
    for line in t.splitlines()[:20]:
        r.detail("  | " + line)


# --- the checks ------------------------------------------------------------------------------------

def check_client(r, res):
    t = text(os.path.join(res, "song", "aconnect.txt"))
    m = re.search(r"client (\d+): 'ToneShaper'.*\n\s+(\d+) '([^']*)'", t)
    r.check(bool(m), "[10.6] a: the ToneShaper client is listed by `aconnect -l` while playing",
            f"client {m.group(1)}:{m.group(2)} '{m.group(3).strip()}'" if m else "not in song/aconnect.txt")


def note_offsets(ref, cap, starts, lag, search, pre, post):
    """For each reference note start (frame), the capture frame where that note starts: the offset,
    within lag ± search, at which the capture's stretch from `pre` frames before to `post` frames
    after the note start differs least (least squares) from the reference's. Each note's attack
    (and the tail of the note before it) is matched as a whole, so a periodic waveform cannot lock
    onto the wrong cycle. Returns (capture frames, relative residual of each best match)."""
    found, residuals = [], []
    for s in starts:
        a = ref[s - pre:s + post]
        energy = max(np.sum(a * a), 1e-20)
        lo = max(0, s - pre + lag - search)
        hi = min(len(cap) - len(a), s - pre + lag + search)
        if hi <= lo:
            found.append(-1)
            residuals.append(np.inf)
            continue
        windows = np.lib.stride_tricks.sliding_window_view(cap[lo:hi + len(a)], len(a))
        err = np.sum((windows - a) ** 2, axis=1)
        best = int(np.argmin(err))
        found.append(lo + best + pre)
        residuals.append(err[best] / energy)
    return np.array(found), np.array(residuals)


def check_song(r, res, period, periods):
    folder = os.path.join(res, "song")
    name_b1 = "[10.1] b: song onsets sit at one latency from `render`'s, ± 0.1 ms"
    name_b2 = "[10.6] b: the song's capture matches `render` of the file, note by note"
    if not os.path.exists(os.path.join(folder, "capture.wav")):
        r.check(False, name_b1, "no song/capture.wav")
        r.check(False, name_b2, "no song/capture.wav")
        show_output(r, os.path.join(folder, "play.out"), "toneshaper play said")
        return
    rate, ref_frames, _ = read_wav(os.path.join(res, "midi", "song-ref.wav"))
    _, cap_frames, _ = read_wav(os.path.join(folder, "capture.wav"))
    ref, cap = mono(ref_frames), mono(cap_frames)
    # The file's note-on frames, exact in the reference (`render` puts each event at its frame).
    starts = [round(float(t) * rate) for t in open(os.path.join(res, "midi", "song.onsets")).read().split()]
    lag = lag_of(cap, ref)
    search = 2 * period * periods + int(0.005 * rate)
    c_on, residual = note_offsets(ref, cap, starts, lag, search, int(0.002 * rate), int(0.03 * rate))
    if np.any(c_on < 0):
        problem = f"the capture does not cover every note (global lag {lag} frames)"
        r.check(False, name_b1, problem)
        r.check(False, name_b2, problem)
        return
    d = (c_on - np.array(starts)).astype(float)
    latency = np.median(d)
    dev_ms = (d - latency) / rate * 1000
    r.check(np.max(np.abs(dev_ms)) <= JITTER_BOUND_MS, name_b1,
            f"{len(starts)} notes; deviation {dev_ms.min():+.3f}…{dev_ms.max():+.3f} ms (std {dev_ms.std():.3f} ms) "
            f"around the median offset; period {period} × {periods} = {period / rate * 1000:.2f} ms")
    r.detail("per-note deviation (ms): " + " ".join(f"{v:+.2f}" for v in dev_ms))
    # Each note, from its start to just before its note-off, against the reference's same stretch
    # (the note-off may land a period early or late today; timing is the onsets check's business).
    peak = np.max(np.abs(ref))
    per_note = []
    # Up to a period plus 1 ms before the note-off: where today's period-start timing may release it.
    margin = period + int(0.001 * rate)
    ends = [round(float(t) * rate) - margin for t in open(os.path.join(res, "midi", "song.offsets")).read().split()]
    for k, s in enumerate(starts):
        a = ref[s:ends[k]]
        b = cap[c_on[k]:c_on[k] + len(a)]
        a = a[:len(b)]
        per_note.append(db(np.max(np.abs(a - b)) / peak) if len(b) else np.inf)
    worst = max(per_note)
    # Whole file, aligned once: what a constant latency gives (the target of point 1).
    a, b = overlap(cap, ref, int(round(latency)))
    whole = db(np.max(np.abs(a - b)) / peak)
    r.check(worst <= NOTE_MATCH_DB, name_b2,
            f"largest difference {worst:.1f} dB re peak, each note from its start to just before its note-off, "
            f"aligned on its start; "
            f"{whole:.1f} dB with one alignment (the median offset) for the whole file")
    r.detail("per-note difference (dB re peak): " + " ".join(f"{v:.0f}" for v in per_note))


def check_record(r, res):
    folder = os.path.join(res, "song")
    name = "[10.6] c: --record equals the capture (aligned), within 1 LSB of the capture format"
    cap_path, take_path = os.path.join(folder, "capture.wav"), os.path.join(folder, "take.wav")
    if not (os.path.exists(cap_path) and os.path.exists(take_path)):
        r.check(False, name, "missing song/capture.wav or song/take.wav")
    else:
        rate, cap, lsb = read_wav(cap_path)
        _, take, _ = read_wav(take_path)
        lag = lag_of(mono(cap), mono(take))
        a, b = overlap(cap, take, lag)
        diff = np.max(np.abs(a - b)) if len(a) else np.inf
        # A float capture gets the instrument's float samples untouched; an integer capture gets
        # them converted, so it may differ by one step of its own format.
        tolerance = lsb if lsb else 0.0
        r.check(len(a) > rate and diff <= tolerance * 1.0000001, name,
                f"{len(a)} frames compared (capture {lag / rate:+.3f} s from the take), "
                f"largest difference {diff:.3g} (1 LSB = {lsb:.3g})")
    name = "[10.1] c: `render` of --record-midi's take.mid equals take.wav"
    rr_path = os.path.join(folder, "take-rerender.wav")
    if not (os.path.exists(rr_path) and os.path.exists(take_path)):
        r.check(False, name, "missing song/take.wav or the re-render of song/take.mid")
        show_output(r, os.path.join(folder, "rerender.out"), "render said")
        return
    _, take, _ = read_wav(take_path)
    _, rr, _ = read_wav(rr_path)
    n = min(len(take), len(rr))
    diff = np.max(np.abs(take[:n] - rr[:n])) if n else np.inf
    lag = lag_of(mono(rr), mono(take))
    r.check(n > 0 and diff <= 1e-6, name,
            f"{n} frames from frame 0, largest difference {diff:.3g}; best alignment lag {lag} frames")


def check_jitter(r, res, period, periods):
    folder = os.path.join(res, "jitter")
    name = "[10.1] b: 10 ms notes: onsets at one latency ± 0.1 ms"
    if not os.path.exists(os.path.join(folder, "capture.wav")):
        r.check(False, name, "no jitter/capture.wav")
        return
    rate, ref_frames, _ = read_wav(os.path.join(res, "midi", "jitter-ref.wav"))
    _, cap_frames, _ = read_wav(os.path.join(folder, "capture.wav"))
    ref, cap = mono(ref_frames), mono(cap_frames)
    threshold = 0.1 * np.max(np.abs(ref))
    gap = int(0.0015 * rate)
    r_on = onsets(ref, threshold, gap)
    c_on = onsets(cap, threshold, gap)
    expected = len(open(os.path.join(res, "midi", "jitter.onsets")).read().split())
    if len(c_on) >= 2:
        iv = np.diff(c_on) / rate * 1000
        intervals = (f"capture onset intervals {iv.mean():.3f} ms mean, std {iv.std():.3f} ms, "
                     f"{iv.min():.3f}…{iv.max():.3f} ms (max−min {iv.max() - iv.min():.3f} ms)")
    else:
        intervals = "fewer than 2 onsets in the capture"
    if len(r_on) != expected or len(c_on) != len(r_on):
        r.check(False, name, f"{len(c_on)} separate notes heard in the capture, {len(r_on)} in the reference, "
                f"{expected} sent; {intervals}")
    else:
        d = (c_on - r_on).astype(float)
        dev_ms = (d - np.median(d)) / rate * 1000
        r.check(np.max(np.abs(dev_ms)) <= JITTER_BOUND_MS, name,
                f"{len(c_on)} notes; deviation from the median latency {dev_ms.min():+.3f}…{dev_ms.max():+.3f} ms "
                f"(std {dev_ms.std():.3f} ms); {intervals}")
    # Where the instrument applied each event (--record-midi): the arrival pattern, whatever the sound.
    take_mid = os.path.join(folder, "take.mid")
    if os.path.exists(take_mid):
        events = smf_notes(take_mid)
        ons = np.array([t for t, _, on in events if on])
        if len(ons) >= 2:
            iv = np.diff(ons) * 1000
            lengths = note_lengths(events) * 1000
            r.detail(f"--record-midi: {len(ons)} note-ons applied, intervals {iv.mean():.3f} ms mean, "
                     f"std {iv.std():.3f} ms, {iv.min():.3f}…{iv.max():.3f} ms; note lengths as applied "
                     f"{lengths.min():.3f}…{lengths.max():.3f} ms (sent: 4 ms), "
                     f"{int(np.sum(lengths < 1e-6))} of them 0 (on and off at one frame: no sound)")
    for name, what in (("seq-baseline.txt", "the floor this VM allows"),
                       ("seq-beside.txt", "what a plain thread sees while the instrument plays")):
        base = [l for l in text(os.path.join(folder, name)).split() if re.fullmatch(r"[0-9.]+", l)]
        if len(base) >= 2:
            iv = np.diff(np.array([float(v) for v in base])) * 1000
            r.detail(f"sequencer → a C receiver ({'alone' if 'baseline' in name else 'beside toneshaper'}): "
                     f"{len(base)} note-ons, intervals std {iv.std():.4f} ms, {iv.min():.3f}…{iv.max():.3f} ms — {what}")


def check_unsubscribe(r, res):
    folder = os.path.join(res, "unsubscribe")
    names = ["[10.6] d: unsubscribing a raw MIDI keyboard (aconnect -d) releases its held notes within 0.3 s",
             "[10.5] f: …while the other keyboard's held note keeps sounding",
             "[10.6] d: unsubscribing the second keyboard too: silence within 0.3 s"]
    cap = Capture(folder, "capture.wav", "on")
    if not cap.ok:
        for n in names:
            r.check(False, n, cap.problem)
        return
    m = cap.marks
    # Release times count from the moment `aconnect -d` started; the checks allow for its run time
    # by measuring from when it had returned (the unsubscription was done by then).
    t_on = cap.at("on")
    t1, t1_done = cap.at("disconnect1"), cap.at("disconnected1" if "disconnected1" in m else "disconnect1")
    t2, t2_done = cap.at("disconnect2"), cap.at("disconnected2" if "disconnected2" in m else "disconnect2")
    t_stop = cap.at("stop")
    tracks = {k: cap.tone(hz) for k, hz in PROBE_HZ.items()}
    before = {k: level_in(tracks[k], t_on + 0.2, t1 - 0.05) for k in PROBE_HZ}
    held = all(v is not None and v > -40 for v in before.values())
    # Keyboard 1: keys 57 and 69.
    stops = [stopped_after(tracks[k], t1, before[k], t2 - 0.05) for k in (57, 69)]
    late = [None if s is None else s - (t1_done - t1) for s in stops]
    ok = held and all(s is not None and s <= SILENCE_WITHIN_S for s in late)
    r.check(ok, names[0], ("all three notes sounded before (" + ", ".join(f"{PROBE_HZ[k]:.0f} Hz {before[k]:.0f} dBFS" for k in PROBE_HZ) + "); "
                          if held else f"the notes did not all sound before the disconnect: {before}; ")
            + "keyboard 1's 500 Hz " + when(stops[0], "the start of `aconnect -d`") + f", its 1000 Hz {when(stops[1], 'it')}"
            + f" (aconnect took {t1_done - t1:.3f} s)")
    # Keyboard 2's key 81 must keep its level between the two disconnects.
    during = level_in(tracks[81], t1 + SILENCE_WITHIN_S, t2 - 0.05)
    ok = before[81] is not None and during is not None and abs(during - before[81]) <= SOUNDING_DB
    r.check(ok, names[1], f"2000 Hz at {before[81] if before[81] is not None else float('nan'):.1f} dBFS before, "
            f"{during if during is not None else float('nan'):.1f} dBFS after keyboard 1 left")
    rms = cap.rms()
    quiet = level_in(rms, t2 + SILENCE_WITHIN_S, t_stop - 0.02)
    s = stopped_after(rms, t2, max(before.values()) if held else -20, t_stop - 0.15)
    ok = quiet is not None and quiet <= SILENT_DBFS and s is not None and s - (t2_done - t2) <= SILENCE_WITHIN_S
    r.check(ok, names[2], f"level {quiet if quiet is not None else float('nan'):.1f} dBFS from 0.3 s after; the sound "
            + when(s, "the start of `aconnect -d`") + f" (aconnect took {t2_done - t2:.3f} s)")


def check_direct(r, res):
    folder = os.path.join(res, "direct")
    name = "[10.5] e: a sender writing straight to the port (no subscription) exits: its notes stop within 0.3 s"
    cap = Capture(folder, "capture.wav", "on", sender_on_time(os.path.join(folder, "sender.out")))
    if not cap.ok:
        r.check(False, name, cap.problem)
        show_output(r, os.path.join(folder, "sender.out"), "seqtool said")
        return
    exit_epoch = sender_exit_time(os.path.join(folder, "sender.out")) or cap.marks.get("exit")
    t_exit, t_stop = cap.at(exit_epoch), cap.at("stop")
    rms = cap.rms()
    before = level_in(rms, cap.first_onset + 0.2, t_exit - 0.05)
    s = stopped_after(rms, t_exit, before if before is not None else -20, t_stop - 0.15)
    ok = before is not None and before > -40 and s is not None and s <= SILENCE_WITHIN_S
    r.check(ok, name, f"{before if before is not None else float('nan'):.1f} dBFS while held; the sound "
            + when(s, "the sender's exit") + (" (stuck notes)" if s is None else ""))


def check_two_senders(r, res):
    folder = os.path.join(res, "two-senders")
    names = ["[10.5] f: two subscribed senders; the first exits: its note stops within 0.3 s",
             "[10.5] f: …and the second sender's note keeps sounding",
             "[10.5] f: the second exits too: silence within 0.3 s"]
    cap = Capture(folder, "capture.wav", "on",
                  sender_on_time(os.path.join(folder, "sender1.out"), os.path.join(folder, "sender2.out")))
    if not cap.ok:
        for n in names:
            r.check(False, n, cap.problem)
        return
    e1 = sender_exit_time(os.path.join(folder, "sender1.out")) or cap.marks.get("exit1")
    e2 = sender_exit_time(os.path.join(folder, "sender2.out")) or cap.marks.get("exit2")
    t_on, t1, t2, t_stop = cap.first_onset, cap.at(e1), cap.at(e2), cap.at("stop")
    low, high = cap.tone(500.0), cap.tone(2000.0)
    b_low, b_high = level_in(low, t_on + 0.2, t1 - 0.05), level_in(high, t_on + 0.2, t1 - 0.05)
    s = stopped_after(low, t1, b_low if b_low is not None else -20, t2 - 0.05)
    held = b_low is not None and b_low > -40 and b_high is not None and b_high > -40
    r.check(held and s is not None and s <= SILENCE_WITHIN_S, names[0],
            f"500 Hz {b_low if b_low is not None else float('nan'):.1f} dBFS while held, "
            + when(s, "sender 1's exit"))
    during = level_in(high, t1 + SILENCE_WITHIN_S, t2 - 0.05)
    ok = b_high is not None and during is not None and abs(during - b_high) <= SOUNDING_DB
    r.check(ok, names[1], f"2000 Hz at {b_high if b_high is not None else float('nan'):.1f} dBFS before, "
            f"{during if during is not None else float('nan'):.1f} dBFS after sender 1 exited")
    rms = cap.rms()
    s = stopped_after(rms, t2, b_high if b_high is not None else -20, t_stop - 0.15)
    r.check(s is not None and s <= SILENCE_WITHIN_S, names[2],
            "the sound " + when(s, "sender 2's exit"))
    for f in ("sender1.out", "sender2.out"):
        if "exiting" not in text(os.path.join(folder, f)):
            show_output(r, os.path.join(folder, f), f)


def check_connect_missing(r, res):
    folder = os.path.join(res, "connect-missing")
    out = text(os.path.join(folder, "play.out"))
    rc = exit_status(folder)
    ok = rc not in (None, 0) and "no such sequencer client 99" in out
    first = out.strip().splitlines()[0] if out.strip() else "(no output)"
    r.check(ok, "[10.5] g: --connect 99:0 says \"no such sequencer client 99\" and exits non-zero",
            f"exit status {rc}; said: {first}")


def check_defaults(r, res):
    """i: without --period/--periods the instrument negotiates sizes this device keeps up with."""
    folder = os.path.join(res, "defaults")
    out = text(os.path.join(folder, "play.out"))
    lines = out.strip().splitlines()
    start = next((l for l in lines if "Ctrl-C stops" in l), "(no start line)")
    summary = next((l for l in lines if l.startswith("stopped after")), "(no summary)")
    rc = exit_status(folder)
    r.check(rc == 0 and "(negotiated" in start and " 0 xruns" in summary,
            "[10.4] i: with no --period/--periods, play says what it negotiated and runs without an underrun",
            f"exit status {rc}; {start}; {summary}")
    for l in lines:
        if l.startswith("toneshaper:"):
            r.detail("said: " + l)
    name = "[10.4] i: …and the 10 ms notes come out 10 ms apart (± 0.1 ms) once it plays"
    path = os.path.join(folder, "capture.wav")
    if not os.path.exists(path):
        r.check(False, name, "no defaults/capture.wav")
        return
    rate, frames, _ = read_wav(path)
    cap = mono(frames)
    c_on = onsets(cap, 0.1 * max(np.max(np.abs(cap)), 1e-9), int(0.0015 * rate))
    if len(c_on) < 50:
        r.check(False, name, f"{len(c_on)} notes heard (100 sent, the first ones may precede the capture)")
        return
    # Notes sent while a timed-out first try was being replaced are not heard: only neighbours count.
    iv = np.diff(c_on) / rate * 1000
    iv = iv[iv < 15]
    r.check(len(iv) >= 49 and np.max(np.abs(iv - 10)) <= JITTER_BOUND_MS, name,
            f"{len(c_on)} of 100 notes heard; intervals between neighbours {iv.min():.3f}…{iv.max():.3f} ms")


def check_unplug(r, res, rate):
    folder = os.path.join(res, "unplug")
    marks = timeline(folder)
    out = text(os.path.join(folder, "play.out"))
    lines = out.strip().splitlines()
    rc = exit_status(folder)
    alive = "alive" in marks
    r.check(alive and rc == 0, "[10.4] h: the instrument keeps running while the card is unbound and stops cleanly after",
            ("still running 2.5 s after the card came back" if alive else "it had exited before the card came back")
            + f"; exit status {rc}")
    # Words only, not paths: the results folder is called "unplug".
    words = [" ".join(w for w in l.split() if "/" not in w) for l in lines]
    device = re.compile(r"Loopback|device|PCM", re.I)
    # The line saying it is gone (not the one saying it is back, nor the final summary).
    lost = [l for l, w in zip(lines, words) if device.search(w)
            and re.search(r"\b(lost|gone|went away|unplugged|disconnected|vanished|removed|no longer|no such device|"
                          r"cannot write|failed|error)\b", w, re.I)
            and not re.search(r"\b(reopened|is back|came back|returned|restored|recovered)\b", w, re.I)
            and not l.startswith("stopped after")]
    r.check(len(lost) == 1, "[10.4] h: one line says the device was lost",
            f"{len(lost)} such lines" + (f": {lost[0]}" if lost else ""))
    cap2 = os.path.join(folder, "capture2.wav")
    level = None
    if os.path.exists(cap2):
        _, frames, _ = read_wav(cap2)
        x = mono(frames)
        if len(x) > rate // 2:
            level = level_in(tone_track(x, rate, 2000.0), 0.3, len(x) / rate - 0.1)
    r.check(level is not None and level > -40, "[10.4] h: after the card returns it plays again (a new note is heard in a new capture)",
            ("no capture after the card returned" if level is None else f"2000 Hz at {level:.1f} dBFS")
            + "".join("; arecord: " + l for l in text(os.path.join(folder, "capture2.arecord.err")).strip().splitlines()[:1]))
    summary = [l for l, w in zip(lines, words) if re.search(r"\b(outages?|reopen\w*|lost|unplugged|disconnected)\b", w, re.I)
               and re.search(r"\d", w) and l not in lost]
    stopped = [l for l in lines if l.startswith("stopped after")]
    r.check(bool(summary) and bool(stopped), "[10.4] h: the summary counts the outage",
            (summary[-1] if summary else "no line counting the outage") + ("" if stopped else "; no summary line"))
    take = os.path.join(folder, "take.wav")
    ok, detail = False, "no take.wav"
    if os.path.exists(take) and os.path.getsize(take) > 44:
        try:
            trate, frames, _ = read_wav(take)
            x = mono(frames)
            played = (marks.get("unbind", 0) - marks.get("ready", 0)) + (marks.get("stop", 0) - marks.get("bound", 0) - 1.5)
            seconds = len(x) / trate
            late = level_in(tone_track(x, trate, 2000.0), seconds - 0.8, seconds - 0.1) if seconds > 1 else None
            finite = np.all(np.isfinite(x))
            ok = finite and seconds >= played and late is not None and late > -40
            detail = (f"{seconds:.2f} s recorded, at least {played:.2f} s expected (playing time outside the outage); "
                      f"the note sent after the card returned is {'in it' if late is not None and late > -40 else 'missing'}")
        except Exception as e:  # an unreadable file is the failure being looked for
            detail = f"take.wav cannot be read: {e}"
    r.check(ok, "[10.4] h: the --record file is valid and carries on after the outage", detail)
    unbind = marks.get("unbind-done", 0) - marks.get("unbind", 0) if "unbind-done" in marks else None
    r.detail(f"unbind took {unbind:.3f} s" if unbind is not None else "the unbind never finished (the card's files stayed open)")
    show_output(r, os.path.join(folder, "play.out"), "toneshaper play said (stdout and stderr)")


def report_pacing(r, res, rate):
    """How snd-aloop woke its writer (pcmpace): the device clock the instrument has to live with."""
    for name in ("pace.txt", "pace-160.txt"):
        lines = text(os.path.join(res, name)).splitlines()
        if not lines:
            continue
        head = lines[0].replace("pcmpace: ", "")
        rows = [l.split() for l in lines[1:]]
        t = np.array([float(x[0]) for x in rows if len(x) == 3])
        xruns = sum(1 for x in rows if len(x) > 1 and x[1] == "xrun")
        if len(t) < 3:
            r.detail(f"device pacing ({head}): too few writes")
            continue
        blocked = t[1:][np.diff(t) > 0.5]
        wakes = np.diff(blocked)
        r.detail(f"device pacing ({head}): the writer woke every "
                 + (f"{np.median(wakes):.2f} ms ({wakes.min():.2f}…{wakes.max():.2f})" if len(wakes) else "? ms")
                 + f", {len(t) / max(len(blocked), 1):.2f} periods written per wake, {xruns} xruns")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--period", type=int, default=192)
    p.add_argument("--periods", type=int, default=3)
    p.add_argument("--rate", type=int, default=48000)
    a = p.parse_args()
    res = a.results
    r = Report(os.path.join(res, "report.txt"))
    guest_log = text(os.path.join(res, "guest.log"))
    if "guest: done" not in guest_log:
        r.check(False, "the guest ran every scenario", "guest.log does not end with 'guest: done' (see console.log)")
    report_pacing(r, res, a.rate)
    for section in (lambda: check_client(r, res),
                    lambda: check_song(r, res, a.period, a.periods),
                    lambda: check_record(r, res),
                    lambda: check_jitter(r, res, a.period, a.periods),
                    lambda: check_unsubscribe(r, res),
                    lambda: check_direct(r, res),
                    lambda: check_two_senders(r, res),
                    lambda: check_connect_missing(r, res),
                    lambda: check_unplug(r, res, a.rate),
                    lambda: check_defaults(r, res)):
        try:
            section()
        except Exception as e:  # a checker bug or a malformed result is a failure, not a crash
            r.check(False, f"checker error in {section.__code__.co_names[0] if section.__code__.co_names else 'a check'}",
                    f"{type(e).__name__}: {e}")
    for name in sorted(os.listdir(res)):
        d = os.path.join(res, name)
        rc = exit_status(d) if os.path.isdir(d) else None
        cpu = [l.split() for l in text(os.path.join(d, "timeline")).splitlines() if l.startswith("cpu ")] if os.path.isdir(d) else []
        marks = timeline(d) if os.path.isdir(d) else {}
        if cpu and len(cpu[0]) == 4 and "ready" in marks:
            used = float(cpu[0][1]) - float(cpu[0][2])
            wall = float(cpu[0][3]) - marks["ready"]
            if wall > 0:
                r.detail(f"{name}: toneshaper play used {100 * used / wall:.0f}% of the guest CPU while playing "
                         f"({used:.2f} s in {wall:.2f} s)")
        m = re.search(r"(\d+) xruns", text(os.path.join(d, "play.out"))) if os.path.isdir(d) else None
        if m and int(m.group(1)) > 0:
            r.detail(f"{name}: toneshaper play counted {m.group(1)} xruns")
        if rc not in (None, 0) and name != "connect-missing":
            r.detail(f"{name}: toneshaper play exited with status {rc}; see {name}/play.out and {name}/diagnostics.txt")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
