#!/usr/bin/env bash
# End-to-end check of helix with the real GitHub Copilot CLI (pinned, offline, against
# fake_model.py): helix's installer, hooks and `helix mcp` in a `copilot -p` session, checked
# from the requests the model received. See FINDINGS.md "End-to-end check of helix".
# Usage: e2e.sh [scenario...]     (main, claude-mcp; default: both)
#        HELIX_BIN=/path/to/helix e2e.sh      (helix-net must sit beside the real binary)
#        KEEP=1 e2e.sh main                   (keep the temp root)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

helix="${HELIX_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/helix}"
if [ -z "${HELIX_BIN:-}" ] && { [ ! -x "$helix" ] || [ ! -x "$(dirname "$helix")/helix-net" ]; }; then
    echo "e2e.sh: building helix (cargo build --release --locked -p helix-client-net)" >&2
    (cd "$repo" && cargo build --release --locked -p helix-client-net >&2)
fi
[ -x "$helix" ] || { echo "e2e.sh: no helix binary at $helix (set HELIX_BIN)" >&2; exit 2; }
real="$(readlink -f "$helix")"
[ -x "$(dirname "$real")/helix-net" ] || {
    echo "e2e.sh: no helix-net beside $real (helix runs it for sync and mcp)" >&2; exit 2; }
echo "helix:   $helix ($("$helix" --version))"

# run.sh installs the pinned Copilot CLI and runs the driver named by PROBE.
HELIX_BIN="$helix" PROBE=e2e.py exec "$here/run.sh" "$@"
