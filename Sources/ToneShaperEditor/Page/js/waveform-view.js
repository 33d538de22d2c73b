/**
 * One pass of the shape as the engine renders it (the `waveform` of POST /api/analyse), so the
 * effect of the wave type, the envelope and the curve can be seen while editing.
 *
 * The server reduces a long pass to at most 2048 values, alternating minimum and maximum of each
 * stretch; drawing them in order as one polyline fills the band between the two, which is the
 * usual look of an audio editor's overview and is exact for a short unreduced pass.
 *
 * A quiet pass (the engine leaves headroom) is magnified by a power of two so its shape can be
 * read; the axis labels keep the true sample values, and the title says "magnified ×k" (and the
 * canvas's tooltip why) so the zoom is not taken for the level.
 */

import { beginChart, horizontalGridLine, watchSize, MONO } from "./canvas.js";

const MARGIN = { left: 40, right: 10, top: 20, bottom: 18 };

export class WaveformView {
  constructor(canvas) {
    this.canvas = canvas;
    this.waveform = null;
    this.duration = 1;
    this.note = null;
    /** The vertical magnification last drawn (1: none). */
    this.zoom = 1;
    this.requestDraw = watchSize(canvas, () => this.draw());
  }

  /** @param {{sampleRate:number, samples:number[]}|null} waveform  @param {number} duration s */
  set(waveform, duration, noteLabel) {
    this.waveform = waveform;
    if (Number.isFinite(duration) && duration > 0) this.duration = duration;
    this.note = noteLabel;
    this.requestDraw();
  }

  draw() {
    const { ctx, width, height, c, p } = beginChart(this.canvas, MARGIN);
    const samples = this.waveform && Array.isArray(this.waveform.samples) ? this.waveform.samples : null;
    let peak = 0;
    if (samples) for (const v of samples) peak = Math.max(peak, Math.abs(v));
    const zoom = peak > 0 ? Math.min(64, Math.max(1, Math.pow(2, Math.floor(Math.log2(1 / peak))))) : 1;
    this.describe(zoom, samples ? peak : null);

    const mid = p.top + p.height / 2;
    ctx.font = `10px ${MONO}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (const v of [1, 0.5, 0, -0.5, -1]) {
      horizontalGridLine(ctx, c, p, mid - (v * p.height) / 2, String(+(v / zoom).toPrecision(2)), v === 0);
    }
    ctx.textAlign = "left";
    ctx.fillStyle = c.textBright;
    const title = "Waveform · one pass" + (this.note ? ` at ${this.note}` : "") + (zoom > 1 ? ` · magnified ×${zoom}` : "");
    ctx.fillText(title, p.left, MARGIN.top / 2);
    ctx.textAlign = "right";
    ctx.fillStyle = c.text;
    ctx.fillText(`${+this.duration.toPrecision(3)} s`, p.left + p.width, p.top + p.height + 9);
    ctx.textAlign = "left";
    ctx.fillText("0", p.left, p.top + p.height + 9);

    if (!samples || samples.length < 2) return;
    ctx.textAlign = "right";
    const dbfs = peak > 0 ? (20 * Math.log10(peak)).toFixed(1) + " dBFS" : "silent";
    ctx.fillText(`peak ${dbfs}`, p.left + p.width, MARGIN.top / 2);

    ctx.save();
    ctx.beginPath();
    ctx.rect(p.left, p.top, p.width, p.height);
    ctx.clip();
    ctx.strokeStyle = c.played;
    ctx.lineWidth = 1;
    ctx.globalAlpha = 0.9;
    ctx.beginPath();
    const n = samples.length;
    for (let i = 0; i < n; i++) {
      const x = p.left + (i / (n - 1)) * p.width;
      const y = mid - (Math.max(-1.05, Math.min(1.05, samples[i] * zoom)) * p.height) / 2;
      if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
    }
    ctx.stroke();
    ctx.restore();
  }

  /** The magnification in words, on the canvas's tooltip and accessible name. */
  describe(zoom, peak) {
    this.zoom = zoom;
    const level = peak === null ? "" : peak > 0 ? ` Peak ${(20 * Math.log10(peak)).toFixed(1)} dBFS.` : " Silent.";
    const text = zoom > 1
      ? `Waveform of one pass, magnified ×${zoom} so a quiet pass can be read: the scale on the left gives the true sample values.${level}`
      : `Waveform of one pass at its true level (not magnified).${level}`;
    this.canvas.title = text;
    this.canvas.setAttribute("aria-label", text);
  }
}
