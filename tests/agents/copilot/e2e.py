#!/usr/bin/env python3
"""End-to-end check of helix with the real GitHub Copilot CLI: helix's own installer, hooks
and MCP server (`helix mcp`) in an offline `copilot -p` session against fake_model.py, and
checks of what reached the model (the request bodies the stand-in recorded).

Run through e2e.sh, which installs the pinned Copilot CLI (via run.sh) and finds or builds
helix; this file needs COPILOT_BIN and HELIX_BIN. Arguments: scenario names (default: all of
SCENARIOS). Each scenario gets a fresh temp root (HOME, XDG dirs, TMPDIR, a git repository
with src/db/pool.rs, a local knowledge directory, the stand-in). Prints PASS/FAIL per check
(INFO for what is only reported), "N passed, N failed" last, and exits 1 if a check failed;
a failing scenario's root is kept (KEEP=1 keeps every root).
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time

import harness as h
from harness import Fake, Workspace
from helix_kb import LINKER, POOL, Checks, helix_on_path, sync, write_knowledge
from helix_kb import PROJECT as KB

FAILING = ("sh -c 'printf \"error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n\" "
           ">&2; exit 1'")
SEARCH = {"query": "connection pool integration tests", "limit": 3}
# The scripted model: read the file the pool entry is about, run a failing build step, call
# helix's MCP search; then "All done." (the stop hook then asks once more, and the model
# answers "All done." again).
STEPS = [
    [{"type": "tool_use", "name": "view", "input": {"path": "{repo}/src/db/pool.rs"}}],
    [{"type": "tool_use", "name": "bash",
      "input": {"command": FAILING, "description": "Run the failing build step"}}],
    [{"type": "tool_use", "name": "@mcp:helix/search", "input": SEARCH}],
]
VIEW_ID, BASH_ID, SEARCH_ID = "toolu_e2e_0_0", "toolu_e2e_1_0", "toolu_e2e_2_0"
HELIX_TOOLS = ["search", "store", "read", "brief", "topics"]

MARK = {
    "session-start": "helix team knowledge: ",
    "prompt": "helix team knowledge that may apply to this prompt",
    "error": "helix: the team has knowledge matching this error",
    "stop": "Before you finish: this session hit a failure",
}


# ---------------------------------------------------------------------- the workspace

class HelixWorkspace(Workspace):
    """harness.Workspace (temp HOME/XDG, git repo with src/db/pool.rs) plus a bin directory
    with `helix` (a symlink to HELIX_BIN) first on PATH, a local knowledge directory outside
    the repository, and the repository's .helix.toml naming it."""

    def __init__(self, root, helix):
        super().__init__(root)
        self.helix = helix
        self.bindir = os.path.join(self.root, "bin")
        self.trace = os.path.join(self.root, "helix-trace.log")
        trace = None
        if os.environ.get("HELIX_E2E_TRACE") == "1":
            # A wrapper that logs each helix process's start and end (ms), pid and argv.
            trace = f"""#!/bin/sh
echo "start $(date +%s%3N) $$ $*" >> '{self.trace}'
'{helix}' "$@"
rc=$?
echo "end $(date +%s%3N) $$ $* rc=$rc" >> '{self.trace}'
exit $rc
"""
        helix_on_path(self.env, self.root, self.bindir, helix, script=trace)
        self.knowledge = write_knowledge(self.root, self.repo)

    def helix_cmd(self, *args, check=True):
        return h.run(["helix", *args], self.env, self.repo, check=check)

    def commit(self, msg):
        h.run(["git", "add", "-A"], self.env, self.repo)
        h.run(["git", "commit", "-qm", msg], self.env, self.repo)


