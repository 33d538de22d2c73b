#!/usr/bin/env python3
"""Writes the VM's initramfs: a newc cpio archive (gzip-compressed) holding busybox, an /init
script and the kernel modules needed to reach the host's root filesystem (virtio, 9p, overlay),
with their dependencies taken from the kernel's modules.dep.

usage: initramfs.py OUTPUT KERNEL_VERSION BUSYBOX INIT MODULE...
The modules are loaded in the order written to /modules.order (dependencies first).
"""
import gzip
import lzma
import os
import shutil
import subprocess
import sys


def module_paths(kver, names):
    base = f"/lib/modules/{kver}"
    deps = {}
    with open(f"{base}/modules.dep") as f:
        for line in f:
            path, _, rest = line.partition(":")
            deps[path] = rest.split()
    by_name = {}
    for path in deps:
        stem = os.path.basename(path).split(".ko")[0]
        by_name[stem.replace("-", "_")] = path
    order = []

    def visit(path):
        if path in order:
            return
        # modules.dep lists every (transitive) dependency; load the deepest ones first.
        for dep in reversed(deps[path]):
            visit(dep)
        order.append(path)

    for name in names:
        key = name.replace("-", "_")
        if key not in by_name:
            # Built into the kernel (or absent): nothing to load.
            if not os.path.exists(f"{base}/modules.builtin") or key not in open(f"{base}/modules.builtin").read().replace("-", "_"):
                print(f"initramfs: module {name} is neither a module nor built in; skipped", file=sys.stderr)
            continue
        visit(by_name[key])
    return base, order


def module_bytes(path):
    data = open(path, "rb").read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    if path.endswith(".gz"):
        return gzip.decompress(data)
    return data


class Cpio:
    def __init__(self):
        self.out = bytearray()
        self.ino = 1

    def add(self, name, mode, data=b""):
        name_b = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_b), 0]
        self.ino += 1
        self.out += b"070701" + b"".join(b"%08X" % v for v in fields) + name_b
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def dir(self, name):
        self.add(name, 0o040755)

    def file(self, name, data, executable=False):
        self.add(name, 0o100755 if executable else 0o100644, data)

    def symlink(self, name, target):
        self.add(name, 0o120777, target.encode())

    def finish(self):
        self.add("TRAILER!!!", 0)
        return bytes(self.out)


def main():
    output, kver, busybox, init, *names = sys.argv[1:]
    base, order = module_paths(kver, names)
    c = Cpio()
    for d in ["bin", "dev", "proc", "sys", "lower", "ovl", "newroot", "lib", "lib/modules"]:
        c.dir(d)
    c.file("bin/busybox", open(busybox, "rb").read(), executable=True)
    for applet in ["sh", "mount", "umount", "insmod", "mkdir", "cat", "echo", "switch_root", "sleep", "poweroff", "ls", "dmesg"]:
        c.symlink(f"bin/{applet}", "busybox")
    c.file("init", open(init, "rb").read(), executable=True)
    files = []
    for path in order:
        name = os.path.basename(path).split(".ko")[0] + ".ko"
        c.file(f"lib/modules/{name}", module_bytes(f"{base}/{path}"))
        files.append(name)
    c.file("modules.order", ("\n".join(files) + "\n").encode())
    with open(output, "wb") as f:
        f.write(gzip.compress(c.finish(), compresslevel=1))


if __name__ == "__main__":
    main()
