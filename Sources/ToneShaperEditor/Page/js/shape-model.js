/**
 * The shape document the editor works on, exactly a preset file's JSON (Presets/*.json), and the
 * edits on its points.
 *
 * Point rules come from the format: times lie in [0, duration] and strictly increase, so every
 * edit here keeps the points sorted and never lets two share a time; a shape keeps at least two
 * points (the article plays the curve from the first point to the last).
 */

import { KINDS } from "./segments.js";

/** Smallest gap kept between two neighbouring point times, in seconds. */
export const MIN_TIME_GAP = 1e-6;

/** A fresh shape for "New": a flat A4 over one second, the server's defaults elsewhere. */
export function newShape(name = "untitled") {
  return {
    name,
    description: "",
    program: 0,
    duration: 1,
    minFrequency: 20,
    maxFrequency: 2000,
    points: [[0, 440], [1, 440]],
    wave: "sine",
    amplitude: 0.5,
    envelope: { kind: "constant" },
    echo: { delay: 0.25, volume: 0 },
    fidelity: 1000,
    fourierTerms: 10,
    rootNote: 69,
    attack: 0.005,
    release: 0.05,
  };
}

export function cloneShape(shape) {
  return JSON.parse(JSON.stringify(shape));
}

/**
 * Fills the optional fields a preset file may leave out (the file loader's defaults), so every
 * control has a value to show. Values that are present are kept as they are.
 */
export function normalizeShape(input) {
  const base = newShape(input.name || "untitled");
  const shape = { ...base, ...cloneShape(input) };
  shape.envelope = { ...(input.envelope || base.envelope) };
  shape.echo = { ...base.echo, ...(input.echo || {}) };
  if (!Array.isArray(shape.points)) shape.points = [];
  if (input.minFrequency === undefined || input.maxFrequency === undefined) {
    const fs = shape.points.map((p) => p[1]).filter(Number.isFinite);
    if (input.minFrequency === undefined && fs.length) shape.minFrequency = Math.min(...fs);
    if (input.maxFrequency === undefined && fs.length) shape.maxFrequency = Math.max(...fs);
  }
  return shape;
}

const isNumber = (v) => typeof v === "number" && Number.isFinite(v);
const isWhole = (v) => isNumber(v) && Math.round(v) === v;

/**
 * The same rules as the server's Shape.validate and file loader, checked in the page only to
 * decide whether Save may be sent: the message shown to the user is always the server's.
 * `limits` are the server's (`GET /api/info`): the longest duration, the highest frequency, the
 * most points.
 * @returns {{field: string}|null} the first field at fault, or null when the shape looks valid
 */
export function firstInvalidField(shape, waves, limits = {}) {
  const bad = (field) => ({ field });
  const { maxDuration = 600, maxFrequency = 100000, maxPoints = 4096 } = limits || {};
  if (!(isNumber(shape.duration) && shape.duration > 0 && shape.duration <= maxDuration)) return bad("duration");
  if (!(isNumber(shape.minFrequency) && shape.minFrequency > 0)) return bad("minFrequency");
  if (!(isNumber(shape.maxFrequency) && shape.maxFrequency >= shape.minFrequency &&
        shape.maxFrequency <= maxFrequency)) return bad("maxFrequency");
  if (!Array.isArray(shape.points) || shape.points.length < 2 || shape.points.length > maxPoints) return bad("points");
  for (let i = 0; i < shape.points.length; i++) {
    const point = shape.points[i];
    if (!Array.isArray(point) || point.length < 2 || point.length > 3) return bad(`points[${i}]`);
    // [t, f, kind]: the kind of the segment that begins at the point (segments.js).
    if (point.length === 3 && !KINDS.includes(point[2])) return bad(`points[${i}][2]`);
    const [t, f] = point;
    if (!(isNumber(t) && t >= 0 && t <= shape.duration + 1e-9)) return bad(`points[${i}].time`);
    if (i > 0 && !(t > shape.points[i - 1][0])) return bad(`points[${i}].time`);
    if (!(isNumber(f) && f > 0 && f >= shape.minFrequency && f <= shape.maxFrequency)) return bad(`points[${i}].frequency`);
  }
  if (!(isWhole(shape.fidelity) && shape.fidelity >= 1 && shape.fidelity <= 1_000_000)) return bad("fidelity");
  if (!(isWhole(shape.fourierTerms) && shape.fourierTerms >= 1 && shape.fourierTerms <= 512)) return bad("fourierTerms");
  if (!(isNumber(shape.amplitude) && shape.amplitude >= 0 && shape.amplitude <= 1)) return bad("amplitude");
  if (!(isWhole(shape.rootNote) && shape.rootNote >= 0 && shape.rootNote <= 127)) return bad("rootNote");
  if (!(isWhole(shape.program) && shape.program >= 0 && shape.program <= 127)) return bad("program");
  if (!(isNumber(shape.echo?.delay) && shape.echo.delay > 0 && shape.echo.delay <= 2)) return bad("echo.delay");
  if (!(isNumber(shape.echo?.volume) && shape.echo.volume >= 0 && shape.echo.volume < 1)) return bad("echo.volume");
  if (!(isNumber(shape.attack) && shape.attack >= 0 && shape.attack <= 10)) return bad("attack");
  if (!(isNumber(shape.release) && shape.release >= 0 && shape.release <= 30)) return bad("release");
  const kind = shape.envelope?.kind;
  if (!["constant", "linear-decay", "exponential-decay"].includes(kind)) return bad("envelope.kind");
  if (kind === "exponential-decay" && shape.envelope.rate !== undefined &&
      !(isNumber(shape.envelope.rate) && shape.envelope.rate >= 0)) return bad("envelope.rate");
  if (waves && waves.length && !waves.includes(shape.wave)) return bad("wave");
  if (typeof shape.name !== "string" || typeof shape.description !== "string") return bad("name");
  return null;
}

