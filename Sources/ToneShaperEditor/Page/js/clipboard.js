/**
 * The points clipboard: Ctrl/Cmd-C and -X keep the selected points (times measured from the
 * first one, kinds kept) for Ctrl/Cmd-V, within the page and across shapes opened in it.
 *
 * The copy is also offered to the system clipboard as text (`{"toneshaperPoints": [...]}`), so
 * it can be read or kept elsewhere; pasting reads the page's own copy, which needs no permission
 * from the browser (reading the system clipboard would ask the user each time).
 */

export class PointClipboard {
  constructor() {
    /** @type {{points: Array, span: number}|null} */
    this.content = null;
  }

  /** Keeps a group (from selection.js's copyGroup). */
  put(group) {
    this.content = { points: group.points.map((p) => p.slice()), span: group.span };
    const text = JSON.stringify({ toneshaperPoints: this.content.points });
    try {
      navigator.clipboard?.writeText(text).catch(() => {});
    } catch {
      // No system clipboard (an insecure context, a headless browser): the page's copy serves.
    }
  }

  /** The group last copied, or null. */
  get() {
    return this.content ? { points: this.content.points.map((p) => p.slice()), span: this.content.span } : null;
  }
}
