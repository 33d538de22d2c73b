/**
 * The shape editor page: wires the views, the controls, the history, the analysis and the live
 * sound around one working shape.
 *
 * Data flow: every edit (a point, a sketch, a control) replaces `state.shape` and bumps
 * `state.revision`; the curve view redraws at once, the analyser asks the server for the played
 * curve, waveform and spectrum, and while playing the shape goes down the live socket. When the
 * gesture ends the shape is committed to the history (one undo step per gesture).
 *
 * The server is the authority on what a valid shape is: its one-line refusal is shown next to
 * the control for the field it names, and Save is not sent while the shape is known to be
 * invalid (by the same rules checked in the page, or by the server's answer to the analysis).
 */

import * as api from "./api.js";
import { Analyser } from "./analyser.js";
import { CurveView } from "./curve-view.js";
import { FieldControls, errorSlot } from "./controls.js";
import { History, showHistoryCount } from "./history.js";
import { LiveAudio } from "./live-audio.js";
import { noteName } from "./notes.js";
import { Playheads } from "./playhead.js";
import { SpectrumView } from "./spectrum-view.js";
import { WaveformView } from "./waveform-view.js";
import { PointClipboard } from "./clipboard.js";
import { PointEditor } from "./point-editor.js";
import { PointFields } from "./point-fields.js";
import { cloneShape, firstInvalidField, newShape, normalizeShape, scaleTimes, setField } from "./shape-model.js";

const $ = (selector) => document.querySelector(selector);
const DEFAULT_WAVES = ["sine", "square", "triangle", "sawtooth", "square-fourier", "triangle-fourier",
  "sawtooth-fourier", "band-limited-square", "band-limited-triangle", "band-limited-sawtooth", "noise"];
const DEFAULT_ENVELOPES = ["constant", "linear-decay", "exponential-decay"];

const state = {
  info: null,
  shape: newShape(),
  source: null,
  revision: 0,
  analysedRevision: -1,
  analysis: { ok: true, revision: -1, error: null },
  played: null,
  waveform: null,
  spectrum: null,
  ready: false,
  note: 69,
  errors: {},
  lastSave: null,
  lastExport: null,
  shapes: [],
  // The shape as last opened or saved (JSON): the page is "modified" while the shape differs.
  clean: null,
  // The control the musician changed last: a refusal about a pair of fields (min > max) is shown
  // under this one, where they are looking.
  lastField: null,
  // Min/max frequency as they were when the range edit began, for the rescale offer.
  rangeBase: null,
};

const history = new History(state.shape);

const curveView = new CurveView($("[data-testid='curve-canvas']"), {
  onEdit: (points, { commit }) => edit((shape) => { shape.points = points; }, { commit }),
  onSelect: () => { showPointFields(); updateButtons(); },
  onNotice: (text) => status(text),
  onReadout: (text) => { $("[data-testid='curve-readout']").textContent = text; },
});
// Editing the selection: keys and clipboard (point-editor.js), the typed point (point-fields.js).
const pointEditor = new PointEditor({
  view: curveView,
  clipboard: new PointClipboard(),
  edit: (points, { commit }) => edit((shape) => { shape.points = points; }, { commit }),
  commit: () => edit(() => {}, { commit: true }),
  notice: (text) => status(text),
  // While a note plays, the time of its playhead (the view's overlay, when it draws playheads;
  // the page's own note first): a paste lands there.
  playheadTime: () => {
    const heads = curveView.overlay?.positions?.(curveView.duration()) || [];
    const head = heads.find((h) => h.source === "page") || heads[0];
    return head && Number.isFinite(head.time) ? head.time : null;
  },
});
const pointFields = new PointFields($("[data-testid='point-bar']"), {
  edit: (points) => edit((shape) => { shape.points = points; }, { commit: true }),
  setKind: (kind) => pointEditor.setKind(kind),
});
function showPointFields() {
  pointFields.update(state.shape, curveView.selected, curveView.selection.length);
}

