#!/usr/bin/env bash
# Runs the editor's browser tests (Tests/Browser/README.md) against the `toneshaper` that
# `swift test` (or `swift build`) built: installs Debian's chromium and chromium-driver and the
# Python packages when missing, then pytest. Screenshots land in .build/browser-screenshots/.
set -euo pipefail
cd "$(dirname "$0")/../.."
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "toneshaper: installing chromium chromium-driver (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core </dev/null >/dev/null
fi
if ! python3 -c "import pytest, selenium, numpy, soundfile" 2>/dev/null; then
  echo "toneshaper: installing the browser tests' Python packages (pip)" >&2
  python3 -m pip install -q -r Tests/Browser/requirements.txt </dev/null
fi
bin="${TONESHAPER_BIN:-$(swift build --show-bin-path)/toneshaper}"
if [ ! -x "$bin" ]; then swift build --product toneshaper; fi
TONESHAPER_BIN="$bin" python3 -m pytest Tests/Browser -q -p no:cacheprovider "$@"
