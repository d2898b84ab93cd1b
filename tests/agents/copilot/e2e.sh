#!/usr/bin/env bash
# End-to-end check of helix with the real GitHub Copilot CLI (pinned, offline, against
# fake_model.py): helix's installer, hooks and `helix mcp` in a `copilot -p` session, checked
# from the requests the model received. See FINDINGS.md "End-to-end check of helix".
# Usage: e2e.sh [scenario...]     (main, claude-mcp; default: both)
#        HELIX_BIN=/path/to/helix e2e.sh      (helix-net must sit beside the real binary)
#        KEEP=1 e2e.sh main                   (keep the temp root)
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/../common/lib.sh"
run_e2e "$@"   # run.sh with PROBE=e2e.py, once helix is found
