/**
 * Ramer–Douglas–Peucker simplification of a sketched polyline.
 *
 * Why: a drag in Draw mode yields one sample per pointer event (dozens to hundreds), but a shape
 * is a handful of points the user can then move one by one, as in the article's draw view whose
 * samples are handed to the plot view. RDP keeps the first and the last sample and, recursively,
 * the sample farthest from the chord between two kept samples whenever it lies farther than
 * `tolerance` from that chord; every other sample is dropped. So the result never strays more
 * than `tolerance` from the sketch.
 *
 * The editor runs it on the sketch in *screen pixels* (CSS px of the curve view), before mapping
 * to time and frequency: the tolerance then means what the eye sees on either axis scale
 * (linear or logarithmic), whatever the duration and the frequency range.
 */

/**
 * Distance from p to the segment a–b (to the nearer end when the foot falls outside it).
 * @param {{x:number,y:number}} p
 * @param {{x:number,y:number}} a
 * @param {{x:number,y:number}} b
 */
export function distanceToSegment(p, a, b) {
  const dx = b.x - a.x, dy = b.y - a.y;
  const len2 = dx * dx + dy * dy;
  if (len2 === 0) return Math.hypot(p.x - a.x, p.y - a.y);
  let u = ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2;
  u = Math.max(0, Math.min(1, u));
  return Math.hypot(p.x - (a.x + u * dx), p.y - (a.y + u * dy));
}

/**
 * The samples RDP keeps, in their original order (iterative, so a long sketch cannot overflow
 * the stack).
 * @param {Array<{x:number,y:number}>} points
 * @param {number} tolerance  same unit as the coordinates; 0 keeps every non-collinear sample
 * @returns {Array<{x:number,y:number}>}
 */
export function simplify(points, tolerance) {
  const n = points.length;
  if (n <= 2) return points.slice();
  const keep = new Uint8Array(n);
  keep[0] = 1;
  keep[n - 1] = 1;
  const stack = [[0, n - 1]];
  while (stack.length > 0) {
    const [first, last] = stack.pop();
    let worst = -1, worstDistance = -1;
    for (let i = first + 1; i < last; i++) {
      const d = distanceToSegment(points[i], points[first], points[last]);
      if (d > worstDistance) { worstDistance = d; worst = i; }
    }
    if (worst >= 0 && worstDistance > tolerance) {
      keep[worst] = 1;
      stack.push([first, worst], [worst, last]);
    }
  }
  return points.filter((_, i) => keep[i] === 1);
}