// Where the sounding notes are in their pass, drawn over the curve (playhead.js).
const playheads = new Playheads({ redraw: () => curveView.requestDraw(), lag: () => live.scheduledAhead });
curveView.overlay = playheads;
const waveformView = new WaveformView($("[data-testid='waveform-canvas']"));
const spectrumView = new SpectrumView($("[data-testid='spectrum-canvas']"));

// A duration being typed stretches the points from where they were when the typing began, so
// "2", "2.", "2.5" do not compound; the base is forgotten when the edit ends.
let durationBase = null;

const controls = new FieldControls(document.body, {
  onInput: (path, value, commit) => {
    state.lastField = path;
    if (path === "duration" && !durationBase) {
      durationBase = { duration: state.shape.duration, points: state.shape.points };
    }
    if ((path === "minFrequency" || path === "maxFrequency") && !state.rangeBase) {
      state.rangeBase = { minFrequency: state.shape.minFrequency, maxFrequency: state.shape.maxFrequency };
    }
    edit((shape) => {
      setField(shape, path, value, { envelopeRate: controls.envelopeRate() });
      if (path === "duration") shape.points = scaleTimes(durationBase.points, durationBase.duration, value);
    }, { commit });
    if (commit) durationBase = null;
    showLocalError(path);
    if (commit && (path === "minFrequency" || path === "maxFrequency")) {
      offerRescale(state.rangeBase);
      state.rangeBase = null;
    }
  },
});

const analyser = new Analyser({
  delay: 60,
  onResult: (result, revision) => {
    state.played = Array.isArray(result.played) ? result.played : null;
    state.waveform = result.waveform || null;
    state.spectrum = result.spectrum || null;
    state.analysis = { ok: true, revision, error: null };
    state.analysedRevision = revision;
    curveView.setPlayed(state.played);
    curveView.setError(-1);
    waveformView.set(state.waveform, state.waveform?.seconds ?? state.shape.duration, noteLabel(state.note));
    spectrumView.set(state.spectrum);
    clearErrors();
    document.body.classList.remove("shape-invalid");
    // A refusal in the status bar is about a shape that is gone now.
    const line = $("[data-testid='status']");
    if (line.dataset.kind === "error" && revision === state.revision) status("");
    state.ready = true;
    updateButtons();
  },
  onError: (error, revision) => {
    state.analysis = { ok: false, revision, error: { error: error.message, field: error.field } };
    state.analysedRevision = revision;
    showServerError(error.message, error.field);
    document.body.classList.add("shape-invalid");
    state.ready = true;
    updateButtons();
  },
});

const live = new LiveAudio({
  onError: ({ seq, error, field }) => {
    // An answer to a shape already replaced by a newer one says nothing about the current shape.
    if (seq != null && seq !== live.stats.lastSentSeq) return;
    // The connection itself going away stays said until it is back, whatever else clears errors
    // (an analysis answered during the server's shutdown, say).
    if (seq == null && field === "(request)" && !live.stats.connected) state.connectionError = error;
    showServerError(error, field);
  },
  onApplied: () => {},
  onPlayhead: (message) => playheads.update(message),
  onState: () => {
    if (live.stats.connected) state.connectionError = null;
    updatePlayButton();
  },
});

// ---- editing -------------------------------------------------------------------------------

/**
 * Applies an edit to the working shape. `change` is a function mutating a copy, or a whole shape.
 * With `commit` the edit closes an undo step.
 */
function edit(change, { commit = false } = {}) {
  const next = typeof change === "function" ? cloneShape(state.shape) : cloneShape(change);
  if (typeof change === "function") change(next);
  const changed = JSON.stringify(next) !== JSON.stringify(state.shape);
  if (changed) {
    state.shape = next;
    shapeChanged();
  }
  if (commit) history.commit(state.shape);
  updateButtons();
}

/** Everything that follows a new working shape: views, analysis, live sound. */
function shapeChanged() {
  state.revision++;
  curveView.setShape(state.shape);
  showPointFields();
  analyser.request(state.shape, state.note, state.revision);
  if (live.playing) live.sendShape(state.shape);
}

