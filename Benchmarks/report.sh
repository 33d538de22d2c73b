#!/usr/bin/env bash
# Every figure the README's speed section quotes, in one run, on this machine:
#   1. toneshaper-bench: ns per voice-sample for sine, band-limited saw and Fourier saw at 64, 256,
#      1024 and 4096 held voices (voices per core in real time; 4096 only when the bench takes it), the
#      dense performance on one thread and on every core, the C reference, and the aliasing floor of
#      the band-limited waves;
#   2. compare-peers.py: whole renders of the same 30-s dense MIDI file by toneshaper (saw and sine,
#      one thread and every core), Csound (vco2 and poscil, ksmps 64 and 1), scsynth (Saw and SinOsc,
#      non-real-time, -z 64), FluidSynth and the C reference kernel ref-kernel.c built here by clang
#      -O3 and gcc -O3 (the limit), CPU and wall time in interleaved rounds, medians and ranges; each
#      program's pitch checked on a one-note probe and each render's length and sound checked before
#      its time counts; the two-thread renders round by round, each with the core-to-core round trip
#      measured just before it.
# Release builds. Installs csound, scsynth (supercollider-server), fluidsynth, a GM soundfont, numpy, soundfile, mido,
# gcc and clang from Debian when missing (clang: the Swift toolchain's own is used when it is there).
# REPORT_NO_BUILD=1 reuses the release builds already in .build and Benchmarks/.build-bench.
# Usage: bash Benchmarks/report.sh [ROUNDS]   (rounds of the peer comparison and runs per bench figure; default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
command -v csound >/dev/null || missing+=(csound)
command -v fluidsynth >/dev/null || missing+=(fluidsynth)
command -v scsynth >/dev/null || missing+=(supercollider-server)
command -v gcc >/dev/null || missing+=(gcc)
command -v clang >/dev/null || [ -x /opt/swift/usr/bin/clang ] || missing+=(clang)
# Debian's Python, whose numpy, soundfile (libsndfile) and mido apt installs (a pyenv python3 first on
# PATH would not see them).
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
$PY -c 'import numpy' 2>/dev/null || missing+=(python3-numpy)
$PY -c 'import soundfile' 2>/dev/null || missing+=(python3-soundfile)
$PY -c 'import mido' 2>/dev/null || missing+=(python3-mido)
if ! have_pkg timgm6mb-soundfont && ! have_pkg fluid-soundfont-gm; then missing+=(timgm6mb-soundfont); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "report: installing ${missing[*]} (apt-get)" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi
bash .ci/install-deps
if [ -z "${REPORT_NO_BUILD:-}" ]; then
  swift build -c release --product toneshaper >/dev/null
  swift build -c release --package-path Benchmarks --scratch-path Benchmarks/.build-bench >/dev/null
fi
BENCH=Benchmarks/.build-bench/release/toneshaper-bench
# 4096 held voices once the bench takes them (its usage line says so); before that, up to 1024.
VOICES=64,256,1024
case "$("$BENCH" --help)" in *4096*) VOICES=64,256,1024,4096 ;; esac
echo "ToneShaper $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(date -u +%F)"
echo
if [ "$VOICES" = 64,256,1024 ]; then echo "(this toneshaper-bench takes no 4096 held voices: measured up to 1024)"; fi
"$BENCH" --runs "$ROUNDS" --seconds 4 --dense-seconds 30 --voices "$VOICES"
echo
$PY Benchmarks/compare-peers.py .build/release/toneshaper --rounds "$ROUNDS" --seconds 30 \
  --probe "$BENCH"
