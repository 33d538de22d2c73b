#!/usr/bin/env bash
# The installed program stands alone: install.sh puts the built program into a temporary prefix,
# the source clone (and with it the build folder and every path compiled into the binary) is
# hidden under an empty tmpfs in a mount namespace of this test's own, and a user who has only
# PREFIX/bin on PATH runs presets, render, render-shape, plot and edit from another folder. Then
# the missing-folder errors, the manual pages, a shell completion, and --uninstall.
#
# Usage: bash Tests/Install/run.sh   (after `swift build` or `swift test`: it installs that build)
#   TONESHAPER_BIN=FILE          install this program instead of the debug build
#   TONESHAPER_TEST_DEB=1        also build the Debian package (a release build: minutes) and check it
# Needs root or unprivileged user namespaces (unshare), curl, python3; installs mandoc when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
checkout="$PWD"

if [ "${1:-}" = "--hidden" ] || [ "${1:-}" = "--deb-installed" ]; then
  hidden=true
else
  hidden=false
  work="$(mktemp -d /tmp/toneshaper-install-test.XXXXXX)"
  trap 'rm -rf "$work"' EXIT
  export TONESHAPER_INSTALL_TEST_WORK="$work"
fi
work="$TONESHAPER_INSTALL_TEST_WORK"
prefix="$work/prefix"
results="$work/results"

check() {  # check "what should be true" COMMAND...: one line, ok or FAIL
  local what="$1"; shift
  if "$@"; then echo "ok   $what" | tee -a "$results"; else echo "FAIL $what" | tee -a "$results"; fi
}
contains() { grep -qF -- "$2" "$1"; }
# A 16-bit WAV file's seconds and peak (0...1), read from its chunks.
wav_stats() {
  python3 - "$1" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", "not a WAV file"
pos, fmt, samples = 12, None, None
while pos + 8 <= len(data):
    kind, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
    body = data[pos + 8:pos + 8 + size]
    if kind == b"fmt ": fmt = struct.unpack("<HHIIHH", body[:16])
    if kind == b"data": samples = body
    pos += 8 + size + (size & 1)
code, channels, rate, _, _, bits = fmt
assert bits == 16, "expected 16-bit samples"
values = struct.unpack("<%dh" % (len(samples) // 2), samples)
print("%.3f %.4f" % (len(values) / channels / rate, max(abs(v) for v in values) / 32768))
EOF
}
wav_ok() {  # wav_ok FILE MIN_SECONDS MAX_SECONDS: sound of that length, not silence
  local stats; stats="$(wav_stats "$1" 2>/dev/null)" || return 1
  python3 -c 'import sys; s, p = map(float, sys.argv[1].split()); sys.exit(0 if float(sys.argv[2]) <= s <= float(sys.argv[3]) and p > 0.01 else 1)' "$stats" "$2" "$3"
}

if [ "${1:-}" = "--deb-installed" ]; then
  # In our own mount namespace: /usr, /etc and /var become overlays of themselves, so apt-get installs
  # and removes the package in the upper layers only; the lower ones stay visible in $layers/*/lower.
  deb="$2" layers="$work/layers" uri=urn:toneshaper:lv2:instrument
  for dir in usr etc var; do
    mkdir -p "$layers/$dir/upper" "$layers/$dir/work" "$layers/$dir/lower"
    mount --bind "/$dir" "$layers/$dir/lower"
    mount -t overlay overlay -o "lowerdir=/$dir,upperdir=$layers/$dir/upper,workdir=$layers/$dir/work" "/$dir"
  done
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "$deb" </dev/null > "$work/apt-install.log" 2>&1 || cat "$work/apt-install.log"
  check "apt-get installs the package (its Depends are met on Debian 12)" \
    test "$(dpkg-query -W -f='${Status}' toneshaper 2>/dev/null)" = "install ok installed"
  check "lv2ls finds the instrument with LV2_PATH=/usr/lib/lv2" bash -c "LV2_PATH=/usr/lib/lv2 lv2ls | grep -qx $uri"
  check "lv2info lists a preset for each shipped shape" \
    bash -c "[ \$(LV2_PATH=/usr/lib/lv2 lv2info $uri | awk '/^\tPresets:/ { on = 1; next } on && NF == 0 { exit } on' | wc -l) -eq \$(ls /usr/share/toneshaper/Presets/*.json | wc -l) ]"
  if [ "${TONESHAPER_CLAP_BUILT:-}" = true ]; then
    clap_exports="$(readelf --dyn-syms -W /usr/lib/clap/toneshaper.clap 2>/dev/null | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") { print $8 }')"
    check "/usr/lib/clap/toneshaper.clap exports clap_entry and nothing else" test "$clap_exports" = clap_entry
  fi
  check "/usr/bin/toneshaper lists the built-ins from /usr/share/toneshaper/Presets" \
    bash -c "cd / && toneshaper presets | grep -qF 'built-in: /usr/share/toneshaper/Presets'"
  # The packaged plugin (stripped) plays the packaged demo as the packaged program renders it.
  demo=/usr/share/toneshaper/Examples/demo.mid
  toneshaper render "$demo" -o "$work/render.wav" --format wav32f > /dev/null 2>&1 || true
  frames="$(/usr/bin/python3 -c 'import soundfile, sys; print(soundfile.info(sys.argv[1]).frames)' "$work/render.wav" 2>/dev/null || echo 0)"
  /usr/bin/python3 "$checkout/Tests/Plugins/midi_events.py" "$demo" 48000 > "$work/demo.events" || true
  check "the packaged LV2 instrument plays the packaged demo.mid as the packaged program renders it, sample for sample" \
    bash -c "'$work/lv2host' /usr/lib/lv2/toneshaper.lv2 $uri '$work/demo.events' $frames 256 '$work/plugin.wav' &&
             /usr/bin/python3 '$checkout/Tests/Plugins/compare.py' '$work/plugin.wav' '$work/render.wav'"
  apt-get remove -y -qq toneshaper </dev/null > "$work/apt-remove.log" 2>&1 || cat "$work/apt-remove.log"
  # Left: what the upper layers hold that the system had not (a removed file leaves no trace there);
  # gone: what they hide of the system (whiteouts).
  left="$(for dir in usr etc; do (cd "$layers/$dir/upper" && find . -mindepth 1 ! -type c) | while read -r path; do
            [ -e "$layers/$dir/lower/$path" ] || [ -L "$layers/$dir/lower/$path" ] || echo "/$dir/${path#./}"; done; done
          ls /var/lib/dpkg/info/toneshaper.* 2>/dev/null || true)"
  gone="$(for dir in usr etc; do (cd "$layers/$dir/upper" && find . -mindepth 1 -type c | sed "s|^\.|/$dir|"); done)"
  check "apt-get remove leaves nothing of it in /usr, /etc or dpkg's records${left:+ (left: $(echo $left))}" \
    test -z "$left" -a "$(dpkg-query -W -f='${Status}' toneshaper 2>/dev/null || true)" != "install ok installed"
  check "... and takes nothing that was there before${gone:+ (gone: $(echo $gone))}" test -z "$gone"
  exit 0
