#!/usr/bin/env bash
# Real-client probe of OpenAI's Codex CLI: the pinned `codex exec` (npm) against a loopback
# stand-in of the Responses API (fake_responses.py), with probe hooks for every hook event
# and a stand-in MCP server named `helix`. See FINDINGS.md. Usage: run.sh [probe.py args]
# (run.sh --help lists the scenarios). Needs node/npm (first run only), python3 and git.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

version="${CODEX_VERSION:-0.169.0}"
prefix="${CODEX_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/codex-$version}"

command -v python3 >/dev/null || { echo "run.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "run.sh: git is needed" >&2; exit 2; }

# The npm package `@openai/codex` is a node launcher; the native binary comes in the
# platform package (`@openai/codex-linux-x64` = npm:@openai/codex@<v>-linux-x64), which npm
# installs as an optional dependency. Running the native binary directly skips node.
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
    command -v npm >/dev/null || { echo "run.sh: npm is needed to install Codex" >&2; exit 2; }
    echo "run.sh: installing @openai/codex@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "@openai/codex@$version" >&2
    codex="$(find_codex)" || { echo "run.sh: no runnable codex $version under $prefix" >&2; exit 2; }
fi

echo "codex: $codex ($("$codex" --version))"
CODEX_BIN="$codex" exec python3 "$here/probe.py" "$@"
