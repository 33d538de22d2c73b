#!/usr/bin/env bash
# Makes toneshaper.clap from the built plugin library: a CLAP is the shared object itself, and the
# shipped shapes are compiled into it (Sources/ToneShaperCLAP/BundledShapes.swift), so a copy is
# all it takes. Usage: assemble.sh LIBRARY.so DEST.clap
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: assemble.sh LIBRARY.so DEST.clap" >&2; exit 2; }
[ -f "$1" ] || { echo "assemble.sh: $1: no such plugin library (build it first)" >&2; exit 1; }
mkdir -p "$(dirname "$2")"
install -m 0755 "$1" "$2"
