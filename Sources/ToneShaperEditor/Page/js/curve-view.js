/**
 * The curve view: v(t) drawn over [0, duration] × [minFrequency, maxFrequency], the curve as
 * played at fidelity N on top of it, and the two ways of drawing from the article.
 *
 * - Points mode (the article's plot view): a click on empty space places a point; a drag on
 *   empty space draws a box that selects the points inside (Shift: adds to the selection); a
 *   click on a point selects it, Shift-click adds or removes it; a press on a selected point
 *   drags the whole selection (never past an unselected neighbour, so the points stay in time
 *   order); right-click deletes a point.
 * - Draw mode (the article's draw view): a drag sketches a curve; on release the sketch is
 *   reduced by Ramer–Douglas–Peucker (simplify.js) with a tolerance in CSS pixels, and the
 *   result replaces the points whose times lie in the span the sketch covered.
 *
 * Pointer Events with pointer capture, so mouse, pen and touch all work. The view never owns the
 * shape: it reports new point lists through `onEdit(points, {commit})`, where commit is false
 * while a gesture is under way and true when it ends (one undo step per gesture).
 */

import { Axis } from "./axis.js";
import { beginChart, verticalGridLine, watchSize, MONO, SANS } from "./canvas.js";
import { snapToSemitone, formatFrequency, describePitch, isBlackKey } from "./notes.js";
import { simplify } from "./simplify.js";
import { Viewport } from "./viewport.js";
import { insertPoint, replaceSpan, roundTime, roundFrequency, MIN_TIME_GAP } from "./shape-model.js";
import { moveGroup, normalizeIndices, deleteGroup } from "./selection.js";
import { snapTime, drawTimeDivisions } from "./time-grid.js";
import { curveAt, kindOf, traceSegments } from "./segments.js";

export { curveAt };

const MARGIN = { left: 62, right: 58, top: 32, bottom: 28 };

