/**
 * The magnitude spectrum of one pass (the `spectrum` of POST /api/analyse, Hann window, dB re
 * full scale) on a logarithmic frequency axis, so harmonics, aliasing of the naive waves and the
 * effect of fourierTerms show while editing.
 */

import { beginChart, verticalGridLine, horizontalGridLine, watchSize, MONO } from "./canvas.js";

const MARGIN = { left: 40, right: 10, top: 20, bottom: 18 };
const FLOOR_DB = -100;

export class SpectrumView {
  constructor(canvas) {
    this.canvas = canvas;
    this.spectrum = null;
    this.requestDraw = watchSize(canvas, () => this.draw());
  }

  /** @param {{frequencies:number[], db:number[]}|null} spectrum */
  set(spectrum) {
    this.spectrum = spectrum;
    this.requestDraw();
  }

  draw() {
    const { ctx, width, height, c, p } = beginChart(this.canvas, MARGIN);

    const s = this.spectrum;
    const freqs = s && Array.isArray(s.frequencies) ? s.frequencies : [];
    const db = s && Array.isArray(s.db) ? s.db : [];
    const top = freqs.length ? freqs[freqs.length - 1] : 24000;
    const lo = 20, hi = Math.max(lo * 2, top);
    const x = (f) => p.left + (Math.log(Math.max(f, lo) / lo) / Math.log(hi / lo)) * p.width;
    const y = (d) => p.top + (Math.min(0, Math.max(FLOOR_DB, d)) / FLOOR_DB) * p.height;

    ctx.font = `10px ${MONO}`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (let d = 0; d >= FLOOR_DB; d -= 20) horizontalGridLine(ctx, c, p, y(d), String(d), d === 0);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (const f of [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]) {
      if (f > hi) break;
      verticalGridLine(ctx, c, p, x(f), f >= 1000 ? `${f / 1000}k` : String(f), 4);
    }
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    ctx.fillStyle = c.textBright;
    ctx.fillText("Spectrum · dBFS", p.left, MARGIN.top / 2);

    const n = Math.min(freqs.length, db.length);
    if (n < 2) return;
    let peakIndex = 0;
    for (let i = 1; i < n; i++) if (db[i] > db[peakIndex]) peakIndex = i;
    ctx.textAlign = "right";
    ctx.fillStyle = c.text;
    ctx.fillText(`peak ${Math.round(freqs[peakIndex])} Hz, ${db[peakIndex].toFixed(1)} dB`, p.left + p.width, MARGIN.top / 2);

    ctx.save();
    ctx.beginPath();
    ctx.rect(p.left, p.top, p.width, p.height);
    ctx.clip();
    const gradient = ctx.createLinearGradient(0, p.top, 0, p.top + p.height);
    gradient.addColorStop(0, "rgba(245,165,36,0.55)");
    gradient.addColorStop(1, "rgba(245,165,36,0.04)");
    ctx.beginPath();
    ctx.moveTo(x(freqs[0]), p.top + p.height);
    for (let i = 0; i < n; i++) ctx.lineTo(x(freqs[i]), y(db[i]));
    ctx.lineTo(x(freqs[n - 1]), p.top + p.height);
    ctx.closePath();
    ctx.fillStyle = gradient;
    ctx.fill();
    ctx.beginPath();
    for (let i = 0; i < n; i++) {
      if (i === 0) ctx.moveTo(x(freqs[i]), y(db[i])); else ctx.lineTo(x(freqs[i]), y(db[i]));
    }
    ctx.strokeStyle = c.drawn;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.restore();
  }
}
