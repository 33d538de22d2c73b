#!/usr/bin/env bash
# The LV2 plugin, for real, without a GUI: a release build of toneshaper.lv2 (Swift runtime inside,
# Core for any x86-64), assembled as install.sh installs it, validated with lv2_validate, then
# loaded by lv2host (a C host over lilv, built here with cc) that plays Examples/demo.mid through
# it with every event at its frame. Its output must equal `toneshaper render` of the same file at
# the same rate and gain (48 kHz, the default -6 dB) sample for sample, in host blocks of 32, 256
# and 1024 frames and with 16 instances at once; a control moved at a frame changes the output
# from that frame and not before; a state saved in one process and restored in another, on a
# bundle whose shape of that name differs, plays the same. Then a smoke run in a real host: jalv on a dummy JACK server of
# the test's own, MIDI from jack_midiseq, 2 s recorded with jack_rec must not be silent.
#
# The CLAP plugin, the same way: toneshaper.clap (one file, shapes inside) loaded by claphost (a C
# host over the CLAP headers) must export only clap_entry, describe itself as an instrument, play
# demo.mid as MIDI and as CLAP notes equal to `render` in blocks of 32, 256 and 1024 and as 16
# instances, apply a parameter at its frame inside a block, bend one voice by a tuning expression
# (measured by FFT), keep its state across processes (an edited shape in it plays edited), and
# survive a hostile host.
#
# Usage: bash Tests/Plugins/run.sh   (after `swift build` or `swift test`: it renders the reference
#   with that build's program; TONESHAPER_BIN=FILE uses another; TONESHAPER_CLAP=FILE tests that
#   .clap instead of building one)
# Installs lv2-dev liblilv-dev lilv-utils sordi jalv jackd2 dpf-source when missing (apt-get; sudo
# unless root).
set -euo pipefail
cd "$(dirname "$0")/../.."
checkout="$PWD"
work="$(mktemp -d /tmp/toneshaper-plugins-test.XXXXXX)"
pids=()  # what this test started (jackd, jalv, the sequencer): ended by their ids, never by name
trap 'for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"' EXIT
failures=0
check() {  # check "what should be true" COMMAND...: one line, ok or FAIL
  local what="$1"; shift
  if "$@" >"$work/last.log" 2>&1; then echo "ok   $what"; else echo "FAIL $what"; sed 's/^/     /' "$work/last.log"; failures=$((failures + 1)); fi
}

missing=()
pkg-config --exists lv2 || missing+=(lv2-dev)
pkg-config --exists lilv-0 || missing+=(liblilv-dev)
command -v lv2ls >/dev/null || missing+=(lilv-utils)
command -v sord_validate >/dev/null || missing+=(sordi)
command -v jalv >/dev/null || missing+=(jalv)
command -v jackd >/dev/null && command -v jack_midiseq >/dev/null && command -v jack_rec >/dev/null || missing+=(jackd2)
pkg-config --exists sndfile || missing+=(libsndfile1-dev)
command -v cc >/dev/null || missing+=(gcc libc6-dev)
[ -f /usr/share/dpf/distrho/src/clap/entry.h ] || missing+=(dpf-source)
/usr/bin/python3 -c 'import soundfile, numpy' 2>/dev/null || missing+=(python3-soundfile python3-numpy)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "plugins: installing ${missing[*]} (apt-get)" >&2
  $SUDO apt-get update -qq </dev/null >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null >/dev/null
fi

# midi_events.py runs under PATH's python3 (pyenv's, on the CI machine): the tests' MIDI reader needs mido there.
python3 -c 'import mido' 2>/dev/null || python3 -m pip install -q -r Tests/Shared/requirements.txt </dev/null

# --- the bundle ------------------------------------------------------------------------------------
# Its own build folder: a plugin's Core is built for any x86-64 (a host may run on an older CPU
# than the one that built it), unlike the program's.
TONESHAPER_CPU=baseline swift build -c release --build-path .build-plugins --product toneshaper_lv2
so=.build-plugins/release/libtoneshaper_lv2.so
bundles="$work/lv2"
bash packaging/lv2/assemble.sh "$so" "$bundles/toneshaper.lv2"
uri=urn:toneshaper:lv2:instrument

check "lv2_validate finds no error in the bundle's description" \
  bash -c "lv2_validate '$bundles'/toneshaper.lv2/*.ttl 2>&1 | tee /dev/stderr | grep -q '^Found 0 errors'"
