#!/usr/bin/env bash
# Runs `play --jack` against real jackd servers (dummy driver, headless; Tests/JACK/conftest.py)
# with the `toneshaper` that `swift test` (or `swift build`) built. Debian's /usr/bin/python3: the
# JACK client module (python3-jack-client) is Debian's; .ci/install-deps --tests installs it,
# jackd2, python3-mido and python3-pytest.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash .ci/install-deps --tests
bin="${TONESHAPER_BIN:-$(swift build --show-bin-path)/toneshaper}"
if [ ! -x "$bin" ]; then swift build --product toneshaper; fi
TONESHAPER_BIN="$bin" /usr/bin/python3 -m pytest Tests/JACK -q -p no:cacheprovider "$@"
