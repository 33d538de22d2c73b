/**
 * The selected point's time and frequency typed exactly, under the curve: time in seconds,
 * frequency in hertz ("261.63", "1.2 kHz") or as a note and cents ("A4", "A4 +12", "C♯3 −5¢",
 * "Bb2+30"). What is typed is checked as it is typed — a value that is not a number or a note,
 * out of the shape's range, or not strictly between the neighbouring points' times — and the
 * reason is shown under the box at once; Enter or leaving the box puts the point exactly there
 * (one undo step). A point keeps its segment kind; the kind's menu beside them sets the kind of
 * the segments beginning at the selected points (segments.js).
 */

import { A4_FREQUENCY, A4_MIDI, describePitch } from "./notes.js";
import { withTimeAndFrequency } from "./selection.js";
import { kindOf } from "./segments.js";

const LETTERS = { c: 0, d: 2, e: 4, f: 5, g: 7, a: 9, b: 11 };
const NUMBER = String.raw`[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?`;
/** Longer text is no time or frequency anyone types, and is not handed to the patterns. */
const MAX_TYPED = 64;

/**
 * Reads a frequency as typed: hertz, kilohertz or a note with optional cents.
 * @returns {{value: number}|{error: string}}
 */
export function parseFrequency(text) {
  const s = String(text).trim().replace(/−/g, "-");
  if (!s) return { error: "is empty: type hertz (440) or a note (A4, A4 +12)" };
  if (s.length > MAX_TYPED) return { error: `is ${s.length} characters long: type hertz (440) or a note (A4, A4 +12)` };
  const hertz = new RegExp(`^(${NUMBER})\\s*(hz|khz)?$`, "i").exec(s);
  if (hertz) {
    const value = Number(hertz[1]) * (hertz[2] && hertz[2].toLowerCase() === "khz" ? 1000 : 1);
    if (!Number.isFinite(value) || !(value > 0)) return { error: `'${text}': a frequency must be a number of hertz above 0` };
    return { value };
  }
  const note = /^([a-g])\s*([#♯b♭]?)\s*(-?\d{1,2})\s*(?:([+-])\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:¢|c|cents?)?)?$/i.exec(s);
  if (note) {
    const accidental = note[2] === "#" || note[2] === "♯" ? 1 : note[2] === "b" || note[2] === "♭" ? -1 : 0;
    const midi = (Number(note[3]) + 1) * 12 + LETTERS[note[1].toLowerCase()] + accidental;
    const cents = note[4] ? (note[4] === "-" ? -1 : 1) * Number(note[5]) : 0;
    if (Math.abs(cents) > 1200) return { error: `'${text}': cents must lie within ±1200` };
    const value = A4_FREQUENCY * Math.pow(2, (midi - A4_MIDI + cents / 100) / 12);
    // Kept to a billionth of a hertz, as the semitone snap keeps its notes.
    return { value: Math.round(value * 1e9) / 1e9 };
  }
  return { error: `'${text}': not a frequency; type hertz (440, 1.2 kHz) or a note and cents (A4, A4 +12, C#3 -5)` };
}

/** @returns {{value: number}|{error: string}} */
export function parseTime(text) {
  const s = String(text).trim().replace(/−/g, "-");
  if (!s) return { error: "is empty: type a time in seconds" };
  if (s.length > MAX_TYPED) return { error: `is ${s.length} characters long: type a time in seconds` };
  const match = new RegExp(`^(${NUMBER})\\s*(s|ms)?$`, "i").exec(s);
  const value = match ? Number(match[1]) / (match[2] && match[2].toLowerCase() === "ms" ? 1000 : 1) : NaN;
  if (!Number.isFinite(value)) return { error: `'${text}': not a time; type seconds (0.25) or milliseconds (250 ms)` };
  return { value };
}

/** The checks of a typed time for point `index`: inside the shape, strictly between its neighbours. */
export function checkTime(points, index, t, duration) {
  if (t < 0) return `${t} s: a point's time must be ≥ 0`;
  if (Number.isFinite(duration) && t > duration) return `${t} s: past the end of the shape (${duration} s)`;
  const before = index > 0 ? points[index - 1][0] : null;
  const after = index < points.length - 1 ? points[index + 1][0] : null;
  if ((before !== null && !(t > before)) || (after !== null && !(t < after))) {
    const lo = before === null ? "0" : `${before}`, hi = after === null ? `${duration}` : `${after}`;
    return `${t} s: must lie between the points either side (${lo} s and ${hi} s)`;
  }
  return null;
}

/** The check of a frequency against the shape's range. */
export function checkFrequency(f, minFrequency, maxFrequency) {
  if (f < minFrequency) return `${f} Hz is below Min (${minFrequency} Hz)`;
  if (f > maxFrequency) return `${f} Hz is above Max (${maxFrequency} Hz)`;
  return null;
}

export class PointFields {
  /**
   * @param {HTMLElement} root the element holding the boxes (data-testid point-time, point-frequency)
   * @param {{edit: (points: Array) => void, setKind: (kind: string) => void}} callbacks  `edit`
   *   commits a new point list, `setKind` gives the selected points' segments a kind
   */
  constructor(root, callbacks) {
    this.root = root;
    this.callbacks = callbacks;
    this.shape = null;
    this.index = -1;
    this.selectedCount = 0;
    const q = (id) => root.querySelector(`[data-testid='${id}']`);
    this.label = q("point-label");
    this.pitch = q("point-pitch");
    this.boxes = {
      time: { input: q("point-time"), error: q("error-point-time"), parse: parseTime },
      frequency: { input: q("point-frequency"), error: q("error-point-frequency"), parse: parseFrequency },
    };
    this.kind = q("point-kind");
    this.kind.addEventListener("change", () => this.callbacks.setKind(this.kind.value));
    for (const [name, box] of Object.entries(this.boxes)) {
      box.input.addEventListener("input", () => { box.dirty = true; this.check(name); });
      box.input.addEventListener("change", () => this.apply(name));
      box.input.addEventListener("keydown", (e) => {
        if (e.key === "Escape") { box.dirty = false; this.show(); box.input.blur(); }
      });
    }
  }

  /** The shape and the selected point changed (an edit, undo, another selection). */
  update(shape, index, selectedCount) {
    const moved = index !== this.index;
    this.shape = shape;
    this.index = index;
    this.selectedCount = selectedCount;
    if (moved) for (const box of Object.values(this.boxes)) box.dirty = false;
    this.show();
  }

  point() {
    return this.shape && this.index >= 0 ? this.shape.points[this.index] : null;
  }

  /** Writes the point's values into the boxes, except one being typed in. */
  show() {
    const p = this.point();
    for (const [name, box] of Object.entries(this.boxes)) {
      box.input.disabled = !p;
      if (box.dirty && document.activeElement === box.input) continue;
      box.dirty = false;
      box.input.value = p ? String(name === "time" ? p[0] : p[1]) : "";
      this.setError(name, null);
    }
    this.pitch.textContent = p ? describePitch(p[1]) : "";
    this.kind.disabled = !p;
    this.kind.value = p ? kindOf(p) : "linear";
    this.label.textContent = !p ? "No point selected"
      : `Point ${this.index + 1}/${this.shape.points.length}` + (this.selectedCount > 1 ? ` · ${this.selectedCount} selected` : "");
    this.label.title = this.label.textContent;
  }

  setError(name, message) {
    const box = this.boxes[name];
    box.error.textContent = message || "";
    box.error.hidden = !message;
    box.input.toggleAttribute("aria-invalid", !!message);
    box.input.classList.toggle("invalid", !!message);
  }

  /** Checks what the box holds; returns the value when it can be used, else shows why not. */
  check(name) {
    const p = this.point();
    if (!p) return null;
    const read = this.boxes[name].parse(this.boxes[name].input.value);
    let message = read.error || null;
    if (!message && name === "time") message = checkTime(this.shape.points, this.index, read.value, this.shape.duration);
    if (!message && name === "frequency") message = checkFrequency(read.value, this.shape.minFrequency, this.shape.maxFrequency);
    if (!message && name === "frequency") this.pitch.textContent = describePitch(read.value);
    this.setError(name, message ? `${name === "time" ? "Time" : "Frequency"} ${message}` : null);
    return message ? null : read.value;
  }

  /** Enter or leaving the box: the point goes exactly to the value typed. */
  apply(name) {
    const box = this.boxes[name];
    if (!box.dirty) return;
    const value = this.check(name);
    if (value === null) return;
    box.dirty = false;
    const p = this.point();
    const next = this.shape.points.map((q) => q.slice());
    next[this.index] = name === "time" ? withTimeAndFrequency(p, value, p[1]) : withTimeAndFrequency(p, p[0], value);
    this.callbacks.edit(next);
  }
}
