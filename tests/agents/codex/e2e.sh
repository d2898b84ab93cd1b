#!/usr/bin/env bash
# End-to-end check of helix with the real Codex CLI: helix's own installer, Codex's trust
# gates passed as a user's approvals record them, one scripted `codex exec` session (and the
# same through `codex app-server`) against a loopback stand-in of the Responses API, checks
# on what reached the model. See README.md. Prints PASS/FAIL per check, exits 1 on a failure.
#
# HELIX_BIN names the helix binary (helix-net must sit beside it); by default
# ${CARGO_TARGET_DIR:-<repo>/target}/release/helix, built when missing. Needs python3, git,
# and npm the first time (to install the pinned Codex, as run.sh does).
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../common/lib.sh"
run_e2e "$@"   # run.sh with PROBE=e2e.py, once helix is found