fi

if $hidden; then
  # In our own mount namespace: the clone becomes an empty folder for everything run from here on.
  mount -t tmpfs -o size=1m,mode=755 toneshaper-hidden "$checkout"
  export PATH="$prefix/bin:$PATH" HOME="$work/home" XDG_DATA_HOME="$work/data"
  unset TONESHAPER_PRESETS TONESHAPER_MAPPINGS TONESHAPER_TUNINGS TONESHAPER_EXAMPLES TONESHAPER_EDITOR_PAGE
  mkdir -p "$work/elsewhere" "$HOME"
  cd "$work/elsewhere"
  check "the clone is hidden: $checkout/Package.swift is not there" test ! -e "$checkout/Package.swift"
  check "toneshaper on PATH is the installed one" test "$(command -v toneshaper)" = "$prefix/bin/toneshaper"

  toneshaper presets > presets.out 2> presets.err || true
  check "presets lists the installed built-ins (siren)" grep -qE '^ +1  siren .* built-in ' presets.out
  check "presets says they come from PREFIX/share/toneshaper/Presets" contains presets.out "built-in: $prefix/share/toneshaper/Presets"

  # Shipped tuning and mapping by name, the shipped example file.
  toneshaper render "$prefix/share/toneshaper/Examples/demo.mid" -o demo.wav --format wav16 --tuning 19-edo --map mpe \
    --tail 1 > render.out 2> render.err || true
  check "render plays the installed demo with a shipped tuning and mapping (about 25 s of sound)" wav_ok demo.wav 20 40
  toneshaper render-shape siren -o siren.wav --format wav16 > shape.out 2> shape.err || true
  check "render-shape plays the installed siren preset" wav_ok siren.wav 0.1 60
  toneshaper plot siren -o siren.svg > plot.out 2> plot.err || true
  check "plot draws the installed siren preset as SVG" grep -q '<svg' siren.svg

  toneshaper edit siren --no-open --port 0 > edit.out 2> edit.err &
  editor=$!
  for _ in $(seq 100); do grep -q 'http://' edit.out 2>/dev/null && break; kill -0 "$editor" 2>/dev/null || break; sleep 0.1; done
  url="$(grep -oE 'http://127\.0\.0\.1:[0-9]+/[^ ]*' edit.out | head -1 || true)"
  base="$(printf '%s' "$url" | grep -oE '^http://127\.0\.0\.1:[0-9]+' || true)"
  # The exact URL printed (it may carry a secret that a redirect turns into a cookie), then the API.
  page_status="$(curl -s -L -c cookies -b cookies -o page.html -w '%{http_code}' "$url" 2>/dev/null || true)"
  info_status="$(curl -s -b cookies -o info.json -w '%{http_code}' "$base/api/info" 2>/dev/null || true)"
  kill -INT "$editor" 2>/dev/null || true
  wait "$editor" 2>/dev/null || true
  check "edit prints its address" test -n "$url"
  check "edit serves its installed page from the printed URL" test "$page_status" = 200 -a -s page.html
  check "the page is the editor's own index.html (its title)" \
    test "$(grep -m1 '<title>' page.html)" = "$(grep -m1 '<title>' "$prefix/share/toneshaper/editor/index.html")"
  check "edit's /api/info answers" test "$info_status" = 200 -a -s info.json

  # A folder that is missing is one line naming where the program looked, never a trap.
  mount -t tmpfs -o size=1m,mode=755 toneshaper-hidden "$prefix/share/toneshaper"
  status=0; toneshaper presets > missing.out 2> missing.err || status=$?
  check "without its Presets folder presets exits 1" test "$status" = 1
  check "... saying where it looked, in one line" test "$(cat missing.err)" = \
    "toneshaper: cannot find the Presets folder (looked in $prefix/share/toneshaper/Presets); set TONESHAPER_PRESETS"
  status=0; TONESHAPER_PRESETS="$work/nowhere" toneshaper render-shape siren -o x.wav > override.out 2> override.err || status=$?
  check "a wrong TONESHAPER_PRESETS is named" test "$status" = 1 -a "$(cat override.err)" = "toneshaper: TONESHAPER_PRESETS=$work/nowhere: no such folder"
  mkdir -p "$work/presets" && cp "$work/presets-copy/"*.json "$work/presets/"
  status=0; TONESHAPER_PRESETS="$work/presets" timeout 20 toneshaper edit siren --no-open --port 0 > nopage.out 2> nopage.err || status=$?
  check "without its page edit exits 1 (not a trap)" test "$status" = 1
  check "... saying where it looked for the page, in one line" test "$(cat nopage.err)" = \
    "toneshaper: cannot find the editor page (looked in $prefix/share/toneshaper/editor); set TONESHAPER_EDITOR_PAGE"
  exit 0
