#!/bin/sh
# The VM's /init (busybox): mount the host's root read-only over 9p under a tmpfs overlay, mount
# the results share, and switch into it to run the guest script (Tests/VM/guest.sh).
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do insmod /lib/modules/$m 2>/dev/null || echo "init: insmod $m failed"; done
fail() { echo "vm-init: $*"; dmesg | tail -20; poweroff -f; }
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose hostroot /lower || fail "cannot mount the host root over 9p"
mount -t tmpfs -o size=1g tmpfs /ovl
mkdir -p /ovl/upper /ovl/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/ovl/upper,workdir=/ovl/work /newroot || fail "cannot mount the overlay"
mkdir -p /newroot/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 results /newroot/results || fail "cannot mount the results share"
for d in proc sys dev; do mount --move /$d /newroot/$d; done
exec switch_root /newroot /bin/sh /results/job.sh
