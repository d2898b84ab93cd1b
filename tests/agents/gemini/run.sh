#!/usr/bin/env bash
# Real-client probe: the pinned Gemini CLI (npm) in headless mode (`gemini -p`) against a
# loopback stand-in of the Gemini API, with probe hooks for every hook event and a stub MCP
# server. See FINDINGS.md and README.md. Usage: run.sh [--fixtures] [--out DIR] [scenario...]
# (run.sh --list lists the scenarios). No network but the npm registry (for the install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

version="${GEMINI_CLI_VERSION:-0.61.0}"
prefix="${GEMINI_CLI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/gemini-$version}"

command -v python3 >/dev/null || { echo "run.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "run.sh: git is needed" >&2; exit 2; }
command -v node >/dev/null || { echo "run.sh: node (>= 20) is needed" >&2; exit 2; }

find_gemini() {
    local b="$prefix/node_modules/.bin/gemini" v="" h
    if [ -x "$b" ]; then
        h="$(mktemp -d)"   # --version with a throw-away HOME: nothing of the user's is read
        v="$(HOME="$h" "$b" --version 2>/dev/null || true)"
        rm -rf "$h"
    fi
    [ "$v" = "$version" ] && echo "$b"
}
if ! gemini="$(find_gemini)"; then
    command -v npm >/dev/null || { echo "run.sh: npm is needed to install Gemini CLI" >&2; exit 2; }
    echo "run.sh: installing @google/gemini-cli@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "@google/gemini-cli@$version" >&2
    gemini="$(find_gemini)" || { echo "run.sh: no runnable gemini $version under $prefix" >&2; exit 2; }
fi

echo "gemini: $gemini ($version)"
GEMINI_BIN="$gemini" exec python3 "$here/probe.py" "$@"