fi

# Debian's tools the checks use, installed when missing as the browser tests install theirs.
need_packages() {  # need_packages COMMAND|pkg:MODULE PACKAGE...: installs them when the command or pkg-config module is missing
  case "$1" in pkg:*) pkg-config --exists "${1#pkg:}" 2>/dev/null && return 0 ;; *) command -v "$1" >/dev/null && return 0 ;; esac
  shift
  local sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  echo "toneshaper: installing $* (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq && $sudo apt-get install -y -qq --no-install-recommends "$@" </dev/null >/dev/null || true
}

: > "$results"
bin="${TONESHAPER_BIN:-$(swift build --show-bin-path)/toneshaper}"
if [ ! -x "$bin" ]; then swift build --product toneshaper; fi
# The plugins install.sh places: the release builds when there are (Tests/Plugins makes them),
# else a small library of the test's own that exports the format's entry point, as placing files
# is all install.sh does with them (Tests/Plugins plays the real ones).
need_packages cc gcc libc6-dev
need_packages lv2ls lilv-utils
lv2_lib="${TONESHAPER_LV2_LIB:-.build-plugins/release/libtoneshaper_lv2.so}"
clap_lib="${TONESHAPER_CLAP_LIB:-.build-plugins/release/libtoneshaper_clap.so}"
if [ ! -f "$lv2_lib" ]; then
  lv2_lib="$work/stand-in-lv2.so"
  echo 'const void *lv2_descriptor(unsigned index) { (void)index; return 0; }' | cc -shared -fPIC -x c -o "$lv2_lib" -
