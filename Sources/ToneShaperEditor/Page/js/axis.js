/**
 * The curve view's coordinate mapping: time ↔ x over the visible window [start, end] (all of
 * [0, duration] unless zoomed), frequency ↔ y over [low, high] (all of [minFrequency,
 * maxFrequency] unless zoomed), linearly or logarithmically, plus the gridlines for both axes.
 *
 * Kept apart from drawing so that clicks, drags, sketches and the tests all use one mapping:
 *   x = left + width · (t − start) / (end − start)
 *   linear: y = top + height · (1 − (f − low) / (high − low))
 *   log:    y = top + height · (1 − log(f / low) / log(high / low))
 * A value under the pointer is held inside the extent [0, duration] × [minFrequency, maxFrequency].
 */

import { frequencyToMidi, midiToFrequency, noteName } from "./notes.js";

export class Axis {
  /**
   * @param {{left:number, top:number, width:number, height:number}} plot  CSS pixels
   * @param {number} duration seconds
   * @param {number} minFrequency Hz
   * @param {number} maxFrequency Hz
   * @param {boolean} log
   * @param {{start:number, end:number, low:number, high:number}} [window] the part in view (zoom)
   */
  constructor(plot, duration, minFrequency, maxFrequency, log, window) {
    this.plot = plot;
    this.duration = duration;
    this.minFrequency = minFrequency;
    this.maxFrequency = maxFrequency;
    this.log = log;
    this.start = window ? window.start : 0;
    this.end = window ? window.end : duration;
    this.low = window ? window.low : minFrequency;
    this.high = window ? window.high : maxFrequency;
  }

  x(t) {
    return this.plot.left + (this.plot.width * (t - this.start)) / (this.end - this.start);
  }

  y(f) {
    return this.plot.top + this.plot.height * (1 - this.fraction(f));
  }

  /** 0 at the bottom of the window, 1 at its top (outside for frequencies out of view). */
  fraction(f) {
    if (this.log) {
      if (!(f > 0)) return -1;
      return Math.log(f / this.low) / Math.log(this.high / this.low);
    }
    return (f - this.low) / (this.high - this.low);
  }

  time(x) {
    return this.start + ((x - this.plot.left) / this.plot.width) * (this.end - this.start);
  }

  frequency(y) {
    const u = 1 - (y - this.plot.top) / this.plot.height;
    if (this.log) return this.low * Math.pow(this.high / this.low, u);
    return this.low + u * (this.high - this.low);
  }

  /** The time and frequency under a pointer, held inside [0, duration] × [min, max]. */
  valueAt(x, y) {
    const t = Math.min(this.duration, Math.max(0, this.time(x)));
    const f = Math.min(this.maxFrequency, Math.max(this.minFrequency, this.frequency(y)));
    return [t, f];
  }

  /** Time gridlines: a 1-2-5 step giving roughly one line per 90 px. */
  timeTicks() {
    const span = this.end - this.start;
    const step = niceStep(span / Math.max(1, this.plot.width / 90));
    const ticks = [];
    const first = Math.ceil(this.start / step - 1e-9);
    for (let i = first; i * step <= this.end + span * 1e-9; i++) ticks.push(i * step);
    return { step, ticks };
  }

  /**
   * Frequency gridlines with note names: every semitone in range, each with a label when there is
   * room. Labels are given out in order of importance — A4 = 440 Hz, then the Cs (C4 = 261.6 Hz),
   * then the As, then E and G — and one closer than `minGap` px to a label already kept is
   * dropped; the remaining semitones are labelled only when every one of them fits.
   */
  noteTicks(minGap = 16) {
    const lo = Math.ceil(frequencyToMidi(this.low) - 1e-9);
    const hi = Math.floor(frequencyToMidi(this.high) + 1e-9);
    const notes = [];
    for (let m = Math.max(0, lo); m <= Math.min(135, hi); m++) {
      const f = midiToFrequency(m);
      notes.push({ midi: m, frequency: f, y: this.y(f), name: noteName(m), major: m % 12 === 0 || m === 69 });
    }
    const semitonePx = notes.length > 1 ? Math.abs(notes[1].y - notes[0].y) : Infinity;
    const labelled = [];
    const order = [...notes].filter((n) => rank(n) < 3 || semitonePx >= minGap).sort((a, b) => rank(a) - rank(b));
    for (const n of order) {
      if (labelled.every((l) => Math.abs(l.y - n.y) >= minGap)) labelled.push(n);
    }
    for (const n of notes) n.label = labelled.includes(n);
    return { notes, semitonePx };
  }

  /** Hertz gridlines: 1-2-5 steps (linear) or decades with 2 and 5 (log). */
  hertzTicks() {
    const ticks = [];
    if (this.log) {
      for (let d = Math.floor(Math.log10(this.low)); d <= Math.ceil(Math.log10(this.high)); d++) {
        for (const m of [1, 2, 5]) {
          const f = m * Math.pow(10, d);
          if (f >= this.low * (1 - 1e-9) && f <= this.high * (1 + 1e-9)) ticks.push(f);
        }
      }
      // A window zoomed in to less than a few of these gets linear steps instead.
      if (ticks.length >= 3) return ticks;
      ticks.length = 0;
    }
    const step = niceStep((this.high - this.low) / Math.max(1, this.plot.height / 50));
    for (let i = Math.ceil(this.low / step - 1e-9); i * step <= this.high * (1 + 1e-12); i++) ticks.push(i * step);
    return ticks;
  }
}

/** Label priority: A4, the Cs, the As, E and G, then the rest. */
function rank(n) {
  if (n.midi === 69) return -1;
  const pitch = n.midi % 12;
  if (pitch === 0) return 0;
  if (pitch === 9) return 1;
  if (pitch === 4 || pitch === 7) return 2;
  return 3;
}

/** The 1, 2 or 5 × 10^k at or above `raw`. */
export function niceStep(raw) {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
