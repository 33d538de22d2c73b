/**
 * Zoom and pan of the curve view on both axes, as in Surge XT's MSEG editor: the wheel zooms time
 * around the pointer, Ctrl-, Shift- or Alt-wheel zooms frequency around it, a drag with the middle
 * button (or with Space held) pans, and Fit shows the whole shape again.
 *
 * The visible window is kept as fractions of the view's extent — time over [0, duration], pitch
 * over the frequency range in the axis's own scale (octaves on the log axis, hertz on the linear
 * one) — so a duration stretched or a range retyped keeps the same part of the curve in view.
 * The curve view builds its `Axis` from `window()`; clicks, drags and sketches go through that
 * axis as before, so every point stays editable at any zoom.
 */

/** The narrowest window: 1/2000 of the duration, 1/500 of the frequency range. */
const MIN_TIME_SPAN = 1 / 2000;
const MIN_PITCH_SPAN = 1 / 500;
/** Zoom per wheel pixel (a 100 px notch zooms by about 1.16). */
const WHEEL_RATE = 0.0015;

export class Viewport {
  /**
   * @param {HTMLCanvasElement} canvas the curve view's canvas (its listeners are added here)
   * @param {{axis: () => object, changed: () => void}} view the axis now on screen, and a redraw
   */
  constructor(canvas, view) {
    this.canvas = canvas;
    this.view = view;
    this.time = [0, 1];
    this.pitch = [0, 1];
    this.pan = null;
    this.spaceHeld = false;
    this.pointerInside = false;
    // Capture listeners run before the curve view's own: a pan gesture is never also an edit.
    canvas.addEventListener("wheel", (e) => this.wheel(e), { passive: false });
    canvas.addEventListener("pointerdown", (e) => this.pointerDown(e), { capture: true });
    canvas.addEventListener("pointermove", (e) => this.pointerMove(e), { capture: true });
    canvas.addEventListener("pointerup", (e) => this.pointerUp(e), { capture: true });
    canvas.addEventListener("pointercancel", (e) => this.pointerUp(e), { capture: true });
    canvas.addEventListener("pointerenter", () => { this.pointerInside = true; });
    canvas.addEventListener("pointerleave", () => { this.pointerInside = false; });
    // The middle button's autoscroll would take the drag away.
    canvas.addEventListener("mousedown", (e) => { if (e.button === 1) e.preventDefault(); });
    document.addEventListener("keydown", (e) => this.space(e, true));
    document.addEventListener("keyup", (e) => this.space(e, false));
    window.addEventListener("blur", () => { this.spaceHeld = false; this.cursor(); });
    this.label = document.querySelector("[data-testid='zoom-label']");
    document.querySelector("[data-testid='btn-fit']")?.addEventListener("click", () => this.fit());
    this.show();
  }

  changed() {
    this.show();
    this.view.changed();
  }

  /** While zoomed: how far each axis is, in words a newcomer reads, beside Fit. */
  show() {
    if (!this.label) return;
    const { time, pitch } = this.zoom;
    const times = (z) => (z < 10 ? z.toFixed(1) : Math.round(z).toString());
    this.label.textContent = this.isFit ? "whole shape" : `time ×${times(time)} · freq ×${times(pitch)}`;
    const box = document.querySelector("[data-testid='view-zoom']");
    if (box) box.hidden = this.isFit;
  }

  /** True when the whole shape is in view. */
  get isFit() {
    return this.time[0] === 0 && this.time[1] === 1 && this.pitch[0] === 0 && this.pitch[1] === 1;
  }

  /** How far each axis is zoomed in (1: the whole extent). */
  get zoom() {
    return { time: 1 / (this.time[1] - this.time[0]), pitch: 1 / (this.pitch[1] - this.pitch[0]) };
  }

  /**
   * The visible window for an extent of [0, duration] × [low, high] Hz on a log or linear axis:
   * {start, end} seconds and {low, high} Hz.
   */
  window(duration, low, high, log) {
    // The ends exactly (no rounding): the view knows when it shows an edge of the extent.
    const at = (u) => (u <= 0 ? low : u >= 1 ? high : log ? low * Math.pow(high / low, u) : low + u * (high - low));
    const when = (u) => (u >= 1 ? duration : u * duration);
    return { start: when(this.time[0]), end: when(this.time[1]), low: at(this.pitch[0]), high: at(this.pitch[1]) };
  }

  /** Shows the whole shape. */
  fit() {
    this.time = [0, 1];
    this.pitch = [0, 1];
    this.changed();
  }

  /**
   * Zooms one axis ("time" or "pitch") by `factor` (< 1: in) keeping the point at `anchor` (0..1
   * across the visible window) where it is on screen.
   */
  zoomBy(axis, factor, anchor = 0.5) {
    const [a, b] = this[axis];
    const span = b - a;
    const next = Math.min(1, Math.max(axis === "time" ? MIN_TIME_SPAN : MIN_PITCH_SPAN, span * factor));
    const fixed = a + anchor * span;
    const start = Math.min(1 - next, Math.max(0, fixed - anchor * next));
    this[axis] = next >= 1 ? [0, 1] : [start, start + next];
    this.changed();
  }

