#!/usr/bin/env bash
# Real-client test: the pinned Claude Code CLI (npm) in print mode against a loopback
# stand-in of the Messages API, with helix's hooks and MCP server installed. See
# docs/hooks.md "Testing with the real Claude Code". Usage: run.sh [scenario...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

version="${CLAUDE_CODE_VERSION:-2.1.330}"
prefix="${CLAUDE_CODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/claude-code-$version}"

command -v python3 >/dev/null || { echo "run.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "run.sh: git is needed" >&2; exit 2; }

# The npm package's postinstall puts the platform's native binary at bin/claude.exe; when
# install scripts did not run, the binary is still in the platform package.
find_claude() {
    local b
    for b in "$prefix"/node_modules/@anthropic-ai/claude-code/bin/claude.exe \
             "$prefix"/node_modules/@anthropic-ai/claude-code-*/claude; do
        if [ -x "$b" ] && "$b" --version 2>/dev/null | grep -q "^$version "; then
            echo "$b"; return 0
        fi
    done
    return 1
}
if ! claude="$(find_claude)"; then
    command -v npm >/dev/null || { echo "run.sh: npm is needed to install Claude Code" >&2; exit 2; }
    echo "run.sh: installing @anthropic-ai/claude-code@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "@anthropic-ai/claude-code@$version" >&2
    claude="$(find_claude)" || { echo "run.sh: no runnable claude $version under $prefix" >&2; exit 2; }
fi

helix="${HELIX_BIN:-${CARGO_TARGET_DIR:-$repo/target}/release/helix}"
if [ -z "${HELIX_BIN:-}" ] && { [ ! -x "$helix" ] || [ ! -x "$(dirname "$helix")/helix-net" ]; }; then
    echo "run.sh: building helix (cargo build --release --locked -p helix-client -p helix-client-net)" >&2
    (cd "$repo" && cargo build --release --locked -p helix-client -p helix-client-net >&2)
fi
[ -x "$helix" ] || { echo "run.sh: no helix binary at $helix (set HELIX_BIN)" >&2; exit 2; }
real="$(readlink -f "$helix")"
[ -x "$(dirname "$real")/helix-net" ] || {
    echo "run.sh: no helix-net beside $real (helix runs it for mcp and doctor)" >&2; exit 2; }

echo "claude: $claude ($("$claude" --version))"
echo "helix:  $helix ($("$helix" --version))"
CLAUDE_BIN="$claude" HELIX_BIN="$helix" exec python3 "$here/e2e.py" "$@"
