#!/usr/bin/env python3
"""Drives the real Claude Code CLI (print mode) against fake_anthropic.py with helix installed,
and checks what reaches the model: hook contexts, MCP tools and results, no duplicates.

Run through run.sh, which installs the pinned Claude Code and builds helix; this file needs
CLAUDE_BIN and HELIX_BIN in the environment. Arguments: scenario names (default: DEFAULT; the
plugin scenarios use the marketplace `helix hooks plugin` writes, or HELIX_PLUGIN_DIR /
HELIX_PLUGIN_MARKETPLACE). Each scenario
gets a fresh HOME, XDG dirs, code repository and stand-in. Prints one PASS/FAIL/INFO line per
check, "N passed, N failed" last, and exits 1 if any check failed; a failing scenario's
files are kept (KEEP=1 keeps all).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from checks import MAIN, SUB, Checks, analyse, hook_events, report_hooks

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = f"{MAIN} Why do the integration tests hang on the connection pool?"

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

# The scripted model: read a file the knowledge is about, call each of helix's MCP tools
# (the read-only ones together, then store), run a failing command, start a subagent; then
# finish (the stop hook then asks once more).
FAILING = "printf 'error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n' >&2; exit 1"
MCP_CALLS = [
    ("search", {"query": "connection pool integration tests", "limit": 3}),
    ("read", {"id": "kb:db/pool-exhaustion.md"}),
    ("brief", {}),
    ("brief", {"topic": "db"}),
    ("topics", {}),
]
# Knowledge the team does not have yet: a store that repeats an entry (say, the pool fix
# again) is refused as a near-duplicate, which the scripted model does not expect.
STORE_CALL = ("store", {"topic": "ci", "title": "Session tests need a running Redis",
                        "body": "The session tests connect to Redis on localhost:6379; start "
                                "it with `docker run -p 6379:6379 redis:7` before cargo test.",
                        "sources": ["tests/session.rs"]})
STEPS = [
    [{"type": "tool_use", "name": "Read", "input": {"file_path": "{repo}/src/db/pool.rs"}}],
    [{"type": "tool_use", "name": f"@mcp:helix__{t}", "input": a} for t, a in MCP_CALLS],
    [{"type": "tool_use", "name": f"@mcp:helix__{STORE_CALL[0]}", "input": STORE_CALL[1]}],
    [{"type": "tool_use", "name": "Bash",
      "input": {"command": FAILING, "description": "Run the failing build step"}}],
    [{"type": "tool_use", "name": "@agent",
      "input": {"description": "Check the pool", "subagent_type": "general-purpose",
                "run_in_background": False,
                "prompt": f"{SUB} Say done."}}],
]


def run(cmd, env, cwd, check=True):
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


class Workspace:
    """A temporary HOME, XDG dirs, a code repository with a local helix knowledge base."""

    def __init__(self, root, helix, path_has_helix):
        self.root = root
        self.home = os.path.join(root, "home")
        self.repo = os.path.join(root, "repo")
        self.bindir = os.path.join(root, "bin")
        for d in (self.home, self.repo, self.bindir):
            os.makedirs(d)
        os.symlink(helix, os.path.join(self.bindir, "helix"))
        self.helix = helix
        path = "/usr/local/bin:/usr/bin:/bin"
        if path_has_helix:
            path = self.bindir + ":" + path
        self.env = {
            "PATH": path,
            "HOME": self.home,
            "USER": "e2e",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
            "XDG_STATE_HOME": os.path.join(self.home, ".local", "state"),
            "XDG_RUNTIME_DIR": os.path.join(root, "run"),
            "TMPDIR": os.path.join(root, "tmp"),
            "HELIX_LOG": os.path.join(root, "helix-hooks.log"),
            "HELIX_SYNC_MAX_AGE": "off",
            "GIT_AUTHOR_NAME": "e2e", "GIT_AUTHOR_EMAIL": "e2e@helix.invalid",
            "GIT_COMMITTER_NAME": "e2e", "GIT_COMMITTER_EMAIL": "e2e@helix.invalid",
        }
        os.makedirs(self.env["TMPDIR"])
        # The helix commands the test itself runs always find the binary.
        self.helix_env = dict(self.env, PATH=self.bindir + ":" + self.env["PATH"])
        os.makedirs(os.path.join(self.repo, "src", "db"))
        with open(os.path.join(self.repo, "src", "db", "pool.rs"), "w") as f:
            f.write("pub fn acquire_pooled_conn() -> Conn {\n    POOL.get().expect(\"pool\")\n}\n")
        for rel, text in ENTRIES.items():
            p = os.path.join(self.repo, "kb", rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        run(["git", "init", "-q", "-b", "main"], self.env, self.repo)
        run([helix, "init", "--local", "kb"], self.helix_env, self.repo)
        run([helix, "sync"], self.helix_env, self.repo)
        run(["git", "add", "-A"], self.env, self.repo)
        run(["git", "commit", "-qm", "fixture"], self.env, self.repo)

    def helix_cmd(self, *args, env=None):
        return run([self.helix, *args], env or self.helix_env, self.repo)


def start_fake(ws):
    script = os.path.join(ws.root, "script.json")
    steps = json.loads(json.dumps(STEPS).replace("{repo}", ws.repo))
    with open(script, "w") as f:
        json.dump({"steps": steps}, f)
    log = os.path.join(ws.root, "requests.jsonl")
    port_file = os.path.join(ws.root, "port")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_anthropic.py"),
                             "--script", script, "--log", log, "--port-file", port_file,
                             "--main-marker", MAIN, "--sub-marker", SUB],
                            stdout=subprocess.DEVNULL, stderr=open(log + ".stderr", "w"))
    for _ in range(100):
        if os.path.exists(port_file):
            break
        time.sleep(0.05)
    with open(port_file) as f:
        return proc, int(f.read()), log


def run_claude(ws, port, extra_args=()):
    env = dict(ws.env,
               ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
               ANTHROPIC_API_KEY="sk-ant-e2e-dummy",
               DISABLE_AUTOUPDATER="1",
               DISABLE_TELEMETRY="1",
               DISABLE_ERROR_REPORTING="1",
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    out = os.path.join(ws.root, "claude.stream.jsonl")
    # Bash is allowed so the failing command runs; nothing allows the helix MCP tools:
    # that is approve-mcp's job.
    cmd = [os.environ["CLAUDE_BIN"], "-p", PROMPT, "--output-format", "stream-json",
           "--verbose", "--include-hook-events", "--allowedTools", "Bash", *extra_args]
    t0 = time.time()
    with open(out, "w") as f:
        p = subprocess.run(cmd, env=env, cwd=ws.repo, stdout=f, stderr=subprocess.PIPE,
                           text=True, timeout=float(os.environ.get("HELIX_E2E_TIMEOUT", "180")))
    return p.returncode, p.stderr, out, time.time() - t0


# ---------------------------------------------------------------- scenarios

def scenario_project(c, ws):
    """`helix hooks install --project` (what a team commits), helix on PATH."""
    ws.helix_cmd("hooks", "install", "--project")
    # Each developer approves the project's .mcp.json server in settings.local.json.
    approve_project_mcp(ws)
    return {"check_text": True}


def approve_project_mcp(ws):
    path = os.path.join(ws.repo, ".claude", "settings.local.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"enabledMcpjsonServers": ["helix"]}, f)


def scenario_user(c, ws):
    """`helix hooks install` (user scope) only: absolute binary path, no MCP registration."""
    ws.helix_cmd("hooks", "install")
    return {"problems": {"call": "MCP server not registered"}}


def scenario_both(c, ws):
    """User-level and project-level install together (a developer with both)."""
    ws.helix_cmd("hooks", "install")
    ws.helix_cmd("hooks", "install", "--project")
    approve_project_mcp(ws)
    return {}


def scenario_no_approve(c, ws):
    """Control: project install without the approve-mcp hook; the MCP call must be refused,
    which shows the approve-mcp check can fail."""
    ws.helix_cmd("hooks", "install", "--project")
    approve_project_mcp(ws)
    path = os.path.join(ws.repo, ".claude", "settings.json")
    with open(path) as f:
        doc = json.load(f)
    doc["hooks"].pop("PermissionRequest", None)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
    return {"expect_approve": False}


def scenario_nopath(c, ws):
    """Project install run from a shell where helix is not on PATH: install refuses and says
    why; forced, `hooks status` and `helix doctor` report it and exit 1."""
    env = dict(ws.env)  # no helix on PATH
    p = run([ws.helix, "hooks", "install", "--project"], env, ws.repo, check=False)
    said = p.stderr + p.stdout
    c.check("install --project refuses: helix is not on PATH", p.returncode != 0
            and re.search(r"PATH", said) is not None
            and not os.path.exists(os.path.join(ws.repo, ".claude", "settings.json")),
            f"exit {p.returncode}: " + last_line(said), problem="helix not on PATH")
    run([ws.helix, "hooks", "install", "--project", "--force"], env, ws.repo)
    for args in (["hooks", "status"], ["doctor"]):
        d = run([ws.helix, *args], env, ws.repo, check=False)
        out = d.stdout + d.stderr
        c.check(f"helix {' '.join(args)} exits non-zero and names the missing binary",
                d.returncode != 0 and not re.search(r"all good", out, re.I)
                and re.search(r"not on PATH", out) is not None,
                f"exit {d.returncode}: " + last_line(out), problem="helix not on PATH")
    approve_project_mcp(ws)
    # In the session itself every hook fails with `helix: not found` (reported below as
    # INFO): nothing helix can do from a committed file fixes a PATH, so only what helix
    # says about it is checked.
    return {"analyse": False}


def plugin_marketplace(ws):
    """The marketplace `helix hooks plugin` writes (the same files this repository ships at its
    root; client/tests/cli/install.rs keeps the two equal), or $HELIX_PLUGIN_MARKETPLACE."""
    d = os.environ.get("HELIX_PLUGIN_MARKETPLACE")
    if not d:
        d = os.path.join(ws.root, "marketplace")
        ws.helix_cmd("hooks", "plugin", d)
    return d


def plugin_dir(ws):
    return os.environ.get("HELIX_PLUGIN_DIR") or os.path.join(plugin_marketplace(ws),
                                                              "plugins", "helix")


def scenario_plugin(c, ws):
    """helix as a Claude Code plugin loaded with --plugin-dir."""
    d = plugin_dir(ws)
    v = run([os.environ["CLAUDE_BIN"], "plugin", "validate", d], ws.env, ws.repo, check=False)
    c.check("claude plugin validate accepts the plugin", v.returncode == 0,
            last_line(v.stdout + v.stderr))
    return {"claude_args": ["--plugin-dir", d], "problems": PLUGIN_PROBLEMS, "check_text": True}


PLUGIN_PROBLEMS = {k: "plugin" for k in ("mcp", "names", "dup", "text", "context", "call")}
PLUGIN_PROBLEMS["text"] = "MCP result as JSON"


def scenario_plugin_missing(c, ws):
    """The plugin with no helix binary anywhere: it must say so clearly (not just the
    shell's `helix: not found`)."""
    opts = scenario_plugin(c, ws)
    opts["after"] = check_missing_said
    opts["analyse"] = False  # nothing can reach the model without helix
    return opts


def check_missing_said(c, ws, stream):
    said = [str(e.get("stdout", "")) + str(e.get("stderr", "")) + str(e.get("output", ""))
            for e in hook_events(stream) if e.get("subtype") == "hook_response"
            and e.get("hook_event") == "SessionStart"]
    text = " ".join(said)
    clear = re.search(r"helix", text) and re.search(r"install", text, re.I)
    c.check("the plugin says helix is missing and how to install it", bool(clear),
            text.strip()[:160] or "SessionStart said nothing", problem="plugin")


def scenario_plugin_marketplace(c, ws):
    """What a team does: add the marketplace (a directory with .claude-plugin/marketplace.json,
    committed to its repository) and install its `helix` plugin at project scope."""
    d = plugin_marketplace(ws)
    v = run([os.environ["CLAUDE_BIN"], "plugin", "validate", d], ws.env, ws.repo, check=False)
    c.check("claude plugin validate accepts the marketplace", v.returncode == 0,
            last_line(v.stdout + v.stderr))
    with open(os.path.join(d, ".claude-plugin", "marketplace.json")) as f:
        name = json.load(f)["name"]
    claude = os.environ["CLAUDE_BIN"]
    for args in (["plugin", "marketplace", "add", d, "--scope", "project"],
                 ["plugin", "install", f"helix@{name}", "--scope", "project"]):
        p = run([claude, *args], ws.env, ws.repo, check=False)
        c.check("claude " + " ".join(args[:3]) + " succeeds", p.returncode == 0,
                last_line(p.stdout + p.stderr))
    with open(os.path.join(ws.repo, ".claude", "settings.json")) as f:
        c.info(".claude/settings.json", json.dumps(json.load(f), separators=(",", ":"))[:200])
    return {"problems": PLUGIN_PROBLEMS, "check_text": True}


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:160] if lines else ""