fi
if [ ! -f "$clap_lib" ]; then
  clap_lib="$work/stand-in-clap.so"
  echo 'const struct { unsigned v[3]; } clap_entry = {{1, 1, 1}};' | cc -shared -fPIC -x c -o "$clap_lib" -
fi
echo "installing $bin, $lv2_lib and $clap_lib into $prefix"
plugins=(--lv2 "$lv2_lib" --clap "$clap_lib")
bash install.sh --bin "$bin" "${plugins[@]}" --prefix "$prefix" > "$work/install.log" 2>&1 || { cat "$work/install.log"; echo "FAIL install.sh --bin --prefix" >> "$results"; }
mkdir -p "$work/presets-copy" && cp Presets/*.json "$work/presets-copy/"

help="$(bash install.sh --help 2>&1 || true)"
missing_options="$(for option in --prefix --bin --lv2 --clap --out --uninstall --deb; do grep -q -- "$option" <<<"$help" || printf ' %s' "$option"; done)"
check "install.sh --help names every option it takes${missing_options:+ (not:$missing_options)}" test -z "$missing_options"

# The unsafe flags the manifest gives target $1, in order: its settings for tool $2 only (swift,
# linker) and in configuration $3 only (release, debug) when they are given.
unsafe_flags() {
  swift package dump-package 2>/dev/null | python3 -c 'import json, sys
name, tool, config = (sys.argv[1:] + ["", ""])[:3]
print(" ".join(f for t in json.load(sys.stdin)["targets"] if t["name"] == name
               for s in t.get("settings", []) if (not tool or s["tool"] == tool)
               and (not config or s.get("condition", {}).get("config") == config)
               for f in s["kind"].get("unsafeFlags", {}).get("_0", [])))' "$@"
}
# A build for a named CPU (a packager's TONESHAPER_CPU) takes the core's fast paths that CPU's
# features allow, as the automatic choice does for the machine's own; an unlisted name, none.
core_flags() { TONESHAPER_CPU="$1" unsafe_flags ToneShaperCore; }
check "TONESHAPER_CPU=znver4 builds the core for it with the AVX-512 paths" \
  test "$(core_flags znver4)" = "-target-cpu znver4 -D TONESHAPER_VECTOR_ROUNDING -D TONESHAPER_AVX512 -O"
check "TONESHAPER_CPU=x86-64-v3 builds the core for it with the vector roundings, not the AVX-512 paths" \
  test "$(core_flags x86-64-v3)" = "-target-cpu x86-64-v3 -D TONESHAPER_VECTOR_ROUNDING -O"
check "TONESHAPER_CPU=nehalem (no AVX2) builds the core for it with neither; baseline for any x86-64" \
  test "$(core_flags nehalem)" = "-target-cpu nehalem -O" -a "$(core_flags baseline)" = "-O"
# The Swift driver links an executable with -export-dynamic (24,000 symbols the dynamic linker and the
# runtime went through at every start); release builds take it back (the package's program is checked below).
check "release builds link the program with --no-export-dynamic" \
  bash -c "grep -qF -- '-Xlinker --no-export-dynamic' <<<'$(unsafe_flags toneshaper linker release)'"
auto_flags="$(core_flags "")"
case "$auto_flags" in -target-cpu*) native_expected="$(sed -E 's/^-target-cpu [^ ]+/-target-cpu native/' <<<"$auto_flags")" ;; *) native_expected="-target-cpu native $auto_flags" ;; esac
check "TONESHAPER_CPU=native builds the core for this machine's CPU with the fast paths an unset one takes ($auto_flags)" \
  test "$(core_flags native)" = "$native_expected"

# The instruments are where hosts look, whole.
exports() { readelf --dyn-syms -W "$1" | awk '$7 != "UND" && ($5 == "GLOBAL" || $5 == "WEAK") { print $8 }'; }
bundle="$prefix/lib/lv2/toneshaper.lv2"
(cd "$bundle" && find . -type f | LC_ALL=C sort) > "$work/bundle-files" 2>/dev/null || true
( (cd Presets && ls *.json | sed 's|^|./Presets/|'); printf './%s\n' manifest.ttl presets.ttl toneshaper.so toneshaper.ttl) | LC_ALL=C sort > "$work/bundle-expected"
check "the LV2 bundle is in PREFIX/lib/lv2: its library, its .ttl files and every shipped shape" cmp -s "$work/bundle-files" "$work/bundle-expected"
check "lv2ls finds the installed instrument with LV2_PATH=PREFIX/lib/lv2" \
  bash -c "LV2_PATH='$prefix/lib/lv2' lv2ls | grep -qx urn:toneshaper:lv2:instrument"
clap_exports="$(exports "$prefix/lib/clap/toneshaper.clap" 2>/dev/null || true)"
check "the CLAP instrument is PREFIX/lib/clap/toneshaper.clap, exporting clap_entry" test "$clap_exports" = clap_entry
check "the installed plugins are not executable files (Debian's rule for shared libraries)" \
  test ! -x "$bundle/toneshaper.so" -a ! -x "$prefix/lib/clap/toneshaper.clap"

# Hide the clone: root can make a mount namespace; anyone else may have user namespaces.
if [ "$(id -u)" = 0 ]; then ns=(unshare --mount --propagation private); else ns=(unshare --map-root-user --mount --propagation private); fi
if ! "${ns[@]}" true 2>/dev/null; then
  echo "FAIL cannot make a mount namespace (${ns[*]}): run as root" | tee -a "$results"
else
  "${ns[@]}" bash "$checkout/Tests/Install/run.sh" --hidden || echo "FAIL the hidden-clone run stopped" | tee -a "$results"
fi

# Manual pages: mandoc finds no warning, and the options say what they do.
need_packages mandoc mandoc
man1="$prefix/share/man/man1"
check "the manual pages are installed, compressed" test -s "$man1/toneshaper.1.gz" -a -s "$man1/toneshaper.edit.1.gz"
lint="$(for page in "$man1"/toneshaper*.1.gz; do zcat "$page" > "$work/$(basename "$page" .gz)"; mandoc -T lint -W warning "$work/$(basename "$page" .gz)" 2>&1; done)" || true
check "mandoc -T lint finds no warning in any page" test -z "$lint" -a -x "$(command -v mandoc)"
[ -z "$lint" ] || printf '%s\n' "$lint" | head -5
check "--no-realtime is not described as asking for real-time priority" \
  bash -c "zcat '$man1/toneshaper.play.1.gz' | tr '\n' ' ' | grep -qi 'no-realtime runs it at normal priority'"

# A completion offers what the program would accept: shapes, tunings and mappings by name.
complete_words() {  # complete_words WORD...: what bash offers for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="${COMP_WORDS[*]}"
           COMP_POINT=${#COMP_LINE}; COMPREPLY=()
           _toneshaper "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$prefix/share/bash-completion/completions/toneshaper" "$@"
}
export PATH="$prefix/bin:$PATH"
# Completed in an empty folder: files of the current folder are offered too (`--map m` would list ./m.wav).
mkdir -p "$work/empty"
compl_shape="$(cd "$work/empty" && complete_words toneshaper render-shape si)"
check "bash completes 'render-shape si' to the siren preset" test "$compl_shape" = siren
compl_tuning="$(cd "$work/empty" && complete_words toneshaper render x.mid --tuning 19)"
check "bash completes '--tuning 19' to the shipped 19-edo scale" test "$compl_tuning" = 19-edo
compl_map="$(cd "$work/empty" && complete_words toneshaper play --map m)"
check "bash completes '--map m' to the shipped mpe mapping" test "$compl_map" = mpe

# --uninstall removes what it put there and the folders it made, and nothing else.
bash install.sh --uninstall --prefix "$prefix" > "$work/uninstall.log" 2>&1
check "--uninstall leaves nothing of a prefix it made" test ! -e "$prefix"
shared="$work/shared-prefix"
mkdir -p "$shared/share/man/man1" "$shared/share/zsh" "$shared/bin" "$shared/lib/lv2/other.lv2"
echo "another program's page" > "$shared/share/man/man1/other.1"
echo "another plugin's manifest" > "$shared/lib/lv2/other.lv2/manifest.ttl"
bash install.sh --bin "$bin" "${plugins[@]}" --prefix "$shared" > "$work/install2.log" 2>&1
bash install.sh --bin "$bin" "${plugins[@]}" --prefix "$shared" > "$work/install3.log" 2>&1   # again: what the first one made is kept in mind
bash install.sh --uninstall --prefix "$shared" > "$work/uninstall2.log" 2>&1
left="$(cd "$shared" && find . | LC_ALL=C sort | tr '\n' ' ')"
check "--uninstall keeps folders that were there before, empty or not, and another program's or plugin's file" \
  test "$left" = ". ./bin ./lib ./lib/lv2 ./lib/lv2/other.lv2 ./lib/lv2/other.lv2/manifest.ttl ./share ./share/man ./share/man/man1 ./share/man/man1/other.1 ./share/zsh "
# A user's prefix: the plugins go to ~/.lv2 and ~/.clap, where hosts look, and leave with the rest.
user="$work/user"
mkdir -p "$user"
HOME="$user" bash install.sh --bin "$bin" "${plugins[@]}" --prefix "$user/.local" > "$work/install4.log" 2>&1
check "--prefix ~/.local puts the LV2 bundle in ~/.lv2 and the CLAP in ~/.clap" \
  test -f "$user/.lv2/toneshaper.lv2/manifest.ttl" -a -f "$user/.lv2/toneshaper.lv2/toneshaper.so" -a -f "$user/.clap/toneshaper.clap"
HOME="$user" bash install.sh --uninstall --prefix "$user/.local" > "$work/uninstall4.log" 2>&1
# (swift build, run by install.sh for the manual pages, keeps caches in this home: they stay.)
left="$(cd "$user" && find .lv2 .clap .local/bin .local/share/toneshaper 2>/dev/null | tr '\n' ' ' || true)"
check "--uninstall of ~/.local removes ~/.lv2 and ~/.clap too${left:+ (left: $left)}" test -z "$left"

if [ "${TONESHAPER_TEST_DEB:-}" = 1 ]; then
  need_packages lintian lintian
  mkdir -p "$work/deb"
  # Release builds given (TONESHAPER_DEB_BIN, and the plugins: TONESHAPER_DEB_LV2, TONESHAPER_DEB_CLAP,
  # by default those Tests/Plugins builds), else install.sh builds them all.
  clap_built=false; grep -q '"toneshaper_clap"' Package.swift && clap_built=true
  deb_args=()
  if [ -n "${TONESHAPER_DEB_BIN:-}" ]; then
    deb_args=(--bin "$TONESHAPER_DEB_BIN" --lv2 "${TONESHAPER_DEB_LV2:-.build-plugins/release/libtoneshaper_lv2.so}")
    if $clap_built; then deb_args+=(--clap "${TONESHAPER_DEB_CLAP:-.build-plugins/release/libtoneshaper_clap.so}"); fi
  fi
  bash install.sh --deb --out "$work/deb" "${deb_args[@]}" > "$work/deb.log" 2>&1 || cat "$work/deb.log"
  deb="$(ls "$work/deb"/toneshaper_*_amd64.deb 2>/dev/null | head -1 || true)"
  check "install.sh --deb builds toneshaper_VERSION_amd64.deb" test -s "$deb"
  root="$work/deb/root"
  dpkg-deb -x "$deb" "$root" 2>/dev/null || true
  lv2so="$root/usr/lib/lv2/toneshaper.lv2/toneshaper.so"
  clapso="$root/usr/lib/clap/toneshaper.clap"
  elves=("$root/usr/bin/toneshaper" "$lv2so")
  (cd "$root/usr/lib/lv2/toneshaper.lv2" && find . -type f | LC_ALL=C sort) > "$work/deb-bundle-files" 2>/dev/null || true
  check "the package carries the LV2 bundle in /usr/lib/lv2/toneshaper.lv2, whole" cmp -s "$work/deb-bundle-files" "$work/bundle-expected"
  if $clap_built; then
    elves+=("$clapso")
    clap_exports="$(exports "$clapso" 2>/dev/null || true)"
    check "the package carries the CLAP instrument in /usr/lib/clap/toneshaper.clap, exporting clap_entry" test "$clap_exports" = clap_entry
  fi
  check "the packaged program and plugins need no Swift runtime library" bash -c "ldd ${elves[*]} > '$work/ldd.txt' && ! grep -qi swift '$work/ldd.txt'"
  program_exports="$(exports "$root/usr/bin/toneshaper" 2>/dev/null | grep -cvxE '_end|_edata|__bss_start' || true)"
  check "the packaged program exports no symbol of its own (nothing for the dynamic linker to go through at start)" \
    test -f "$root/usr/bin/toneshaper" -a "$program_exports" = 0
  depends="$(dpkg-deb -f "$deb" Depends 2>/dev/null || true)"
  check "Depends names libasound2 and libsndfile1 (dpkg-shlibdeps): $depends" bash -c "grep -q 'libasound2' <<<'$depends' && grep -q 'libsndfile1' <<<'$depends'"
  # Every library the program or a plugin links comes from a package the package depends on.
  unmet=""
  tr ',|' '\n\n' <<<"$depends" | sed 's/(.*//; s/ //g' > "$work/depends-names"
  for file in "${elves[@]}"; do
    [ -f "$file" ] || unmet+=" $(basename "$file"):(not in the package)"
    for library in $(readelf -d "$file" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      path="$(ldconfig -p | awk -v l="$library" '$1 == l && /x86-64/ && !found { found = 1; print $NF }')"
      owner="$(dpkg -S "$path" 2>/dev/null || dpkg -S "/usr$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null || true)"
      owner="${owner%%:*}"
      [ -n "$owner" ] && grep -qxF "$owner" "$work/depends-names" || unmet+=" $(basename "$file"):$library(${owner:-no package})"
    done
  done
  check "every library the program and plugins link comes from a package in Depends${unmet:+ (not:$unmet)}" test -z "$unmet"
  lintian --no-tag-display-limit "$deb" > "$work/lintian.log" 2>&1 || true
  lintian_tags="$(grep -E '^[EW]:' "$work/lintian.log" || true)"
  check "lintian reports no error and no warning" test -z "$lintian_tags" -a -s "$deb"
  [ -z "$lintian_tags" ] || printf '%s\n' "$lintian_tags"
  package_plugins=(--lv2 "$lv2so"); if $clap_built; then package_plugins+=(--clap "$clapso"); fi
  bash install.sh --bin "$root/usr/bin/toneshaper" "${package_plugins[@]}" --prefix "$work/usr" > "$work/usr.log" 2>&1 || cat "$work/usr.log"
  (cd "$work/usr" && find . -type f ! -name '.installed-folders*' | sed 's|^\./|/usr/|' | LC_ALL=C sort) > "$work/prefix-files" 2>/dev/null || true
  (dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $NF}' | sed 's|^\./|/|' | LC_ALL=C sort) > "$work/deb-files"
  check "the package's files are those install.sh --prefix /usr puts in place" cmp -s "$work/prefix-files" "$work/deb-files"
  cmp -s "$work/prefix-files" "$work/deb-files" || diff "$work/prefix-files" "$work/deb-files" | head -10 || true
  # Installed and removed with apt-get on this system, in a mount namespace whose /usr, /etc and /var
  # are overlays: what the package does is seen in the overlays' upper layers, and the system is untouched.
  need_packages lv2info lilv-utils
  # The packaged plugin is played by the plugin tests' host (Tests/Plugins/lv2host.c, over lilv).
  need_packages pkg:lilv-0 liblilv-dev
  need_packages pkg:sndfile libsndfile1-dev
  cc -O1 -D_DEFAULT_SOURCE -o "$work/lv2host" Tests/Plugins/lv2host.c $(pkg-config --cflags --libs lilv-0 sndfile) || true
  if [ -s "$deb" ]; then
    TONESHAPER_CLAP_BUILT="$clap_built" "${ns[@]}" bash "$checkout/Tests/Install/run.sh" --deb-installed "$deb" \
      || echo "FAIL the package's namespace run stopped" | tee -a "$results"
  fi
fi

passed="$(grep -c '^ok ' "$results" || true)"
failed="$(grep -c '^FAIL' "$results" || true)"
echo "Install: $passed passed, $failed failed"
[ "$failed" = 0 ]
