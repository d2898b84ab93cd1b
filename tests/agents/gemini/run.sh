#!/usr/bin/env bash
# Real-client probe: the pinned Gemini CLI (npm) in headless mode (`gemini -p`) against a
# loopback stand-in of the Gemini API, with probe hooks for every hook event and a stub MCP
# server. See FINDINGS.md and README.md. Usage: run.sh [--fixtures] [--out DIR] [scenario...]
# (run.sh --list lists the scenarios); PROBE=e2e.py run.sh ... runs another driver (e2e.sh
# does). No network but the npm registry (for the install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../common/lib.sh"

need python3 git
gemini="$("$here/gemini-bin.sh")"   # installs the pinned client when missing

echo "gemini: $gemini (${GEMINI_CLI_VERSION:-0.61.0})"
GEMINI_BIN="$gemini" exec python3 "$here/${PROBE:-probe.py}" "$@"
