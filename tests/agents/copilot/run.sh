#!/usr/bin/env bash
# Real-client research/test harness: the pinned GitHub Copilot CLI (npm) in prompt mode,
# offline, against a loopback stand-in of the Anthropic Messages API (fake_model.py), with
# probe hooks and a stand-in `helix` MCP server. See FINDINGS.md.
# Usage: run.sh [scenario...] [--fixtures]        (scenarios: see probe.py; default: all)
#        PROBE=other.py run.sh ...                (another driver using harness.py)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../common/lib.sh"

pin COPILOT copilot 1.0.102   # sets version and prefix

need python3 git
command -v node >/dev/null || die "node is needed (the npm loader of copilot)"

# The npm package is a small loader (npm-loader.js) that runs the platform package's native
# binary (@github/copilot-linux-x64, ~235 MB); that binary unpacks its JavaScript and native
# modules into $COPILOT_PKG_CACHE_HOME/pkg on first run. Every test run shares that unpacked
# copy (each run still gets its own HOME and XDG dirs).
find_copilot() {
    local b="$prefix/node_modules/.bin/copilot"
    if [ -x "$b" ] && COPILOT_PKG_CACHE_HOME="$prefix/pkg-cache" HOME="$prefix" \
            "$b" --version 2>/dev/null | grep -q "CLI $version\.\?$"; then
        echo "$b"; return 0
    fi
    return 1
}
copilot="$(npm_client find_copilot "$prefix" @github/copilot "$version")"

echo "copilot: $copilot ($(COPILOT_PKG_CACHE_HOME="$prefix/pkg-cache" HOME="$prefix" "$copilot" --version | head -1))"
COPILOT_BIN="$copilot" COPILOT_PKG_CACHE_HOME="$prefix/pkg-cache" \
    exec python3 "$here/${PROBE:-probe.py}" "$@"
