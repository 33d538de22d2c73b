/**
 * Edits on a group of points — the selection — that keep a shape valid: times strictly
 * increasing inside [0, duration], frequencies inside [minFrequency, maxFrequency], at least two
 * points. Pure functions on point lists (no DOM), so the pointer, the keys, the typed fields and
 * the clipboard all move, delete and paste points by the same rules.
 *
 * A point is `[time, frequency]` or `[time, frequency, kind]` (the kind of the segment that
 * begins at it); every edit here keeps a point's kind.
 */

import { MIN_TIME_GAP, roundTime, roundFrequency } from "./shape-model.js";
import { snapToSemitone } from "./notes.js";

/** A copy of point `p` at time t and frequency f, with its segment kind kept. */
export function withTimeAndFrequency(p, t, f) {
  return p.length > 2 ? [t, f, ...p.slice(2)] : [t, f];
}

/** Sorted, unique, in-range indices. */
export function normalizeIndices(indices, count) {
  return [...new Set(indices)].filter((i) => Number.isInteger(i) && i >= 0 && i < count).sort((a, b) => a - b);
}

/**
 * How far the group may move in time: [dtMin, dtMax] such that no selected point reaches an
 * unselected neighbour (each run of adjacent selected points stays between the points around
 * it) and all stay inside [0, duration].
 */
export function timeShiftRange(points, indices, duration) {
  const chosen = new Set(indices);
  let lo = -Infinity, hi = Infinity;
  for (const i of indices) {
    const t = points[i][0];
    if (i === 0 || !chosen.has(i - 1)) {
      const floor = i > 0 ? points[i - 1][0] + MIN_TIME_GAP : 0;
      lo = Math.max(lo, floor - t);
    }
    if (i === points.length - 1 || !chosen.has(i + 1)) {
      const ceiling = i < points.length - 1 ? points[i + 1][0] - MIN_TIME_GAP : duration;
      hi = Math.min(hi, ceiling - t);
    }
  }
  if (!indices.length) return [0, 0];
  return [Math.min(0, lo), Math.max(0, hi)];
}

/**
 * The group moved by dt seconds (held so it crosses no neighbour) and each frequency mapped by
 * `frequencyOf(f)`. When a mapped frequency would leave [lo, hi] Hz the frequencies stay as they
 * were (the group keeps its form rather than being squashed against the edge; the pointer code
 * holds its own move inside the range first). Returns the new point list.
 */
export function moveGroup(points, indices, dt, frequencyOf, { duration, lo, hi }) {
  const [dtMin, dtMax] = timeShiftRange(points, indices, duration);
  const shift = Math.min(dtMax, Math.max(dtMin, dt));
  let mapped = indices.map((i) => frequencyOf(points[i][1]));
  const inRange = (f) => Number.isFinite(f) && f >= lo * (1 - 1e-12) && f <= hi * (1 + 1e-12);
  if (!mapped.every(inRange)) mapped = indices.map((i) => points[i][1]);
  const next = points.map((p) => p.slice());
  indices.forEach((i, j) => {
    next[i] = withTimeAndFrequency(points[i], roundTime(points[i][0] + shift), mapped[j]);
  });
  return keepOrder(next, points, indices);
}

/**
 * Rounding a moved time to the microsecond can land it on a neighbour: such a point is left
 * where it was, so the list stays strictly increasing.
 */
function keepOrder(next, original, indices) {
  for (const i of indices) {
    const before = i > 0 ? next[i - 1][0] : -Infinity;
    const after = i < next.length - 1 ? next[i + 1][0] : Infinity;
    if (!(next[i][0] > before && next[i][0] < after)) next[i] = withTimeAndFrequency(next[i], original[i][0], next[i][1]);
  }
  return next;
}

/**
 * Deletes the points at `indices`. Refused (null) when fewer than two points would be left.
 */
export function deleteGroup(points, indices) {
  const chosen = new Set(indices);
  const next = points.filter((_, i) => !chosen.has(i)).map((p) => p.slice());
  return next.length >= 2 ? next : null;
}

/**
 * A frequency moved by `cents`, rounded as the page stores frequencies; a semitone step from a
 * point already on a semitone lands exactly on the next one.
 */
export function transposeFrequency(f, cents) {
  const moved = f * Math.pow(2, cents / 1200);
  const onSemitone = Number.isInteger(cents / 100) && snapToSemitone(f) === f;
  return onSemitone ? snapToSemitone(moved) : roundFrequency(moved);
}

/**
 * What the clipboard holds for a group: its points with times measured from the first one.
 * @returns {{points: Array, span: number}}
 */
export function copyGroup(points, indices) {
  if (!indices.length) return null;
  const t0 = points[indices[0]][0];
  const copied = indices.map((i) => withTimeAndFrequency(points[i], roundTime(points[i][0] - t0), points[i][1]));
  return { points: copied, span: copied[copied.length - 1][0] };
}

/**
 * Pastes copied points starting at time `at`: they replace the points whose times lie in the
 * span they cover, points past the end of the shape are dropped and frequencies are held inside
 * the range, so the result is a valid shape.
 * @returns {{points: Array, indices: number[]}|null} the new list and where the pasted points
 *   are, or null when nothing could be pasted
 */
export function pasteGroup(points, copied, at, { duration, lo, hi }) {
  if (!copied || !copied.points.length || !(at >= 0)) return null;
  const pasted = [];
  for (const p of copied.points) {
    const t = roundTime(at + p[0]);
    if (t > duration + 1e-9) break;
    if (pasted.length && t < pasted[pasted.length - 1][0] + MIN_TIME_GAP) continue;
    pasted.push(withTimeAndFrequency(p, Math.min(t, duration), Math.min(hi, Math.max(lo, p[1]))));
  }
  if (!pasted.length) return null;
  const from = pasted[0][0], to = pasted[pasted.length - 1][0];
  const before = points.filter(([t]) => t < from - MIN_TIME_GAP / 2).map((p) => p.slice());
  const after = points.filter(([t]) => t > to + MIN_TIME_GAP / 2).map((p) => p.slice());
  const next = [...before, ...pasted, ...after];
  if (next.length < 2) return null;
  return { points: next, indices: pasted.map((_, j) => before.length + j) };
}