/** Shows a shape coming from elsewhere (open, New, undo, redo) in every control. */
function showShape(shape) {
  durationBase = null;
  state.shape = cloneShape(shape);
  controls.setShape(state.shape);
  curveView.select(-1);
  shapeChanged();
  updateButtons();
}

function undo() {
  const shape = history.undo(state.shape);
  if (shape) { showShape(shape); status("Undone."); }
  updateButtons();
}

function redo() {
  const shape = history.redo(state.shape);
  if (shape) { showShape(shape); status("Redone."); }
  updateButtons();
}

// ---- errors and status -------------------------------------------------------------------

function clearErrors() {
  controls.clearErrors();
  state.errors = {};
  const request = $("[data-testid='error-request']");
  const kept = state.connectionError || "";
  request.textContent = kept;
  request.title = kept;
  request.hidden = !kept;
}

const RANGE_FIELDS = ["minFrequency", "maxFrequency"];

/**
 * A min > max range is one fault of two fields: the line goes under the one just changed, in its
 * own words ("must be ≤ maxFrequency" under Min), not under the other control.
 */
function rangeMessage(field) {
  const { minFrequency: lo, maxFrequency: hi } = state.shape;
  if (!RANGE_FIELDS.includes(field) || !(lo > hi)) return null;
  return field === "minFrequency"
    ? `field 'minFrequency' = ${lo}: must be ≤ maxFrequency (${hi})`
    : `field 'maxFrequency' = ${hi}: must be ≥ minFrequency (${lo})`;
}

/**
 * The error of the control just changed, shown at once (an emptied box, min > max), before the
 * server's answer, which then replaces it with the same field's line.
 */
function showLocalError(path) {
  const fault = firstInvalidField(state.shape, state.info?.waves, state.info?.limits);
  if (!fault) return;
  const range = RANGE_FIELDS.includes(path) ? rangeMessage(path) : null;
  if (range) { showServerError(range, path); return; }
  if (fault.field !== path) return;
  const value = path.split(".").reduce((node, key) => (node == null ? undefined : node[key]), state.shape);
  if (value === null) showServerError(`field '${path}' = null: is empty; give a value`, path);
}

/** Puts one server line where it belongs: next to its control, on the curve, or in the bar. */
function showServerError(message, field) {
  clearErrors();
  if (RANGE_FIELDS.includes(field) && RANGE_FIELDS.includes(state.lastField) && rangeMessage(state.lastField)) {
    field = state.lastField;
    message = rangeMessage(field);
  }
  const slot = errorSlot(field, controls.known);
  state.errors[slot] = message;
  if (slot === "(request)") {
    const request = $("[data-testid='error-request']");
    request.textContent = message;
    request.title = message;
    request.hidden = false;
  } else {
    controls.showError(slot, message);
  }
  const pointMatch = /^points\[(\d+)\]/.exec(field || "");
  curveView.setError(pointMatch ? Number(pointMatch[1]) : slot === "points" ? "all" : -1);
}

let statusTimer = null;
function status(text, kind = "info") {
  const element = $("[data-testid='status']");
  element.textContent = text;
  element.title = text;
  element.dataset.kind = kind;
  clearTimeout(statusTimer);
  if (kind === "info") statusTimer = setTimeout(() => { element.textContent = ""; }, 6000);
}

function isInvalid() {
  if (firstInvalidField(state.shape, state.info?.waves, state.info?.limits)) return true;
  return state.analysis.revision === state.revision && !state.analysis.ok;
}

function isModified() {
  return state.clean !== null && JSON.stringify(state.shape) !== state.clean;
}

/** Marks the shape as the one saved or opened: "modified" is measured from here. */
function markClean() {
  state.clean = JSON.stringify(state.shape);
  updateButtons();
}