/** Index of the point at `time` (within a hair), or −1. */
export function pointAtTime(points, time) {
  return points.findIndex(([t]) => Math.abs(t - time) < MIN_TIME_GAP / 2);
}

/**
 * Adds a point, kept in time order. A point already at that time is moved to the new frequency
 * instead (two points may not share a time); either keeps its segment's kind.
 * @returns {number} the index of the added (or moved) point
 */
export function insertPoint(points, time, frequency) {
  const same = pointAtTime(points, time);
  if (same >= 0) {
    points[same] = [points[same][0], frequency, ...points[same].slice(2)];
    return same;
  }
  let i = 0;
  while (i < points.length && points[i][0] < time) i++;
  // A point splitting a segment begins a segment of the same kind, so both halves sound alike.
  const kind = i > 0 && i < points.length ? points[i - 1].slice(2) : [];
  points.splice(i, 0, [time, frequency, ...kind]);
  return i;
}

/**
 * The time range a point may be dragged over: strictly between its neighbours, within
 * [0, duration].
 */
export function dragRange(points, index, duration) {
  const lo = index > 0 ? points[index - 1][0] + MIN_TIME_GAP : 0;
  const hi = index < points.length - 1 ? points[index + 1][0] - MIN_TIME_GAP : duration;
  return [lo, Math.max(lo, hi)];
}

/**
 * Replaces the points whose times lie in [from, to] by `replacement` (sorted, within [from, to]).
 * Points outside the span are kept.
 */
export function replaceSpan(points, from, to, replacement) {
  const before = points.filter(([t]) => t < from - MIN_TIME_GAP / 2);
  const after = points.filter(([t]) => t > to + MIN_TIME_GAP / 2);
  return [...before, ...replacement, ...after];
}

/** Rounds a time for storage: microseconds are finer than any fidelity N ≤ 10⁶ over a second. */
export function roundTime(t) {
  return Math.round(t * 1e6) / 1e6;
}

/** Rounds a drawn (unsnapped) frequency to a thousandth of a hertz. */
export function roundFrequency(f) {
  return Math.round(f * 1000) / 1000;
}

/** The value at a dotted path ("echo.volume", "envelope.rate"), or undefined. */
export function getField(shape, path) {
  return path.split(".").reduce((node, key) => (node == null ? undefined : node[key]), shape);
}

/**
 * Sets a field from a control. Choosing an envelope kind rebuilds the envelope object the way the
 * format writes it: `rate` only with exponential-decay (then the rate shown, else 2 per second).
 */
export function setField(shape, path, value, { envelopeRate } = {}) {
  if (path === "envelope.kind") {
    shape.envelope = value === "exponential-decay"
      ? { kind: value, rate: envelopeRate !== undefined ? envelopeRate : (shape.envelope?.rate ?? 2) }
      : { kind: value };
    return;
  }
  const keys = path.split(".");
  let node = shape;
  for (const key of keys.slice(0, -1)) {
    if (node[key] == null || typeof node[key] !== "object") node[key] = {};
    node = node[key];
  }
  node[keys[keys.length - 1]] = value;
}

/**
 * The points of a curve drawn over `from` seconds, stretched to `to` seconds: the view's width is
 * [0, duration], so a new duration keeps the drawing and changes its speed. A point at the end
 * stays exactly at the end. With a duration that is not a positive number the points are
 * returned unchanged (the server then names the duration).
 */
export function scaleTimes(points, from, to) {
  const ok = (d) => typeof d === "number" && Number.isFinite(d) && d > 0;
  if (!ok(from) || !ok(to)) return points.map((p) => p.slice());
  return points.map(([t, f]) => [t === from ? to : roundTime((t * to) / from), f]);
}
