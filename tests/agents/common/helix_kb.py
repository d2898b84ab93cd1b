"""The helix side of the agents' end-to-end checks (codex/e2e.py, copilot/e2e.py,
gemini/e2e.py): a local knowledge directory with the three entries tests/claude-code/e2e.py
uses, the repository's .helix.toml naming it, `helix` on PATH through a bin directory,
`helix sync`; and the PASS/FAIL/INFO printer they report with.

Python 3 standard library only.
"""

import json
import os

from workspace import run

PROJECT = "kb"  # the project name in .helix.toml; entry ids read `kb:<path>`

# The same entries as tests/claude-code/e2e.py.
ENTRIES = {
    "db/pool-exhaustion.md": """---
title: Connection pool exhausted in integration tests
date: 2025-06-10
tags: [postgres]
sources: [src/db/pool.rs]
---
Integration tests hang when max_connections is below the test thread count.
Set DATABASE_MAX_CONNECTIONS=16 in CI.
""",
    "build/linker-openssl.md": """---
title: Linker cannot find -lssl on fresh machines
date: 2025-03-04
---
cargo build fails with `cannot find -lssl` when libssl-dev is missing. Install libssl-dev
(Debian) or openssl-devel (Fedora); the vendored feature is off on purpose.
""",
    "ci/cache-key.md": """---
title: Cache key must include the toolchain
date: 2025-01-20
sources: [.github/workflows/ci.yml]
---
Stale caches broke builds after a rustc bump; key the cache on rust-toolchain.toml.
""",
}
POOL = f"{PROJECT}:db/pool-exhaustion.md"
LINKER = f"{PROJECT}:build/linker-openssl.md"


def write_knowledge(root, repo):
    """The entries in <root>/knowledge (outside the repository) and the repository's
    .helix.toml naming that directory (`local`) and PROJECT; returns the directory."""
    kb = os.path.join(root, "knowledge")
    for rel, text in ENTRIES.items():
        p = os.path.join(kb, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    with open(os.path.join(repo, ".helix.toml"), "w") as f:
        f.write(f"local = {json.dumps(kb)}\nproject = {json.dumps(PROJECT)}\n")
    return kb


def install_helix(bindir, helix, script=None):
    """bin/helix: a symlink to the helix binary, or (script) an executable shell script in
    its place; replaces what was there. Returns its path."""
    os.makedirs(bindir, exist_ok=True)
    path = os.path.join(bindir, "helix")
    if os.path.lexists(path):
        os.remove(path)
    if script is None:
        os.symlink(helix, path)
    else:
        with open(path, "w") as f:
            f.write(script)
        os.chmod(path, 0o755)
    return path


def helix_on_path(env, root, bindir, helix, script=None):
    """`helix` in bindir (install_helix), bindir first on env's PATH, HELIX_LOG in
    <root>/helix-hooks.log and no background `helix sync` from the session-start hook
    (nothing to fetch here; none in the middle of a check). Returns bin/helix."""
    path = install_helix(bindir, helix, script)
    if bindir not in env["PATH"].split(":"):
        env["PATH"] = bindir + ":" + env["PATH"]
    env["HELIX_LOG"] = os.path.join(root, "helix-hooks.log")
    env["HELIX_SYNC_MAX_AGE"] = "off"
    return path


def sync(env, repo, check=True):
    """`helix sync` (the helix on env's PATH) in the repository."""
    return run(["helix", "sync"], env, repo, check=check)


class Checks:
    """Prints one line per check, `PASS|FAIL [scope: ]name — detail` (detail on one line,
    cut at `limit` characters unless limit is None), and counts them; `info` prints an
    INFO line that counts as neither."""

    def __init__(self, scope=None, limit=400, info_limit=600):
        self.prefix = f"{scope}: " if scope else ""
        self.limit, self.info_limit = limit, info_limit
        self.passed = self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {self.prefix}{name}"
              + self._detail(detail, self.limit), flush=True)
        return ok

    def info(self, name, detail=""):
        print(f"INFO {self.prefix}{name}" + self._detail(detail, self.info_limit), flush=True)

    @staticmethod
    def _detail(detail, limit):
        detail = " ".join(str(detail).split())
        if limit is not None:
            detail = detail[:limit]
        return f" — {detail}" if detail else ""
