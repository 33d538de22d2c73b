/**
 * The editor server's HTTP API (docs/editor-api.md), as promises.
 *
 * Every refusal becomes an `ApiError` carrying the server's one-line message and the shape field
 * it names, so the page can put the message next to the control for that field.
 */

/** A refused request: `message` is the server's line, `field` the shape field or "(request)". */
export class ApiError extends Error {
  constructor(message, field, status) {
    super(message);
    this.name = "ApiError";
    this.field = field || "(request)";
    this.status = status;
  }
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`.trim();
  let field = "(request)";
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
    if (body && typeof body.field === "string") field = body.field;
  } catch (_) {
    // Not JSON (a proxy's page, an empty body): keep the status line.
  }
  return new ApiError(message, field, response.status);
}

async function request(method, path, body, signal) {
  let response;
  try {
    response = await fetch(path, {
      method,
      signal,
      headers: body === undefined ? {} : { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    if (error && error.name === "AbortError") throw error;
    throw new ApiError(`the editor server does not answer (${error.message || error})`, "(request)", 0);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

async function json(method, path, body, signal) {
  const response = await request(method, path, body, signal);
  return response.json();
}

/** GET /api/info: sample rate, wave and envelope names, limits, the shape to open first. */
export function getInfo() {
  return json("GET", "/api/info");
}

/** GET /api/shapes: every built-in and user shape. */
export function listShapes() {
  return json("GET", "/api/shapes");
}

/** GET /api/shapes/NAME: `{source, shape}`. */
export function getShape(name) {
  return json("GET", "/api/shapes/" + encodeURIComponent(name));
}

/** POST /api/analyse: the played curve, one pass's waveform and its spectrum at `note`. */
export function analyse(shape, note, signal) {
  const query = Number.isInteger(note) ? `?note=${note}` : "";
  return json("POST", "/api/analyse" + query, shape, signal);
}

/**
 * POST /api/save: `{saved: PATH, name}`. A shape of that name that exists already is refused with
 * 409 unless `overwrite` says the musician agreed to save over it.
 */
export function save(shape, { overwrite = false } = {}) {
  return json("POST", "/api/save" + (overwrite ? "?overwrite=1" : ""), shape);
}

/**
 * POST /api/export: the audio file as a Blob, with the file name the server proposes
 * (Content-Disposition) or NAME.EXT.
 */
export async function exportAudio(shape, format, cycles, note) {
  const query = new URLSearchParams({ format, cycles: String(cycles) });
  if (Number.isInteger(note)) query.set("note", String(note));
  const response = await request("POST", "/api/export?" + query.toString(), shape);
  const blob = await response.blob();
  const disposition = response.headers.get("Content-Disposition") || "";
  const match = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  const filename = match ? decodeURIComponent(match[1]) : `${shape.name || "shape"}.${format}`;
  return { blob, filename };
}
