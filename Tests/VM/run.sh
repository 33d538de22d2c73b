#!/usr/bin/env bash
# The live path against a real kernel (Tests/VM/README.md): boots Debian's kernel in QEMU (software
# emulation), with the host's root filesystem read-only over 9p under a tmpfs overlay, loads
# snd-seq, snd-virmidi and snd-aloop, runs `toneshaper play` against aplaymidi, raw MIDI senders
# and arecord on the loopback's other side, then checks the results here (check.py).
#
#   Tests/VM/run.sh [BINARY]      BINARY defaults to $TONESHAPER_BIN, then .build/debug/toneshaper
#
# Environment: VM_PERIOD (192) and VM_PERIODS (3) for the instrument, VM_PLAY_ARGS (more options
# for every `toneshaper play`, e.g. --no-realtime), VM_TIMEOUT (540 s) for the whole VM.
# Prints one line per check and "vm: N passed, M failed"; exits 1 if any failed, and 0 with
# "vm: skipped — <why>" where QEMU cannot run at all.
set -euo pipefail
cd "$(dirname "$0")/../.."
PROJECT=$(pwd)
HERE=$PROJECT/Tests/VM
WORK=$PROJECT/.build/vm
started=$(date +%s)

skip() { echo "vm: skipped — $*"; exit 0; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# --- what the host needs -------------------------------------------------------------------------
[ "$(uname -m)" = x86_64 ] || skip "the VM boots Debian's x86_64 kernel with this machine's own root; this is $(uname -m)"
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
# A static busybox: it runs in the initramfs, before any library is reachable.
[ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 && /bin/busybox --list 2>/dev/null | grep -qx switch_root \
  || missing+=(busybox-static)
command -v aplaymidi >/dev/null && command -v arecord >/dev/null && command -v aconnect >/dev/null || missing+=(alsa-utils)
[ -f /usr/include/alsa/asoundlib.h ] || missing+=(libasound2-dev)
command -v gcc >/dev/null || missing+=(gcc libc6-dev)
kernel() { ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1; }
[ -n "$(kernel)" ] || missing+=(linux-image-amd64)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || skip "needs ${missing[*]} and there is no apt-get to install them"
  echo "vm: installing ${missing[*]} (apt-get)" >&2
  $SUDO apt-get update -qq </dev/null >/dev/null || skip "apt-get update failed; cannot install ${missing[*]}"
  # INITRD=No: the kernel package's hook would spend a minute building an initramfs we never use.
  $SUDO env DEBIAN_FRONTEND=noninteractive INITRD=No apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    </dev/null >/dev/null || skip "cannot install ${missing[*]} with apt-get"
fi
if ! python3 -c "import numpy, scipy, mido" 2>/dev/null; then
  echo "vm: installing numpy scipy mido (pip)" >&2
  python3 -m pip install -q -r "$HERE/requirements.txt" </dev/null
fi

VMLINUZ=$(kernel)
[ -n "$VMLINUZ" ] || skip "no Debian kernel in /boot (linux-image-amd64 did not install one)"
KVER=${VMLINUZ#/boot/vmlinuz-}
if [ ! -r "$VMLINUZ" ]; then
  # Some systems keep the kernel image root-only; QEMU only needs a readable copy.
  mkdir -p "$WORK"
  $SUDO cp "$VMLINUZ" "$WORK/vmlinuz" && $SUDO chmod 644 "$WORK/vmlinuz" || skip "$VMLINUZ is not readable"
  VMLINUZ=$WORK/vmlinuz
fi
[ -f "/lib/modules/$KVER/modules.dep" ] || skip "no modules for $KVER in /lib/modules"
for m in snd-aloop snd-virmidi snd-seq 9p 9pnet_virtio overlay; do
  grep -Eq "/${m//[-_]/[-_]}\.ko" "/lib/modules/$KVER/modules.dep" || grep -Eq "/${m//[-_]/[-_]}\.ko" "/lib/modules/$KVER/modules.builtin" \
    || skip "kernel $KVER has no $m module"
done
# QEMU must at least start a machine here (no KVM needed: TCG).
qemu-system-x86_64 -accel tcg -machine none -nodefaults -display none -S -no-user-config </dev/null >/dev/null 2>&1 &
probe=$!
sleep 1
if kill -0 $probe 2>/dev/null; then kill $probe 2>/dev/null; wait $probe 2>/dev/null || true
else wait $probe 2>/dev/null || skip "qemu-system-x86_64 cannot start a machine here (TCG)"; fi

# --- the binary under test -----------------------------------------------------------------------
bin=${1:-${TONESHAPER_BIN:-$PROJECT/.build/debug/toneshaper}}
if [ ! -x "$bin" ]; then
  echo "vm: $bin is missing; building it (swift build --product toneshaper)" >&2
  swift build --product toneshaper
fi
[ -x "$bin" ] || { echo "vm: no toneshaper binary at $bin"; exit 1; }

# --- scratch: binary copy, MIDI files, sender, references, initramfs -----------------------------
rm -rf "$WORK/results"
mkdir -p "$WORK/results/midi"
# A copy, so a rebuild during the run cannot change the binary under the VM's feet.
cp "$bin" "$WORK/toneshaper"
BIN=$WORK/toneshaper
gcc -O2 -Wall -o "$WORK/seqtool" "$HERE/seqtool.c" -lasound
gcc -O2 -Wall -o "$WORK/pcmpace" "$HERE/pcmpace.c" -lasound
python3 "$HERE/midifiles.py" "$WORK/results/midi"
python3 "$HERE/initramfs.py" "$WORK/initrd.gz" "$KVER" /bin/busybox "$HERE/init.sh" \
  virtio_pci 9pnet_virtio 9p overlay

PERIOD=${VM_PERIOD:-192}
PERIODS=${VM_PERIODS:-3}
RATE=48000
GAIN=-6
SONG_PRESETS="1=chiptune-arp,2=fourier-brass"
PROBE=$HERE/probe.json
cat > "$WORK/results/job.env" <<EOF
PROJECT='$PROJECT'
BIN='$BIN'
SEQTOOL='$WORK/seqtool'
PCMPACE='$WORK/pcmpace'
EXTRA_PLAY_ARGS='${VM_PLAY_ARGS:-}'
PROBE='$PROBE'
PERIOD=$PERIOD
PERIODS=$PERIODS
RATE=$RATE
GAIN=$GAIN
SONG_PRESETS='$SONG_PRESETS'
EOF
# The guest's first program after switch_root (init.sh): the scenarios, then power off. Its time
# limit is in guest seconds, which race ahead whenever the guest waits on the host (a 9p read of a
# program under host load: the clock jumps from timer to timer), so it is generous; a guest hung
# idle still reaches it at once, one hung busy meets the host's wall-clock limit (VM_TIMEOUT).
cat > "$WORK/results/job.sh" <<EOF
#!/bin/sh
{ timeout -s KILL ${VM_GUEST_TIMEOUT:-86400} /bin/bash '$HERE/guest.sh'; s=\$?
  [ \$s -eq 0 ] || echo "guest: guest.sh ended with status \$s (137: killed at the ${VM_GUEST_TIMEOUT:-86400} s guest-time limit)"; } 2>&1 | tee /results/guest.log
sync
/bin/busybox poweroff -f || echo o > /proc/sysrq-trigger
EOF

# The offline references, rendered here with the same presets, gain and rate.
export TONESHAPER_PRESETS=$PROJECT/Presets TONESHAPER_MAPPINGS=$PROJECT/Mappings TONESHAPER_TUNINGS=$PROJECT/Tunings
"$BIN" render "$WORK/results/midi/song.mid" -o "$WORK/results/midi/song-ref.wav" --format wav32f \
  --presets "$SONG_PRESETS" --gain $GAIN --rate $RATE --tail 1 >/dev/null
"$BIN" render "$WORK/results/midi/jitter.mid" -o "$WORK/results/midi/jitter-ref.wav" --format wav32f \
  --preset "$PROBE" --gain $GAIN --rate $RATE --tail 0.5 >/dev/null

# --- the VM ---------------------------------------------------------------------------------------
echo "vm: booting $KVER under QEMU (TCG, -icount shift=1,sleep=off); period $PERIOD × $PERIODS" >&2
vm_started=$(date +%s)
set +e
timeout -s KILL "${VM_TIMEOUT:-540}" qemu-system-x86_64 \
  -accel tcg -icount shift=1,sleep=off -smp 1 -m 1536 \
  -nographic -no-reboot -net none \
  -kernel "$VMLINUZ" -initrd "$WORK/initrd.gz" \
  -append "console=ttyS0 quiet loglevel=4 panic=-1" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$WORK/results,mount_tag=results,security_model=none,multidevs=remap" \
  </dev/null 2>&1 | tee "$WORK/console.log" | grep --line-buffered -E '^(guest|vm-init|init):' >&2
qemu_status=${PIPESTATUS[0]}
set -e
vm_seconds=$(( $(date +%s) - vm_started ))
if [ "$qemu_status" -ne 0 ]; then
  echo "vm: QEMU ended with status $qemu_status after ${vm_seconds} s (console: $WORK/console.log)" >&2
fi

# Re-render the MIDI take here (check c).
if [ -f "$WORK/results/song/take.mid" ]; then
  "$BIN" render "$WORK/results/song/take.mid" -o "$WORK/results/song/take-rerender.wav" --format wav32f \
    --presets "$SONG_PRESETS" --gain $GAIN --rate $RATE --tail 1 > "$WORK/results/song/rerender.out" 2>&1 || true
fi

set +e
python3 "$HERE/check.py" "$WORK/results" --period "$PERIOD" --periods "$PERIODS" --rate $RATE
status=$?
set -e
# CI keeps only what is printed: when the guest did not finish, its last words.
if ! grep -q "guest: done" "$WORK/results/guest.log" 2>/dev/null; then
  echo "vm: the guest did not finish; the last lines of guest.log and of the console:" >&2
  tail -15 "$WORK/results/guest.log" 2>/dev/null | sed 's/^/      guest.log | /' >&2
  tail -40 "$WORK/console.log" 2>/dev/null | sed 's/^/      console | /' >&2
fi
echo "vm: wall time $(( $(date +%s) - started )) s (VM ${vm_seconds} s); results in ${WORK#$PROJECT/}/results" >&2
exit $status
