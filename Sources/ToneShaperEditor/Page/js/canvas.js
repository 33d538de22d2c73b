/**
 * Sharp canvases on any screen: the backing store is sized to CSS size × devicePixelRatio and the
 * context scaled, so every view draws in CSS pixels and pointer coordinates need no conversion.
 */

/**
 * Resizes the canvas backing store to its current CSS box and returns a context drawing in CSS px.
 * @param {HTMLCanvasElement} canvas
 * @returns {{ctx: CanvasRenderingContext2D, width: number, height: number}}
 */
export function prepareCanvas(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const rect = canvas.getBoundingClientRect();
  const width = Math.max(1, rect.width), height = Math.max(1, rect.height);
  const pixelWidth = Math.max(1, Math.round(width * dpr)), pixelHeight = Math.max(1, Math.round(height * dpr));
  if (canvas.width !== pixelWidth || canvas.height !== pixelHeight) {
    canvas.width = pixelWidth;
    canvas.height = pixelHeight;
  }
  const ctx = canvas.getContext("2d");
  ctx.setTransform(pixelWidth / width, 0, 0, pixelHeight / height, 0, 0);
  return { ctx, width, height };
}

/**
 * Calls `redraw` whenever the canvas changes size or the page moves to a screen with another
 * pixel ratio, at most once per animation frame.
 */
export function watchSize(canvas, redraw) {
  let queued = false;
  const schedule = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; redraw(); });
  };
  new ResizeObserver(schedule).observe(canvas);
  const watchRatio = () => {
    const query = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
    query.addEventListener("change", () => { schedule(); watchRatio(); }, { once: true });
  };
  watchRatio();
  return schedule;
}

/** Canvas fonts (a canvas cannot read CSS variables; these match editor.css). */
export const MONO = '"DejaVu Sans Mono", "SFMono-Regular", Menlo, Consolas, monospace';
export const SANS = 'system-ui, "Segoe UI", "DejaVu Sans", sans-serif';

/** The colours the views share with the stylesheet (CSS custom properties on :root). */
export function palette() {
  const style = getComputedStyle(document.documentElement);
  const get = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    background: get("--canvas-bg", "#101318"),
    plot: get("--plot-bg", "#151a21"),
    grid: get("--grid", "rgba(255,255,255,0.06)"),
    gridStrong: get("--grid-strong", "rgba(255,255,255,0.16)"),
    text: get("--text-dim", "#8b95a5"),
    textBright: get("--text", "#dde3ea"),
    drawn: get("--accent", "#f5a524"),
    played: get("--played", "#3dd6c6"),
    error: get("--error", "#ff5d5d"),
    blackKey: get("--black-key", "rgba(0,0,0,0.22)"),
  };
}

/**
 * Starts a chart: sizes the canvas, paints the background and the plot area. `plot` is the plot
 * rectangle, or a margin {left, top, right, bottom} it is cut from. Every view begins this way.
 */
export function beginChart(canvas, plot) {
  const { ctx, width, height } = prepareCanvas(canvas);
  const c = palette();
  const p = "width" in plot ? plot
    : { left: plot.left, top: plot.top, width: width - plot.left - plot.right, height: height - plot.top - plot.bottom };
  ctx.fillStyle = c.background;
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = c.plot;
  ctx.fillRect(p.left, p.top, p.width, p.height);
  return { ctx, width, height, c, p };
}

/** A vertical grid line across the plot at x (CSS px) with its tick label below the plot. */
export function verticalGridLine(ctx, c, p, x, label, gap) {
  const xx = Math.round(x) + 0.5;
  ctx.strokeStyle = c.grid;
  ctx.beginPath();
  ctx.moveTo(xx, p.top);
  ctx.lineTo(xx, p.top + p.height);
  ctx.stroke();
  ctx.fillStyle = c.text;
  ctx.fillText(label, xx, p.top + p.height + gap);
}

/** A horizontal grid line across the plot at y (CSS px), strong or not, with its label left of the plot. */
export function horizontalGridLine(ctx, c, p, y, label, strong) {
  const yy = Math.round(y) + 0.5;
  ctx.strokeStyle = strong ? c.gridStrong : c.grid;
  ctx.beginPath();
  ctx.moveTo(p.left, yy);
  ctx.lineTo(p.left + p.width, yy);
  ctx.stroke();
  ctx.fillStyle = c.text;
  ctx.fillText(label, p.left - 6, yy);
}
