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
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

version="${CODEX_VERSION:-0.169.0}"
prefix="${CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/codex-$version}"

command -v python3 >/dev/null || { echo "e2e.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "e2e.sh: git is needed" >&2; exit 2; }

find_codex() {
    local b
    for b in "$prefix"/node_modules/@openai/codex-*/vendor/*/bin/codex \
             "$prefix"/node_modules/@openai/codex-*/vendor/*/codex/codex; do
        if [ -x "$b" ] && "$b" --version 2>/dev/null | grep -q "^codex-cli $version\$"; then
            echo "$b"; return 0
        fi
    done
    return 1
}
if ! codex="$(find_codex)"; then
    command -v npm >/dev/null || { echo "e2e.sh: npm is needed to install Codex" >&2; exit 2; }
    echo "e2e.sh: installing @openai/codex@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "@openai/codex@$version" >&2
    codex="$(find_codex)" || { echo "e2e.sh: no runnable codex $version under $prefix" >&2; exit 2; }
fi

helix="${HELIX_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/helix}"
if [ -z "${HELIX_BIN:-}" ] && { [ ! -x "$helix" ] || [ ! -x "$(dirname "$helix")/helix-net" ]; }; then
    echo "e2e.sh: building helix (cargo build --release --locked -p helix-client-net)" >&2
    (cd "$repo" && cargo build --release --locked -p helix-client-net >&2)
fi
[ -x "$helix" ] || { echo "e2e.sh: no helix binary at $helix (set HELIX_BIN)" >&2; exit 2; }
real="$(readlink -f "$helix")"
[ -x "$(dirname "$real")/helix-net" ] || {
    echo "e2e.sh: no helix-net beside $real (helix runs it for mcp)" >&2; exit 2; }

echo "codex: $codex ($("$codex" --version))"
echo "helix: $helix ($("$helix" --version))"
CODEX_BIN="$codex" HELIX_BIN="$helix" exec python3 "$here/e2e.py" "$@"