check "lv2ls lists the instrument from LV2_PATH" bash -c "LV2_PATH='$bundles' lv2ls | grep -qx '$uri'"
check "the library exports one symbol, lv2_descriptor" \
  bash -c "readelf --dyn-syms -W '$so' | awk '\$7 != \"UND\" && (\$5 == \"GLOBAL\" || \$5 == \"WEAK\") { print \$8 }' | tee /dev/stderr | diff - <(echo lv2_descriptor)"
check "the library needs no Swift toolchain (no libswift*, no libFoundation* in ldd)" \
  bash -c "! ldd '$so' | grep -E 'libswift|libFoundation|libdispatch'"
# The core links FoundationEssentials only: the full Foundation would bring ICU's data (≈34 MB)
# into every plugin, three times the rest of it.
check "the library carries no ICU data (the core needs FoundationEssentials only): $(( $(stat -c %s "$so") / 1048576 )) MB" \
  bash -c "! nm '$so' | grep -q icudt && [ \$(stat -c %s '$so') -lt \$((40 << 20)) ]"

# --- the host and the reference ------------------------------------------------------------------
cc -O1 -Wall -Wextra -D_DEFAULT_SOURCE -o "$work/lv2host" Tests/Plugins/lv2host.c $(pkg-config --cflags --libs lilv-0 sndfile)
bin="${TONESHAPER_BIN:-$checkout/.build/debug/toneshaper}"
[ -x "$bin" ] || { swift build --product toneshaper; bin="$checkout/.build/debug/toneshaper"; }
"$bin" render Examples/demo.mid -o "$work/render.wav" --format wav32f >/dev/null
frames=$(/usr/bin/python3 -c "import soundfile, sys; print(soundfile.info(sys.argv[1]).frames)" "$work/render.wav")
python3 Tests/Plugins/midi_events.py Examples/demo.mid 48000 >"$work/demo.events"
host() { "$work/lv2host" "$bundles/toneshaper.lv2" "$uri" "$work/demo.events" "$frames" "$@"; }
compare() { /usr/bin/python3 Tests/Plugins/compare.py "$@"; }

for block in 32 256 1024; do
  check "demo.mid in host blocks of $block frames equals toneshaper render sample for sample" \
    bash -c "$(declare -f host compare); work='$work' bundles='$bundles' uri='$uri' frames='$frames' checkout='$checkout';
             host $block '$work/block$block.wav' && compare '$work/block$block.wav' '$work/render.wav'"
done
check "16 instances at once each play it, equal to each other and to the render" \
  bash -c "$(declare -f host compare); work='$work' bundles='$bundles' uri='$uri' frames='$frames';
           host 256 '$work/sixteen.wav' -n 16 && compare '$work/sixteen.wav' '$work/render.wav'"
check "the volume control moved at frame 96000 changes the output from frame 96000, not before" \
  bash -c "$(declare -f host compare); work='$work' bundles='$bundles' uri='$uri' frames='$frames';
           host 256 '$work/moved.wav' -s 96000 volume 0.1 && compare '$work/moved.wav' '$work/render.wav' --first-diff 96000"

# One note on channel 4 (no program change): what the shape menu picks is what it plays.
/usr/bin/python3 -c 'import sys; track = bytes([0, 0x93, 60, 100, 0x83, 0x60, 0x83, 60, 0, 0, 0xFF, 0x2F, 0]);
sys.stdout.buffer.write(b"MThd" + bytes([0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0]) + b"MTrk" + len(track).to_bytes(4, "big") + track)' >"$work/note.mid"
"$bin" render "$work/note.mid" --preset glide-bass -o "$work/glide-bass.wav" --format wav32f >/dev/null
python3 Tests/Plugins/midi_events.py "$work/note.mid" 48000 >"$work/note.events"
note_frames=$(/usr/bin/python3 -c 'import soundfile, sys; print(soundfile.info(sys.argv[1]).frames)' "$work/glide-bass.wav")
note() { local bundle="$1"; shift; "$work/lv2host" "$bundle" "$uri" "$work/note.events" "$note_frames" 256 "$@"; }
check "the shape menu set to glide-bass (8) plays what render --preset glide-bass plays" \
  bash -c "$(declare -f note compare); work='$work' uri='$uri' note_frames='$note_frames';
           note '$bundles/toneshaper.lv2' '$work/shape.wav' -s 0 shape 8 --save '$work/state.ttl' &&
           compare '$work/shape.wav' '$work/glide-bass.wav'"
