/**
 * The curve view's coordinate mapping: time ↔ x over [0, duration], frequency ↔ y over
 * [minFrequency, maxFrequency], linearly or logarithmically, plus the gridlines for both axes.
 *
 * Kept apart from drawing so that clicks, drags, sketches and the tests all use one mapping:
 *   x = left + width · t / duration
 *   linear: y = top + height · (1 − (f − min) / (max − min))
 *   log:    y = top + height · (1 − log(f / min) / log(max / min))
 */

import { frequencyToMidi, midiToFrequency, noteName } from "./notes.js";

export class Axis {
  /**
   * @param {{left:number, top:number, width:number, height:number}} plot  CSS pixels
   * @param {number} duration seconds
   * @param {number} minFrequency Hz
   * @param {number} maxFrequency Hz
   * @param {boolean} log
   */
  constructor(plot, duration, minFrequency, maxFrequency, log) {
    this.plot = plot;
    this.duration = duration;
    this.minFrequency = minFrequency;
    this.maxFrequency = maxFrequency;
    this.log = log;
  }

  x(t) {
    return this.plot.left + (this.plot.width * t) / this.duration;
  }

  y(f) {
    return this.plot.top + this.plot.height * (1 - this.fraction(f));
  }

  /** 0 at minFrequency, 1 at maxFrequency (may fall outside for frequencies out of range). */
  fraction(f) {
    if (this.log) {
      if (!(f > 0)) return -1;
      return Math.log(f / this.minFrequency) / Math.log(this.maxFrequency / this.minFrequency);
    }
    return (f - this.minFrequency) / (this.maxFrequency - this.minFrequency);
  }

  time(x) {
    return ((x - this.plot.left) / this.plot.width) * this.duration;
  }

  frequency(y) {
    const u = 1 - (y - this.plot.top) / this.plot.height;
    if (this.log) return this.minFrequency * Math.pow(this.maxFrequency / this.minFrequency, u);
    return this.minFrequency + u * (this.maxFrequency - this.minFrequency);
  }

  /** The time and frequency under a pointer, held inside [0, duration] × [min, max]. */
  valueAt(x, y) {
    const t = Math.min(this.duration, Math.max(0, this.time(x)));
    const f = Math.min(this.maxFrequency, Math.max(this.minFrequency, this.frequency(y)));
    return [t, f];
  }

  /** Time gridlines: a 1-2-5 step giving roughly one line per 90 px. */
  timeTicks() {
    const step = niceStep(this.duration / Math.max(1, this.plot.width / 90));
    const ticks = [];
    for (let i = 0; i * step <= this.duration * (1 + 1e-9); i++) ticks.push(i * step);
    return { step, ticks };
  }

  /**
   * Frequency gridlines with note names: every semitone in range, each with a label when there is
   * room. Labels are given out in order of importance — A4 = 440 Hz, then the Cs (C4 = 261.6 Hz),
   * then the As, then E and G — and one closer than `minGap` px to a label already kept is
   * dropped; the remaining semitones are labelled only when every one of them fits.
   */
  noteTicks(minGap = 16) {
    const lo = Math.ceil(frequencyToMidi(this.minFrequency) - 1e-9);
    const hi = Math.floor(frequencyToMidi(this.maxFrequency) + 1e-9);
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
      for (let d = Math.floor(Math.log10(this.minFrequency)); d <= Math.ceil(Math.log10(this.maxFrequency)); d++) {
        for (const m of [1, 2, 5]) {
          const f = m * Math.pow(10, d);
          if (f >= this.minFrequency * (1 - 1e-9) && f <= this.maxFrequency * (1 + 1e-9)) ticks.push(f);
        }
      }
    } else {
      const step = niceStep((this.maxFrequency - this.minFrequency) / Math.max(1, this.plot.height / 50));
      for (let f = Math.ceil(this.minFrequency / step) * step; f <= this.maxFrequency + 1e-9; f += step) ticks.push(f);
    }
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
