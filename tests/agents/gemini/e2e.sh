#!/usr/bin/env bash
# helix end to end with the real, pinned Gemini CLI: `helix hooks install --agent gemini
# --project` in a throw-away repository, then `gemini -p` against the loopback model stand-in
# (fake_gemini.py), and checks of what reached the model. See README.md ("helix end to end").
# Usage: e2e.sh (KEEP=1 keeps the temp dir; HELIX_BIN picks the helix binary, helix-net must
# sit beside it). No network but the npm registry (for the one-time client install).
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../common/lib.sh"
run_e2e "$@"   # run.sh with PROBE=e2e.py, once helix is found
