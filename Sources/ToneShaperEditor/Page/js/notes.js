/**
 * Equal-tempered notes: MIDI numbers, frequencies and names (A4 = MIDI 69 = 440 Hz).
 *
 * One place for the tuning so the axis labels, the snap-to-semitone option and the note
 * selectors all agree with the engine, which transposes by 2^((note − rootNote)/12).
 */

export const A4_FREQUENCY = 440;
export const A4_MIDI = 69;

const NAMES = ["C", "C♯", "D", "D♯", "E", "F", "F♯", "G", "G♯", "A", "A♯", "B"];

/** Frequency in Hz of a (possibly fractional) MIDI note number. */
export function midiToFrequency(midi) {
  return A4_FREQUENCY * Math.pow(2, (midi - A4_MIDI) / 12);
}

/** The (fractional) MIDI note number of a frequency in Hz. */
export function frequencyToMidi(frequency) {
  return A4_MIDI + 12 * Math.log2(frequency / A4_FREQUENCY);
}

/** "A4", "C♯3", …: MIDI 60 is C4 (scientific pitch notation). */
export function noteName(midi) {
  const m = Math.round(midi);
  const octave = Math.floor(m / 12) - 1;
  return NAMES[((m % 12) + 12) % 12] + octave;
}

/** Whether a MIDI note is a black key (for the keyboard strip on the axis). */
export function isBlackKey(midi) {
  return [1, 3, 6, 8, 10].includes(((Math.round(midi) % 12) + 12) % 12);
}

/**
 * The equal-tempered semitone frequency 440·2^(k/12) nearest to `frequency` (nearest in pitch,
 * i.e. on the log scale). With a range [lo, hi], the nearest semitone *inside* the range is
 * chosen, and the frequency is returned unchanged when no semitone lies inside it.
 */
export function snapToSemitone(frequency, lo = 0, hi = Infinity) {
  if (!(frequency > 0)) return frequency;
  let k = Math.round(12 * Math.log2(frequency / A4_FREQUENCY));
  let f = A4_FREQUENCY * Math.pow(2, k / 12);
  // Tiny tolerance: 440·2^(k/12) may land a hair outside a range whose bound is that semitone.
  const eps = 1e-9;
  if (f < lo * (1 - eps)) {
    k = Math.ceil(12 * Math.log2(lo / A4_FREQUENCY) - eps);
    f = A4_FREQUENCY * Math.pow(2, k / 12);
  } else if (f > hi * (1 + eps)) {
    k = Math.floor(12 * Math.log2(hi / A4_FREQUENCY) + eps);
    f = A4_FREQUENCY * Math.pow(2, k / 12);
  }
  if (f < lo * (1 - eps) || f > hi * (1 + eps)) return frequency;
  // 440·2^(k/12) for k a multiple of 12 is exact in binary; keep the other semitones to
  // 1e-9 Hz so a saved file reads 261.625565301 rather than a long tail of digits.
  return Math.round(f * 1e9) / 1e9;
}

/** "440.0 Hz", "1.25 kHz": a short frequency label. */
export function formatFrequency(f) {
  if (!Number.isFinite(f)) return "—";
  if (f >= 10000) return (f / 1000).toFixed(1) + " kHz";
  if (f >= 1000) return (f / 1000).toFixed(2) + " kHz";
  if (f >= 100) return f.toFixed(1) + " Hz";
  return f.toFixed(2) + " Hz";
}

/** "A4 +12¢": the nearest note and the deviation from it in cents. */
export function describePitch(f) {
  if (!(f > 0)) return "";
  const midi = frequencyToMidi(f);
  const nearest = Math.round(midi);
  const cents = Math.round((midi - nearest) * 100);
  if (nearest < 0 || nearest > 127) return "";
  return noteName(nearest) + (cents === 0 ? "" : (cents > 0 ? " +" : " −") + Math.abs(cents) + "¢");
}
