/**
 * The form controls for the shape's fields, bound by their `data-field` attribute (the field's
 * path in the shape JSON: "duration", "echo.volume", "envelope.rate", …).
 *
 * What the user types goes into the shape as typed: a number out of range is sent as it is and
 * the server's refusal is shown next to the control; a box left empty or holding something that is
 * not a number is sent as null, which the server refuses by name too. Nothing is clamped or
 * rounded here, so the error the user sees is about what they wrote.
 *
 * Events: `input` changes the shape at once (the curve, the analysis and the live sound follow
 * while typing or sliding) and `change` — Enter, leaving the box, releasing the slider, picking
 * an option — ends the edit, which is then one undo step.
 */

import { getField } from "./shape-model.js";
import { noteName } from "./notes.js";

/** Fidelity slider: position 0…1000 ↔ N = 10^(6·position/1000), i.e. 1 … 1 000 000. */
const FIDELITY_DECADES = 6;
export function fidelityFromSlider(position) {
  return Math.round(Math.pow(10, (FIDELITY_DECADES * position) / 1000));
}
export function sliderFromFidelity(n) {
  if (!(n >= 1)) return 0;
  return Math.round((1000 * Math.log10(n)) / FIDELITY_DECADES);
}

/**
 * Where the message for a server field goes: the control's own field path, "points" for the curve
 * view, or "(request)" for the status line.
 */
export function errorSlot(field, known) {
  if (!field) return "(request)";
  if (field === "points" || field.startsWith("points[")) return "points";
  if (field === "envelope") return "envelope.kind";
  if (field === "echo") return "echo.delay";
  if (known.has(field)) return field;
  const head = field.split(/[.[]/)[0];
  if (known.has(head)) return head;
  return "(request)";
}

export class FieldControls {
  /**
   * @param {HTMLElement} root
   * @param {{onInput: (path: string, value: any, commit: boolean) => void}} callbacks
   */
  constructor(root, callbacks) {
    this.root = root;
    this.callbacks = callbacks;
    this.inputs = new Map();
    for (const input of root.querySelectorAll("[data-field]")) {
      const path = input.dataset.field;
      if (!this.inputs.has(path)) this.inputs.set(path, []);
      this.inputs.get(path).push(input);
      this.bind(input, path);
    }
    this.errors = new Map();
    for (const slot of root.querySelectorAll("[data-error-for]")) this.errors.set(slot.dataset.errorFor, slot);
  }

  /** The field paths that have a control (for errorSlot). */
  get known() {
    return new Set([...this.inputs.keys(), ...this.errors.keys()]);
  }

  bind(input, path) {
    const kind = input.dataset.kind || (input.tagName === "SELECT" ? "select" : input.type);
    const read = () => this.read(input, kind);
    const emit = (commit) => {
      const value = read();
      this.mirror(path, input, value);
      this.callbacks.onInput(path, value, commit);
    };
    if (kind === "select") {
      input.addEventListener("change", () => emit(true));
    } else {
      input.addEventListener("input", () => emit(false));
      input.addEventListener("change", () => emit(true));
    }
  }

  read(input, kind) {
    if (kind === "select" || kind === "text" || kind === "textarea") return input.value;
    if (kind === "fidelity-slider") return fidelityFromSlider(Number(input.value));
    // Numbers: what was typed, or null for an empty box or text that is not a number.
    if (input.value.trim() === "") return null;
    const n = Number(input.value);
    return Number.isFinite(n) ? n : null;
  }

  /** Keeps the other controls of the same field (slider and box) and the labels in step. */
  mirror(path, source, value) {
    for (const other of this.inputs.get(path) || []) {
      if (other === source) continue;
      this.write(other, value);
    }
    this.updateLabels(path, value);
  }

  write(input, value) {
    const kind = input.dataset.kind || (input.tagName === "SELECT" ? "select" : input.type);
    if (kind === "fidelity-slider") input.value = String(sliderFromFidelity(value));
    else if (kind === "range") input.value = value == null ? input.value : String(value);
    else input.value = value == null ? "" : String(value);
  }

  updateLabels(path, value) {
    if (path === "rootNote") {
      const label = this.root.querySelector("[data-note-name-for='rootNote']");
      if (label) label.textContent = Number.isInteger(value) && value >= 0 && value <= 127 ? noteName(value) : "—";
    }
    if (path === "envelope.kind") {
      const rate = this.root.querySelector("[data-shown-for='exponential-decay']");
      if (rate) rate.hidden = value !== "exponential-decay";
    }
  }

  /** Shows a whole shape (after open, New, undo, redo); the focused box is rewritten too. */
  setShape(shape) {
    for (const [path, inputs] of this.inputs) {
      let value = getField(shape, path);
      if (path === "envelope.rate" && value === undefined) {
        // Keep the rate last shown, so switching back to exponential-decay offers it again.
        continue;
      }
      for (const input of inputs) this.write(input, value);
      this.updateLabels(path, value);
    }
  }

  /** Fills a select with options: [{value, label}]. */
  setOptions(path, options) {
    for (const input of this.inputs.get(path) || []) {
      if (input.tagName !== "SELECT") continue;
      const current = input.value;
      input.replaceChildren(...options.map(({ value, label }) => new Option(label, value)));
      if (current) input.value = current;
    }
  }

  /** Puts the server's line next to the control for `slot` and marks the control invalid. */
  showError(slot, message) {
    const element = this.errors.get(slot);
    if (element) {
      element.textContent = message;
      element.hidden = false;
    }
    for (const input of this.inputs.get(slot) || []) {
      input.setAttribute("aria-invalid", "true");
      input.classList.add("invalid");
    }
    element?.closest(".field, .curve-panel")?.classList.add("has-error");
  }

  clearErrors() {
    for (const element of this.errors.values()) {
      element.textContent = "";
      element.hidden = true;
      element.closest(".field, .curve-panel")?.classList.remove("has-error");
    }
    for (const inputs of this.inputs.values()) {
      for (const input of inputs) {
        input.removeAttribute("aria-invalid");
        input.classList.remove("invalid");
      }
    }
  }

  /** The current text of the envelope rate box, for rebuilding the envelope. */
  envelopeRate() {
    const input = (this.inputs.get("envelope.rate") || [])[0];
    if (!input) return undefined;
    return this.read(input, "number");
  }
}
