#!/bin/bash
# Runs inside the VM (Tests/VM/README.md), as root, on the host's root filesystem (read-only 9p
# under a tmpfs overlay). Reads /results/job.env (written by run.sh), loads the sound modules,
# runs every scenario and leaves captures, program output and diagnostics in /results/<scenario>/
# for check.py. It decides nothing itself: all checks are made on the host.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
R=/results
# shellcheck source=/dev/null
. $R/job.env
export TONESHAPER_PRESETS="$PROJECT/Presets" TONESHAPER_MAPPINGS="$PROJECT/Mappings" TONESHAPER_TUNINGS="$PROJECT/Tunings"
# Swift's backtracer would try to attach a debugger-like helper on a crash; keep crashes short.
export SWIFT_BACKTRACE=enable=no

log() { echo "guest: $*"; }
now() { date +%s.%N; }
# The timeline of a scenario: "NAME EPOCH-SECONDS" lines, read by check.py.
mark() { echo "$1 $(now)" >> "$D/timeline"; }

PLAY_ARGS=(--device hw:Loopback,0,0 --period "$PERIOD" --periods "$PERIODS")
# shellcheck disable=SC2206
[ -n "${EXTRA_PLAY_ARGS:-}" ] && PLAY_ARGS+=($EXTRA_PLAY_ARGS)
PLAY=""
CAP=""

# CPU seconds (user + system) a process has used so far.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# Starts `toneshaper play` with the common device options plus "$@"; waits until the PCM runs
# (or the program printed its start line, or died), then reads the negotiated sample format.
start_play() {
    "$BIN" play "${PLAY_ARGS[@]}" "$@" > "$D/play.out" 2>&1 &
    PLAY=$!
    for _ in $(seq 1 600); do
        if grep -q RUNNING /proc/asound/card0/pcm0p/sub0/status 2>/dev/null; then break; fi
        if grep -q "Ctrl-C stops" "$D/play.out" 2>/dev/null; then break; fi
        if ! kill -0 "$PLAY" 2>/dev/null; then break; fi
        sleep 0.05
    done
    mark ready
    CPU0=$(cpu_seconds "$PLAY")
    FMT=$(sed -n 's/^format: //p' /proc/asound/card0/pcm0p/sub0/hw_params 2>/dev/null)
    [ -n "$FMT" ] || FMT=$(grep -o 'Hz [A-Z0-9_]*_LE' "$D/play.out" | head -1 | cut -d' ' -f2)
    FMT=${FMT:-S32_LE}
    cat /proc/asound/card0/pcm0p/sub0/hw_params > "$D/hw_params.txt" 2>&1
    if ! kill -0 "$PLAY" 2>/dev/null; then log "$SCENARIO: toneshaper play did not start"; fi
}

# Captures the loopback's other side, in the format the instrument negotiated.
start_capture() {
    local file=${1:-capture.wav}
    mark "capture-start:$file"
    arecord -q -D hw:Loopback,1,0 -f "$FMT" -c 2 -r "$RATE" "$D/$file" 2> "$D/${file%.wav}.arecord.err" &
    CAP=$!
    sleep 0.3
}

# A capture that does not end on SIGINT is killed (and said so) rather than left to hang the guest:
# under -icount sleep=off an idle wait runs out the guest's whole time limit in moments.
stop_capture() {
    if [ -n "$CAP" ]; then
        kill -INT "$CAP" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$CAP" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$CAP" 2>/dev/null; then
            log "$SCENARIO: arecord did not stop within 5 s of SIGINT; killed"
            kill -KILL "$CAP" 2>/dev/null
        fi
        wait "$CAP" 2>/dev/null; CAP=""
    fi
}

# SIGINT to the instrument (its Ctrl-C), then its exit status; the capture ends a little later.
stop_play() {
    mark stop
    if [ -n "$PLAY" ]; then
        # Guest CPU the instrument used while playing (start-up excluded): its headroom here.
        kill -0 "$PLAY" 2>/dev/null && echo "cpu $(cpu_seconds "$PLAY") $CPU0 $(now)" >> "$D/timeline"
        kill -INT "$PLAY" 2>/dev/null
        for _ in $(seq 1 200); do kill -0 "$PLAY" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$PLAY" 2>/dev/null; then
            echo "guest: toneshaper did not stop within 10 s of SIGINT; killed" >> "$D/play.out"
            kill -KILL "$PLAY" 2>/dev/null
        fi
        wait "$PLAY"; echo $? > "$D/play.rc"
        PLAY=""
    fi
    sleep 0.2
    stop_capture
    mark stopped
}

# What the lead needs when a check fails: the sequencer graph, the cards, the kernel's last words.
diagnostics() {
    {
        echo "== aconnect -l"; timeout 10 aconnect -l
        echo "== /proc/asound/cards"; timeout 10 cat /proc/asound/cards
        echo "== /proc/asound/card0/pcm0p/sub0/status"; timeout 10 cat /proc/asound/card0/pcm0p/sub0/status 2>&1
        echo "== dmesg (tail)"; timeout 10 dmesg | tail -25
    } > "$D/diagnostics.txt" 2>&1
}

