#!/usr/bin/env bash
# Prints the path of the pinned Gemini CLI, installing it from npm first when it is missing:
# `@google/gemini-cli@$GEMINI_CLI_VERSION` (default 0.61.0) under $GEMINI_CLI_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/helix-e2e/gemini-VERSION). Used by run.sh and e2e.sh.
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../common/lib.sh"

pin GEMINI_CLI gemini 0.61.0   # sets version and prefix

command -v node >/dev/null || die "node (>= 20) is needed"

find_gemini() {
    local b="$prefix/node_modules/.bin/gemini" v="" h
    if [ -x "$b" ]; then
        h="$(mktemp -d)"   # --version with a throw-away HOME: nothing of the user's is read
        v="$(HOME="$h" "$b" --version 2>/dev/null || true)"
        rm -rf "$h"
    fi
    [ "$v" = "$version" ] && echo "$b"
}
npm_client find_gemini "$prefix" @google/gemini-cli "$version"
