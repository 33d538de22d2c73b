// Generated from Presets/*.json by BundledShapes.source; do not edit.
// Regenerate: TONESHAPER_WRITE_CLAP=1 swift test --filter BundledShapes

/// The shipped shapes (Presets/*.json): file name without .json, and the file's text.
let bundledShapeFiles: [(name: String, text: String)] = [
    ("00-article-pulses", #"""
{
  "name": "article-pulses",
  "program": 0,
  "description": "The article's example: 30→440→50 Hz three times over 1 s, sine, linear decay, N = 6",
  "duration": 1.0,
  "minFrequency": 20.0,
  "maxFrequency": 880,
  "points": [
    [0.0, 30],
    [0.16666666666666666, 440],
    [0.3333333333333333, 50],
    [0.5, 440],
    [0.6666666666666666, 50],
    [0.8333333333333334, 440],
    [1.0, 50]
  ],
  "wave": "sine",
  "amplitude": 0.6,
  "envelope": { "kind": "linear-decay" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 6,
  "fourierTerms": 10,
  "rootNote": 69,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("01-siren", #"""
{
  "name": "siren",
  "program": 1,
  "description": "Two-tone siren rising and falling each 1.2 s, band-limited triangle",
  "duration": 1.2,
  "minFrequency": 20.0,
  "maxFrequency": 2400,
  "points": [
    [0, 600],
    [0.6, 1200],
    [1.2, 600]
  ],
  "wave": "band-limited-triangle",
  "amplitude": 0.4,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 74,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("02-chirp", #"""
{
  "name": "chirp",
  "program": 2,
  "description": "A fast 200 Hz → 3 kHz chirp with exponential decay, band-limited sawtooth",
  "duration": 0.15,
  "minFrequency": 20.0,
  "maxFrequency": 6000,
  "points": [
    [0, 200],
    [0.15, 3000]
  ],
  "wave": "band-limited-sawtooth",
  "amplitude": 0.35,
  "envelope": {
    "kind": "exponential-decay",
    "rate": 12
  },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 60,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("03-drone", #"""
{
  "name": "drone",
  "program": 3,
  "description": "A slowly beating 110 Hz sine drone with a long echo",
  "duration": 4.0,
  "minFrequency": 20.0,
  "maxFrequency": 222,
  "points": [
    [0, 110],
    [2, 111],
    [4, 110]
  ],
  "wave": "sine",
  "amplitude": 0.45,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.375,
    "volume": 0.3
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 45,
  "attack": 0.4,
  "release": 1.5
}

"""#),
    ("04-square-bell", #"""
{
  "name": "square-bell",
  "program": 4,
  "description": "Square Fourier series (8 terms) with a bright exponential decay and echo",
  "duration": 1.5,
  "minFrequency": 20.0,
  "maxFrequency": 904,
  "points": [
    [0, 440],
    [0.03, 452],
    [1.5, 440]
  ],
  "wave": "square-fourier",
  "amplitude": 0.35,
  "envelope": {
    "kind": "exponential-decay",
    "rate": 3
  },
  "echo": {
    "delay": 0.3,
    "volume": 0.25
  },
  "fidelity": 1000,
  "fourierTerms": 8,
  "rootNote": 69,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("05-fourier-flute", #"""
{
  "name": "fourier-flute",
  "program": 5,
  "description": "Triangle Fourier series (harmonics up to 9) with a drawn vibrato",
  "duration": 0.5,
  "minFrequency": 20.0,
  "maxFrequency": 894,
  "points": [
    [0, 440],
    [0.1, 447],
    [0.2, 433],
    [0.3, 447],
    [0.4, 433],
    [0.5, 440]
  ],
  "wave": "triangle-fourier",
  "amplitude": 0.5,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 9,
  "rootNote": 69,
  "attack": 0.04,
  "release": 0.2
}

"""#),
    ("06-fourier-brass", #"""
{
  "name": "fourier-brass",
  "program": 6,
  "description": "Sawtooth Fourier series (12 terms) with a scoop into the note",
  "duration": 0.6,
  "minFrequency": 20.0,
  "maxFrequency": 440,
  "points": [
    [0, 200],
    [0.06, 220],
    [0.6, 220]
  ],
  "wave": "sawtooth-fourier",
  "amplitude": 0.3,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 12,
  "rootNote": 57,
  "attack": 0.02,
  "release": 0.15
}

"""#),
    ("07-chiptune-arp", #"""
{
  "name": "chiptune-arp",
  "program": 7,
  "description": "A square-wave arpeggio drawn as steps (220, 277, 330 Hz, a major triad), one step per 80 ms",
  "duration": 0.24,
  "minFrequency": 20.0,
  "maxFrequency": 880,
  "points": [
    [0, 220],
    [0.0799, 220],
    [0.08, 277.18],
    [0.1599, 277.18],
    [0.16, 329.63],
    [0.24, 329.63]
  ],
  "wave": "square",
  "amplitude": 0.2,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 2400,
  "fourierTerms": 10,
  "rootNote": 57,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("08-glide-bass", #"""
{
  "name": "glide-bass",
  "program": 8,
  "description": "Triangle bass that swoops up an octave into its note",
  "duration": 1.0,
  "minFrequency": 20.0,
  "maxFrequency": 220,
  "points": [
    [0, 55],
    [0.08, 110],
    [1, 110]
  ],
  "wave": "triangle",
  "amplitude": 0.55,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 45,
  "attack": 0.005,
  "release": 0.12
}

"""#),
    ("09-buzz-sweep", #"""
{
  "name": "buzz-sweep",
  "program": 9,
  "description": "The article's plain sawtooth, sweeping an octave up and back over 2 s",
  "duration": 2.0,
  "minFrequency": 20.0,
  "maxFrequency": 440,
  "points": [
    [0, 110],
    [1, 220],
    [2, 110]
  ],
  "wave": "sawtooth",
  "amplitude": 0.3,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 45,
  "attack": 0.005,
  "release": 0.2
}

"""#),
    ("10-wind", #"""
{
  "name": "wind",
  "program": 10,
  "description": "White noise breathing in and out (the curve is ignored by noise)",
  "duration": 1.0,
  "minFrequency": 20.0,
  "maxFrequency": 200,
  "points": [
    [0, 100],
    [1, 100]
  ],
  "wave": "noise",
  "amplitude": 0.2,
  "envelope": { "kind": "linear-decay" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 69,
  "attack": 0.3,
  "release": 0.8
}

"""#),
    ("11-square-lead", #"""
{
  "name": "square-lead",
  "program": 11,
  "description": "Band-limited square lead with a short slapback echo",
  "duration": 1.0,
  "minFrequency": 20.0,
  "maxFrequency": 880,
  "points": [
    [0, 440],
    [0.02, 436],
    [1, 440]
  ],
  "wave": "band-limited-square",
  "amplitude": 0.3,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.12,
    "volume": 0.3
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 69,
  "attack": 0.005,
  "release": 0.1
}

"""#),
    ("12-article-curve", #"""
{
  "name": "article-curve",
  "program": 12,
  "description": "The article's interpolation example 54→460→54→360 Hz at N = 500, band-limited sawtooth",
  "duration": 1.0,
  "minFrequency": 20.0,
  "maxFrequency": 920,
  "points": [
    [0.0, 54],
    [0.231, 460],
    [0.846, 54],
    [1.0, 360]
  ],
  "wave": "band-limited-sawtooth",
  "amplitude": 0.35,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 500,
  "fourierTerms": 10,
  "rootNote": 69,
  "attack": 0.005,
  "release": 0.08
}

"""#),
    ("13-hi-lo-wail", #"""
{
  "name": "hi-lo-wail",
  "program": 13,
  "description": "Siren with segment kinds: hi-lo steps (hold), then a wail up two octaves and back in even semitones (exponential), band-limited sawtooth",
  "duration": 2.4,
  "minFrequency": 20.0,
  "maxFrequency": 2400,
  "points": [
    [0, 440, "hold"],
    [0.4, 587.33, "hold"],
    [0.8, 440, "hold"],
    [1.2, 587.33, "exponential"],
    [1.8, 1760, "exponential"],
    [2.4, 440]
  ],
  "wave": "band-limited-sawtooth",
  "amplitude": 0.3,
  "envelope": { "kind": "constant" },
  "echo": {
    "delay": 0.25,
    "volume": 0.0
  },
  "fidelity": 1000,
  "fourierTerms": 10,
  "rootNote": 69,
  "attack": 0.005,
  "release": 0.08
}

"""#),
]
