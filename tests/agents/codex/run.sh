#!/usr/bin/env bash
# Real-client probe of OpenAI's Codex CLI: the pinned `codex exec` (npm) against a loopback
# stand-in of the Responses API (fake_responses.py), with probe hooks for every hook event
# and a stand-in MCP server named `helix`. See FINDINGS.md. Usage: run.sh [probe.py args]
# (run.sh --help lists the scenarios); PROBE=e2e.py run.sh ... runs another driver (e2e.sh
# does). Needs node/npm (first run only), python3 and git.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../common/lib.sh"

pin CODEX codex 0.169.0   # sets version and prefix

need python3 git

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
codex="$(npm_client find_codex "$prefix" @openai/codex "$version")"

echo "codex: $codex ($("$codex" --version))"
CODEX_BIN="$codex" exec python3 "$here/${PROBE:-probe.py}" "$@"