function updateButtons() {
  const modified = isModified();
  $("[data-testid='modified']").hidden = !modified;
  document.title = (modified ? "● " : "") + "ToneShaper · shape editor";
  const pending = JSON.stringify(state.shape) !== JSON.stringify(history.committed);
  $("[data-testid='btn-undo']").disabled = !(history.canUndo || pending);
  $("[data-testid='btn-redo']").disabled = !history.canRedo || pending;
  $("[data-testid='btn-delete-point']").disabled = !curveView.selection.length ||
    state.shape.points.length - curveView.selection.length < 2;
  const save = $("[data-testid='btn-save']");
  const invalid = isInvalid();
  save.classList.toggle("blocked", invalid);
  save.title = invalid ? "The shape has an error: fix it to save" : "Save to your library";
  showHistoryCount($("[data-testid='history-count']"), history.undoStack.length, history.redoStack.length);
}

function updatePlayButton() {
  const button = $("[data-testid='btn-play']");
  button.textContent = live.playing ? "■ Stop" : "▶ Play";
  button.classList.toggle("playing", live.playing);
  button.setAttribute("aria-pressed", String(live.playing));
}

function noteLabel(note) {
  return `${noteName(note)} (${note})`;
}

// ---- frequency range ---------------------------------------------------------------------

let rescaleFrom = null;

/**
 * After the range was narrowed past some points, offers to squeeze the whole curve into the new
 * range (in pitch: each point keeps its place between the ends in octaves), instead of leaving
 * points the shape refuses. The range's old ends count as the curve's frame.
 */
function offerRescale(base) {
  const { minFrequency: lo, maxFrequency: hi, points } = state.shape;
  const offer = $("[data-testid='rescale-offer']");
  const outside = points.filter(([, f]) => f < lo || f > hi).length;
  if (!base || !(lo > 0) || !(hi >= lo) || !outside) { offer.hidden = true; rescaleFrom = null; return; }
  const fs = points.map(([, f]) => f);
  rescaleFrom = {
    lo: Math.min(base.minFrequency > 0 ? base.minFrequency : Infinity, ...fs),
    hi: Math.max(Number.isFinite(base.maxFrequency) ? base.maxFrequency : 0, ...fs),
  };
  $("[data-testid='rescale-text']").textContent =
    `${outside} point${outside === 1 ? " lies" : "s lie"} outside ${lo}–${hi} Hz. Rescale the curve into the new range?`;
  offer.hidden = false;
}

function answerRescale(yes) {
  $("[data-testid='rescale-offer']").hidden = true;
  const from = rescaleFrom;
  rescaleFrom = null;
  if (!yes || !from) return;
  const { minFrequency: lo, maxFrequency: hi } = state.shape;
  const span = Math.log(from.hi / from.lo);
  edit((shape) => {
    shape.points = shape.points.map(([t, f]) => {
      const u = span > 0 ? Math.log(f / from.lo) / span : 0.5;
      const g = Math.round(lo * Math.pow(hi / lo, u) * 1000) / 1000;
      return [t, Math.min(hi, Math.max(lo, g))];
    });
  }, { commit: true });
  status(`Rescaled the curve into ${lo}–${hi} Hz.`);
}

// ---- library -----------------------------------------------------------------------------

async function refreshShapes(selected) {
  const { shapes } = await api.listShapes();
  state.shapes = shapes;
  const select = $("[data-testid='shape-select']");
  const groups = [["built-in", "Built-in"], ["user", "Your library"]].map(([source, label]) => {
    const group = document.createElement("optgroup");
    group.label = label;
    for (const s of shapes.filter((x) => x.source === source)) {
      const suffix = s.source === "user" ? (s.overrides ? "user, overrides built-in" : "user") : "built-in";
      const option = new Option(`${s.name} — ${suffix}`, s.name);
      option.dataset.source = s.source;
      option.title = s.description || "";
      group.append(option);
    }
    return group;
  });
  const placeholder = new Option("Open a shape…", "");
  placeholder.disabled = true;
  select.replaceChildren(placeholder, ...groups.filter((g) => g.children.length));
  select.value = selected && shapes.some((s) => s.name === selected) ? selected : "";
}