# Another machine's bundle, whose glide-bass is three times slower: the state carries the shape itself.
elsewhere="$work/elsewhere/toneshaper.lv2"
bash packaging/lv2/assemble.sh "$so" "$elsewhere"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["duration"] *= 3; json.dump(d, open(sys.argv[1], "w"))' \
  "$elsewhere/Presets/08-glide-bass.json"
check "that bundle's own glide-bass sounds different (so the next check proves something)" \
  bash -c "$(declare -f note compare); work='$work' uri='$uri' note_frames='$note_frames';
           note '$elsewhere' '$work/there.wav' -s 0 shape 8 && ! compare '$work/there.wav' '$work/shape.wav'"
check "the state saved by one process, restored into a new instance in another on that bundle, plays the same" \
  bash -c "$(declare -f note compare); work='$work' uri='$uri' note_frames='$note_frames';
           grep -q 'glide-bass' '$work/state.ttl' && note '$elsewhere' '$work/restored.wav' --restore '$work/state.ttl' &&
           compare '$work/restored.wav' '$work/shape.wav'"
check "hosts list the shipped shapes as the plugin's presets (lv2info: one per Presets/*.json, glide-bass among them)" \
  bash -c "LV2_PATH='$bundles' lv2info '$uri' | awk '/^\tPresets:/ { on = 1; next } on && NF == 0 { exit } on { print \$1 }' >'$work/presets.txt' &&
           [ \$(wc -l <'$work/presets.txt') -eq $(ls Presets/*.json | wc -l) ] && grep -qx glide-bass '$work/presets.txt'"

# --- a user's files through the host's file chooser (patch:Set of an atom:Path, read by the worker) ---
# Five notes from 0.25 s on (after the block the file is set in: its effect starts with the next one).
/usr/bin/python3 -c 'import sys
track = bytearray()
for i, key in enumerate([60, 64, 67, 71, 74]):
    track += bytes([0x81, 0x70 if i == 0 else 0x00, 0x90, key, 100, 0x83, 0x60, 0x80, key, 0])  # 240 ticks in, 480 held
track += bytes([0, 0xFF, 0x2F, 0])
sys.stdout.buffer.write(b"MThd" + bytes([0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0]) + b"MTrk" + len(track).to_bytes(4, "big") + bytes(track))' >"$work/notes.mid"
python3 Tests/Plugins/midi_events.py "$work/notes.mid" 48000 >"$work/notes.events"
# A shape of the user's own (not in the bundle): glide-bass reshaped, renamed, in a folder of theirs.
user="$work/user"
mkdir -p "$user"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["name"] = "my-swoop"; d.pop("program");
d["points"] = [[0, 110], [0.3, 55], [0.6, 165], [1, 110]]; d["wave"] = "sawtooth"; json.dump(d, open(sys.argv[2], "w"))' \
  Presets/08-glide-bass.json "$user/my-swoop.json"
cp Tunings/19-edo.scl Tunings/ji-major-7.scl Tunings/white-keys-7.kbm "$user/"
shape_uri=urn:toneshaper:lv2:shape-file scale_uri=urn:toneshaper:lv2:scale-file keymap_uri=urn:toneshaper:lv2:keymap-file
"$bin" render "$work/notes.mid" -o "$work/notes-plain.wav" --format wav32f >/dev/null
"$bin" render "$work/notes.mid" --preset "$user/my-swoop.json" -o "$work/notes-swoop.wav" --format wav32f >/dev/null
"$bin" render "$work/notes.mid" --tuning "$user/19-edo.scl" -o "$work/notes-19.wav" --format wav32f >/dev/null
"$bin" render "$work/notes.mid" --preset "$user/my-swoop.json" --tuning "$user/ji-major-7.scl" --keymap "$user/white-keys-7.kbm" \
  -o "$work/notes-all.wav" --format wav32f >/dev/null
notes_frames=$(/usr/bin/python3 -c 'import soundfile, sys; print(soundfile.info(sys.argv[1]).frames)' "$work/notes-plain.wav")
notes() { "$work/lv2host" "$bundles/toneshaper.lv2" "$uri" "$work/notes.events" "$notes_frames" 256 "$@"; }
export work bundles uri notes_frames shape_uri scale_uri keymap_uri user
export -f notes compare
check "the user's shape and the bundle's first shape sound different (so the checks below prove something)" \
  bash -c "! compare '$work/notes-swoop.wav' '$work/notes-plain.wav' && ! compare '$work/notes-19.wav' '$work/notes-plain.wav'"
check "a shape file set with patch:Set plays what render --preset FILE plays, sample for sample" \
  bash -c 'notes "$work/swoop.wav" -p 0 $shape_uri "$user/my-swoop.json" && compare "$work/swoop.wav" "$work/notes-swoop.wav"'
check "the plugin tells the host the shape file it plays on its notify port, after loading it and when asked (patch:Get)" \
  bash -c 'notes "$work/told.wav" -p 0 $shape_uri "$user/my-swoop.json" -g 1024 2>"$work/told.log"; cat "$work/told.log";
           [ "$(grep -cx "lv2host: notify: $shape_uri $user/my-swoop.json" "$work/told.log")" -eq 2 ]'
check "a Scala scale set with patch:Set plays what render --tuning FILE.scl plays, sample for sample" \
  bash -c 'notes "$work/tuned.wav" -p 0 $scale_uri "$user/19-edo.scl" && compare "$work/tuned.wav" "$work/notes-19.wav"'
check "shape, scale and keyboard map set together play what render --preset --tuning --keymap plays; the state is saved" \
  bash -c 'notes "$work/all.wav" -p 0 $shape_uri "$user/my-swoop.json" -p 0 $scale_uri "$user/ji-major-7.scl" \
             -p 0 $keymap_uri "$user/white-keys-7.kbm" --save "$work/files-state.ttl" && compare "$work/all.wav" "$work/notes-all.wav"'
rm -rf "$user"
check "with the files gone, that state restored into a new instance in another process plays the same" \
  bash -c '[ ! -e "$user/my-swoop.json" ] && notes "$work/all-restored.wav" --restore "$work/files-state.ttl" &&
           compare "$work/all-restored.wav" "$work/all.wav"'
# Files that are not what they claim: the plugin keeps the shape it had, says one line through the
# host's log naming the file, and does not crash.
mkdir -p "$user"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["name"] = "my-swoop"; d.pop("program");
d["points"] = [[0, 110], [0.3, 55], [0.6, 165], [1, 110]]; d["wave"] = "sawtooth"; json.dump(d, open(sys.argv[2], "w"))' \
  Presets/08-glide-bass.json "$user/my-swoop.json"
head -c 3000 /dev/urandom >"$user/garbage"
truncate -s 100M "$user/huge"
mkdir "$user/folder"
for property in shape scale keymap; do
  for bad in garbage huge folder missing; do
    check "a $bad $property file after a good shape: the good shape plays on, one log line names the file" \
      bash -c 'property_uri=${1}_uri; notes "$work/bad.wav" -p 0 $shape_uri "$user/my-swoop.json" -p 0 ${!property_uri} "$user/$2" 2>"$work/bad.log";
               status=$?; cat "$work/bad.log"; [ $status -eq 0 ] && compare "$work/bad.wav" "$work/notes-swoop.wav" &&
               [ "$(grep -c "^lv2host: log: " "$work/bad.log")" -eq 1 ] && grep -q "^lv2host: log: .*$user/$2" "$work/bad.log"' \
      _ "$property" "$bad"
  done
done
# --- the CLAP instrument, in claphost (a C host over the CLAP headers, built here with cc) ---------
# TONESHAPER_CLAP=FILE tests that .clap instead of building one (a variant, another build).
clap_id=org.toneshaper.instrument
if [ -n "${TONESHAPER_CLAP:-}" ]; then
  clap="$TONESHAPER_CLAP"
else
  TONESHAPER_CPU=baseline swift build -c release --build-path .build-plugins --product toneshaper_clap
  clap="$work/clap/toneshaper.clap"
  if [ -f packaging/clap/assemble.sh ]; then bash packaging/clap/assemble.sh .build-plugins/release/libtoneshaper_clap.so "$clap"
  else mkdir -p "$work/clap" && cp .build-plugins/release/libtoneshaper_clap.so "$clap"; fi
fi
cc -O1 -Wall -Wextra -Werror -I/usr/share/dpf/distrho/src -o "$work/claphost" Tests/Plugins/claphost.c -ldl -lm $(pkg-config --cflags --libs sndfile)
clap_host() { "$work/claphost" "$clap" "$clap_id" "$@"; }
clap_env="$(declare -f clap_host compare); work='$work' clap='$clap' clap_id='$clap_id' frames='$frames' note_frames='$note_frames'"

check "the CLAP library exports one symbol, clap_entry" \
  bash -c "readelf --dyn-syms -W '$clap' | awk '\$7 != \"UND\" && (\$5 == \"GLOBAL\" || \$5 == \"WEAK\") { print \$8 }' | tee /dev/stderr | diff - <(echo clap_entry)"
check "the CLAP library needs no Swift toolchain (no libswift*, no libFoundation* in ldd)" \
  bash -c "ldd '$clap' | tee /dev/stderr | grep -q libc.so && ! ldd '$clap' | grep -E 'libswift|libFoundation|libdispatch'"
check "the descriptor is $clap_id, ToneShaper, an instrument, synthesizer, stereo; one note input for CLAP notes and MIDI; one stereo output" \
  bash -c "$clap_env; clap_host --describe | tee '$work/describe.txt' >&2 &&
           grep -qx 'id $clap_id' '$work/describe.txt' && grep -qx 'name ToneShaper' '$work/describe.txt' &&
           grep -Eq '^features( .*)? instrument( |$)' '$work/describe.txt' && grep -Eq '^features( .*)? synthesizer( |$)' '$work/describe.txt' &&
           grep -Eq '^features( .*)? stereo( |$)' '$work/describe.txt' && grep -Eq '^note-input dialects clap midi' '$work/describe.txt' &&
           grep -qx 'note-ports in 1 out 0' '$work/describe.txt' && grep -qx 'audio-ports in 0 out 1' '$work/describe.txt'"
check "its parameters are the instrument's controls by name, automatable, and Shape (id 100)" \
  bash -c "for name in $(printf '"%s" ' Amplitude Volume Pan Duration Fidelity Attack Release 'Echo delay' 'Echo volume' Vibrato 'Pitch bend range' 'Wave type'); do
             grep -E \"^param [0-9]+ \\\"\$name\\\" .* automatable\" '$work/describe.txt' >/dev/null || { echo \"no automatable \$name\"; exit 1; }; done;
           grep -Eq '^param 100 \"Shape\" 0\.\.[0-9]+ .* automatable stepped' '$work/describe.txt'"

for dialect in "" --notes; do
  for block in 32 256 1024; do
    check "CLAP: demo.mid ${dialect:+as CLAP notes }in host blocks of $block frames equals toneshaper render sample for sample" \
      bash -c "$clap_env; clap_host '$work/demo.events' $frames $block '$work/clap$block$dialect.wav' $dialect &&
               compare '$work/clap$block$dialect.wav' '$work/render.wav'"
  done
done
check "CLAP: every note sent as a CLAP note is ended by one CLAP_EVENT_NOTE_END of its id by the end of its release" \
  bash -c "$clap_env; clap_host '$work/demo.events' $frames 256 '$work/clapends.wav' --notes --note-ends"
check "CLAP: 16 instances at once each play it, equal to each other and to the render" \
  bash -c "$clap_env; clap_host '$work/demo.events' $frames 256 '$work/clap16.wav' -n 16 --notes && compare '$work/clap16.wav' '$work/render.wav'"
# Frame 96000 is inside a 1024-frame block (95232…96255): a plugin that applies it at the block's start fails.
check "CLAP: Volume moved at frame 96000, inside a host block, changes the output from frame 96000, not before" \
  bash -c "$clap_env; clap_host '$work/demo.events' $frames 1024 '$work/clapmoved.wav' -s 96000 Volume 0.1 &&
           compare '$work/clapmoved.wav' '$work/render.wav' --first-diff 96000"

# Two held sine voices (the drone, program 3, its echo off): keys 57 and 64, then tuning +12 on key 57.
printf '0 192 3 0\n0 144 57 100\n0 144 64 100\n144000 128 57 0\n144000 128 64 0\n' >"$work/two.events"
for dialect in --notes ""; do
  by="by key and channel"; [ -n "$dialect" ] && by="by note id"
  check "CLAP: a tuning expression of +12 on key 57 at frame 72000 ($by) doubles that voice's frequency from there (FFT), and only that voice's" \
    bash -c "$clap_env; clap_host '$work/two.events' 150000 256 '$work/tuned$dialect.wav' $dialect -s 1 'Echo volume' 0 -e 72000 57 tuning 12 &&
             /usr/bin/python3 Tests/Plugins/tuning.py '$work/tuned$dialect.wav' 72000 2"
done

check "CLAP: a state saved in one process (Shape glide-bass), restored in another, plays the same as render --preset glide-bass" \
  bash -c "$clap_env; clap_host '$work/note.events' $note_frames 256 '$work/clapshape.wav' --notes -s 0 Shape 8 --save '$work/clap.state' &&
           compare '$work/clapshape.wav' '$work/glide-bass.wav' &&
           clap_host '$work/note.events' $note_frames 256 '$work/claprestored.wav' --notes --restore '$work/clap.state' &&
           compare '$work/claprestored.wav' '$work/glide-bass.wav'"
# The saved bytes edited as a user's own shape would be: glide-bass three times slower.
check "CLAP: a state whose glide-bass was edited (duration ×3) plays the edited shape, as render --preset of that shape's JSON" \
  bash -c "$clap_env; /usr/bin/python3 -c '
import json, sys
saved = open(sys.argv[1], \"rb\").read()
json_part, nul, rest = saved.partition(bytes(1))  # the InstrumentState JSON, then after a NUL the controls set
state = json.loads(json_part)
shapes = [s for s in state[\"shapes\"] if s[\"name\"] == \"glide-bass\"]
assert shapes, \"no glide-bass in the saved state\"
for s in shapes: s[\"duration\"] *= 3
open(sys.argv[2], \"wb\").write(json.dumps(state).encode() + nul + rest)
json.dump(shapes[0], open(sys.argv[3], \"w\"))' '$work/clap.state' '$work/edited.state' '$work/edited-shape.json' &&
           '$bin' render '$work/note.mid' --preset '$work/edited-shape.json' -o '$work/edited.wav' --format wav32f >/dev/null &&
           ! compare '$work/edited.wav' '$work/glide-bass.wav' >/dev/null &&
           clap_host '$work/note.events' $note_frames 256 '$work/clapedited.wav' --restore '$work/edited.state' &&
           compare '$work/clapedited.wav' '$work/edited.wav'"
check "CLAP: a hostile host (bad queries, garbage/truncated/endless states, unknown and out-of-range events, zero-frame calls) does not crash it" \
  bash -c "$clap_env; clap_host '$work/demo.events' $frames 256 '$work/hostile.wav' --hostile -n 2 --notes &&
           /usr/bin/python3 -c 'import soundfile, numpy, sys; a, _ = soundfile.read(sys.argv[1]); sys.exit(0 if abs(a).max() > 0.01 else \"silent\")' '$work/hostile.wav'"

# --- in a real host: jalv on a dummy JACK server of this test's own, a looping MIDI sequence in ---
export JACK_DEFAULT_SERVER="toneshaper-plugins-$$"
jackd -n "$JACK_DEFAULT_SERVER" -d dummy -r 48000 -p 256 >"$work/jackd.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do jack_lsp >/dev/null 2>&1 && break; sleep 0.1; done
mkfifo "$work/jalv.in"
exec 7<>"$work/jalv.in"  # jalv quits at the end of its input: keep it open
LV2_PATH="$bundles" jalv -x -n toneshaper "$uri" <"$work/jalv.in" >"$work/jalv.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do jack_lsp 2>/dev/null | grep -qx toneshaper:out_r && break; sleep 0.1; done
jack_midiseq seq 24000 0 60 12000 >/dev/null 2>&1 &   # key 60 held for 12000 of every 24000 frames
pids+=($!)
for _ in $(seq 50); do jack_lsp 2>/dev/null | grep -qx seq:out && break; sleep 0.1; done
jack_connect seq:out toneshaper:midi_in >/dev/null 2>&1 || true
jack_rec -f "$work/jalv.wav" -d 2 toneshaper:out_l toneshaper:out_r >"$work/rec.log" 2>&1 || true
check "in jalv on a dummy JACK server, MIDI from jack_midiseq plays: 2 s recorded, not silent" \
  /usr/bin/python3 -c "import soundfile, numpy, sys; a, _ = soundfile.read(sys.argv[1]); print('peak', abs(a).max()); sys.exit(0 if len(a) >= 48000 and abs(a).max() > 0.01 else 1)" "$work/jalv.wav"
exec 7>&-

if [ "$failures" -gt 0 ]; then echo "plugins: $failures check(s) failed"; exit 1; fi
echo "plugins: all checks passed"