begin() {
    SCENARIO=$1
    D=$R/$SCENARIO
    mkdir -p "$D"
    log "scenario $SCENARIO"
    mark begin
}

# --- setup ---------------------------------------------------------------------------------------
log "kernel $(uname -r), $(nproc) CPU"
# Every program the scenarios run, and its libraries, read once now (into the page cache), before
# any timing matters: a read over 9p waits on the host, and while it waits the guest clock jumps
# ahead (under host load, by minutes), which would run out the scenarios' own waits.
for f in "$BIN" "$SEQTOOL" "$PCMPACE" $(command -v arecord aplaymidi aconnect amidi aplay); do
    cat "$f" $(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p') > /dev/null 2>&1
done
log "programs read ($(awk '{ printf "%.0f", $1 }' /proc/uptime) s of guest time since boot)"
modprobe snd-seq || log "modprobe snd-seq failed"
modprobe snd-aloop index=0 pcm_substreams=1 || log "modprobe snd-aloop failed"
modprobe snd-virmidi index=1 midi_devs=2 || log "modprobe snd-virmidi failed"
modprobe snd-seq-midi 2>/dev/null || true
{ cat /proc/asound/cards; ls -l /dev/snd; aconnect -l; cat /proc/asound/seq/timer 2>/dev/null; } > $R/setup.txt 2>&1
# Keep the clock-source and timer facts with the results: they explain the timing numbers.
{ echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)";
  grep -m1 'CONFIG_HZ=' /boot/config-"$(uname -r)" 2>/dev/null; } >> $R/setup.txt
# How snd-aloop paces a writer here, at the instrument's period and at the brief's smallest one.
"$PCMPACE" hw:Loopback,0,0 "$PERIOD" "$PERIODS" 100 > $R/pace.txt 2>&1
"$PCMPACE" hw:Loopback,0,0 160 3 100 > $R/pace-160.txt 2>&1
VMIDI1=$(aconnect -l | sed -n "s/^client \([0-9]*\): 'Virtual Raw MIDI 1-0'.*/\1/p")
VMIDI2=$(aconnect -l | sed -n "s/^client \([0-9]*\): 'Virtual Raw MIDI 1-1'.*/\1/p")

# --- a, b, c: aplaymidi into the instrument, recorded three ways --------------------------------
begin song
start_play --presets "$SONG_PRESETS" --gain "$GAIN" --record "$D/take.wav" --format wav32f --record-midi "$D/take.mid"
aconnect -l > "$D/aconnect.txt" 2>&1
start_capture
mark send
aplaymidi -d 0 -p ToneShaper "$R/midi/song.mid" > "$D/aplaymidi.out" 2>&1
mark sent
sleep 0.5
stop_play
diagnostics

# --- b: notes at exact 10 ms intervals -----------------------------------------------------------
begin jitter
# The floor first: the same file into a plain C receiver that timestamps each note-on.
timeout 30 "$SEQTOOL" --receive 100 > "$D/seq-baseline.txt" 2>&1 &
RCV=$!
sleep 0.2
aplaymidi -d 0 -p vm-receiver "$R/midi/jitter.mid" > "$D/aplaymidi-baseline.out" 2>&1
wait $RCV
start_play --preset "$PROBE" --gain "$GAIN" --record-midi "$D/take.mid"
start_capture
# The receiver again, beside the instrument: what a user thread sees while the instrument plays.
# jitter2.mid is jitter.mid twice: track 1 to the instrument, track 2 to the receiver.
timeout 30 "$SEQTOOL" --receive 100 > "$D/seq-beside.txt" 2>&1 &
RCV=$!
sleep 0.2
mark send
aplaymidi -d 0 -p ToneShaper,vm-receiver "$R/midi/jitter2.mid" > "$D/aplaymidi.out" 2>&1
wait $RCV
mark sent
sleep 0.3
stop_play
diagnostics

# --- d, f: two raw MIDI keyboards (virmidi) holding notes; unsubscribe one, then the other -------
# Keyboard 1 holds keys 57 and 69 (500 and 1000 Hz with the probe tone), keyboard 2 holds 81 (2 kHz).
begin unsubscribe
start_play --preset "$PROBE" --gain "$GAIN"
aconnect "$VMIDI1:0" ToneShaper && aconnect "$VMIDI2:0" ToneShaper || log "aconnect failed"
aconnect -l > "$D/aconnect.txt" 2>&1
start_capture
mark on
printf '\x90\x39\x64\x90\x45\x64' > /dev/snd/midiC1D0
printf '\x90\x51\x64' > /dev/snd/midiC1D1
sleep 0.8
# Marked before and after: the unsubscription happens somewhere in between (aconnect's start-up
# takes tens of guest milliseconds); release times are measured from the later mark.
mark disconnect1
aconnect -d "$VMIDI1:0" ToneShaper
mark disconnected1
sleep 1.0
mark disconnect2
aconnect -d "$VMIDI2:0" ToneShaper
mark disconnected2
sleep 1.0
stop_play
diagnostics