def scenario_same_command(c, ws):
    """Research: the very same handler commands in user and project settings (both written
    by --project, so both say `helix hook <event>`). Does Claude Code run them once?"""
    ws.helix_cmd("hooks", "install", "--project")
    approve_project_mcp(ws)
    with open(os.path.join(ws.repo, ".claude", "settings.json")) as f:
        hooks = json.load(f)["hooks"]
    os.makedirs(os.path.join(ws.home, ".claude"))
    with open(os.path.join(ws.home, ".claude", "settings.json"), "w") as f:
        json.dump({"hooks": hooks}, f, indent=2)
    return {}


def scenario_unapproved(c, ws):
    """Research: project install without `enabledMcpjsonServers`. Does print mode start the
    project's .mcp.json server without the approval an interactive session asks for?"""
    ws.helix_cmd("hooks", "install", "--project")
    return {}


def claude_user_entry(ws):
    with open(os.path.join(ws.home, ".claude.json")) as f:
        return json.load(f).get("mcpServers", {}).get("helix")


def scenario_user_mcp(c, ws):
    """`helix hooks install` registers the user's MCP server exactly as
    `claude mcp add --scope user helix -- <helix> mcp` does."""
    claude = os.environ["CLAUDE_BIN"]
    p = run([claude, "mcp", "add", "--scope", "user", "helix", "--", ws.helix, "mcp"], ws.env,
            ws.repo, check=False)
    c.check("claude mcp add --scope user succeeds", p.returncode == 0, last_line(p.stdout + p.stderr))
    theirs = claude_user_entry(ws)
    run([claude, "mcp", "remove", "--scope", "user", "helix"], ws.env, ws.repo)
    ws.helix_cmd("hooks", "install")
    ours = claude_user_entry(ws)
    c.check("helix hooks install writes the entry claude mcp add writes", ours == theirs,
            f"claude: {theirs}, helix: {ours}", problem="MCP server not registered")
    return {}