def out_of(p):
    return (p.stdout + p.stderr).strip()


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def setup(c, ws):
    """helix sync, the real installer, the trust a user's "remember this folder" records;
    `helix hooks status` before and after the trust."""
    p = sync(ws.env, ws.repo)
    c.check("helix sync compiles the local knowledge directory", p.returncode == 0,
            last_line(out_of(p)))
    p = ws.helix_cmd("search", "connection", "pool")
    c.check("helix search finds the pool entry", POOL in p.stdout, last_line(out_of(p)))

    p = ws.helix_cmd("hooks", "install", "--agent", "copilot", "--project")
    hooks_file = os.path.join(ws.repo, ".github", "hooks", "helix.json")
    mcp_file = os.path.join(ws.repo, ".github", "mcp.json")
    ok = os.path.exists(hooks_file) and os.path.exists(mcp_file)
    c.check("helix hooks install --agent copilot --project writes .github/hooks/helix.json "
            "and .github/mcp.json", p.returncode == 0 and ok, out_of(p))
    if ok:
        with open(hooks_file) as f:
            events = sorted(json.load(f).get("hooks", {}))
        with open(mcp_file) as f:
            entry = json.load(f).get("mcpServers", {}).get("helix")
        c.info("installed", f"hook events {events}; .github/mcp.json helix = "
                            f"{json.dumps(entry, separators=(',', ':'))}")
    ws.commit("helix for copilot")

    p = ws.helix_cmd("hooks", "status", check=False)
    said = out_of(p)
    c.check("hooks status before the trust: exit 1, says the folder is not trusted",
            p.returncode == 1 and re.search(r"copilot: .*not a trusted folder", said) is not None,
            f"exit {p.returncode}: " + " | ".join(ln for ln in said.splitlines()
                                                  if ln.startswith("copilot:"))[:300])
    # What answering Copilot's trust prompt with "Yes, and remember this folder" records.
    ws.trust_folder_in_config()
    p = ws.helix_cmd("hooks", "status", check=False)
    said = out_of(p)
    copilot_lines = [ln for ln in said.splitlines() if ln.startswith("copilot:")]
    c.check("hooks status after the trust: exit 0, no copilot problem",
            p.returncode == 0 and len(copilot_lines) == 1
            and "9 of 9 installed" in copilot_lines[0] and "problem" not in said,
            f"exit {p.returncode}: " + " | ".join(copilot_lines)[:300])


# ---------------------------------------------------------------------- reading requests

def main_requests(reqs):
    return [b for b in reqs if h.is_main(b)]


def msg_texts(m):
    """(kind, text) of every block of a message: kind is `text` or `tool_result:<id>`."""
    content = m.get("content")
    if isinstance(content, str):
        return [("text", content)]
    out = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(("text", b.get("text", "")))
        elif b.get("type") == "tool_result":
            inner = b.get("content")
            out.append((f"tool_result:{b.get('tool_use_id')}",
                        inner if isinstance(inner, str) else h.text_of(inner)))
    return out


def after_tool(body, tool_use_id):
    """The user blocks from the tool's result up to the next assistant message: what the
    model reads about that call. None when the body does not hold the result."""
    msgs = body.get("messages") or []
    start = None
    for i, m in enumerate(msgs):
        if any(k == f"tool_result:{tool_use_id}" for k, _ in msg_texts(m)):
            start = i
            break
    if start is None:
        return None
    out = []
    for m in msgs[start:]:
        if m.get("role") == "assistant":
            break
        for kind, text in msg_texts(m):
            if kind.startswith("tool_result:") and kind != f"tool_result:{tool_use_id}":
                continue
            out.append((kind, text))
    return out


def first_with(reqs, pred):
    return next((b for b in reqs if pred(b)), None)


def holds_result(tool_use_id):
    return lambda b: after_tool(b, tool_use_id) is not None


def snippet(text, needle, before=120, after=200):
    i = text.find(needle)
    return text[max(0, i - before):i + len(needle) + after] if i >= 0 else text[:300]


def session_id(ws):
    d = os.path.join(ws.home, ".copilot", "session-state")
    return sorted(n for n in os.listdir(d) if not n.startswith(".")) if os.path.isdir(d) else []


def hook_ends(ws):
    return [e.get("data", {}) for e in ws.session_events() if e.get("type") == "hook.end"]


# ---------------------------------------------------------------------- scenarios

def scenario_main(c, ws):
    """The installer's project install, the folder trusted in ~/.copilot/config.json; the
    scripted session: view, a failing bash command, helix-search, done; then a second short
    session with config.json as Copilot saved it."""
    setup(c, ws)
    return {"again": True}


def scenario_claude_mcp(c, ws):
    """Claude Code's project install too (`helix hooks install --project`: .mcp.json with
    Claude's `{"command": "helix", "args": ["mcp"]}`, no "tools"; .claude/settings.json
    hooks) next to Copilot's .github/mcp.json: does Copilot still offer helix's tools once,
    and does it run Claude's hooks?"""
    setup(c, ws)
    p = ws.helix_cmd("hooks", "install", "--project")
    path = os.path.join(ws.repo, ".mcp.json")
    entry = None
    if os.path.exists(path):
        with open(path) as f:
            entry = json.load(f).get("mcpServers", {}).get("helix")
    c.check("helix hooks install --project writes Claude's .mcp.json (no \"tools\")",
            p.returncode == 0 and entry is not None and "tools" not in entry,
            json.dumps(entry, separators=(",", ":")))
    ws.commit("helix for claude")
    p = ws.helix_cmd("hooks", "status", check=False)
    c.info("hooks status with both installs", f"exit {p.returncode}: " + " | ".join(
        ln for ln in out_of(p).splitlines() if not ln.endswith("no file"))[:500])
    return {"claude": True}


