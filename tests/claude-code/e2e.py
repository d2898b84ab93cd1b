#!/usr/bin/env python3
"""Drives the real Claude Code CLI (print mode) against fake_anthropic.py with helix installed,
and checks what reaches the model: hook contexts, MCP tools and results, no duplicates.

Run through run.sh, which installs the pinned Claude Code and builds helix; this file needs
CLAUDE_BIN and HELIX_BIN in the environment. Arguments: scenario names (default: DEFAULT, plus
the plugin scenarios when HELIX_PLUGIN_DIR / HELIX_PLUGIN_MARKETPLACE are set). Each scenario
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

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN = "HELIX-E2E-MAIN"
SUB = "HELIX-E2E-SUB"
PROMPT = f"{MAIN} Why do the integration tests hang on the connection pool?"

# What each helix hook puts in front of the model (the fixed opening of its text).
MARK = {
    "session-start": "helix team knowledge: ",
    "prompt": "helix team knowledge that may apply to this prompt",
    "ambient": "helix team knowledge for src/db/pool.rs",
    "error": "helix: the team has knowledge matching this error",
    "subagent-start": "helix team knowledge (",
    "stop": "Before you finish: this session hit a failure",
}
DUP_MARK = dict(MARK, stop="Stop hook feedback:\n" + MARK["stop"])
MCP_TOOLS = ["search", "store", "read", "brief", "topics"]

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

# The scripted model: read a file the knowledge is about, search helix, run a failing
# command, start a subagent; then finish (the stop hook then asks once more).
FAILING = "printf 'error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n' >&2; exit 1"
STEPS = [
    [{"type": "tool_use", "name": "Read", "input": {"file_path": "{repo}/src/db/pool.rs"}}],
    [{"type": "tool_use", "name": "@mcp:helix__search",
      "input": {"query": "connection pool integration tests", "limit": 3}}],
    [{"type": "tool_use", "name": "Bash",
      "input": {"command": FAILING, "description": "Run the failing build step"}}],
    [{"type": "tool_use", "name": "@agent",
      "input": {"description": "Check the pool", "subagent_type": "general-purpose",
                "run_in_background": False,
                "prompt": f"{SUB} Say done."}}],
]


class Checks:
    def __init__(self, scenario):
        self.scenario = scenario
        self.failed = 0
        self.passed = 0

    def check(self, name, ok, detail="", problem=None):
        tag = "PASS" if ok else "FAIL"
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        note = f"  [issue 15: {problem}]" if problem and not ok else ""
        detail = " ".join(str(detail).split())
        print(f"{tag} {self.scenario}: {name}{' — ' + detail if detail else ''}{note}", flush=True)

    def info(self, name, detail):
        print(f"INFO {self.scenario}: {name} — {' '.join(str(detail).split())}", flush=True)


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


def load_requests(log):
    reqs = []
    if not os.path.exists(log):
        return reqs
    with open(log) as f:
        for line in f:
            e = json.loads(line)
            if e["method"] == "POST" and e["path"].startswith("/v1/messages") \
                    and "count_tokens" not in e["path"] and isinstance(e["body"], dict):
                reqs.append(e["body"])
    return reqs


def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(text_of(b.get("content")))
    return "\n".join(out)


def first_user(body):
    for m in body.get("messages") or []:
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def model_text(body):
    """Everything the model reads in a request: system prompt and every message's text."""
    parts = [text_of(body.get("system")) if isinstance(body.get("system"), list)
             else str(body.get("system") or "")]
    for m in body.get("messages") or []:
        parts.append(text_of(m.get("content")))
    return "\n".join(parts)


def tool_uses(body):
    for m in body.get("messages") or []:
        if m.get("role") == "assistant" and isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use":
                    yield b


def tool_result(body, tool_use_id):
    for m in body.get("messages") or []:
        if isinstance(m.get("content"), list):
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result" \
                        and b.get("tool_use_id") == tool_use_id:
                    return b
    return None


HELIX_TOOL = re.compile(r"mcp__(?:[A-Za-z0-9_-]*_)?helix__(search|store|read|brief|topics)")


def offered_tools(body):
    """helix MCP tool names the model is offered, as {tool: name}: full schemas in `tools`, or
    names listed as deferred in the text (with tool search, Claude Code sends only the names
    and ToolSearch loads a schema). A plugin's server gets `mcp__plugin_<plugin>_<server>__`."""
    schema = [t.get("name") or "" for t in body.get("tools") or [] if isinstance(t, dict)]
    deferred = re.findall(r"(?m)^(mcp__\w+)$", model_text(body))
    offered, how = {}, {}
    for kind, names in (("schema", schema), ("deferred", deferred)):
        for n in names:
            m = HELIX_TOOL.fullmatch(n)
            if m and m.group(1) not in offered:
                offered[m.group(1)], how[m.group(1)] = n, kind
    return offered, how


def mentioned_tools(text):
    """helix MCP tool names the hook texts point the model at (they are written in backticks)."""
    return set(re.findall(r"`(mcp__[A-Za-z0-9_-]*helix__\w+)`", text))


