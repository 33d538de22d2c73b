/**
 * Keeps the played curve, the waveform and the spectrum in step with the shape being edited.
 *
 * Why debounce and drop: a drag changes the shape on every pointer event, and each analysis is a
 * render on the server. A request is sent `delay` ms after the last change (the latest shape
 * wins), or at the latest 2 × `delay` after the first unsent change, so the views keep up during
 * a long drag too; a newer request aborts the one in flight, and an answer that still arrives for
 * an older request is ignored, so the views never step back to a shape already left behind.
 */

import { analyse, ApiError } from "./api.js";

export class Analyser {
  /**
   * @param {{delay?: number, onResult: (result: object, revision: number) => void,
   *          onError: (error: ApiError, revision: number) => void}} options
   */
  constructor({ delay = 60, onResult, onError }) {
    this.delay = delay;
    this.onResult = onResult;
    this.onError = onError;
    this.timer = null;
    this.firstUnsent = 0;
    this.controller = null;
    this.latest = 0;
    this.pending = null;
    this.waiters = [];
    this.stats = { sent: 0, answered: 0, dropped: 0 };
  }

  /** Asks for an analysis of `shape` (a snapshot) at `note`, tagged with the editor's revision. */
  request(shape, note, revision) {
    this.pending = { shape: JSON.parse(JSON.stringify(shape)), note, revision };
    const now = performance.now();
    if (this.timer === null) {
      this.firstUnsent = now;
    } else if (now - this.firstUnsent >= this.delay) {
      return; // the timer set earlier fires within 2 × delay of the first change and sends this
    } else {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => this.send(), this.delay);
  }

  async send() {
    this.timer = null;
    const job = this.pending;
    if (!job) return;
    this.pending = null;
    const id = ++this.latest;
    if (this.controller) this.controller.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.stats.sent++;
    try {
      const result = await analyse(job.shape, job.note, controller.signal);
      if (id !== this.latest) { this.stats.dropped++; return; }
      this.stats.answered++;
      this.onResult(result, job.revision);
    } catch (error) {
      if (error && error.name === "AbortError") { this.stats.dropped++; return; }
      if (id !== this.latest) { this.stats.dropped++; return; }
      this.stats.answered++;
      this.onError(error instanceof ApiError ? error : new ApiError(String(error), "(request)", 0), job.revision);
    } finally {
      if (id === this.latest) {
        this.controller = null;
        this.wake();
      }
    }
  }

  get busy() {
    return this.timer !== null || this.controller !== null || this.pending !== null;
  }

  /** Resolves once the latest requested analysis has been answered (at once when idle). */
  settled() {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  wake() {
    if (this.busy) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