# --- e: a sender that writes straight to the port (no subscription) and exits -------------------
begin direct
start_play --preset "$PROBE" --gain "$GAIN"
start_capture
mark on
"$SEQTOOL" --direct ToneShaper 0.8 57 81 > "$D/sender.out" 2>&1
mark exit
aconnect -l > "$D/aconnect.txt" 2>&1
sleep 1.0
stop_play
diagnostics

# --- f: two subscribed senders; the first exits, the second keeps its note ----------------------
begin two-senders
start_play --preset "$PROBE" --gain "$GAIN"
start_capture
mark on
"$SEQTOOL" --subscribe ToneShaper 0.8 57 > "$D/sender1.out" 2>&1 &
S1=$!
"$SEQTOOL" --subscribe ToneShaper 2.0 81 > "$D/sender2.out" 2>&1 &
S2=$!
wait $S1
mark exit1
wait $S2
mark exit2
sleep 0.8
stop_play
diagnostics

# --- g: --connect to a client that does not exist ------------------------------------------------
begin connect-missing
"$BIN" play "${PLAY_ARGS[@]}" --connect 99:0 > "$D/play.out" 2>&1 < /dev/null &
P=$!
for _ in $(seq 1 300); do kill -0 $P 2>/dev/null || break; sleep 0.05; done
if kill -0 $P 2>/dev/null; then echo "guest: still running after 15 s; stopped with SIGINT" >> "$D/play.out"; kill -INT $P; fi
wait $P; echo $? > "$D/play.rc"

# --- h: the sound card goes away while playing and comes back ------------------------------------
begin unplug
ALOOP=/sys/bus/platform/drivers/snd_aloop
start_play --preset "$PROBE" --gain "$GAIN" --record "$D/take.wav" --format wav32f
aconnect "$VMIDI1:0" ToneShaper || log "aconnect failed"
start_capture capture1.wav
mark on
printf '\x90\x45\x64' > /dev/snd/midiC1D0
sleep 0.8
stop_capture
ls "$ALOOP" > "$D/sysfs.txt" 2>&1
mark unbind
# snd_card_free waits until every open file of the card is closed: the unbind blocks until the
# instrument (and anything else) lets go of the device, while the card and its /dev/snd nodes are
# gone at once. Time it, but do not wait for ever.
( echo snd_aloop.0 > $ALOOP/unbind; echo "unbind-done $(now)" >> "$D/timeline" ) 2> "$D/unbind.err" &
UNB=$!
sleep 0.5
cat /proc/asound/cards > "$D/cards-unplugged.txt"
sleep 1.5
# The outage: 2 s from the unbind, longer if the unbind is still waiting (up to 8 s more).
for _ in $(seq 1 160); do kill -0 $UNB 2>/dev/null || break; sleep 0.05; done
if kill -0 $UNB 2>/dev/null; then
    log "unplug: the unbind still waits for the card's files to be closed after 10 s"
    ls -l /proc/"$PLAY"/fd > "$D/fds-still-open.txt" 2>&1
fi
mark bind
echo snd_aloop.0 > $ALOOP/bind 2> "$D/bind.err" || log "unplug: bind failed"
for _ in $(seq 1 100); do [ -e /dev/snd/pcmC0D1c ] && break; sleep 0.05; done
cat /proc/asound/cards > "$D/cards-replugged.txt"
mark bound
# Give the instrument its retry (every second) and then some.
sleep 2.5
if kill -0 "$PLAY" 2>/dev/null; then mark alive; else mark dead; fi
start_capture capture2.wav
mark on2
printf '\x90\x51\x64' > /dev/snd/midiC1D0
sleep 1.0
stop_play
diagnostics
cat /proc/asound/cards >> "$D/diagnostics.txt"

# --- i: no --period/--periods: the sizes are negotiated, and this device keeps up with them -------
begin defaults
SAVED_ARGS=("${PLAY_ARGS[@]}")
PLAY_ARGS=(--device hw:Loopback,0,0)
# The capture first, so it hears the very first period (aloop then offers the instrument FLOAT_LE only).
FMT=FLOAT_LE
start_capture
start_play --preset "$PROBE" --gain "$GAIN" --midi-in "$R/midi/jitter.mid" --tail 0.5
wait "$PLAY"; echo $? > "$D/play.rc"
PLAY=""
sleep 0.2
stop_capture
PLAY_ARGS=("${SAVED_ARGS[@]}")
diagnostics

# Which timers the sequencer had (the queue timer decides how precisely aplaymidi's events leave).
log "scenarios finished; reading the timers"
{ timeout 10 cat /proc/asound/timers; echo; timeout 10 cat /proc/asound/seq/timer; echo; timeout 10 lsmod; } > $R/timers.txt 2>&1
log "done"