def hook_events(stream_path):
    """The hook lifecycle records of a stream-json run (--include-hook-events)."""
    return [e for e in stream_records(stream_path)
            if e.get("type") == "system" and str(e.get("subtype", "")).startswith("hook")]


def analyse(c, ws, log, stream, expect_approve=True, problems=None, check_text=False):
    problems = problems or {}
    reqs = load_requests(log)
    main = [b for b in reqs if MAIN in first_user(b) and SUB not in first_user(b)]
    subs = [b for b in reqs if SUB in first_user(b)]
    c.info("requests", f"{len(reqs)} Messages requests: {len(main)} main, {len(subs)} subagent, "
                       f"{len(reqs) - len(main) - len(subs)} side")
    if not main:
        c.check("the main conversation reached the stand-in", False)
        return
    last = max(main, key=lambda b: len(b.get("messages") or []))
    seen = "\n".join(model_text(b) for b in main)
    ctx = problems.get("context")
    for hook in ("session-start", "prompt", "ambient", "error", "stop"):
        c.check(f"{hook} context reaches the model", MARK[hook] in seen, problem=ctx)
    sub_seen = "\n".join(model_text(b) for b in subs)
    c.check("subagent-start context reaches the subagent", MARK["subagent-start"] in sub_seen,
            "" if subs else "no subagent request seen", problem=ctx)

    # Duplicates: each hook's text at most once in any one request. Claude Code itself shows
    # a blocking Stop reason twice (as "Stop hook feedback:" and as a "Stop hook blocking
    # error" notice), so for stop the feedback form is counted.
    worst = {}
    for b in main + subs:
        text = model_text(b)
        for hook, mark in DUP_MARK.items():
            worst[hook] = max(worst.get(hook, 0), text.count(mark))
    dups = {h: n for h, n in worst.items() if n > 1}
    c.check("no helix context injected twice", not dups,
            ", ".join(f"{h} ×{n}" for h, n in sorted(dups.items())) or "each at most once",
            problem=problems.get("dup", "problem 3"))

    # MCP tools offered to the model.
    offered, how = offered_tools(main[0])
    missing = [t for t in MCP_TOOLS if t not in offered]
    kinds = sorted(set(how.values()))
    detail = ("missing: " + ", ".join(missing) if missing else
              f"as {offered['search']}…, " + ("full schemas in `tools`" if kinds == ["schema"]
                                               else "deferred (names only; ToolSearch loads them)"))
    c.check("helix MCP tools are offered to the model", not missing, detail,
            problem=problems.get("mcp", "problem 5"))
    wrong = sorted(mentioned_tools(seen) - set(offered.values()))
    c.check("hook texts name only MCP tools the session has", not wrong,
            ("texts point at " + ", ".join(wrong) + "; the session has "
             + (", ".join(sorted(offered.values())) or "no helix MCP tools")) if wrong else "",
            problem=problems.get("names", "problem 5"))

    # The search call: allowed without any permission flag, and what it returned.
    call = next((u for u in tool_uses(last) if str(u.get("name")).endswith("helix__search")
                 and u.get("name") != "ToolSearch"), None)
    result = tool_result(last, call["id"]) if call else None
    if result is None:
        c.check("helix search call gets a result", False, "no tool_result found")
        return
    content = result.get("content")
    body = text_of(content) if isinstance(content, list) else str(content)
    denied = re.search(r"permission|denied|haven't granted|not allowed", body, re.I)
    if expect_approve:
        c.check(f"{call['name']} runs without a permission flag (approve-mcp)",
                not result.get("is_error") and not denied,
                body[:160] if result.get("is_error") or denied else "",
                problem=problems.get("call"))
    else:
        c.check("without approve-mcp the call is refused (control)",
                bool(result.get("is_error")) and bool(denied), body[:160].replace("\n", " "))
        return
    if result.get("is_error"):
        return
    shape = ("a JSON string" if isinstance(content, str) and body.lstrip().startswith("{")
             else "text blocks" if isinstance(content, list) else type(content).__name__)
    c.info("search tool_result", f"{shape}, {len(body)} characters: {body[:120]!r}")
    is_text = body.lstrip().startswith(("1 hit for", "2 hits for", "3 hits for")) \
        or re.match(r"\s*\d+ hits? for ", body) is not None
    if check_text:
        c.check("the model gets helix's text block, not structuredContent JSON", is_text,
                "got " + shape, problem=problems.get("text", "problem 1"))


def hook_log(ws):
    p = ws.env["HELIX_LOG"]
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return f.read().splitlines()


def report_hooks(c, ws, stream):
    lines = hook_log(ws)
    counts = {}
    for line in lines:
        m = re.search(r"\bhook[= ]([a-z-]+)", line)
        key = m.group(1) if m else line[:40]
        counts[key] = counts.get(key, 0) + 1
    c.info("helix hook processes", ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items()))
           or "none ran")
    errors = {}
    for e in hook_events(stream):
        if e.get("subtype") == "hook_response" and e.get("outcome") == "error":
            first = (str(e.get("stderr") or e.get("output") or "").strip().splitlines() or [""])[0]
            errors.setdefault(first[:120], []).append(str(e.get("hook_event")))
    for msg, events in errors.items():
        c.info("hook errors reported by Claude Code", f"{', '.join(sorted(set(events)))}: {msg}")
    for e in stream_records(stream):
        if e.get("type") == "system" and e.get("subtype") == "init":
            servers = [f"{s.get('name')} ({s.get('source', '?')}): {s.get('status')}"
                       for s in e.get("mcp_servers") or []]
            c.info("MCP servers at start", ", ".join(servers) or "none")