SCENARIOS = {
    "main": scenario_main,
    "claude-mcp": scenario_claude_mcp,
}


# ---------------------------------------------------------------------- checks

def analyse(c, ws, opts, rc, err, secs, fake):
    c.info("copilot -p", f"exit {rc} in {secs:.1f} s" + (f"; stderr: {err.strip()[-300:]}"
                                                         if err.strip() else ""))
    c.check("copilot -p exits 0", rc == 0, err.strip()[-300:])
    reqs = ws.requests()
    main = main_requests(reqs)
    c.info("requests", f"{len(reqs)} Messages requests, {len(main)} of the main conversation")
    if not main:
        c.check("the main conversation reached the stand-in", False)
        return
    first = main[0]
    last = max(main, key=lambda b: len(b.get("messages") or []))
    bad = [e for e in hook_ends(ws) if not e.get("success")]
    c.check("every hook Copilot ran succeeded (hook.end success)", not bad,
            "; ".join(f"{e.get('hookType')}: {json.dumps(e.get('error'))[:160]}"
                      for e in bad[:6]))

    # 1. session-start: its own text block, first in the first user message.
    m0 = (first.get("messages") or [{}])[0]
    blocks = msg_texts(m0)
    ss = [i for i, (k, t) in enumerate(blocks) if k == "text" and t.startswith(MARK["session-start"])]
    c.check("session-start context reached the model (\"helix team knowledge:\" block in the "
            "first user message)", bool(ss),
            snippet(blocks[ss[0]][1], MARK["session-start"], 0, 160) if ss
            else f"blocks: {[t[:80] for _, t in blocks]}")

    # 2. prompt: the pool entry in the prompt's <system_reminder>.
    prompt_block = next((t for k, t in blocks if k == "text" and h.MAIN in t), "")
    reminder = prompt_block.split("<system_reminder>", 1)[1] if "<system_reminder>" in \
        prompt_block else ""
    c.check(f"prompt context: {POOL} in the prompt's <system_reminder>",
            MARK["prompt"] in reminder and POOL in reminder,
            snippet(reminder or prompt_block, POOL))

    # 3. the file read: ambient (preToolUse on view) names the pool entry around the call.
    body = first_with(main, holds_result(VIEW_ID))
    around_view = after_tool(body, VIEW_ID) if body else None
    text = "\n".join(t for _, t in around_view or [])
    c.check(f"file-read context naming {POOL} reached the model around the view call",
            around_view is not None and POOL in text
            and "Additional context from preToolUse hook:" in text,
            snippet(text, POOL) if around_view else "no request holds the view result")

    # 4. the failing command: the linker entry after that call.
    body = first_with(main, holds_result(BASH_ID))
    around_bash = after_tool(body, BASH_ID) if body else None
    result = next((t for k, t in around_bash or [] if k == f"tool_result:{BASH_ID}"), "")
    text = "\n".join(t for _, t in around_bash or [])
    c.check(f"failing-command context: {LINKER} reached the model after the bash call",
            around_bash is not None and LINKER in text and MARK["error"] in text,
            snippet(text, LINKER) if around_bash else "no request holds the bash result")
    c.info("bash tool_result", snippet(result, "cannot find -lssl", 60, 600))

    # 5. MCP: helix's tools offered; the search ran helix's real search.
    names = h.tool_list(first)
    helix_names = [n for n in names if n and n.startswith("helix")]
    missing = [t for t in HELIX_TOOLS if f"helix-{t}" not in names]
    dup = sorted({n for n in helix_names if helix_names.count(n) > 1})
    c.check("helix's MCP tools offered once each (helix-search, helix-read, …)",
            not missing and not dup,
            f"offered {helix_names}" + (f"; missing {missing}" if missing else "")
            + (f"; twice {dup}" if dup else ""))
    body = first_with(main, holds_result(SEARCH_ID))
    around = after_tool(body, SEARCH_ID) if body else None
    result = next((t for k, t in around or [] if k == f"tool_result:{SEARCH_ID}"), "")
    c.check("helix-search returned helix's real result naming a kb entry",
            bool(re.search(rf"\b{KB}:[\w./-]+\.md", result)) and POOL in result,
            result[:300] if around else "no request holds the search result")
    ends = [e for e in hook_ends(ws) if e.get("hookType") == "permissionRequest"]
    c.check("approve-mcp answered the helix/search permission request with "
            "{\"behavior\": \"allow\"}",
            any((e.get("output") or {}).get("behavior") == "allow" for e in ends),
            json.dumps([e.get("output") for e in ends]))

    # 6. stop: agentStop's block reason as a new user message, once.
    last_texts = [(i, m.get("role"), t) for i, m in enumerate(last.get("messages") or [])
                  for k, t in msg_texts(m) if k == "text"]
    hits = [(i, role, t) for i, role, t in last_texts if MARK["stop"] in t]
    ok = len(hits) == 1 and hits[0][1] == "user"
    prev = (last.get("messages") or [])[hits[0][0] - 1] if ok and hits[0][0] > 0 else {}
    ok = ok and prev.get("role") == "assistant"
    total = sum(json.dumps(b).count(MARK["stop"]) for b in main[-1:])
    c.check("stop: agentStop's block reason reached the model as a new user message, once",
            ok and total == 1,
            f"{len(hits)} message(s) with it in the last request"
            + (": " + snippet(hits[0][2], MARK["stop"], 40, 120) if hits else ""))
    stops = [e for e in hook_ends(ws) if e.get("hookType") == "agentStop"]
    blocked = [e for e in stops if (e.get("output") or {}).get("decision") == "block"]
    c.check("stop: agentStop blocked once and let the re-entered stop finish",
            len(blocked) == 1 and len(stops) == 2 and stops[0] is blocked[0],
            json.dumps([(e.get("output") or {}).get("decision") for e in stops]))

    # 7. helix log lists the session's injections.
    sessions = session_id(ws)
    p = ws.helix_cmd("log", "--agent", "copilot", "--json", check=False)
    try:
        inj = json.loads(p.stdout).get("injections", [])
    except ValueError:
        inj = []
    mine = [e for e in inj if sessions and e.get("session") in sessions]
    hooks = sorted({e.get("hook") for e in mine})
    want = ["ambient", "error", "prompt"]
    c.check("helix log --agent copilot lists this session's injections",
            p.returncode == 0 and len(sessions) == 1 and all(w in hooks for w in want),
            f"session {sessions}; {len(inj)} injection(s), {len(mine)} of it; hooks {hooks}"
            + ("" if inj or p.returncode == 0 else "; " + out_of(p)[:200]))
    p = ws.helix_cmd("log", "--agent", "copilot", check=False)
    c.info("helix log --agent copilot", out_of(p)[:600])

    # 8. No helix context twice in any request (the stop reason is counted above).
    worst = {}
    for b in main:
        text = json.dumps(b)
        for hook, mark in dict(MARK, ambient=AMBIENT_MARK).items():
            if hook != "stop":
                worst[hook] = max(worst.get(hook, 0), text.count(mark))
    dups = {k: n for k, n in worst.items() if n > 1}
    c.check("no helix context reached the model twice in one request", not dups,
            ", ".join(f"{k} ×{n}" for k, n in sorted(dups.items())))
    c.info("helix hook processes (HELIX_LOG)", ", ".join(
        f"{k} ×{n}" for k, n in sorted(count_lines(helix_hook_log(ws)).items())))
    c.info("Copilot loaded", "; ".join(re.findall(r"loaded repo hooks \(hookCount=\d+\)",
                                                  h.copilot_log_text(ws))))

    if opts.get("claude"):
        report_claude(c, ws)

    # 9. Copilot saves ~/.copilot/config.json in its own form (`//` comment lines first) on
    # every run; that is also how a user's "remember this folder" answer lands there.
    cfg = os.path.join(ws.home, ".copilot", "config.json")
    with open(cfg) as f:
        saved = f.read()
    c.info("~/.copilot/config.json as Copilot saved it", saved)
    if opts.get("again"):
        # Copilot itself still trusts the folder with the file as it saved it.
        rc2, err2, _, _ = h.run_copilot(ws, fake.port, trust=False, prompt=AGAIN, tag="-2")
        again = [b for b in ws.requests() if any(AGAIN in t for t in user_texts(b))]
        ok = bool(again) and MARK["session-start"] in json.dumps(again[0])
        c.check("a second copilot -p with config.json as Copilot saved it still runs the repo "
                "hooks (session-start context reached the model)", rc2 == 0 and ok,
                f"exit {rc2}; {len(again)} request(s)" + (f"; {err2.strip()[-200:]}"
                                                          if rc2 else ""))
        p = ws.helix_cmd("hooks", "status", check=False)
        lines = [ln for ln in out_of(p).splitlines() if ln.startswith("copilot:")]
        c.check("hooks status with config.json as Copilot saved it (`//` lines, folder still "
                "in trustedFolders): exit 0, no copilot problem",
                p.returncode == 0 and len(lines) == 1 and "not a trusted folder" not in out_of(p),
                f"exit {p.returncode}: " + " | ".join(lines)[:300])


