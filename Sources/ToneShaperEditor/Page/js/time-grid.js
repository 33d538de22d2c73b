/**
 * The time grid: the shape's duration divided into equal steps (2, 3, 4, … 64), as a step
 * sequencer or an MSEG's grid divides a bar. When on, it is drawn over the curve and placed,
 * dragged, sketched, pasted and nudged points land on it, beside the semitone snap for pitch.
 */

import { roundTime } from "./shape-model.js";

/** The divisions offered (0 = off). */
export const DIVISIONS = [0, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64];

/** One grid step in seconds, or 0 when the grid is off or the duration is not usable. */
export function gridStep(duration, divisions) {
  return divisions > 0 && duration > 0 && Number.isFinite(duration) ? duration / divisions : 0;
}

/** The grid time nearest to t (t unchanged when the grid is off), inside [0, duration]. */
export function snapTime(t, duration, divisions) {
  const step = gridStep(duration, divisions);
  if (!step) return t;
  const k = Math.min(divisions, Math.max(0, Math.round(t / step)));
  // k·duration/divisions, not k·step: the last line is exactly the duration.
  return k === divisions ? duration : roundTime((k * duration) / divisions);
}

/** Draws the grid's lines across the plot (only those inside the visible time range). */
export function drawTimeDivisions(ctx, axis, duration, divisions) {
  const step = gridStep(duration, divisions);
  if (!step) return;
  const p = axis.plot;
  ctx.save();
  ctx.lineWidth = 1;
  for (let k = 0; k <= divisions; k++) {
    const x = Math.round(axis.x((k * duration) / divisions)) + 0.5;
    if (x < p.left - 0.5 || x > p.left + p.width + 0.5) continue;
    // Every 4th line (a beat of a bar of 16) a little stronger, as sequencers draw them.
    ctx.strokeStyle = k % 4 === 0 && divisions % 4 === 0 ? "rgba(120, 170, 255, 0.42)" : "rgba(120, 170, 255, 0.24)";
    ctx.beginPath();
    ctx.moveTo(x, p.top);
    ctx.lineTo(x, p.top + p.height);
    ctx.stroke();
  }
  ctx.restore();
}