def stream_records(stream_path):
    with open(stream_path) as f:
        for line in f:
            try:
                yield json.loads(line)
            except ValueError:
                continue


# ---------------------------------------------------------------- scenarios

def scenario_project(c, ws):
    """`helix hooks install --project` (what a team commits), helix on PATH."""
    ws.helix_cmd("hooks", "install", "--project")
    # The project's .mcp.json server is approved the way issue 15 (problem 4) recommends.
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
    return {"problems": {"call": "problem 5"}}


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
    """Project install run from a shell where helix is not on PATH (issue 15 problem 2)."""
    env = dict(ws.env)  # no helix on PATH
    p = run([ws.helix, "hooks", "install", "--project"], env, ws.repo)
    warned = re.search(r"PATH", p.stderr + p.stdout) is not None
    c.check("install --project says helix is not on PATH", warned,
            (p.stderr.strip().splitlines() or [""])[-1][:160], problem="problem 2")
    d = run([ws.helix, "doctor"], env, ws.repo, check=False)
    out = (d.stdout + d.stderr)
    c.check("helix doctor does not say all is well when hooks cannot find helix",
            not re.search(r"all good", out, re.I), out.strip().splitlines()[-1][:160]
            if out.strip() else "", problem="problem 2")
    approve_project_mcp(ws)
    return {"problems": {"mcp": "problem 2", "context": "problem 2", "call": "problem 2"}}


def scenario_plugin(c, ws):
    """helix as a Claude Code plugin loaded with --plugin-dir $HELIX_PLUGIN_DIR."""
    d = os.environ.get("HELIX_PLUGIN_DIR", "")
    v = run([os.environ["CLAUDE_BIN"], "plugin", "validate", d], ws.env, ws.repo, check=False)
    c.check("claude plugin validate accepts the plugin", v.returncode == 0,
            last_line(v.stdout + v.stderr))
    return {"claude_args": ["--plugin-dir", d], "problems": PLUGIN_PROBLEMS, "check_text": True}


PLUGIN_PROBLEMS = {k: "plugin" for k in ("mcp", "names", "dup", "text", "context", "call")}
PLUGIN_PROBLEMS["text"] = "problem 1"


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
    """What a team does: add the marketplace $HELIX_PLUGIN_MARKETPLACE (a directory with
    .claude-plugin/marketplace.json) and install its `helix` plugin at project scope."""
    d = os.environ.get("HELIX_PLUGIN_MARKETPLACE", "")
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


def register_user_mcp(c, ws):
    """`claude mcp add --scope user`, the way a user-level helix install could register its
    MCP server (absolute binary path, in ~/.claude.json)."""
    p = run([os.environ["CLAUDE_BIN"], "mcp", "add", "--scope", "user", "helix", "--",
             ws.helix, "mcp"], ws.env, ws.repo, check=False)
    c.check("claude mcp add --scope user succeeds", p.returncode == 0, last_line(p.stdout + p.stderr))


def scenario_user_mcp(c, ws):
    """Research for problem 5: user-level hooks plus a user-scope MCP registration."""
    ws.helix_cmd("hooks", "install")
    register_user_mcp(c, ws)
    return {}


def scenario_both_mcp(c, ws):
    """Research for problems 3 and 5: user hooks + user MCP server, and the project install
    (hooks + .mcp.json `helix`) too. One `helix` server or two?"""
    ws.helix_cmd("hooks", "install")
    register_user_mcp(c, ws)
    ws.helix_cmd("hooks", "install", "--project")
    approve_project_mcp(ws)
    return {}


SCENARIOS = {
    "project": scenario_project,
    "user": scenario_user,
    "both": scenario_both,
    "no-approve": scenario_no_approve,
    "nopath": scenario_nopath,
    "plugin": scenario_plugin,
    "plugin-missing": scenario_plugin_missing,
    "plugin-marketplace": scenario_plugin_marketplace,
    "same-command": scenario_same_command,
    "unapproved": scenario_unapproved,
    "user-mcp": scenario_user_mcp,
    "both-mcp": scenario_both_mcp,
}
# Issue 15's problems first, then the controls and measurements a fix relies on.
DEFAULT = ["project", "no-approve", "user", "both", "nopath",
           "same-command", "unapproved", "user-mcp", "both-mcp"]


def main(argv):
    names = argv or (DEFAULT
                     + (["plugin", "plugin-missing"] if os.environ.get("HELIX_PLUGIN_DIR") else [])
                     + (["plugin-marketplace"] if os.environ.get("HELIX_PLUGIN_MARKETPLACE")
                        else []))
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