AGAIN = "HELIX-E2E-AGAIN Say ok."
AMBIENT_MARK = "helix team knowledge for src/db/pool.rs"


def user_texts(body):
    return [t for m in body.get("messages") or [] if m.get("role") == "user"
            for k, t in msg_texts(m) if k == "text"]


def helix_hook_log(ws):
    p = ws.env["HELIX_LOG"]
    return open(p).read().splitlines() if os.path.exists(p) else []


def count_lines(lines):
    out = {}
    for ln in lines:
        out[ln] = out.get(ln, 0) + 1
    return out


def report_claude(c, ws):
    """What Copilot did with Claude Code's .mcp.json and .claude/settings.json next to its own
    files."""
    log = h.copilot_log_text(ws)
    sigs = re.findall(r"mcp discover_and_start_root (\{.*\})", log)
    servers = []
    for sig in sigs:
        try:
            servers = json.loads(json.loads(sig)["signature"])["servers"]
        except (ValueError, KeyError, TypeError):
            pass
    helix_servers = [srv for srv in servers if srv and srv[0] == "helix"]
    entry = json.loads(helix_servers[0][1]) if len(helix_servers) == 1 else None
    c.check("Copilot started one helix MCP server, from .github/mcp.json's entry (same name "
            "in .mcp.json: not started)",
            entry is not None and entry.get("tools") == ["*"] and entry.get("type") == "local",
            f"servers: {json.dumps(servers)[:300]}")
    nested = [ln.split("[hook stdout] ", 1)[1][:160] for ln in log.splitlines()
              if "[hook stdout] " in ln and "hookSpecificOutput" in ln]
    c.info("Claude-form answers of the .claude/settings.json hooks (Copilot ignores the nested "
           "form except for PreToolUse)", " || ".join(nested) or "none")
    text = "".join(json.dumps(b) for b in ws.requests())
    c.check("no Claude Code tool name (mcp__helix__…) reached the model",
            "mcp__helix" not in text, f"{text.count('mcp__helix')} occurrence(s)")
    p = ws.helix_cmd("log", "--json", "-n", "500", check=False)
    try:
        # Records of entries given; session start and stop log their characters too.
        agents = sorted({str(e.get("agent")) for e in json.loads(p.stdout)["injections"]
                         if e.get("entries")})
    except (ValueError, KeyError):
        agents = []
    c.check("only the copilot hooks injected (Claude's .claude/settings.json hooks, which "
            "Copilot also runs, found everything already shown)", agents == ["copilot"],
            f"agents in helix log: {agents}")


def main(argv):
    names = argv or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
        return 2
    helix = os.path.realpath(os.environ["HELIX_BIN"])
    keep = os.environ.get("KEEP") == "1"
    passed = failed = 0
    t0 = time.time()
    for name in names:
        root = tempfile.mkdtemp(prefix=f"helix-copilot-e2e-{name}-")
        c = Checks(name)
        fake = None
        try:
            ws = HelixWorkspace(root, helix)
            opts = SCENARIOS[name](c, ws) or {}
            fake = Fake(ws, steps=STEPS)
            rc, err, _out, secs = h.run_copilot(ws, fake.port, trust=False)
            analyse(c, ws, opts, rc, err, secs, fake)
        except Exception as e:  # a broken set-up fails the scenario, not the run
            c.check("scenario ran", False, f"{type(e).__name__}: {e}")
        finally:
            if fake:
                fake.stop()
        if keep or c.failed:
            print(f"     ({name}: files kept in {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
        passed += c.passed
        failed += c.failed
    print(f"{passed} passed, {failed} failed ({time.time() - t0:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
