#!/usr/bin/env bash
# Times ToneShaper's offline render against FluidSynth's fast render of the same dense MIDI file
# (both to 48 kHz WAV), best of 3 wall-clock runs each, and prints the speed ratio.
# The workloads differ (FluidSynth plays samples from a General MIDI soundfont, ToneShaper
# synthesises tone shapes), but the input file, the output format and the polyphony are the same.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
if ! command -v fluidsynth >/dev/null || ! dpkg -s timgm6mb-soundfont >/dev/null 2>&1; then
  echo "installing fluidsynth and timgm6mb-soundfont (apt-get)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends fluidsynth timgm6mb-soundfont </dev/null >/dev/null
fi
SF2=$(dpkg -L timgm6mb-soundfont | grep -i '\.sf2$' | head -1)
bash .ci/install-deps
swift build -c release --product toneshaper >/dev/null
TS=.build/release/toneshaper
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
SECONDS_OF_MUSIC=${1:-30}
python3 Benchmarks/make-dense.py "$WORK/dense.mid" "$SECONDS_OF_MUSIC"

best() {  # best wall-clock seconds of 3 runs of the given command
  local b=""
  for _ in 1 2 3; do
    local s e t
    s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc -l)
    if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
  done
  echo "$b"
}
command -v bc >/dev/null || $SUDO apt-get install -y -qq bc </dev/null >/dev/null

FS=$(best fluidsynth -ni -R 0 -C 0 -F "$WORK/fs.wav" -r 48000 "$SF2" "$WORK/dense.mid")
TSB=$(best "$TS" render "$WORK/dense.mid" -o "$WORK/ts.wav" --preset article-curve --voices 128 --rate 48000)
AUDIO=$(python3 -c "import wave; w=wave.open('$WORK/ts.wav'); print(w.getnframes()/w.getframerate())")
printf 'dense.mid: %s s of music, 64 notes sounding, 8 channels (soundfont %s)\n' "$SECONDS_OF_MUSIC" "$SF2"
printf 'fluidsynth -ni -R 0 -C 0 -F out.wav -r 48000   %6.2f s\n' "$FS"
printf 'toneshaper render --preset article-curve        %6.2f s  (%.1f× real time for %.1f s of audio)\n' "$TSB" "$(echo "$AUDIO / $TSB" | bc -l)" "$AUDIO"
printf 'ratio: toneshaper is %.2f× as fast as FluidSynth on this file\n' "$(echo "$FS / $TSB" | bc -l)"
echo "BENCH figure=fluidsynth_ratio fluidsynth_s=$FS toneshaper_s=$TSB ratio=$(echo "$FS / $TSB" | bc -l)"
