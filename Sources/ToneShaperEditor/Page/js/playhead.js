/**
 * The playhead: where each sounding note is in its pass, as a vertical line per voice on the
 * curve view with a dot where the line meets the curve, as Surge XT's MSEG editor shows its
 * modulator's phase.
 *
 * The server says, about 30 times a second over the live socket, where the audio side has each
 * voice (`{type: "playhead", voices: [{source, voice, channel, note, pass, released}]}`, pass in
 * [0, 1) of the shape's duration): the page's own Play ("page") and, with `edit --connect`, the
 * keyboard's notes ("keyboard"). Between two messages a playhead moves on with the clock, so it
 * glides at the screen's frame rate; the page's own note is drawn where it is heard, the sound
 * scheduled but not yet played (`lag()`) behind where the server rendered it.
 */

import { curveAt } from "./curve-view.js";
import { noteName } from "./notes.js";
import { MONO } from "./canvas.js";

/** A playhead keeps moving at most this long past the last message (then it waits for the next). */
const COAST = 0.15;
const COLORS = { page: "#8fd3ff", keyboard: "#d7a6ff" };

export class Playheads {
  /**
   * @param {{redraw: () => void, lag?: () => number}} options a redraw of the curve view; the
   *   seconds of the page's own sound scheduled but not yet heard
   */
  constructor({ redraw, lag }) {
    this.redraw = redraw;
    this.lag = lag || (() => 0);
    this.voices = new Map();
    /** What the last drawing showed: [{source, voice, note, time, x, y, released}] (for the tests). */
    this.drawn = [];
    this.animating = false;
  }

  /** Takes one message from the server. */
  update(message, now = performance.now()) {
    const next = new Map();
    for (const v of Array.isArray(message.voices) ? message.voices : []) {
      if (!Number.isFinite(v.pass)) continue;
      const key = `${v.source}:${v.voice}`;
      const before = this.voices.get(key);
      // The same voice playing another note is a new note: it starts afresh.
      const first = before && before.note === v.note ? before.first : now;
      next.set(key, { source: v.source, voice: v.voice, channel: v.channel, note: v.note, pass: v.pass,
        released: !!v.released, at: now, first });
    }
    this.voices = next;
    this.animate();
  }

  clear() {
    this.voices = new Map();
    this.redraw();
  }

  /** Where each playhead is now, in seconds into a pass of `duration`. */
  positions(duration, now = performance.now()) {
    if (!(duration > 0)) return [];
    const out = [];
    for (const v of this.voices.values()) {
      const coast = Math.min(COAST, Math.max(0, (now - v.at) / 1000));
      let t = v.pass * duration + coast - (v.source === "page" ? this.lag() : 0);
      // Behind the start of the pass: the previous pass's end, unless the note has just begun.
      if (t < 0) t = (now - v.first) / 1000 > duration / 2 ? t + duration : 0;
      t %= duration;
      out.push({ source: v.source, voice: v.voice, channel: v.channel, note: v.note, released: v.released, time: t });
    }
    return out;
  }

  /** Redraws every frame while a note sounds. */
  animate() {
    if (this.animating) return;
    this.animating = true;
    const frame = () => {
      this.redraw();
      if (this.voices.size) requestAnimationFrame(frame);
      else this.animating = false;
    };
    requestAnimationFrame(frame);
  }

  /** Draws the playheads over the curve (called by the curve view, clipped to its plot). */
  draw(ctx, axis, shape) {
    this.drawn = [];
    if (!shape || !this.voices.size) return;
    const p = axis.plot;
    ctx.save();
    ctx.font = `10px ${MONO}`;
    ctx.textBaseline = "bottom";
    ctx.textAlign = "left";
    for (const h of this.positions(shape.duration)) {
      const x = axis.x(h.time);
      if (x < p.left - 1 || x > p.left + p.width + 1) continue;
      const f = curveAt(shape.points, h.time);
      const y = f ? axis.y(f) : null;
      const color = COLORS[h.source] || COLORS.page;
      ctx.globalAlpha = h.released ? 0.45 : 0.95;
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(Math.round(x) + 0.5, p.top);
      ctx.lineTo(Math.round(x) + 0.5, p.top + p.height);
      ctx.stroke();
      if (y !== null) {
        ctx.fillStyle = color;
        ctx.beginPath();
        ctx.arc(x, y, 4, 0, Math.PI * 2);
        ctx.fill();
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = "#101318";
        ctx.stroke();
      }
      ctx.fillStyle = color;
      ctx.fillText(noteName(h.note), x + 4, p.top + p.height - 3);  // at the foot: the zoom box is at the top
      this.drawn.push({ ...h, x, y });
    }
    ctx.restore();
  }
}
