/**
 * Undo/redo as whole-shape snapshots.
 *
 * Why snapshots rather than inverse operations: a shape is a small JSON document, so a copy per
 * edit costs nothing, every kind of edit (a point, a sketch, a control, opening another shape)
 * is undone the same way, and "undo restores exactly the previous shape" holds by construction.
 *
 * The editor changes its working shape freely while a gesture is under way (a point being
 * dragged, a slider being moved, a number being typed) and calls `commit` when the gesture ends:
 * the whole gesture is then one step. `commit` does nothing when the shape did not change.
 */

const LIMIT = 500;

function copy(value) {
  return JSON.parse(JSON.stringify(value));
}

function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

export class History {
  /** @param {object} initial the committed shape to start from */
  constructor(initial) {
    this.reset(initial);
  }

  /** Forgets every step; `shape` becomes the committed state. */
  reset(shape) {
    this.undoStack = [];
    this.redoStack = [];
    this.committed = copy(shape);
  }

  /**
   * Records `shape` as a new step if it differs from the last committed one.
   * @returns {boolean} whether a step was recorded
   */
  commit(shape) {
    if (same(shape, this.committed)) return false;
    this.undoStack.push(this.committed);
    if (this.undoStack.length > LIMIT) this.undoStack.shift();
    this.redoStack = [];
    this.committed = copy(shape);
    return true;
  }

  get canUndo() { return this.undoStack.length > 0; }
  get canRedo() { return this.redoStack.length > 0; }

  /**
   * Steps back. `working` is the shape as it is now: an edit not yet committed is committed
   * first, so undo always takes back the latest visible change.
   * @returns {object|null} a copy of the shape to show, or null when there is nothing to undo
   */
  undo(working) {
    if (working) this.commit(working);
    if (!this.canUndo) return null;
    this.redoStack.push(this.committed);
    this.committed = this.undoStack.pop();
    return copy(this.committed);
  }

  /** @returns {object|null} a copy of the shape to show, or null when there is nothing to redo */
  redo(working) {
    if (working && !same(working, this.committed)) {
      // Redoing over an uncommitted edit would drop it: commit it instead (it clears redo).
      this.commit(working);
      return null;
    }
    if (!this.canRedo) return null;
    this.undoStack.push(this.committed);
    this.committed = this.redoStack.pop();
    return copy(this.committed);
  }
}

/**
 * Says how many steps Undo and Redo would take, in words: "Undo 3 · Redo 1", with the keys in the
 * tooltip (an arrow and a bare number meant nothing to a newcomer).
 */
export function showHistoryCount(element, undo, redo) {
  element.textContent = `Undo ${undo} · Redo ${redo}`;
  const steps = (n) => `${n} step${n === 1 ? "" : "s"}`;
  element.title = `${steps(undo)} to undo (Ctrl+Z), ${steps(redo)} to redo (Ctrl+Shift+Z or Ctrl+Y); ` +
    "each drag, sketch or typed value is one step";
}
