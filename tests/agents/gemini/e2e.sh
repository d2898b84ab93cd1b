#!/usr/bin/env bash
# helix end to end with the real, pinned Gemini CLI: `helix hooks install --agent gemini
# --project` in a throw-away repository, then `gemini -p` against the loopback model stand-in
# (fake_gemini.py), and checks of what reached the model. See README.md ("helix end to end").
# Usage: e2e.sh (KEEP=1 keeps the temp dir; HELIX_BIN picks the helix binary, helix-net must
# sit beside it). No network but the npm registry (for the one-time client install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

command -v python3 >/dev/null || { echo "e2e.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "e2e.sh: git is needed" >&2; exit 2; }

gemini="$("$here/gemini-bin.sh")"   # installs the pinned client when missing

helix="${HELIX_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/helix}"
if [ -z "${HELIX_BIN:-}" ] && { [ ! -x "$helix" ] || [ ! -x "$(dirname "$helix")/helix-net" ]; }; then
    echo "e2e.sh: building helix (cargo build --release --locked -p helix-client-net)" >&2
    (cd "$repo" && cargo build --release --locked -p helix-client-net >&2)
fi
[ -x "$helix" ] || { echo "e2e.sh: no helix binary at $helix (set HELIX_BIN)" >&2; exit 2; }
real="$(readlink -f "$helix")"
[ -x "$(dirname "$real")/helix-net" ] || {
    echo "e2e.sh: no helix-net beside $real (helix runs it for mcp)" >&2; exit 2; }

echo "gemini: $gemini (${GEMINI_CLI_VERSION:-0.61.0})"
echo "helix:  $real ($("$real" --version))"
GEMINI_BIN="$gemini" HELIX_BIN="$real" exec python3 "$here/e2e.py" "$@"
