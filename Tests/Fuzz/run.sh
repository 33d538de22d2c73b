#!/usr/bin/env bash
# Fuzzes ToneShaper's seven readers of untrusted input with libFuzzer, for a bounded time each.
#
#   bash Tests/Fuzz/run.sh [SECONDS_PER_TARGET]          default 20 seconds per target
#   TONESHAPER_FUZZ_TARGETS="shape map" bash Tests/Fuzz/run.sh 300     only some targets
#   TONESHAPER_FUZZ_JOBS=1 bash Tests/Fuzz/run.sh                   one target at a time (default: one per core)
#
#   midi    Standard MIDI Files   MIDIFile.parse, then timedMessages and durationSeconds
#   shape   shape (preset) JSON   ShapeFile.decode, then validate, an engine and 768 frames of two notes
#   map     controller mappings   ControllerMapFile.parse, then every assignment through an engine
#   script  event scripts         EventScript.parse, then timedMessages
#   scl     Scala scales          ScalaScale.parse, a Tuning, every key and full bends through an engine
#   kbm     Scala key mappings    KeyboardMapping.parse on two scales, then as scl
#   state   instrument states     InstrumentState(bytes:), written and read back, an engine with its controls restored
#
# Prints one line per target, then `fuzz: P passed, F failed` alone on a line. Exits 1 when a target
# crashed, hung (> 10 s on one input), leaked or went over 2 GB; the input that did it is kept under
# .build-fuzz/crashes/ and its path is printed with the commands that replay and minimise it.
# Exits 2 when the fuzzer cannot be built.
#
# How the fuzzer is built, and why this way:
# - swiftc directly, not SwiftPM: libFuzzer brings its own main(), the sanitizers must cover only the
#   readers, and the readers need a small part of the project (no ALSA, libsndfile or Hummingbird).
# - Three modules, each built whole from its own folder. ToneShaperMIDI (every source of
#   Sources/ToneShaperMIDI, the event script reader included) and ToneShaperRealtime (the thread
#   starter Core's render crew uses, over the small C module CThreadPlacement, compiled with the
#   toolchain's clang) keep their own names (a static library and its .swiftmodule each), so the
#   imports in Core and in the harness resolve as they do under SwiftPM; then every Core source and
#   Tests/Fuzz/Harness.swift make one module, ToneShaperFuzz, linked against them. No project source is copied, edited, conditioned or picked by path.
#   One binary serves all seven targets: the harness reads TONESHAPER_FUZZ_TARGET.
# - Whole-module (-wmo): one compiler process per module, so the build keeps to one core.
# - -O -g by default: about 45 s to build instead of 15 s at -Onone, but 1.2 to 3.5 times the inputs
#   per second, and it fuzzes the code as it ships (Swift keeps its bounds and overflow traps at -O).
#   TONESHAPER_FUZZ_OPT=-Onone for a quicker build while working on the harness.
# - The binary is reused while a SHA-256 of its inputs (sources, harness, this script, swiftc --version)
#   is unchanged.
# - Nothing to install: the swift.org Linux toolchains ship libFuzzer, AddressSanitizer and
#   llvm-symbolizer (usr/lib/swift/clang/lib/linux, usr/bin). swiftc only looks there, so a distribution's
#   clang runtime packages would not help; a toolchain without them fails a 3-line probe, said in one line.
#
# Seeds are the project's own files (Examples/*.mid, Presets/*.json, Mappings/*.map, Tunings/*.scl|kbm), the
# README's event script and Tests/Fuzz/seeds/TARGET/, copied into a temporary corpus per target and
# thrown away afterwards. Tests/Fuzz/dicts/TARGET.dict gives libFuzzer each format's words.
set -euo pipefail
cd "$(dirname "$0")/../.."