  /** Moves one axis's window by `delta` of its own width (held inside the extent). */
  panBy(axis, delta) {
    const [a, b] = this[axis];
    const span = b - a;
    const start = Math.min(1 - span, Math.max(0, a + delta * span));
    this[axis] = [start, start + span];
    this.changed();
  }

  /**
   * A log axis switched to linear (or back) keeps the same frequencies at the window's edges.
   * @param {number} low  @param {number} high the extent, Hz
   */
  relog(low, high, wasLog, isLog) {
    if (wasLog === isLog || !(low > 0) || !(high > low)) return;
    const hz = (u) => (wasLog ? low * Math.pow(high / low, u) : low + u * (high - low));
    const frac = (f) => (isLog ? Math.log(f / low) / Math.log(high / low) : (f - low) / (high - low));
    const [a, b] = this.pitch.map((u) => Math.min(1, Math.max(0, frac(hz(u)))));
    this.pitch = b - a >= MIN_PITCH_SPAN ? [a, b] : [0, 1];
    this.show();
  }

  // ---- gestures ------------------------------------------------------------------------------

  wheel(e) {
    const axis = this.view.axis();
    const p = axis.plot;
    const rect = this.canvas.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    e.preventDefault();  // neither the page scrolls nor Ctrl-wheel zooms the whole page
    const scale = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? 400 : 1;
    // Shift-wheel arrives as a horizontal scroll in Chromium.
    const dx = e.deltaX * scale, dy = e.deltaY * scale;
    if (e.ctrlKey || e.shiftKey || e.altKey || e.metaKey) {
      const delta = Math.abs(dy) >= Math.abs(dx) ? dy : dx;
      const anchor = 1 - Math.min(1, Math.max(0, (y - p.top) / p.height));
      this.zoomBy("pitch", Math.exp(delta * WHEEL_RATE), anchor);
    } else if (Math.abs(dx) > Math.abs(dy)) {
      this.panBy("time", dx / p.width);  // a touchpad's sideways swipe
    } else {
      const anchor = Math.min(1, Math.max(0, (x - p.left) / p.width));
      this.zoomBy("time", Math.exp(dy * WHEEL_RATE), anchor);
    }
  }

  pointerDown(e) {
    if (!(e.button === 1 || (e.button === 0 && this.spaceHeld))) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    this.canvas.setPointerCapture(e.pointerId);
    this.pan = { id: e.pointerId, x: e.clientX, y: e.clientY, time: this.time.slice(), pitch: this.pitch.slice() };
    this.cursor();
  }

  pointerMove(e) {
    const g = this.pan;
    if (!g && this.spaceHeld) { e.stopImmediatePropagation(); this.cursor(); return; }
    if (!g || g.id !== e.pointerId) return;
    e.stopImmediatePropagation();
    const p = this.view.axis().plot;
    // The curve follows the hand: dragging right shows earlier times, dragging up lower pitches.
    this.time = g.time.slice();
    this.pitch = g.pitch.slice();
    const spanT = g.time[1] - g.time[0], spanP = g.pitch[1] - g.pitch[0];
    const t0 = Math.min(1 - spanT, Math.max(0, g.time[0] - ((e.clientX - g.x) / p.width) * spanT));
    const p0 = Math.min(1 - spanP, Math.max(0, g.pitch[0] + ((e.clientY - g.y) / p.height) * spanP));
    this.time = [t0, t0 + spanT];
    this.pitch = [p0, p0 + spanP];
    this.changed();
  }

  pointerUp(e) {
    const g = this.pan;
    if (!g || g.id !== e.pointerId) return;
    e.stopImmediatePropagation();
    this.pan = null;
    if (this.canvas.hasPointerCapture(e.pointerId)) this.canvas.releasePointerCapture(e.pointerId);
    this.cursor();
  }

  /** Space held over the curve turns a left-button drag into a pan (as in most editors). */
  space(e, down) {
    if (e.key !== " " || e.ctrlKey || e.altKey || e.metaKey) return;
    const target = e.target;
    const typing = target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
    if (typing || !(this.pointerInside || this.pan || target === this.canvas)) {
      if (!down) { this.spaceHeld = false; this.cursor(); }
      return;
    }
    e.preventDefault();  // no page scroll, no click on a focused button
    this.spaceHeld = down;
    this.cursor();
  }

  cursor() {
    if (this.pan) this.canvas.style.cursor = "grabbing";
    else if (this.spaceHeld) this.canvas.style.cursor = "grab";
    else this.canvas.style.cursor = "crosshair";
  }
}
