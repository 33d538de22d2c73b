#!/usr/bin/env bash
# Every figure the README's speed section quotes, in one run, on this machine:
#   1. toneshaper-bench: ns per voice-sample for sine, band-limited saw and Fourier saw at 64, 256
#      and 1024 held voices (voices per core in real time), the dense performance on one thread and on
#      every core, the C reference, and the aliasing floor of the band-limited waves;
#   2. compare-peers.py: whole renders of the same 30-s dense MIDI file by toneshaper (saw and sine,
#      one thread and every core), Csound's vco2 (ksmps 64 and 1) and FluidSynth, CPU time in
#      interleaved rounds, medians and ranges; the two-thread renders round by round, each with the
#      core-to-core round trip measured just before it.
# Release builds. Installs csound, fluidsynth and a GM soundfont from Debian when missing.
# Usage: bash Benchmarks/report.sh [ROUNDS]   (rounds of the peer comparison and runs per bench figure; default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
command -v csound >/dev/null || missing+=(csound)
command -v fluidsynth >/dev/null || missing+=(fluidsynth)
if ! have_pkg timgm6mb-soundfont && ! have_pkg fluid-soundfont-gm; then missing+=(timgm6mb-soundfont); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "report: installing ${missing[*]} (apt-get)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi
bash .ci/install-deps
swift build -c release --product toneshaper >/dev/null
swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build-bench >/dev/null
echo "ToneShaper $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(date -u +%F)"
echo
Benchmarks/.build-bench/release/toneshaper-bench --runs "$ROUNDS" --seconds 4 --dense-seconds 30
echo
python3 Benchmarks/compare-peers.py .build/release/toneshaper --rounds "$ROUNDS" --seconds 30 \
  --probe Benchmarks/.build-bench/release/toneshaper-bench