def scenario_plugin_and_user(c, ws):
    """The plugin next to a user-level `helix hooks install`: both run every hook, helix
    answers once (the plugin and `hooks install` must not both inject)."""
    ws.helix_cmd("hooks", "install")
    opts = scenario_plugin(c, ws)
    opts["problems"] = dict(PLUGIN_PROBLEMS, dup="injected twice")
    return opts


SCENARIOS = {
    "project": scenario_project,
    "user": scenario_user,
    "both": scenario_both,
    "no-approve": scenario_no_approve,
    "nopath": scenario_nopath,
    "plugin": scenario_plugin,
    "plugin-missing": scenario_plugin_missing,
    "plugin-marketplace": scenario_plugin_marketplace,
    "plugin-and-user": scenario_plugin_and_user,
    "same-command": scenario_same_command,
    "unapproved": scenario_unapproved,
    "user-mcp": scenario_user_mcp,
}
# The install scenarios first, then the plugin, then the controls and measurements a fix
# relies on.
DEFAULT = ["project", "no-approve", "user", "both", "nopath", "plugin", "plugin-missing",
           "plugin-marketplace", "plugin-and-user", "same-command", "unapproved", "user-mcp"]


def main(argv):
    names = argv or DEFAULT
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
        return 2
    helix = os.path.realpath(os.environ["HELIX_BIN"])
    total_failed = total_passed = 0
    keep = os.environ.get("KEEP") == "1"
    for name in names:
        root = tempfile.mkdtemp(prefix=f"helix-cc-{name}-")
        c = Checks(name)
        fake = None
        try:
            ws = Workspace(root, helix, path_has_helix=name not in ("nopath", "plugin-missing"))
            opts = SCENARIOS[name](c, ws) or {}
            fake, port, log = start_fake(ws)
            rc, err, stream, secs = run_claude(ws, port, opts.get("claude_args", ()))
            c.info("claude -p", f"exit {rc} in {secs:.1f} s" + (f"; stderr: {err.strip()[:200]}"
                                                                 if err.strip() else ""))
            if opts.get("analyse", True):
                analyse(c, ws, log, stream, expect_approve=opts.get("expect_approve", True),
                        problems=opts.get("problems"), check_text=opts.get("check_text", False))
            report_hooks(c, ws, stream)
            if opts.get("after"):
                opts["after"](c, ws, stream)
        except Exception as e:  # a broken set-up is a failure of the scenario, not a crash
            c.check("scenario ran", False, f"{type(e).__name__}: {e}"[:400])
        finally:
            if fake:
                fake.send_signal(signal.SIGTERM)
                fake.wait(timeout=10)
            if keep or c.failed:
                print(f"     ({name}: files kept in {root})")
            else:
                shutil.rmtree(root, ignore_errors=True)
        total_failed += c.failed
        total_passed += c.passed
    print(f"{total_passed} passed, {total_failed} failed")
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
