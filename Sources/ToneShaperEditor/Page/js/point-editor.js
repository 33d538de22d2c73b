/**
 * The keyboard's edits on the selected points, as an MSEG editor offers them:
 *
 * - Arrow Left/Right: the selection moves by one time-grid step (1 % of the duration without a
 *   grid); Up/Down: by one cent. With Shift, coarse: 10 % of the duration, one semitone. A group
 *   never crosses an unselected neighbour and stays inside the frequency range. A press is one
 *   undo step; a held key's repeats make one step together, closed when the key is released.
 * - Ctrl/Cmd-C, -X, -V: copy, cut and paste the selection (clipboard.js). A paste goes at the
 *   playhead while one plays, else just after the selection, else at the pointer; it replaces
 *   the points in the span it covers and is selected afterwards, so pressing again repeats it.
 * - Ctrl/Cmd-A selects every point.
 * - K: the segments beginning at the selected points take the next kind (linear → exponential →
 *   hold → linear), one undo step; the kind's menu beside the typed point does the same.
 *
 * Every change goes through `edit(points, {commit})`, the same path as the pointer's edits.
 */

import { copyGroup, deleteGroup, moveGroup, pasteGroup, transposeFrequency } from "./selection.js";
import { gridStep, snapTime } from "./time-grid.js";
import { roundTime } from "./shape-model.js";
import { kindOf, nextKind, withKind } from "./segments.js";

/** The gap left between the selection and a paste after it, in seconds (a step, not a slide). */
const PASTE_GAP = 0.001;

export class PointEditor {
  /**
   * @param {{view: import("./curve-view.js").CurveView, clipboard: import("./clipboard.js").PointClipboard,
   *   edit: (points: Array, options: {commit: boolean}) => void, commit: () => void,
   *   notice: (text: string) => void, playheadTime?: () => (number|null)}} options
   */
  constructor({ view, clipboard, edit, commit, notice, playheadTime }) {
    this.view = view;
    this.clipboard = clipboard;
    this.edit = edit;
    this.commit = commit;
    this.notice = notice;
    this.playheadTime = playheadTime || (() => null);
    this.nudging = null;
  }

  get shape() { return this.view.shape; }
  get selection() { return this.view.selection; }

  limits() {
    const { lo, hi } = this.view.frequencyBounds();
    return { duration: this.view.duration(), lo, hi };
  }

  /**
   * Handles a key pressed outside text boxes: true when it was one of these edits (the event's
   * default is then prevented).
   */
  keyDown(e) {
    if (!this.shape) return false;
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (mod && !e.altKey && !e.shiftKey) {
      // Without a selection (or a copy) the keys keep their usual meaning for the page.
      if ((key === "c" || key === "x") && !this.selection.length) return false;
      if (key === "v" && !this.clipboard.get()) return false;
      if (key === "c") return this.copy(), true;
      if (key === "x") return this.cut(), true;
      if (key === "v") return this.paste(), true;
      if (key === "a") return this.view.setSelection(this.shape.points.map((_, i) => i)), true;
      return false;
    }
    if (mod || e.altKey) return false;
    if (key === "k" && !e.shiftKey && this.selection.length) {
      this.setKind(nextKind(kindOf(this.shape.points[this.view.selected])));
      return true;
    }
    const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    if (!(key in arrows) || !this.selection.length) return false;
    const [time, pitch] = arrows[key];
    this.nudge(time, pitch, e.shiftKey);
    this.nudging = key;
    return true;
  }

  /** The end of a held arrow key closes its undo step. */
  keyUp(e) {
    if (this.nudging && e.key === this.nudging) this.endNudge();
  }

  endNudge() {
    if (!this.nudging) return;
    this.nudging = null;
    this.commit();
  }

  /** Moves the selection by `time` grid steps and `pitch` cents (Shift: coarse steps). */
  nudge(time, pitch, coarse) {
    const limits = this.limits();
    const points = this.shape.points;
    const indices = this.selection.slice();
    let dt = 0, cents = 0;
    if (time) {
      const step = coarse ? limits.duration / 10 : gridStep(limits.duration, this.view.gridDivisions) || limits.duration / 100;
      dt = time * step;
    }
    if (pitch) cents = pitch * (coarse ? 100 : 1);
    const next = moveGroup(points, indices, dt, (f) => (cents ? transposeFrequency(f, cents) : f), limits);
    if (JSON.stringify(next) === JSON.stringify(points)) {
      this.notice(time ? "The selection is against its neighbour or the end of the shape." : "The selection is at the edge of the frequency range.");
      return;
    }
    this.edit(next, { commit: false });
    this.view.setSelection(indices, this.view.selected);
  }

  /** The segments beginning at the selected points take `kind` (one undo step). */
  setKind(kind) {
    const indices = this.selection.slice();
    if (!indices.length) return;
    const chosen = new Set(indices);
    const next = this.shape.points.map((p, i) => (chosen.has(i) ? withKind(p, kind) : p.slice()));
    this.edit(next, { commit: true });
    this.view.setSelection(indices, this.view.selected);
    const last = indices.length === 1 && indices[0] === next.length - 1;
    this.notice(`Segment${indices.length === 1 ? "" : "s"} from the selected point${indices.length === 1 ? "" : "s"}: ${kind}` +
      (last ? " (the last point begins no segment: it applies once a point follows)." : "."));
  }

  copy() {
    const group = copyGroup(this.shape.points, this.selection);
    if (!group) { this.notice("Select points to copy (click, Shift-click, or drag a box)."); return false; }
    this.clipboard.put(group);
    this.notice(`Copied ${group.points.length} point${group.points.length === 1 ? "" : "s"}.`);
    return true;
  }

  cut() {
    if (!this.copy()) return;
    const next = deleteGroup(this.shape.points, this.selection);
    if (!next) { this.notice("Copied, not cut: a shape keeps at least 2 points."); return; }
    this.view.select(-1);
    this.edit(next, { commit: true });
  }

  /** Where a paste begins: the playhead, just after the selection, or the pointer. */
  pasteTime() {
    const playhead = this.playheadTime();
    const { duration } = this.limits();
    const divisions = this.view.gridDivisions;
    if (Number.isFinite(playhead)) return snapTime(roundTime(playhead), duration, divisions);
    if (this.selection.length) {
      const last = this.shape.points[this.selection[this.selection.length - 1]][0];
      const step = gridStep(duration, divisions);
      return step ? snapTime(last + step, duration, divisions) : roundTime(last + PASTE_GAP);
    }
    const hover = this.view.hover;
    if (hover) return this.view.valueAt(this.view.axis(), hover.x, hover.y)[0];
    return null;
  }

  paste() {
    const group = this.clipboard.get();
    if (!group) { this.notice("Nothing to paste: copy points first (Ctrl+C)."); return; }
    const at = this.pasteTime();
    if (at === null) { this.notice("Select a point or point at the curve to paste there."); return; }
    const result = pasteGroup(this.shape.points, group, at, this.limits());
    if (!result) { this.notice("No room to paste there: it is past the end of the shape."); return; }
    this.edit(result.points, { commit: true });
    this.view.setSelection(result.indices);
    const dropped = group.points.length - result.indices.length;
    this.notice(`Pasted ${result.indices.length} point${result.indices.length === 1 ? "" : "s"} at ${at.toFixed(3)} s` +
      (dropped > 0 ? ` (${dropped} past the end left out).` : "."));
  }
}
