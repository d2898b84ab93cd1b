#!/usr/bin/env bash
# Prints the path of the pinned Gemini CLI, installing it from npm first when it is missing:
# `@google/gemini-cli@$GEMINI_CLI_VERSION` (default 0.61.0) under $GEMINI_CLI_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/gemini-VERSION). Used by run.sh and e2e.sh.
set -euo pipefail

version="${GEMINI_CLI_VERSION:-0.61.0}"
prefix="${GEMINI_CLI_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/gemini-$version}"

command -v node >/dev/null || { echo "gemini-bin.sh: node (>= 20) is needed" >&2; exit 2; }

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
    command -v npm >/dev/null || { echo "gemini-bin.sh: npm is needed to install Gemini CLI" >&2; exit 2; }
    echo "gemini-bin.sh: installing @google/gemini-cli@$version into $prefix" >&2
    mkdir -p "$prefix"
    npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
        "@google/gemini-cli@$version" >&2
    gemini="$(find_gemini)" || { echo "gemini-bin.sh: no runnable gemini $version under $prefix" >&2; exit 2; }
fi
echo "$gemini"