export class CurveView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{onEdit: Function, onSelect?: Function, onNotice?: Function}} callbacks
   */
  constructor(canvas, callbacks) {
    this.canvas = canvas;
    this.callbacks = callbacks;
    this.shape = null;
    this.played = null;
    this.mode = "points";
    this.snap = false;
    this.log = true;
    this.tolerance = 4;
    // The selection: sorted point indices; `selected` is the one clicked last (the one the typed
    // fields show), −1 when nothing is selected.
    this.selection = [];
    this.selected = -1;
    // Time-grid divisions of the duration (0: off): drawn and snapped to (time-grid.js).
    this.gridDivisions = 0;
    this.errorPoint = -1;
    this.errorAll = false;
    this.gesture = null;
    this.hover = null;
    // The last range that could be drawn: an invalid duration or frequency range being typed
    // keeps the view where it was instead of collapsing it.
    this.view = { duration: 1, minFrequency: 20, maxFrequency: 2000 };
    this.requestDraw = watchSize(canvas, () => this.draw());
    // Zoom and pan (viewport.js): the axis below shows its window of the view.
    this.viewport = new Viewport(canvas, { axis: () => this.axis(), changed: () => { this.requestDraw(); this.callbacks.onView?.(); } });

    canvas.addEventListener("pointerdown", (e) => this.pointerDown(e));
    canvas.addEventListener("pointermove", (e) => this.pointerMove(e));
    canvas.addEventListener("pointerup", (e) => this.pointerUp(e));
    canvas.addEventListener("pointercancel", (e) => this.pointerUp(e));
    canvas.addEventListener("pointerleave", () => { if (!this.gesture) { this.hover = null; this.requestDraw(); } });
    canvas.addEventListener("contextmenu", (e) => e.preventDefault());
  }

  // ---- state set by the editor -------------------------------------------------------------

  setShape(shape) {
    this.shape = shape;
    const { duration: d, minFrequency: lo, maxFrequency: hi } = shape;
    const finite = (v) => typeof v === "number" && Number.isFinite(v);
    if (finite(d) && d > 0) this.view.duration = d;
    if (finite(lo) && finite(hi) && lo > 0 && hi > lo) {
      // Points left outside a narrowed range stay in view (shaded as out of range) until they
      // are rescaled or moved: the curve does not vanish.
      const fs = shape.points.map((p) => p[1]).filter((f) => finite(f) && f > 0);
      this.view.minFrequency = Math.min(lo, ...fs);
      this.view.maxFrequency = Math.max(hi, ...fs);
    }
    const kept = normalizeIndices(this.selection, shape.points.length);
    if (kept.length !== this.selection.length) this.setSelection(kept, kept.includes(this.selected) ? this.selected : kept[kept.length - 1]);
    this.requestDraw();
  }

  setPlayed(played) { this.played = played; this.requestDraw(); }
  setMode(mode) { this.mode = mode; this.canvas.dataset.mode = mode; this.requestDraw(); }
  setSnap(on) { this.snap = on; }
  setLog(on) {
    this.viewport.relog(this.view.minFrequency, this.view.maxFrequency, this.log, on);
    this.log = on;
    this.requestDraw();
    this.callbacks.onView?.();
  }
  setTolerance(px) { this.tolerance = px; }
  setGrid(divisions) { this.gridDivisions = divisions; this.requestDraw(); }

  /** Marks the point a server error names (points[i].…), or the whole curve (i = "all"). */
  setError(index) {
    this.errorAll = index === "all";
    this.errorPoint = typeof index === "number" ? index : -1;
    this.requestDraw();
  }

  /** Selects one point alone (−1: nothing). */
  select(index) {
    this.setSelection(index >= 0 ? [index] : [], index);
  }

  /** Selects the points at `indices`; `primary` is the one the typed fields show. */
  setSelection(indices, primary = indices[indices.length - 1]) {
    this.selection = normalizeIndices(indices, this.shape ? this.shape.points.length : Infinity);
    this.selected = this.selection.includes(primary) ? primary : (this.selection.length ? this.selection[this.selection.length - 1] : -1);
    this.callbacks.onSelect?.(this.selected);
    this.requestDraw();
  }

  /** The shape's duration, or the view's while the typed one is not usable. */
  duration() {
    const d = this.shape?.duration;
    return typeof d === "number" && d > 0 && Number.isFinite(d) ? d : this.view.duration;
  }

  /**
   * The frequencies a moved point may take: the shape's range, widened to take in points left
   * outside a narrowed range (they may be moved back in, not forced out of place).
   */
  frequencyBounds() {
    const { minFrequency: lo, maxFrequency: hi, points } = this.shape;
    const fs = points.map((p) => p[1]).filter((f) => Number.isFinite(f) && f > 0);
    const ok = lo > 0 && hi >= lo;
    return { lo: Math.min(ok ? lo : this.view.minFrequency, ...fs), hi: Math.max(ok ? hi : this.view.maxFrequency, ...fs) };
  }

  /**
   * The plot rectangle (CSS px, relative to the canvas) and the axes, for tests and readouts: the
   * extent (duration, min/maxFrequency) and the window in view (start…end s, low…high Hz).
   */
  mapping() {
    const a = this.axis();
    return { plot: { ...a.plot }, duration: a.duration, minFrequency: a.minFrequency, maxFrequency: a.maxFrequency, log: a.log,
      start: a.start, end: a.end, low: a.low, high: a.high, zoom: this.viewport.zoom, timeTicks: a.timeTicks().ticks,
      hertzTicks: a.hertzTicks(), noteTicks: a.noteTicks(15).notes.filter((n) => n.label).map((n) => n.name) };
  }

  axis() {
    const rect = this.canvas.getBoundingClientRect();
    const plot = {
      left: MARGIN.left, top: MARGIN.top,
      width: Math.max(10, rect.width - MARGIN.left - MARGIN.right),
      height: Math.max(10, rect.height - MARGIN.top - MARGIN.bottom),
    };
    const { duration, minFrequency, maxFrequency } = this.view;
    return new Axis(plot, duration, minFrequency, maxFrequency, this.log, this.viewport.window(duration, minFrequency, maxFrequency, this.log));
  }

  /** Deletes the selected points as one edit; refused when fewer than two would be left. */
  deleteSelected() {
    if (!this.selection.length) return false;
    if (this.selection.length === 1) return this.deletePoint(this.selection[0]);
    const next = deleteGroup(this.shape.points, this.selection);
    if (!next) {
      this.callbacks.onNotice?.("A shape keeps at least 2 points: leave two unselected, or move them instead.");
      return false;
    }
    this.select(-1);
    this.callbacks.onEdit(next, { commit: true });
    return true;
  }

  deletePoint(index) {
    const points = this.shape.points;
    if (index < 0 || index >= points.length) return false;
    if (points.length <= 2) {
      this.callbacks.onNotice?.("A shape keeps at least 2 points: move this one instead.");
      return false;
    }
    const next = points.filter((_, i) => i !== index).map((p) => p.slice());
    this.select(-1);
    this.callbacks.onEdit(next, { commit: true });
    return true;
  }

  // ---- pointer input -----------------------------------------------------------------------

  local(e) {
    const rect = this.canvas.getBoundingClientRect();
    return { x: e.clientX - rect.left, y: e.clientY - rect.top };
  }

  /** Index of the point within reach of (x, y), nearest first, or −1. */
  hitTest(x, y, pointerType) {
    const axis = this.axis();
    const reach = pointerType === "touch" ? 18 : 9;
    let best = -1, bestDistance = reach;
    this.shape.points.forEach(([t, f], i) => {
      const d = Math.hypot(axis.x(t) - x, axis.y(f) - y);
      if (d <= bestDistance) { best = i; bestDistance = d; }
    });
    return best;
  }

  /** Time and frequency for a pointer position: inside the axes, snapped and rounded. */
  valueAt(axis, x, y) {
    let [t, f] = axis.valueAt(x, y);
    f = this.snap ? snapToSemitone(f, axis.minFrequency, axis.maxFrequency) : roundFrequency(f);
    t = this.gridDivisions ? snapTime(t, this.duration(), this.gridDivisions) : roundTime(t);
    return [t, f];
  }

  pointerDown(e) {
    if (!this.shape) return;
    const { x, y } = this.local(e);
    if (e.button === 2) {
      const hit = this.hitTest(x, y, e.pointerType);
      if (hit >= 0) this.deletePoint(hit);
      e.preventDefault();
      return;
    }
    if (e.button !== 0) return;
    e.preventDefault();
    this.canvas.focus({ preventScroll: true });
    this.canvas.setPointerCapture(e.pointerId);
    if (this.mode === "draw") {
      this.gesture = { kind: "sketch", id: e.pointerId, samples: [{ x, y }] };
      this.requestDraw();
      return;
    }
    const index = this.hitTest(x, y, e.pointerType);
    if (index < 0) {
      // Empty space: a click places a point, a drag draws a selection box (decided on move).
      this.gesture = { kind: "press", id: e.pointerId, x0: x, y0: y, shift: e.shiftKey, base: this.selection.slice() };
      return;
    }
    if (e.shiftKey) {
      const on = !this.selection.includes(index);
      this.setSelection(on ? [...this.selection, index] : this.selection.filter((i) => i !== index), on ? index : this.selected);
      if (!on) return;
    } else if (!this.selection.includes(index)) {
      this.select(index);
    } else {
      this.setSelection(this.selection, index);
    }
    this.gesture = { kind: "drag", id: e.pointerId, index, indices: this.selection.slice(),
      start: this.shape.points.map((p) => p.slice()) };
  }

  /** Where a click on empty space places its point (one undo step), then selected alone. */
  placePoint(x, y) {
    const points = this.shape.points.map((p) => p.slice());
    const [t, f] = this.valueAt(this.axis(), x, y);
    const index = insertPoint(points, t, f);
    this.callbacks.onEdit(points, { commit: true });
    this.select(index);
  }

  /** The points inside the box (canvas px), added to `base` when Shift was held. */
  boxSelect(g) {
    const axis = this.axis();
    const [x0, x1] = [Math.min(g.x0, g.x1), Math.max(g.x0, g.x1)];
    const [y0, y1] = [Math.min(g.y0, g.y1), Math.max(g.y0, g.y1)];
    const inside = [];
    this.shape.points.forEach(([t, f], i) => {
      const px = axis.x(t), py = axis.y(f);
      if (px >= x0 && px <= x1 && py >= y0 && py <= y1) inside.push(i);
    });
    this.setSelection(g.shift ? [...g.base, ...inside] : inside);
  }

  /**
   * The selection dragged so the grabbed point follows the pointer (snapped as a placed point
   * is); the others keep their distance in time and in pitch (log axis) or hertz (linear axis),
   * and the whole group stops at a neighbour or at the edge of the range.
   */
  dragGroup(g, x, y) {
    const axis = this.axis();
    const start = g.start;
    const [ta, fa] = start[g.index];
    let [t, f] = this.valueAt(axis, x, y);
    const { lo, hi } = this.frequencyBounds();
    const fs = g.indices.map((i) => start[i][1]);
    const fMin = Math.min(...fs), fMax = Math.max(...fs);
    let frequencyOf;
    if (axis.log) {
      const ratio = Math.min(hi / fMax, Math.max(lo / fMin, f / fa));
      const exact = ratio === f / fa;
      frequencyOf = (q) => (q === fa && exact ? f
        : this.snap && snapToSemitone(q) === q ? snapToSemitone(q * ratio, lo, hi) : roundFrequency(q * ratio));
    } else {
      const shift = Math.min(hi - fMax, Math.max(lo - fMin, f - fa));
      const exact = shift === f - fa;
      frequencyOf = (q) => (q === fa && exact ? f : roundFrequency(q + shift));
    }
    return moveGroup(start, g.indices, t - ta, frequencyOf, { duration: this.duration(), lo, hi });
  }

  pointerMove(e) {
    if (!this.shape) return;
    const { x, y } = this.local(e);
    const g = this.gesture;
    if (!g || g.id !== e.pointerId) {
      this.hover = { x, y, over: this.mode === "points" ? this.hitTest(x, y, e.pointerType) : -1 };
      this.canvas.style.cursor = this.hover.over >= 0 ? "grab" : "crosshair";
      this.requestDraw();
      return;
    }
    if (g.kind === "sketch") {
      const events = typeof e.getCoalescedEvents === "function" ? e.getCoalescedEvents() : [];
      for (const c of events.length ? events : [e]) g.samples.push(this.local(c));
      this.hover = { x, y, over: -1 };
      this.requestDraw();
      return;
    }
    if (g.kind === "press" || g.kind === "box") {
      if (g.kind === "press" && Math.hypot(x - g.x0, y - g.y0) < 4) return;
      g.kind = "box";
      g.x1 = x;
      g.y1 = y;
      this.hover = { x, y, over: -1 };
      this.boxSelect(g);
      return;
    }
    const points = this.dragGroup(g, x, y);
    g.moved = true;
    this.hover = { x, y, over: g.index };
    this.canvas.style.cursor = "grabbing";
    this.callbacks.onEdit(points, { commit: false });
  }

  pointerUp(e) {
    const g = this.gesture;
    if (!g || g.id !== e.pointerId) return;
    this.gesture = null;
    if (this.canvas.hasPointerCapture(e.pointerId)) this.canvas.releasePointerCapture(e.pointerId);
    if (g.kind === "sketch") {
      this.finishSketch(g.samples);
    } else if (g.kind === "press") {
      // A click (not a cancelled touch) on empty space places a point; Shift-click places none.
      if (!g.shift && e.type === "pointerup") this.placePoint(g.x0, g.y0);
    } else if (g.kind === "box") {
      this.boxSelect(g);
    } else {
      this.callbacks.onEdit(this.shape.points.map((p) => p.slice()), { commit: true });
    }
    this.requestDraw();
  }

  /**
   * Turns a sketch into points: held inside the plot, made a function of time (a sketch drawn
   * right to left is read backwards; samples that step back in time are skipped), simplified by
   * RDP in pixels, mapped to time and frequency, then put in place of the points in its span.
   */
  finishSketch(samples) {
    const axis = this.axis();
    const p = axis.plot;
    let s = samples.map(({ x, y }) => ({
      x: Math.min(p.left + p.width, Math.max(p.left, x)),
      y: Math.min(p.top + p.height, Math.max(p.top, y)),
    }));
    if (s.length >= 2 && s[s.length - 1].x < s[0].x) s.reverse();
    const monotone = [];
    for (const q of s) {
      if (monotone.length === 0 || q.x > monotone[monotone.length - 1].x + 0.25) monotone.push(q);
    }
    if (monotone.length < 2) {
      this.callbacks.onNotice?.("Drag across the view to sketch a curve.");
      return;
    }
    const kept = simplify(monotone, this.tolerance);
    const sketched = [];
    for (const q of kept) {
      const [t, f] = this.valueAt(axis, q.x, q.y);
      if (sketched.length === 0 || t >= sketched[sketched.length - 1][0] + MIN_TIME_GAP) sketched.push([t, f]);
    }
    if (sketched.length < 2) return;
    const from = sketched[0][0], to = sketched[sketched.length - 1][0];
    const next = replaceSpan(this.shape.points, from, to, sketched);
    this.select(-1);
    this.callbacks.onEdit(next.map((q) => q.slice()), { commit: true, sketch: { samples: monotone.length, points: sketched.length } });
  }

  // ---- drawing -----------------------------------------------------------------------------

  draw() {
    const axis = this.axis();
    const { ctx, width, height, c, p } = beginChart(this.canvas, axis.plot);
    if (!this.shape) return;

    this.drawFrequencyGrid(ctx, axis, c);
    this.drawTimeGrid(ctx, axis, c);
    drawTimeDivisions(ctx, axis, this.duration(), this.gridDivisions);

    ctx.save();
    ctx.beginPath();
    // A point on the extent's edge is drawn whole; where the view is cut by the zoom, the curve
    // ends at the plot's edge.
    const l = axis.start <= 0 ? 6 : 0, r = axis.end >= axis.duration ? 6 : 0;
    const t = axis.high >= axis.maxFrequency ? 6 : 0, b = axis.low <= axis.minFrequency ? 6 : 0;
    ctx.rect(p.left - l, p.top - t, p.width + l + r, p.height + t + b);
    ctx.clip();
    this.drawOutOfRange(ctx, axis);
    this.drawPoints(ctx, axis, c);
    this.drawPlayed(ctx, axis, c);
    this.drawSketch(ctx, c);
    this.drawBox(ctx);
    this.overlay?.draw(ctx, axis, this.shape);  // the playheads (playhead.js)
    ctx.restore();

    ctx.strokeStyle = this.errorAll ? c.error : c.gridStrong;
    ctx.lineWidth = this.errorAll ? 2 : 1;
    ctx.strokeRect(p.left + 0.5, p.top + 0.5, p.width - 1, p.height - 1);
    this.drawLegend(ctx, axis, c);
    this.drawReadout(ctx, axis, c);
  }

  drawFrequencyGrid(ctx, axis, c) {
    const p = axis.plot;
    const { notes, semitonePx } = axis.noteTicks(15);
    ctx.font = `11px ${MONO}`;
    ctx.textBaseline = "middle";
    // Piano-roll rows for the black keys when semitones are far enough apart to read.
    if (semitonePx >= 5) {
      ctx.fillStyle = c.blackKey;
      for (const n of notes) {
        if (!isBlackKey(n.midi)) continue;
        const y0 = axis.y(n.frequency * Math.pow(2, 1 / 24)), y1 = axis.y(n.frequency / Math.pow(2, 1 / 24));
        const top = Math.max(p.top, Math.min(y0, y1)), bottom = Math.min(p.top + p.height, Math.max(y0, y1));
        if (bottom > top) ctx.fillRect(p.left, top, p.width, bottom - top);
      }
    }
    for (const n of notes) {
      const y = Math.round(n.y) + 0.5;
      if (n.major || n.label) {
        ctx.strokeStyle = n.midi === 69 ? "rgba(245,165,36,0.35)" : n.major ? c.gridStrong : c.grid;
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(p.left, y);
        ctx.lineTo(p.left + p.width, y);
        ctx.stroke();
      }
      if (n.label) {
        ctx.fillStyle = n.midi === 69 ? c.drawn : n.major ? c.textBright : c.text;
        ctx.textAlign = "right";
        ctx.fillText(n.name, p.left - 8, y);
        ctx.strokeStyle = c.gridStrong;
        ctx.beginPath();
        ctx.moveTo(p.left - 5, y);
        ctx.lineTo(p.left, y);
        ctx.stroke();
      }
    }
    // Hertz on the right-hand side.
    ctx.fillStyle = c.text;
    ctx.textAlign = "left";
    let lastY = Infinity;
    const hertz = axis.hertzTicks();
    // Zoomed in, neighbouring ticks differ in the decimals: show as many as that takes.
    const gap = hertz.length > 1 ? Math.min(...hertz.slice(1).map((f, i) => f - hertz[i])) : 1;
    const decimals = Math.min(4, Math.max(0, Math.ceil(-Math.log10(gap) + 1e-9)));
    for (const f of hertz) {
      const y = Math.round(axis.y(f)) + 0.5;
      if (Math.abs(lastY - y) < 14) continue;
      lastY = y;
      ctx.strokeStyle = c.gridStrong;
      ctx.beginPath();
      ctx.moveTo(p.left + p.width, y);
      ctx.lineTo(p.left + p.width + 5, y);
      ctx.stroke();
      ctx.fillText(f >= 1000 && gap >= 10 ? `${+(f / 1000).toFixed(2)}k` : `${+f.toFixed(Math.max(1, decimals))}`, p.left + p.width + 8, y);
    }
    ctx.textAlign = "left";
    ctx.fillStyle = c.text;
    ctx.fillText("Hz", p.left + p.width + 8, p.top - 16);
    ctx.textAlign = "right";
    ctx.fillText("note", p.left - 8, p.top - 16);
  }

  drawTimeGrid(ctx, axis, c) {
    const p = axis.plot;
    const { step, ticks } = axis.timeTicks();
    const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const t of ticks) verticalGridLine(ctx, c, p, axis.x(t), t.toFixed(decimals), 7);
    ctx.textAlign = "right";
    ctx.fillText("s", p.left - 16, p.top + p.height + 7);
  }

  /** Shades the bands of the view that lie outside the shape's frequency range. */
  drawOutOfRange(ctx, axis) {
    const { minFrequency: lo, maxFrequency: hi } = this.shape;
    const p = axis.plot;
    ctx.fillStyle = "rgba(240, 80, 80, 0.12)";
    if (hi < axis.maxFrequency) ctx.fillRect(p.left, p.top, p.width, axis.y(hi) - p.top);
    if (lo > axis.minFrequency) ctx.fillRect(p.left, axis.y(lo), p.width, p.top + p.height - axis.y(lo));
  }

  drawPlayed(ctx, axis, c) {
    const played = this.played;
    if (!Array.isArray(played) || played.length < 2) return;
    ctx.save();
    ctx.strokeStyle = c.played;
    ctx.globalAlpha = 0.9;
    ctx.lineWidth = 2;
    ctx.setLineDash([6, 4]);
    ctx.beginPath();
    traceHertzLinear(ctx, axis, played);
    ctx.stroke();
    ctx.setLineDash([]);
    // Its samples as dots while they stand apart (a fidelity N you can see); packed closer, as an
    // exponential glide's pieces are, they would bury the drawn curve under a band of dots.
    const spacing = Math.abs(axis.x(played[played.length - 1][0]) - axis.x(played[0][0])) / (played.length - 1);
    if (played.length <= 400 && spacing >= 6) {
      ctx.fillStyle = c.played;
      for (const [t, f] of played) ctx.fillRect(axis.x(t) - 1.5, axis.y(f) - 1.5, 3, 3);
    }
    ctx.restore();
  }

  drawPoints(ctx, axis, c) {
    const points = this.shape.points;
    if (!points.length) return;
    ctx.save();
    ctx.strokeStyle = c.drawn;
    ctx.lineWidth = 2.25;
    ctx.lineJoin = "round";
    ctx.shadowColor = "rgba(245,165,36,0.35)";
    ctx.shadowBlur = 8;
    ctx.beginPath();
    traceSegments(ctx, axis, points);
    ctx.stroke();
    ctx.shadowBlur = 0;
    const chosen = new Set(this.selection);
    points.forEach(([t, f], i) => {
      const x = axis.x(t), y = axis.y(f);
      const hovered = this.hover && this.hover.over === i;
      ctx.beginPath();
      ctx.arc(x, y, hovered ? 5.5 : 4.5, 0, Math.PI * 2);
      ctx.fillStyle = i === this.errorPoint ? c.error : c.drawn;
      ctx.fill();
      ctx.lineWidth = 1.5;
      ctx.strokeStyle = "#101318";
      ctx.stroke();
      if (chosen.has(i) || i === this.errorPoint) {
        ctx.beginPath();
        ctx.arc(x, y, 8.5, 0, Math.PI * 2);
        ctx.strokeStyle = i === this.errorPoint ? c.error : "#ffffff";
        ctx.lineWidth = i === this.selected ? 2 : 1.25;
        ctx.stroke();
      }
    });
    ctx.restore();
  }

  drawSketch(ctx, c) {
    const g = this.gesture;
    if (!g || g.kind !== "sketch" || g.samples.length < 2) return;
    ctx.save();
    ctx.strokeStyle = "rgba(255,255,255,0.85)";
    ctx.lineWidth = 2;
    ctx.lineCap = "round";
    ctx.lineJoin = "round";
    ctx.beginPath();
    g.samples.forEach(({ x, y }, i) => (i === 0 ? ctx.moveTo(x, y) : ctx.lineTo(x, y)));
    ctx.stroke();
    ctx.restore();
  }

  /** The selection box being dragged. */
  drawBox(ctx) {
    const g = this.gesture;
    if (!g || g.kind !== "box") return;
    const x = Math.min(g.x0, g.x1), y = Math.min(g.y0, g.y1);
    const w = Math.abs(g.x1 - g.x0), h = Math.abs(g.y1 - g.y0);
    ctx.save();
    ctx.fillStyle = "rgba(120, 170, 255, 0.12)";
    ctx.fillRect(x, y, w, h);
    ctx.strokeStyle = "rgba(150, 190, 255, 0.85)";
    ctx.setLineDash([4, 3]);
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 0.5, y + 0.5, w, h);
    ctx.restore();
  }

  drawLegend(ctx, axis, c) {
    const p = axis.plot;
    const right = p.left + p.width;
    ctx.save();
    ctx.font = `11px ${SANS}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    const y = p.top - 16;
    const n = this.shape && Number.isFinite(this.shape.fidelity) ? this.shape.fidelity : "?";
    const playedLabel = `played at N = ${n}`;
    const drawnLabel = "drawn";
    const wPlayed = ctx.measureText(playedLabel).width, wDrawn = ctx.measureText(drawnLabel).width;
    let x = right - wPlayed;
    ctx.fillStyle = c.text;
    ctx.fillText(playedLabel, x, y);
    ctx.strokeStyle = c.played;
    ctx.lineWidth = 2;
    ctx.setLineDash([6, 4]);
    ctx.beginPath();
    ctx.moveTo(x - 30, y);
    ctx.lineTo(x - 6, y);
    ctx.stroke();
    ctx.setLineDash([]);
    x -= 44 + wDrawn;
    ctx.fillText(drawnLabel, x, y);
    ctx.strokeStyle = c.drawn;
    ctx.beginPath();
    ctx.moveTo(x - 30, y);
    ctx.lineTo(x - 6, y);
    ctx.stroke();
    ctx.restore();
  }

  drawReadout(ctx, axis, c) {
    const h = this.hover;
    let text = "";
    if (h) {
      const [t, f] = axis.valueAt(h.x, h.y);
      const shown = this.snap ? snapToSemitone(f, axis.minFrequency, axis.maxFrequency) : f;
      const sounding = curveAt(this.shape.points, t);
      text = `${t.toFixed(3)} s · ${formatFrequency(shown)} · ${describePitch(shown)}` +
        (sounding ? ` · curve ${formatFrequency(sounding)}` : "");
    } else if (this.selection.length > 1) {
      const ts = this.selection.map((i) => this.shape.points[i][0]);
      text = `${this.selection.length} points selected: ${Math.min(...ts).toFixed(3)}–${Math.max(...ts).toFixed(3)} s`;
    } else if (this.selected >= 0 && this.shape.points[this.selected]) {
      const [t, f] = this.shape.points[this.selected];
      const kind = kindOf(this.shape.points[this.selected]);
      text = `point ${this.selected + 1}: ${Number(t).toFixed(3)} s · ${formatFrequency(f)} · ${describePitch(f)}` +
        (kind === "linear" ? "" : ` · ${kind} segment from here`);
    } else {
      text = this.mode === "points"
        ? "click: add a point · drag: move, or box-select · right-click: delete"
        : "drag to sketch a curve: it replaces the points in the span you draw";
    }
    ctx.save();
    ctx.font = `11px ${MONO}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    ctx.fillStyle = h || this.selected >= 0 ? c.textBright : c.text;
    ctx.fillText(text, axis.plot.left, axis.plot.top - 16);
    ctx.restore();
    this.callbacks.onReadout?.(text);
  }
}

/**
 * Traces the played curve (the server's samples of v(t) at fidelity N, between which the
 * integrator interpolates linearly in hertz): on a log axis each piece is sampled every 2 px in x,
 * on a linear axis one line per piece is exact.
 */
function traceHertzLinear(ctx, axis, points) {
  points.forEach(([t, f], i) => {
    const x = axis.x(t), y = axis.y(f);
    if (i === 0) { ctx.moveTo(x, y); return; }
    const [t0, f0] = points[i - 1];
    if (axis.log && f !== f0) {
      const steps = Math.min(512, Math.ceil(Math.abs(x - axis.x(t0)) / 2));
      for (let k = 1; k < steps; k++) {
        const u = k / steps;
        ctx.lineTo(axis.x(t0 + (t - t0) * u), axis.y(f0 + (f - f0) * u));
      }
    }
    ctx.lineTo(x, y);
  });
}
