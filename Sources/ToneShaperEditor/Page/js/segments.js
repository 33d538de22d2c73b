/**
 * Segment kinds, as the engine plays them (docs/editor-api.md, "Shapes on the wire"). A point is
 * `[t, f]` or `[t, f, kind]`; the kind is that of the segment that begins at the point:
 *
 * - `linear` (the default, written as `[t, f]`): the frequency glides linearly in hertz — the
 *   article's curve, a straight line on the linear axis and a curve on the log axis;
 * - `exponential`: a constant number of semitones per second — the glide a musician hears as
 *   straight, a straight line on the log axis and a curve on the linear axis;
 * - `hold`: the point's frequency until the next point's time, then a step.
 *
 * The drawn curve and the readout's "curve" value come from here, so the picture is the sound.
 */

export const KINDS = ["linear", "exponential", "hold"];

/** The kind of the segment that begins at point p. */
export function kindOf(p) {
  return Array.isArray(p) && KINDS.includes(p[2]) ? p[2] : "linear";
}

/** Point p with the segment beginning at it of `kind`: linear is written as `[t, f]`. */
export function withKind(p, kind) {
  return kind === "linear" ? [p[0], p[1]] : [p[0], p[1], kind];
}

/** The next kind in the cycle linear → exponential → hold → linear. */
export function nextKind(kind) {
  return KINDS[(KINDS.indexOf(kind) + 1) % KINDS.length];
}

/** The frequency a fraction u ∈ [0, 1] of the way along the segment from f0 (of `kind`) to f1. */
export function segmentFrequency(kind, f0, f1, u) {
  if (kind === "hold") return u < 1 ? f0 : f1;
  if (kind === "exponential" && f0 > 0 && f1 > 0) return f0 * Math.pow(f1 / f0, u);
  return f0 + (f1 - f0) * u;
}

/**
 * The curve's frequency at time t as the engine plays it (held before the first point and after
 * the last), or null when there is none.
 */
export function curveAt(points, t) {
  if (!Array.isArray(points) || !points.length || !Number.isFinite(t)) return null;
  if (t <= points[0][0]) return points[0][1];
  for (let i = 1; i < points.length; i++) {
    const [t1, f1] = points[i];
    if (t < t1 || (t === t1 && i === points.length - 1)) {
      const p0 = points[i - 1];
      const [t0, f0] = p0;
      return t1 > t0 ? segmentFrequency(kindOf(p0), f0, f1, (t - t0) / (t1 - t0)) : f1;
    }
    if (t === t1) return f1;
  }
  return points[points.length - 1][1];
}

/**
 * Traces the points joined as they sound on the axis given: a segment that is straight on this
 * axis (linear on a linear axis, exponential on a log one) is one line; the others are sampled
 * every 2 px in x (a straight line there would be an octave off the sound in the middle of a
 * 4-octave glide); a hold is a level line and a step.
 */
export function traceSegments(ctx, axis, points) {
  points.forEach((p, i) => {
    const [t, f] = p;
    const x = axis.x(t), y = axis.y(f);
    if (i === 0) { ctx.moveTo(x, y); return; }
    const p0 = points[i - 1];
    const [t0, f0] = p0;
    const kind = kindOf(p0);
    if (kind === "hold") {
      ctx.lineTo(x, axis.y(f0));
    } else if (f !== f0 && (kind === "exponential") !== !!axis.log) {
      const steps = Math.min(512, Math.ceil(Math.abs(x - axis.x(t0)) / 2));
      for (let k = 1; k < steps; k++) {
        const u = k / steps;
        ctx.lineTo(axis.x(t0 + (t - t0) * u), axis.y(segmentFrequency(kind, f0, f, u)));
      }
    }
    ctx.lineTo(x, y);
  });
}