async function openShape(name, { resetHistory = false } = {}) {
  try {
    const { source, shape } = await api.getShape(name);
    const loaded = normalizeShape(shape);
    state.source = source;
    setNote(Number.isInteger(loaded.rootNote) ? loaded.rootNote : state.note, { send: true, analyse: false });
    if (resetHistory) history.reset(loaded);
    showShape(loaded);
    curveView.viewport.fit();  // another shape is shown whole
    if (!resetHistory) history.commit(state.shape);
    $("[data-testid='shape-select']").value = name;
    markClean();
    status(`Opened ${name} (${source}).`);
  } catch (error) {
    // The menu keeps naming the shape on screen, not the one that could not be opened.
    showMenuName();
    showServerError(error.message, "(request)");
  }
  updateButtons();
}

/** The menu shows the shape on screen when it is in the library, else the placeholder. */
function showMenuName() {
  const select = $("[data-testid='shape-select']");
  const name = state.shape.name;
  select.value = state.shapes.some((s) => s.name === name) && !isModified() ? name : "";
}

async function saveShape() {
  history.commit(state.shape);
  await analyser.settled();
  if (isInvalid()) {
    const field = state.analysis.error?.field || firstInvalidField(state.shape, state.info?.waves, state.info?.limits)?.field;
    const message = state.analysis.error?.error;
    if (message) showServerError(message, field);
    status("Not saved: the shape has an error" + (message ? `: ${message}` : ` in ${field}`), "error");
    return;
  }
  try {
    let answer;
    try {
      answer = await api.save(state.shape);
    } catch (error) {
      // 409: a shape of that name exists (yours, or built in): saved over only when agreed.
      if (!(error instanceof api.ApiError) || error.status !== 409) throw error;
      if (!window.confirm(error.message.charAt(0).toUpperCase() + error.message.slice(1))) {
        status(`Not saved: “${state.shape.name}” exists; give the shape another name to keep both.`, "info");
        return;
      }
      answer = await api.save(state.shape, { overwrite: true });
    }
    // The server names the shape as kept ("ok.json" is the shape "ok"): the page follows it.
    if (answer.name !== state.shape.name) {
      edit((shape) => { shape.name = answer.name; }, { commit: true });
      controls.setShape(state.shape);
    }
    markClean();
    try {
      await refreshShapes(answer.name);
    } finally {
      state.lastSave = answer;
      status(`Saved “${answer.name}” to ${answer.saved}`, "ok");
    }
  } catch (error) {
    showServerError(error.message, error.field);
    status(`Not saved: ${error.message}`, "error");
  }
}

async function exportShape() {
  history.commit(state.shape);
  const format = $("[data-testid='export-format']").value;
  const cycles = Number($("[data-testid='export-cycles']").value);
  const button = $("[data-testid='btn-export']");
  const slot = $("[data-testid='error-export']");
  slot.textContent = "";
  slot.hidden = true;
  button.disabled = true;
  try {
    const { blob, filename } = await api.exportAudio(state.shape, format, cycles, state.note);
    const url = URL.createObjectURL(blob);
    const link = document.createElement("a");
    link.href = url;
    link.download = filename;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    state.lastExport = { filename, bytes: blob.size, type: blob.type };
    status(`Exported ${filename} (${(blob.size / 1024).toFixed(0)} KiB)`, "ok");
  } catch (error) {
    const field = error.field === "(request)" || !error.field ? "export" : error.field;
    if (field === "export") {
      slot.textContent = error.message;
      slot.hidden = false;
    } else {
      showServerError(error.message, error.field);
    }
    status(`Not exported: ${error.message}`, "error");
  } finally {
    button.disabled = false;
  }
}

// ---- play --------------------------------------------------------------------------------

function setNote(note, { send = true, analyse = true } = {}) {
  state.note = note;
  $("[data-testid='note-select']").value = String(note);
  if (send && live.playing) live.setNote(note);
  if (analyse) analyser.request(state.shape, state.note, state.revision);
}

