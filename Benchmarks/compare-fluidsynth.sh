#!/usr/bin/env bash
# Times ToneShaper's offline render against FluidSynth's fast render of the same MIDI files, both
# to 48 kHz WAV, best of 3 wall-clock runs each, and prints the ratio.
#
# The workloads differ: FluidSynth plays back soundfont samples (General MIDI, TimGM6mb or
# FluidR3), ToneShaper synthesises tone shapes: on the dense file the band-limited sawtooth
# article-curve preset (echo on through the file's CC 91) and the band-limited square-lead preset
# (with its own echo); on the demo its own programs. The input file, the output format and the
# polyphony are the same.
#
# Usage: bash Benchmarks/compare-fluidsynth.sh [SECONDS]   (length of the generated dense file, default 30)
# Installs fluidsynth and a GM soundfont from Debian (apt-get, sudo unless root) only when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_OF_MUSIC=${1:-30}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
command -v fluidsynth >/dev/null || missing+=(fluidsynth)
if ! have_pkg timgm6mb-soundfont && ! have_pkg fluid-soundfont-gm; then missing+=(timgm6mb-soundfont); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "compare-fluidsynth: installing ${missing[*]} (apt-get)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi
SF2=""
for p in timgm6mb-soundfont fluid-soundfont-gm; do
  if have_pkg "$p"; then SF2=$(dpkg -L "$p" | grep -i '\.sf2$' | head -1); [ -n "$SF2" ] && break; fi
done
[ -n "$SF2" ] || { echo "compare-fluidsynth: no .sf2 found in the soundfont package" >&2; exit 1; }

# The toneshaper CLI, release build (the root package's own .build).
bash .ci/install-deps
swift build -c release --product toneshaper >/dev/null
TS=.build/release/toneshaper

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 Benchmarks/make-dense.py "$WORK/dense.mid" "$SECONDS_OF_MUSIC"
# file:preset pairs; no preset = the file's own program changes pick the presets.
RUNS=("$WORK/dense.mid:article-curve" "$WORK/dense.mid:square-lead")
[ -f Examples/demo.mid ] && RUNS+=("Examples/demo.mid:")

# best CMD...: prints the best wall-clock seconds of 3 runs (bash's `time`, TIMEFORMAT=%R).
best() {
  local b="" t
  for _ in 1 2 3; do
    t=$( { TIMEFORMAT=%R; time "$@" >/dev/null 2>&1; } 2>&1 )
    b=$(awk -v a="$t" -v b="$b" 'BEGIN { print (b == "" || a < b) ? a : b }')
  done
  echo "$b"
}
wav_seconds() { python3 -c "import wave,sys; w=wave.open(sys.argv[1]); print(w.getnframes()/w.getframerate())" "$1"; }

echo "FluidSynth $(fluidsynth --version 2>/dev/null | head -1 | awk '{print $NF}') with $SF2; toneshaper $(git rev-parse --short HEAD 2>/dev/null || echo '?'), 128 voices"
echo "Both render the same MIDI file to a 48 kHz stereo WAV; the work differs (FluidSynth: sample playback"
echo "from a soundfont; ToneShaper: synthesis of band-limited tone shapes with echo)."
printf '%-12s %-14s %8s %8s %8s %10s %8s %8s %10s\n' file preset fs_audio fs_time ts_audio ts_time ts_xRT ratio ratio/s
declare -A FS_TIMES FS_AUDIO
for run in "${RUNS[@]}"; do
  f=${run%%:*}; preset=${run#*:}
  if [ -z "${FS_TIMES[$f]:-}" ]; then
    FS_TIMES[$f]=$(best fluidsynth -ni -R 0 -C 0 -F "$WORK/fs.wav" -r 48000 "$SF2" "$f")
    FS_AUDIO[$f]=$(wav_seconds "$WORK/fs.wav")
  fi
  FS=${FS_TIMES[$f]}; FSAUDIO=${FS_AUDIO[$f]}
  PRESET_ARGS=(); [ -n "$preset" ] && PRESET_ARGS=(--preset "$preset")
  TSB=$(best "$TS" render "$f" -o "$WORK/ts.wav" "${PRESET_ARGS[@]}" --voices 128 --rate 48000)
  AUDIO=$(wav_seconds "$WORK/ts.wav")
  name=$(basename "$f")
  read -r XRT RATIO NORM < <(awk -v a="$AUDIO" -v fa="$FSAUDIO" -v t="$TSB" -v f="$FS" \
    'BEGIN { printf "%.1f %.2f %.2f\n", a / t, f / t, (f / fa) / (t / a) }')
  printf '%-12s %-14s %8.1f %8.2f %8.1f %10.2f %8s %8s %10s\n' "$name" "${preset:-(programs)}" "$FSAUDIO" "$FS" "$AUDIO" "$TSB" "${XRT}x" "$RATIO" "$NORM"
  echo "BENCH figure=fluidsynth_ratio file=$name preset=${preset:-programs} toneshaper_audio_s=$AUDIO fluidsynth_audio_s=$FSAUDIO fluidsynth_s=$FS toneshaper_s=$TSB ratio=$RATIO ratio_per_audio_second=$NORM"
done
echo "ratio = FluidSynth time / ToneShaper time for the file (> 1: ToneShaper is faster); ratio/s = the same per"
echo "second of audio written (FluidSynth renders until its last voice has died away, ToneShaper for --tail 2 s)."
echo "Times include start-up, MIDI parsing and WAV writing for both programs."
