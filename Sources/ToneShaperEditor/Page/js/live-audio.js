/**
 * Continuous play while editing (the article's "continuous audio play"): the server renders the
 * looping note with the engine and streams it over the WebSocket /api/live; this module plays the
 * chunks gaplessly with Web Audio and sends every edit back so it is heard at once.
 *
 * Scheduling: each binary message is F mono Float32 samples. Chunk k starts where chunk k−1
 * ended (`next`), but never earlier than currentTime + LEAD, which is the small jitter buffer
 * that absorbs uneven network and event-loop delays. To keep the time from an edit to its sound
 * under 100 ms the schedule may not run far ahead: a chunk that would start later than
 * currentTime + MAX_AHEAD is dropped (the server already paces chunks to real time, so this only
 * happens after a stall, and dropping realigns the stream with the clock).
 */

const LEAD = 0.04;
const MAX_AHEAD = 0.15;

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

export class LiveAudio {
  /**
   * @param {{sampleRate?: number, onError?: Function, onApplied?: Function, onState?: Function}} options
   */
  constructor({ sampleRate, onError, onApplied, onState, onPlayhead } = {}) {
    this.preferredRate = sampleRate;
    this.onPlayhead = onPlayhead || (() => {});
    this.onError = onError || (() => {});
    this.onApplied = onApplied || (() => {});
    this.onState = onState || (() => {});
    this.ctx = null;
    this.output = null;
    this.socket = null;
    this.outbox = [];
    this.format = null;
    this.next = 0;
    this.fresh = true;
    this.seq = 0;
    this.playing = false;
    this.stats = {
      connected: false, playing: false, chunksReceived: 0, chunksScheduled: 0, chunksDropped: 0,
      // gaps: chunks that found the schedule already run dry (an audible gap; the first chunk of
      // a stream does not count); ahead: how far past currentTime the schedule reaches, seconds.
      gaps: 0, ahead: 0,
      lastSentSeq: 0, lastAppliedSeq: 0, lastError: null, format: null, contextRate: null,
    };
  }

  /**
   * Starts the looping note. Must be called from a user gesture (a click): browsers only let an
   * AudioContext start sounding from one.
   */
  start(shape, note) {
    this.ensureContext();
    if (this.ctx.state !== "running") {
      // Not awaited: a browser that withholds autoplay leaves this pending, and the stream (and
      // its statistics) must start all the same; the sound follows once the context runs.
      this.ctx.resume().catch(() => {});
    }
    this.ensureSocket();
    this.playing = true;
    this.stats.playing = true;
    // The stream may have paused since the last note: its next chunk restarts the schedule.
    this.fresh = true;
    this.setNote(note);
    this.sendShape(shape);
    this.send({ type: "play", on: true });
    this.onState(this.stats);
  }

  /** Releases the note; its release and echo still ring out through the open socket. */
  stop() {
    this.playing = false;
    this.stats.playing = false;
    this.send({ type: "play", on: false });
    this.onState(this.stats);
  }

  setNote(note) {
    if (Number.isInteger(note)) this.send({ type: "note", note });
  }

  /** Sends a shape for the playing note, with the next sequence number. */
  sendShape(shape) {
    const seq = ++this.seq;
    this.stats.lastSentSeq = seq;
    this.send({ type: "shape", seq, shape });
    return seq;
  }

  ensureContext() {
    if (this.ctx) return;
    const AudioContextClass = window.AudioContext || window.webkitAudioContext;
    try {
      this.ctx = new AudioContextClass({ latencyHint: "interactive", sampleRate: this.preferredRate });
    } catch (_) {
      // A rate the device cannot open: let the browser pick one and resample the chunks.
      this.ctx = new AudioContextClass({ latencyHint: "interactive" });
    }
    this.stats.contextRate = this.ctx.sampleRate;
    this.output = this.ctx.createGain();
    this.output.gain.value = 1;
    this.output.connect(this.ctx.destination);
  }

  /**
   * Opens the socket without playing: the instrument's keyboard notes (`edit --connect`) reach
   * the page's playhead through it.
   */
  connect() {
    this.ensureSocket();
  }

  /** Seconds of sound scheduled but not yet heard (0 before any). */
  get scheduledAhead() {
    return this.ctx ? Math.max(0, this.next - this.ctx.currentTime) : 0;
  }

  ensureSocket() {
    if (this.socket && (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)) return;
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${location.host}/api/live`);
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.stats.connected = true;
      const queued = this.outbox;
      this.outbox = [];
      for (const text of queued) socket.send(text);
      this.onState(this.stats);
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.stats.connected = false;
      this.onPlayhead({ type: "playhead", voices: [] });
      if (this.playing) {
        this.playing = false;
        this.stats.playing = false;
        this.report({ error: "the live connection to the editor server closed", field: "(request)" });
      }
      this.onState(this.stats);
    });
  }

  send(message) {
    const text = JSON.stringify(message);
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(text);
    else if (this.socket) this.outbox.push(text);
  }

  receive(data) {
    if (typeof data === "string") {
      let message;
      try { message = JSON.parse(data); } catch (_) { return; }
      if (message.type === "format") {
        this.format = message;
        this.stats.format = { sampleRate: message.sampleRate, channels: message.channels, framesPerChunk: message.framesPerChunk };
      } else if (message.type === "applied") {
        if (message.seq > this.stats.lastAppliedSeq) this.stats.lastAppliedSeq = message.seq;
        this.onApplied(message.seq);
      } else if (message.type === "error") {
        this.report(message);
      } else if (message.type === "playhead") {
        this.onPlayhead(message);
      }
      return;
    }
    this.stats.chunksReceived++;
    this.schedule(data);
  }

  report(message) {
    this.stats.lastError = { seq: message.seq ?? null, error: message.error, field: message.field || "(request)" };
    this.onError(this.stats.lastError);
  }

  /** Plays one chunk right after the previous one (see the module comment). */
  schedule(data) {
    if (!this.ctx || !(data instanceof ArrayBuffer)) return;
    const count = data.byteLength >> 2;
    if (count === 0) return;
    let samples;
    if (littleEndian) {
      samples = new Float32Array(data, 0, count);
    } else {
      const view = new DataView(data);
      samples = new Float32Array(count);
      for (let i = 0; i < count; i++) samples[i] = view.getFloat32(i * 4, true);
    }
    const rate = (this.format && this.format.sampleRate) || this.ctx.sampleRate;
    const now = this.ctx.currentTime;
    if (this.next > now + MAX_AHEAD) {
      this.stats.chunksDropped++;
      return;
    }
    if (!this.fresh && this.next < now) this.stats.gaps++;
    this.fresh = false;
    const at = Math.max(this.next, now + LEAD);
    const buffer = this.ctx.createBuffer(1, count, rate);
    buffer.copyToChannel(samples, 0);
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    source.start(at);
    this.next = at + count / rate;
    this.stats.chunksScheduled++;
    this.stats.ahead = this.next - now;
  }
}