SECONDS_PER_TARGET="${1:-20}"
if ! [[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: Tests/Fuzz/run.sh [SECONDS_PER_TARGET] (a whole number ≥ 1, got '$SECONDS_PER_TARGET')" >&2
  exit 2
fi
TARGETS="${TONESHAPER_FUZZ_TARGETS:-midi shape map script scl kbm state}"
OPT="${TONESHAPER_FUZZ_OPT:--O}"
BUILD=.build-fuzz
BIN="$BUILD/toneshaper-fuzz"
SWIFTC="${SWIFTC:-swiftc}"

# --- Build (or reuse) -------------------------------------------------------------------------

MIDI_SOURCES=$(find Sources/ToneShaperMIDI -name '*.swift' | LC_ALL=C sort)
REALTIME_SOURCES=$(find Sources/ToneShaperRealtime -name '*.swift' | LC_ALL=C sort)
FUZZ_SOURCES="$(find Sources/ToneShaperCore -name '*.swift' | LC_ALL=C sort)
Tests/Fuzz/Harness.swift"
# Realtime's one C module (where a new thread starts): compiled with the toolchain's clang, found
# by its module map; Core's header-only one (a cache-line prefetch), found by its module map too.
C_SOURCES="Sources/CThreadPlacement/CThreadPlacement.c Sources/CThreadPlacement/include/CThreadPlacement.h Sources/CThreadPlacement/include/module.modulemap
Sources/CPrefetch/prefetch.h Sources/CPrefetch/module.modulemap"
CC_FOR_FUZZ="$(dirname "$(command -v "$SWIFTC" || echo /usr/bin/swiftc)")/clang"
[ -x "$CC_FOR_FUZZ" ] || CC_FOR_FUZZ=cc
FLAGS=(-swift-version 6 -parse-as-library -wmo "$OPT" -g -sanitize=fuzzer,address)

if ! command -v "$SWIFTC" >/dev/null; then
  echo "fuzz: swiftc not found (install the Swift toolchain and put its usr/bin on PATH)" >&2
  exit 2
fi
mkdir -p "$BUILD/crashes" "$BUILD/logs"
# shellcheck disable=SC2086
INPUTS_HASH=$( { "$SWIFTC" --version 2>&1; echo "${FLAGS[*]}"; sha256sum $MIDI_SOURCES $REALTIME_SOURCES $FUZZ_SOURCES $C_SOURCES Tests/Fuzz/run.sh; } \
  | sha256sum | cut -d' ' -f1)

# swiftc prints one harmless ld.gold warning per ASan helper symbol; keep everything else.
quiet_linker() { grep -v "warning: Cannot export local symbol" || true; }

if [ -x "$BIN" ] && [ "$(cat "$BUILD/inputs.sha256" 2>/dev/null)" = "$INPUTS_HASH" ]; then
  echo "fuzz: reusing $BIN (sources unchanged)"
else
  start=$(date +%s)
  rm -rf "$BUILD/obj" && mkdir -p "$BUILD/obj"
  # The probe: can this toolchain link a libFuzzer binary at all?
  printf '@_cdecl("LLVMFuzzerTestOneInput") public func f(_ d: UnsafePointer<UInt8>, _ n: Int) -> CInt { 0 }\n' \
    > "$BUILD/obj/probe.swift"
  if ! "$SWIFTC" -parse-as-library -sanitize=fuzzer,address "$BUILD/obj/probe.swift" -o "$BUILD/obj/probe" \
       -module-cache-path "$BUILD/obj/cache" 2>"$BUILD/logs/probe.log"; then
    echo "fuzz: $("$SWIFTC" --version 2>&1 | head -1) cannot build a libFuzzer binary (-sanitize=fuzzer,address);" \
         "the swift.org toolchains can. Details: $BUILD/logs/probe.log" >&2
    exit 2
  fi
  echo "fuzz: building $BIN ($OPT; ToneShaperMIDI, ToneShaperRealtime, then Core + harness)"
  # shellcheck disable=SC2086
  if ! "$SWIFTC" "${FLAGS[@]}" -module-name ToneShaperMIDI -module-cache-path "$BUILD/obj/cache" \
       -emit-module -emit-module-path "$BUILD/obj/ToneShaperMIDI.swiftmodule" \
       -emit-library -static -o "$BUILD/obj/libToneShaperMIDI.a" $MIDI_SOURCES 2>&1 | quiet_linker \
     || [ ! -f "$BUILD/obj/libToneShaperMIDI.a" ]; then
    echo "fuzz: building ToneShaperMIDI failed" >&2
    exit 2
  fi
  if ! "$CC_FOR_FUZZ" -O2 -c Sources/CThreadPlacement/CThreadPlacement.c -I Sources/CThreadPlacement/include \
       -o "$BUILD/obj/CThreadPlacement.o" 2>&1; then
    echo "fuzz: building CThreadPlacement failed" >&2
    exit 2
  fi
  # shellcheck disable=SC2086
  if ! "$SWIFTC" "${FLAGS[@]}" -module-name ToneShaperRealtime -module-cache-path "$BUILD/obj/cache" \
       -I Sources/CThreadPlacement/include \
       -emit-module -emit-module-path "$BUILD/obj/ToneShaperRealtime.swiftmodule" \
       -emit-library -static -o "$BUILD/obj/libToneShaperRealtime.a" $REALTIME_SOURCES 2>&1 | quiet_linker \
     || [ ! -f "$BUILD/obj/libToneShaperRealtime.a" ]; then
    echo "fuzz: building ToneShaperRealtime failed" >&2
    exit 2
  fi
  # shellcheck disable=SC2086
  if ! "$SWIFTC" "${FLAGS[@]}" -module-name ToneShaperFuzz -module-cache-path "$BUILD/obj/cache" \
       -emit-executable -emit-module-path "$BUILD/obj/ToneShaperFuzz.swiftmodule" \
       -I "$BUILD/obj" -I Sources/CThreadPlacement/include -I Sources/CPrefetch -L "$BUILD/obj" -lToneShaperMIDI -lToneShaperRealtime \
       -o "$BUILD/obj/toneshaper-fuzz" $FUZZ_SOURCES "$BUILD/obj/CThreadPlacement.o" 2>&1 | quiet_linker \
     || [ ! -x "$BUILD/obj/toneshaper-fuzz" ]; then
    echo "fuzz: building the fuzzer failed" >&2
    exit 2
  fi
  mv "$BUILD/obj/toneshaper-fuzz" "$BIN"
  echo "$INPUTS_HASH" > "$BUILD/inputs.sha256"
  echo "fuzz: built in $(( $(date +%s) - start )) s"
fi

# --- Seeds ------------------------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toneshaper-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

seed() {  # seed TARGET FILE...: copies the files that exist into TARGET's corpus
  local target=$1; shift
  mkdir -p "$WORK/$target"
  local f
  for f in "$@"; do
    if [ -f "$f" ]; then cp "$f" "$WORK/$target/$(echo "$f" | tr '/' '_')"; fi
  done
}
seed midi Examples/*.mid Tests/Fuzz/seeds/midi/*
seed shape Presets/*.json Tests/Fuzz/seeds/shape/*
seed map Mappings/*.map Tests/Fuzz/seeds/map/*
seed script Tests/Fuzz/seeds/script/*
seed scl Tunings/*.scl Tests/Fuzz/seeds/scl/*
seed kbm Tunings/*.kbm Tests/Fuzz/seeds/kbm/*
seed state Tests/Fuzz/seeds/state/*
# The README's examples ("Play a file or a script").
cat > "$WORK/script/readme-example.txt" <<'EOF'
0.5  on 60 100        # note on: note, velocity (default 100)
1.0  off 60           # note off: note, velocity (default 64)
1.2  cc 74 30         # control change: controller, value
1.5  bend 4096        # pitch bend -8192...8191
2.0  program 3 ch=2   # program change
2.2  pressure 90      # channel pressure
EOF
printf '0 on 60\n1 off 60\n' > "$WORK/script/readme-one-liner.txt"

# --- Run --------------------------------------------------------------------------------------

# One bounded libFuzzer run of $target (with $max_len, $asan_options), its output in $log, its status in $rc.
# Each target's corpus, log and artifacts are its own, so targets can run side by side.
# SWIFT_BACKTRACE=enable=no: Swift's own crash backtracer would race AddressSanitizer's report.
fuzz() {
  rc=0
  TONESHAPER_FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="$asan_options" \
    timeout --kill-after=10 $((SECONDS_PER_TARGET + 120)) \
    "$BIN" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -max_len="$max_len" \
      -dict="Tests/Fuzz/dicts/$target.dict" -artifact_prefix="$BUILD/crashes/$target-" -print_final_stats=1 \
      "$@" "$WORK/$target" >"$log" 2>&1 || rc=$?
}

# One target, start to end: its report lines on stdout; exit 0 when it passed.
run_target() {
  local target=$1 max_len log seeds asan_options last runs rate cov ft corp stats input what why where
  case "$target" in
    midi) max_len=65536 ;;
    *) max_len=16384 ;;
  esac
  log="$BUILD/logs/$target.log"
  seeds=$(find "$WORK/$target" -type f | wc -l)
  asan_options="${ASAN_OPTIONS:-}"
  fuzz
  # LeakSanitizer needs ptrace, which some containers forbid: then fuzz on without leak checks, and say so.
  if [ "$rc" -ne 0 ] && grep -q "LeakSanitizer has encountered a fatal error" "$log"; then
    echo "fuzz $target: LeakSanitizer cannot run here (no ptrace?); fuzzing without leak detection"
    asan_options="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    fuzz -detect_leaks=0
  fi
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$runs" ] || runs=$(echo "$last" | sed -n 's/^#\([0-9]*\).*/\1/p')
  rate=$(echo "$last" | sed -n 's/.* exec\/s: \([0-9]*\).*/\1/p')
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
  corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
  stats="${runs:-?} runs (${rate:-?}/s), coverage ${cov:-?} edges ${ft:-?} features, corpus $seeds -> ${corp:-?}"
  if [ "$rc" -eq 0 ]; then
    echo "fuzz $target: ok, $stats, crashes 0"
    return 0
  fi
  input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
  what=$(grep -m1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)' "$log" | sed 's/^==[0-9]*== *//' || true)
  why=$(grep -m1 -oE 'Swift runtime failure: [^/]*[^/ ]|Fatal error: .*|fuzz invariant: .*' "$log" || true)
  where=$(grep -m1 -oE '(/[^ ]*)?(Sources|Tests/Fuzz)/[^ ]*\.swift:[0-9]+(:[0-9]+)?' "$log" || true)
  echo "fuzz $target: FAILED (exit $rc), $stats, crashes 1"
  echo "  ${what:-see $log}${why:+ — $why}${where:+ at ${where#"$PWD/"}}"
  echo "  input: ${input:-(none written; see $log)}"
  if [ -n "$input" ]; then
    echo "  replay:   TONESHAPER_FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no $BIN $input"
    echo "  minimise: TONESHAPER_FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no $BIN -minimize_crash=1 -runs=20000 -max_len=$max_len $input"
  fi
  echo "  log: $log"
  return 1
}

for target in $TARGETS; do
  case "$target" in
    midi|shape|map|script|scl|kbm|state) ;;
    *) echo "fuzz: unknown target '$target' (midi, shape, map, script, scl, kbm, state)" >&2; exit 2 ;;
  esac
done
# Targets side by side, one per core (each fuzzer is one thread): each still gets its seconds of a
# whole core, and the run takes a fraction of the time. Reports are printed in the targets' order.
JOBS="${TONESHAPER_FUZZ_JOBS:-$(nproc)}"
for target in $TARGETS; do
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  { if run_target "$target"; then echo ok > "$WORK/$target.status"; else echo failed > "$WORK/$target.status"; fi; } \
    > "$WORK/$target.report" &
done
wait
passed=0
failed=0
for target in $TARGETS; do
  cat "$WORK/$target.report"
  if [ "$(cat "$WORK/$target.status" 2>/dev/null)" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