function togglePlay() {
  history.commit(state.shape);
  if (live.playing) {
    live.stop();
  } else {
    live.start(state.shape, state.note);
  }
  updatePlayButton();
}

// ---- wiring ------------------------------------------------------------------------------

function isTextTarget(target) {
  return target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

function wire() {
  $("[data-testid='btn-undo']").addEventListener("click", undo);
  $("[data-testid='btn-redo']").addEventListener("click", redo);
  $("[data-testid='btn-new']").addEventListener("click", () => {
    edit(newShape(), { commit: true });
    curveView.viewport.fit();
    controls.setShape(state.shape);
    $("[data-testid='shape-select']").value = "";
    markClean();
    status("New shape: a flat A4 to start from.");
  });
  $("[data-testid='btn-save']").addEventListener("click", saveShape);
  $("[data-testid='btn-export']").addEventListener("click", exportShape);
  $("[data-testid='btn-play']").addEventListener("click", togglePlay);
  $("[data-testid='btn-delete-point']").addEventListener("click", () => { curveView.deleteSelected(); updateButtons(); });
  $("[data-testid='shape-select']").addEventListener("change", (e) => {
    if (e.target.value) openShape(e.target.value);
  });
  $("[data-testid='note-select']").addEventListener("change", (e) => setNote(Number(e.target.value)));

  for (const radio of document.querySelectorAll("input[name='mode']")) {
    radio.addEventListener("change", () => { if (radio.checked) curveView.setMode(radio.value); });
  }
  const snap = $("[data-testid='snap']");
  snap.addEventListener("change", () => curveView.setSnap(snap.checked));
  curveView.setSnap(snap.checked);
  const log = $("[data-testid='log-scale']");
  log.addEventListener("change", () => curveView.setLog(log.checked));
  curveView.setLog(log.checked);
  const grid = $("[data-testid='time-grid']");
  grid.addEventListener("change", () => curveView.setGrid(Number(grid.value)));
  curveView.setGrid(Number(grid.value));
  const tolerance = $("[data-testid='rdp-tolerance']");
  const showTolerance = () => {
    curveView.setTolerance(Number(tolerance.value));
    $("[data-testid='rdp-tolerance-value']").textContent = `${Number(tolerance.value).toFixed(1)} px`;
  };
  tolerance.addEventListener("input", showTolerance);
  showTolerance();

  const noteSelect = $("[data-testid='note-select']");
  noteSelect.replaceChildren(...Array.from({ length: 128 }, (_, n) => new Option(`${noteName(n)} · ${n}`, String(n))));
  noteSelect.value = String(state.note);

  // A reload or a closed tab would lose what is not saved: the browser asks first.
  window.addEventListener("beforeunload", (e) => {
    if (!isModified()) return;
    e.preventDefault();
    e.returnValue = "";
  });
  $("[data-testid='rescale-yes']").addEventListener("click", () => answerRescale(true));
  $("[data-testid='rescale-no']").addEventListener("click", () => answerRescale(false));

  document.addEventListener("keydown", (e) => {
    const mod = e.ctrlKey || e.metaKey;
    const key = e.key.toLowerCase();
    if (mod && key === "z") {
      e.preventDefault();
      if (e.shiftKey) redo(); else undo();
    } else if (mod && key === "y") {
      e.preventDefault();
      redo();
    } else if ((e.key === "Delete" || e.key === "Backspace") && !isTextTarget(e.target)) {
      if (curveView.selected >= 0) {
        e.preventDefault();
        curveView.deleteSelected();
        updateButtons();
      }
    } else if (e.key === "Escape" && !isTextTarget(e.target)) {
      curveView.select(-1);
    } else if (!isTextTarget(e.target) && pointEditor.keyDown(e)) {
      e.preventDefault();
    }
  });
  // A held arrow key's nudges are one undo step, closed when it is released (or the page loses
  // the keyboard before that).
  document.addEventListener("keyup", (e) => pointEditor.keyUp(e));
  window.addEventListener("blur", () => pointEditor.endNudge());
}

/** Test hooks (see Tests/Browser/README.md): read-only views of the editor's state. */
function exposeForTests() {
  window.toneshaperEditor = {
    get shape() { return cloneShape(state.shape); },
    get played() { return state.played ? state.played.map((p) => p.slice()) : null; },
    get waveform() { return state.waveform; },
    get spectrum() { return state.spectrum; },
    get history() { return { undo: history.undoStack.length, redo: history.redoStack.length }; },
    get stats() {
      return { ...live.stats, analysesSent: analyser.stats.sent, analysesAnswered: analyser.stats.answered,
        analysesDropped: analyser.stats.dropped };
    },
    get ready() { return state.ready; },
    get revision() { return state.revision; },
    get analysedRevision() { return state.analysedRevision; },
    /** True when the shape on screen has been analysed and nothing is waiting. */
    get settled() { return !analyser.busy && state.analysedRevision === state.revision; },
    get analysis() { return { ...state.analysis }; },
    get errors() { return { ...state.errors }; },
    get note() { return state.note; },
    get selected() { return curveView.selected; },
    /** The selected points' indices, in time order. */
    get selection() { return curveView.selection.slice(); },
    get lastSave() { return state.lastSave; },
    get modified() { return isModified(); },
    get lastExport() { return state.lastExport; },
    get info() { return state.info; },
    /** The curve view's plot rectangle (CSS px from the canvas's top-left) and axes. */
    view() { return curveView.mapping(); },
    /** The playheads now: seconds into the pass, and where the last drawing put them. */
    playheads() {
      return { now: performance.now(), at: playheads.positions(state.shape.duration), drawn: playheads.drawn.map((h) => ({ ...h })) };
    },
  };
}

async function start() {
  wire();
  exposeForTests();
  try {
    state.info = await api.getInfo();
  } catch (error) {
    state.info = { waves: DEFAULT_WAVES, envelopes: DEFAULT_ENVELOPES, initial: null };
    showServerError(error.message, "(request)");
  }
  const waves = state.info.waves?.length ? state.info.waves : DEFAULT_WAVES;
  const envelopes = state.info.envelopes?.length ? state.info.envelopes : DEFAULT_ENVELOPES;
  controls.setOptions("wave", waves.map((w) => ({ value: w, label: w })));
  controls.setOptions("envelope.kind", envelopes.map((k) => ({ value: k, label: k })));
  live.preferredRate = state.info.sampleRate;
  if (state.info.userLibrary) $("[data-testid='user-library']").textContent = state.info.userLibrary;
  // With an instrument attached (edit --connect), its keyboard notes' playheads come over the socket.
  if (state.info.alsa) live.connect();

  try {
    await refreshShapes();
  } catch (error) {
    showServerError(error.message, "(request)");
  }
  // "initial" names the shape to open (docs/editor-api.md); a server that answers the shape
  // itself (with "initialName"), e.g. for `edit FILE.json`, is taken at its word.
  const initial = state.info.initial;
  if (initial && typeof initial === "object") {
    startWith(normalizeShape(initial), state.info.initialName || initial.name);
  } else if (typeof initial === "string" && initial) {
    await openShape(initial, { resetHistory: true });
  } else if (state.shapes.length) {
    await openShape(state.shapes[0].name, { resetHistory: true });
  } else {
    startWith(state.shape, null);
  }
}

/** Opens a shape the page already has, as the start of the history. */
function startWith(shape, name) {
  setNote(Number.isInteger(shape.rootNote) ? shape.rootNote : state.note, { send: false, analyse: false });
  history.reset(shape);
  showShape(shape);
  markClean();
  const select = $("[data-testid='shape-select']");
  select.value = name && state.shapes.some((s) => s.name === name) ? name : "";
  if (name) status(`Opened ${name}.`);
}

start();
