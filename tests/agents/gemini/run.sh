#!/usr/bin/env bash
# Real-client probe: the pinned Gemini CLI (npm) in headless mode (`gemini -p`) against a
# loopback stand-in of the Gemini API, with probe hooks for every hook event and a stub MCP
# server. See FINDINGS.md and README.md. Usage: run.sh [--fixtures] [--out DIR] [scenario...]
# (run.sh --list lists the scenarios). No network but the npm registry (for the install).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

command -v python3 >/dev/null || { echo "run.sh: python3 is needed" >&2; exit 2; }
command -v git >/dev/null || { echo "run.sh: git is needed" >&2; exit 2; }

gemini="$("$here/gemini-bin.sh")"   # installs the pinned client when missing

echo "gemini: $gemini (${GEMINI_CLI_VERSION:-0.61.0})"
GEMINI_BIN="$gemini" exec python3 "$here/probe.py" "$@"
