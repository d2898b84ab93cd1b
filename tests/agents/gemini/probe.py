#!/usr/bin/env python3
"""Probes the real Gemini CLI (headless, `gemini -p`) against fake_gemini.py: which hook events
fire, what each hook gets on stdin, which hook outputs are taken and where their text reaches
the model, how MCP tools are named and answered, and what the trust gates do.

Run through run.sh, which installs the pinned Gemini CLI and sets GEMINI_BIN. Arguments:
scenario names (default: all; `--list` lists them). Options: --out DIR (default
tests/agents/gemini/out) gets one JSON file per scenario with everything observed;
--fixtures writes the `main` scenario's hook stdin payloads to fixtures/ (temporary paths
replaced by /path/to/code); KEEP=1 keeps each scenario's temporary directory.

Each scenario gets a fresh HOME, XDG dirs, code repository and model stand-in. Prints what
it saw, then one PASS/FAIL line per expectation and "N passed, N failed"; exits 1 if an
expectation failed (an expectation is a fact FINDINGS.md states, so a new client version
that changes it shows here).
"""

import json
import os
import shlex
import shutil
import sys
import traceback

import harness as h

HERE = h.HERE
PROBE = os.path.join(HERE, "probe_hook.py")
MCP = h.MCP_STUB


# ---------------------------------------------------------------- setup helpers

def probe_hooks(ws, modes=None, events=h.EVENTS, timeout=None, sleep=None, name="probe",
                matcher=None):
    """A `hooks` settings object running probe_hook.py for each event, in `modes`
    (event -> mode, default "json")."""
    log = os.path.join(ws.root, "hooks.jsonl")
    hooks = {}
    for ev in events:
        mode = (modes or {}).get(ev, "json")
        cmd = (f"python3 {shlex.quote(PROBE)} --log {shlex.quote(log)} --event {ev} "
               f"--mode {mode}")
        if sleep and ev in sleep:
            cmd += f" --sleep {sleep[ev]}"
        hook = {"type": "command", "command": cmd, "name": f"{name}-{ev}"}
        if timeout:
            hook["timeout"] = timeout
        definition = {"hooks": [hook]}
        if matcher is not None:
            definition["matcher"] = matcher
        hooks[ev] = [definition]
    return hooks


def mcp_servers(ws, trust=True, name="helix"):
    log = os.path.join(ws.root, "mcp.jsonl")
    server = {"command": "python3", "args": [MCP, "--log", log, "--name", name]}
    if trust is not None:
        server["trust"] = trust
    return {name: server}


def standard(ws, trust="file", hooks_scope="project", mcp_scope="project", modes=None,
             mcp_trust=True, **kw):
    ws.base_user_settings(trust=trust)
    ws.allow_shell()
    if hooks_scope:
        ws.update_settings(hooks_scope, {"hooks": probe_hooks(ws, modes=modes, **kw)})
    if mcp_scope:
        ws.update_settings(mcp_scope, {"mcpServers": mcp_servers(ws, trust=mcp_trust)})


def session(ws, steps=None, args=(), prompt=h.PROMPT, final_text="All done."):
    fake = h.Fake(ws, steps if steps is not None else h.default_steps(ws.repo),
                  final_text=final_text)
    try:
        res = h.run_gemini(ws, fake, prompt=prompt, args=args)
    finally:
        fake.stop()
    return res, fake.requests()


# ---------------------------------------------------------------- observation

def observe(ws, res, reqs):
    """Everything a scenario saw, as one JSON-able dict."""
    hooks = h.read_jsonl(os.path.join(ws.root, "hooks.jsonl"))
    mcp = h.read_jsonl(os.path.join(ws.root, "mcp.jsonl"))
    mains = h.main_requests(reqs)
    fired = []
    for e in hooks:
        s = e.get("stdin") or {}
        fired.append(e["event"] + (f"({s.get('tool_name')})" if s.get("tool_name") else ""))
    markers = {}
    for e in hooks:
        m = e.get("marker") or f"PROBE-{e['event']}"
        if m not in markers:
            hits = h.find(reqs, m + " ")  # the space ends the marker: #1 is not #10
            markers[m] = {"main": [x for x in hits if x["kind"] == "main"][:1],
                          "main_count": sum(1 for x in hits if x["kind"] == "main"),
                          "side": [x for x in hits if x["kind"] != "main"][:1],
                          "side_count": sum(1 for x in hits if x["kind"] != "main")}
    first = (mains[0].get("body") or {}) if mains else {}
    last = (mains[-1].get("body") or {}) if mains else {}
    return {
        "rc": res.rc, "seconds": round(res.seconds, 1),
        "stdout": res.stdout[-2000:], "stderr": res.stderr[-4000:],
        "requests": [{"path": r["path"], "kind": r.get("kind"), "bytes": r.get("bytes")}
                     for r in reqs],
        "main_requests": len(mains),
        "declared": h.declared_names(first),
        "fired": fired,
        "hooks": hooks,
        "markers": markers,
        "first_main_contents": ws.scrub(first.get("contents") or []),
        "last_main_contents": ws.scrub(last.get("contents") or []),
        "mcp": mcp,
        "mcp_calls": [m["received"] for m in mcp if "received" in m
                      and m["received"].get("method") == "tools/call"],
        "mcp_started": sum(1 for m in mcp if m.get("started")),
        "mcp_declaration": h.declaration(first, "mcp_helix_search"),
        "shell_declaration": h.declaration(first, "run_shell_command"),
        "read_declaration": h.declaration(first, "read_file"),
    }


def print_observation(name, o):
    print(f"\n=== {name}: gemini exited {o['rc']} after {o['seconds']}s, "
          f"{len(o['requests'])} model requests ({o['main_requests']} main)")
    if o["rc"] != 0:
        print("  stderr: " + o["stderr"][-1500:].replace("\n", "\n  stderr: "))
    print("  stdout: " + o["stdout"].strip()[-300:].replace("\n", " | "))
    print("  paths: " + ", ".join(sorted({f"{r['path']} [{r['kind']}]"
                                          for r in o["requests"]})))
    print("  declared: " + ", ".join(o["declared"]))
    print("  fired: " + " ".join(o["fired"]))
    for m, where in o["markers"].items():
        mains = where["main"]
        side = where["side"]
        loc = (f"main x{where['main_count']} first in request {mains[0]['request']} "
               f"{mains[0]['where']} ({mains[0]['role']}, {mains[0]['part']})"
               if mains else "not in the main conversation")
        if side:
            loc += f"; side x{where['side_count']} ({side[0]['where']})"
        print(f"  {m}: {loc}")
    if o["mcp_calls"]:
        print(f"  MCP tools/call: {json.dumps(o['mcp_calls'])[:300]}")


# ---------------------------------------------------------------- checks

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, label, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"PASS {label}")
        else:
            self.failed += 1
            print(f"FAIL {label}" + (f": {detail}" if detail else ""))
        return ok


def marker_in_main(o, marker):
    return o["markers"].get(marker, {}).get("main_count", 0) > 0


def hook_entries(o, event, tool=None):
    return [e for e in o["hooks"] if e["event"] == event
            and (tool is None or (e.get("stdin") or {}).get("tool_name") == tool)]


# ---------------------------------------------------------------- scenarios

FIXTURE_NAMES = [
    ("session-start.json", "SessionStart", None, None),
    ("before-agent.json", "BeforeAgent", None, None),
    ("before-model.json", "BeforeModel", None, None),
    ("before-tool-selection.json", "BeforeToolSelection", None, None),
    ("after-model.json", "AfterModel", None, None),
    ("before-tool-read.json", "BeforeTool", "read_file", "pool"),
    ("after-tool-read.json", "AfterTool", "read_file", "pool"),
    ("after-tool-read-error.json", "AfterTool", "read_file", "missing"),
    ("before-tool-shell.json", "BeforeTool", "run_shell_command", "fail"),
    ("after-tool-fail.json", "AfterTool", "run_shell_command", "fail"),
    ("after-tool-ok.json", "AfterTool", "run_shell_command", "ok"),
    ("before-tool-mcp.json", "BeforeTool", "mcp_helix_search", None),
    ("after-tool-mcp.json", "AfterTool", "mcp_helix_search", None),
    ("after-agent.json", "AfterAgent", None, None),
    ("pre-compress.json", "PreCompress", None, None),
    ("session-end.json", "SessionEnd", None, None),
    ("notification.json", "Notification", None, None),
]


def write_fixtures(ws, o, outdir):
    os.makedirs(outdir, exist_ok=True)
    written = []
    for fname, event, tool, which in FIXTURE_NAMES:
        entries = hook_entries(o, event, tool)
        if which in ("pool", "missing"):
            entries = [e for e in entries if which in json.dumps(e["stdin"].get("tool_input"))]
        elif which == "fail":
            entries = [e for e in entries if "exit 1" in json.dumps(e["stdin"].get("tool_input"))]
        elif which == "ok":
            entries = [e for e in entries
                       if "SHELL-OK" in json.dumps(e["stdin"].get("tool_input"))]
        if not entries:
            continue
        payload = ws.scrub(entries[0]["stdin"])
        h.write_json(os.path.join(outdir, fname), payload)
        written.append(fname)
    print(f"  fixtures written: {', '.join(written)}")


def scenario_main(c, ws, opts):
    """Project-scope probe hooks for every event (JSON answer with hookSpecificOutput),
    project-scope MCP server with trust, folder trusted in trustedFolders.json."""
    standard(ws)
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("main", o)
    if opts.get("fixtures"):
        write_fixtures(ws, o, os.path.join(HERE, "fixtures"))
    c.check("main: gemini -p exits 0", o["rc"] == 0, str(o["rc"]))
    for ev in ("SessionStart", "BeforeAgent", "BeforeModel", "BeforeToolSelection",
               "AfterModel", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"):
        c.check(f"main: {ev} fires in -p mode", bool(hook_entries(o, ev)))
    c.check("main: MCP tool is offered as mcp_helix_search",
            "mcp_helix_search" in o["declared"], ", ".join(o["declared"]))
    c.check("main: the MCP server got the call", len(o["mcp_calls"]) == 1)
    for m in ("PROBE-SessionStart", "PROBE-BeforeAgent", "PROBE-AfterTool:read_file#1",
              "PROBE-AfterTool:run_shell_command#1", "PROBE-AfterTool:run_shell_command#2",
              "PROBE-AfterTool:mcp_helix_search#1"):
        c.check(f"main: {m} reaches the model", marker_in_main(o, m))
    for m in ("PROBE-BeforeModel", "PROBE-AfterModel", "PROBE-BeforeToolSelection",
              "PROBE-BeforeTool:read_file#1", "PROBE-AfterAgent", "PROBE-PreCompress",
              "PROBE-AfterTool:read_file#2"):
        c.check(f"main: {m} does not reach the model", not marker_in_main(o, m))
    ba = hook_entries(o, "BeforeAgent")
    prompt = (ba[0]["stdin"].get("prompt") if ba else "") or ""
    c.check("main: BeforeAgent's prompt starts with the session-start <hook_context>",
            prompt.startswith("<hook_context>PROBE-SessionStart") and h.PROMPT in prompt,
            prompt[:200])
    return o


def variant(mode, events=("SessionStart", "BeforeAgent", "AfterTool"), reaches=None,
            check=None):
    """`reaches`: whether the markers of `events` (AfterTool: the first successful read)
    reach the model; `check(c, o)` for anything else."""
    def run(c, ws, opts):
        modes = {ev: mode for ev in h.EVENTS if ev in events}
        standard(ws, modes=modes, events=[ev for ev in h.EVENTS if ev in events])
        res, reqs = session(ws)
        o = observe(ws, res, reqs)
        print_observation(f"mode {mode}", o)
        if reaches is not None:
            for ev in events:
                m = "PROBE-AfterTool:read_file#1" if ev == "AfterTool" else f"PROBE-{ev}"
                c.check(f"mode {mode}: {m} {'reaches' if reaches else 'does not reach'} "
                        "the model", marker_in_main(o, m) == reaches)
        if check:
            check(c, o)
        return o
    run.__doc__ = (f"{', '.join(events)} probe(s) answer in mode '{mode}' (see "
                   "probe_hook.py); where does the marker go, what happens?")
    return run


def scenario_missing_command(c, ws, opts):
    """The hook command is not on PATH (bash: exit 127, "command not found" on stderr) for
    SessionStart, BeforeAgent and AfterTool: is the turn blocked?"""
    ws.base_user_settings(trust="file")
    ws.allow_shell()
    hooks = {ev: [{"hooks": [{"type": "command", "name": f"missing-{ev}",
                              "command": f"helix-not-installed hook {ev}"}]}]
             for ev in ("SessionStart", "BeforeAgent", "AfterTool")}
    ws.update_settings("project", {"hooks": hooks, "mcpServers": mcp_servers(ws)})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("missing-command", o)
    print("  stderr: " + o["stderr"][-1200:].replace("\n", "\n  stderr: "))
    c.check("missing-command: a hook command that is not found blocks the prompt (exit 127 "
            "+ stderr = deny)", o["main_requests"] == 0, f"{o['main_requests']} requests")
    return o


def scenario_guarded(c, ws, opts):
    """The same failures with the command guarded by `|| true` (exit status 0 whatever
    happens): a missing command for SessionStart/BeforeAgent, a crash (exit 101) for
    AfterTool. Does the turn go on, does the tool result survive?"""
    ws.base_user_settings(trust="file")
    ws.allow_shell()
    log = os.path.join(ws.root, "hooks.jsonl")
    hooks = {ev: [{"hooks": [{"type": "command", "name": f"guarded-{ev}",
                              "command": f"helix-not-installed hook {ev} || true"}]}]
             for ev in ("SessionStart", "BeforeAgent")}
    hooks["AfterTool"] = [{"hooks": [{
        "type": "command", "name": "guarded-AfterTool",
        "command": (f"python3 {shlex.quote(PROBE)} --log {shlex.quote(log)} --event AfterTool"
                    " --mode crash || true")}]}]
    ws.update_settings("project", {"hooks": hooks, "mcpServers": mcp_servers(ws)})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("guarded", o)
    last = json.dumps(o["last_main_contents"])
    c.check("guarded: `|| true` keeps a missing hook command from blocking the prompt",
            o["main_requests"] > 0)
    c.check("guarded: `|| true` keeps a crashing AfterTool hook from replacing the result",
            "acquire_pooled_conn" in last and "panicked" not in last)
    return o


def scenario_timeout(c, ws, opts):
    """Hooks with "timeout": 1000 whose command sleeps 3 s: is the hook killed, does the run
    go on, does any context arrive?"""
    evs = ["SessionStart", "BeforeAgent", "AfterTool"]
    standard(ws, events=evs, timeout=1000, sleep={ev: 3 for ev in evs})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("timeout", o)
    c.check("timeout: a hook slower than its timeout adds nothing",
            not marker_in_main(o, "PROBE-SessionStart")
            and not marker_in_main(o, "PROBE-BeforeAgent"))
    return o


def scenario_user_scope(c, ws, opts):
    """Hooks and MCP server in ~/.gemini/settings.json only (folder trusted)."""
    standard(ws, hooks_scope="user", mcp_scope="user",
             events=["SessionStart", "BeforeAgent", "AfterTool"])
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("user-scope", o)
    c.check("user-scope: user hooks add context", marker_in_main(o, "PROBE-BeforeAgent"))
    c.check("user-scope: user MCP server is offered", "mcp_helix_search" in o["declared"])
    return o


def scenario_both_scopes(c, ws, opts):
    """The same probe hook (same name and command) in user and project settings, plus a
    second project hook with another name: deduplication and context merging."""
    standard(ws, hooks_scope="user", mcp_scope="project",
             events=["SessionStart", "BeforeAgent", "AfterTool"])
    hooks = probe_hooks(ws, events=["SessionStart", "BeforeAgent", "AfterTool"])
    extra = probe_hooks(ws, events=["SessionStart", "BeforeAgent", "AfterTool"],
                        modes={"SessionStart": "json-sys", "BeforeAgent": "json-sys",
                               "AfterTool": "json-sys"}, name="probe2")
    for ev in hooks:
        hooks[ev] = hooks[ev] + extra[ev]
    ws.update_settings("project", {"hooks": hooks})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("both-scopes", o)
    o["settings_user"] = h.read_json(ws.settings_path("user"))
    c.check("both-scopes: a hook with the same name and command in user and project settings "
            "runs once", len(hook_entries(o, "SessionStart")) == 2)
    first = json.dumps(o["first_main_contents"])
    c.check("both-scopes: two hooks' contexts share one <hook_context>, joined by a newline",
            "&lt;/ctx&gt;\\nPROBE-SessionStart" in first)
    return o


def project_hooks_ran(o):
    return any(e["mode"] == "json" for e in o["hooks"])


def user_hooks_ran(o):
    return any(e["mode"] == "json-sys" for e in o["hooks"])


def untrusted(trust, check=None):
    def run(c, ws, opts):
        standard(ws, trust=trust, events=["SessionStart", "BeforeAgent", "AfterTool"],
                 hooks_scope="project", mcp_scope="project")
        # user-level hooks too, to see whether an untrusted folder also drops them
        ws.update_settings("user", {"hooks": probe_hooks(
            ws, events=["SessionStart", "BeforeAgent"], name="userprobe",
            modes={"SessionStart": "json-sys", "BeforeAgent": "json-sys"})})
        res, reqs = session(ws)
        o = observe(ws, res, reqs)
        print_observation(f"trust={trust}", o)
        if check:
            check(c, o)
        return o
    run.__doc__ = (f"Folder trust set up as '{trust}' (see Workspace.base_user_settings), "
                   "project hooks + MCP and user hooks.")
    return run


def scenario_untrusted_mcp(c, ws, opts):
    """A project MCP server without "trust": is its tool offered in -p mode, and what
    happens when the model calls it anyway?"""
    standard(ws, events=["AfterTool", "BeforeTool", "Notification"], mcp_trust=None)
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("untrusted-mcp", o)
    c.check("untrusted-mcp: the tool is not offered without trust",
            "mcp_helix_search" not in o["declared"], ", ".join(o["declared"]))
    return o


def scenario_no_policy(c, ws, opts):
    """No policy allowing run_shell_command: is it offered in -p mode at all?"""
    ws.base_user_settings(trust="file")
    ws.update_settings("project", {"hooks": probe_hooks(ws, events=["AfterTool",
                                                                    "Notification"])})
    res, reqs = session(ws, steps=h.default_steps(ws.repo)[:2])
    o = observe(ws, res, reqs)
    print_observation("no-policy", o)
    c.check("no-policy: run_shell_command is not offered in -p mode without a policy",
            "run_shell_command" not in o["declared"])
    return o


def scenario_yolo(c, ws, opts):
    """--approval-mode yolo, no policy file, MCP server without trust."""
    ws.base_user_settings(trust="file")
    ws.update_settings("project", {"hooks": probe_hooks(ws, events=["AfterTool",
                                                                    "Notification"]),
                                   "mcpServers": mcp_servers(ws, trust=None)})
    res, reqs = session(ws, args=["--approval-mode", "yolo"])
    o = observe(ws, res, reqs)
    print_observation("yolo", o)
    c.check("yolo: shell and the untrusted MCP tool are offered with --approval-mode yolo",
            "run_shell_command" in o["declared"] and "mcp_helix_search" in o["declared"])
    return o


def scenario_hooks_disabled(c, ws, opts):
    """hooksConfig.enabled = false in user settings: do hooks still run?"""
    standard(ws, events=["SessionStart", "BeforeAgent", "AfterTool"])
    ws.update_settings("user", {"hooksConfig": {"enabled": False}})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("hooks-disabled", o)
    c.check("hooks-disabled: no hook runs with hooksConfig.enabled=false", not o["hooks"],
            " ".join(o["fired"]))
    return o


def scenario_big(c, ws, opts):
    """SessionStart, BeforeAgent and AfterTool answer with 50,000+ characters of context:
    truncated, moved to a file, or passed whole?"""
    evs = ["SessionStart", "BeforeAgent", "AfterTool"]
    standard(ws, events=evs, modes={ev: "big" for ev in evs})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("big", o)
    first = json.dumps(o["first_main_contents"])
    last = json.dumps(o["last_main_contents"])
    o["big_end_count_last"] = last.count("BIG-END")
    print(f"  BIG-END in the first request: {first.count('BIG-END')}, in the last: "
          f"{last.count('BIG-END')}; last request {o['requests'][-1]['bytes']} bytes")
    c.check("big: 50,000-character contexts reach the model whole",
            first.count("BIG-END") == 2 and last.count("BIG-END") >= 5)
    return o


def scenario_subdir(c, ws, opts):
    """gemini started in repo/src while the project settings are in repo/.gemini: are the
    project hooks and MCP server found (is the project the cwd or the git root)?"""
    standard(ws, events=["SessionStart", "BeforeAgent", "AfterTool"])
    ws.update_settings("user", {"hooks": probe_hooks(
        ws, events=["SessionStart"], name="userprobe", modes={"SessionStart": "json-sys"})})
    fake = h.Fake(ws, h.default_steps(ws.repo))
    try:
        res = h.run_gemini(ws, fake, cwd=os.path.join(ws.repo, "src"))
    finally:
        fake.stop()
    o = observe(ws, res, fake.requests())
    print_observation("subdir", o)
    c.check("subdir: project hooks in the git root's .gemini do not run from a subdirectory",
            not any(e["argv"][1].endswith("hooks.jsonl") and e["mode"] == "json"
                    for e in o["hooks"]), " ".join(o["fired"]))
    return o


def scenario_github_env(c, ws, opts):
    """GITHUB_SHA set (as in GitHub Actions): the strict environment sanitization. Which of
    HELIX_LOG, HELIX_API_TOKEN, HELIX_SERVER_URL reach hooks and the MCP server?"""
    standard(ws, events=["SessionStart", "AfterTool"])
    ws.env.update({"GITHUB_SHA": "0" * 40, "HELIX_LOG": "/tmp/x", "HELIX_API_TOKEN": "t",
                   "HELIX_SERVER_URL": "http://127.0.0.1:9"})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    print_observation("github-env", o)
    hook_env = o["hooks"][0]["env_names"] if o["hooks"] else []
    mcp_env = next((m["env_names"] for m in o["mcp"] if m.get("started")), [])
    print(f"  hook env: {' '.join(hook_env)}\n  mcp env: {' '.join(mcp_env)}")
    o["hook_env"], o["mcp_env"] = hook_env, mcp_env
    c.check("github-env: with GITHUB_SHA set, hooks and the MCP server lose HELIX_* and XDG_*",
            not any(n.startswith(("HELIX_", "XDG_")) for n in hook_env + mcp_env)
            and "HOME" in hook_env)
    return o


def scenario_plain_env(c, ws, opts):
    """No GITHUB_SHA: which HELIX_* variables reach hooks and the MCP server?"""
    standard(ws, events=["SessionStart"])
    ws.env.update({"HELIX_LOG": "/tmp/x", "HELIX_API_TOKEN": "t",
                   "HELIX_SERVER_URL": "http://127.0.0.1:9"})
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    hook_env = o["hooks"][0]["env_names"] if o["hooks"] else []
    mcp_env = next((m["env_names"] for m in o["mcp"] if m.get("started")), [])
    print(f"\n=== plain-env\n  hook env: {' '.join(hook_env)}\n  mcp env: {' '.join(mcp_env)}")
    o["hook_env"], o["mcp_env"] = hook_env, mcp_env
    c.check("plain-env: the MCP server does not get HELIX_API_TOKEN (name holds TOKEN)",
            "HELIX_API_TOKEN" not in mcp_env and "HELIX_LOG" in mcp_env, " ".join(mcp_env))
    return o


def scenario_interactive(c, ws, opts):
    """The interactive UI in tmux, no shell policy (every shell call asks, which fires
    Notification; the harness answers "Allow once"), two prompts, then /quit. Where does
    the session-start context go, what prompt does BeforeAgent get, does the first turn's
    BeforeAgent context stay in the history of the second, how often does SessionEnd
    fire?"""
    if not shutil.which("tmux"):
        print("\n=== interactive: SKIP (no tmux)")
        return {"skipped": "no tmux"}
    ws.base_user_settings(trust="file")
    ws.update_settings("project", {"hooks": probe_hooks(ws), "mcpServers": mcp_servers(ws)})
    fake = h.Fake(ws, h.default_steps(ws.repo))
    try:
        res = h.run_gemini_tmux(ws, fake, prompts=[
            h.PROMPT.rstrip("?"), f"{h.MAIN} And the second question, about the pool size"])
    finally:
        fake.stop()
    o = observe(ws, res, fake.requests())
    o["second_turn_first_contents"] = ws.scrub(next(
        ((r["body"] or {}).get("contents") for r in fake.requests() if r.get("kind") == "main"
         and "second question" in json.dumps((r["body"] or {}).get("contents", [])[-1:])),
        []))
    o["stdout"] = ""  # a screen, not output
    print_observation("interactive", o)
    if opts.get("fixtures"):
        outdir = os.path.join(HERE, "fixtures")
        for fname, event in (("before-agent-interactive.json", "BeforeAgent"),
                             ("notification.json", "Notification")):
            entries = hook_entries(o, event)
            if entries:
                h.write_json(os.path.join(outdir, fname), ws.scrub(entries[0]["stdin"]))
    ba = hook_entries(o, "BeforeAgent")
    prompt = (ba[0]["stdin"].get("prompt") if ba else "") or ""
    second = o["second_turn_first_contents"]
    print(f"  second turn's first request: {len(second)} contents; BeforeAgent markers in it: "
          f"{json.dumps(second).count('PROBE-BeforeAgent')}, SessionStart markers: "
          f"{json.dumps(second).count('PROBE-SessionStart')}")
    for i, cont in enumerate(second):
        for j, part in enumerate(cont.get("parts") or []):
            kind, text = h.part_texts(part)
            if "PROBE-BeforeAgent" in text or "second question" in text:
                print(f"    contents[{i}].parts[{j}] ({cont.get('role')}, {kind}): {text[:120]!r}")
    c.check("interactive: the session ends by itself after /quit", o["rc"] == 0, str(o["rc"]))
    c.check("interactive: BeforeAgent's prompt is the typed prompt alone",
            prompt == h.PROMPT.rstrip("?"), prompt[:200])
    c.check("interactive: Notification (ToolPermission) fires for a shell confirmation",
            any((e["stdin"] or {}).get("notification_type") == "ToolPermission"
                for e in hook_entries(o, "Notification")))
    c.check("interactive: the session-start context is a part of its own in the first "
            "user content", any(x["where"] == "contents[0].parts[1]" for x in
                                o["markers"].get("PROBE-SessionStart", {}).get("main", [])))
    return o


def make_extension(ws, with_mcp=True, hook_events=("SessionStart", "BeforeAgent", "AfterTool")):
    """A local extension directory `helix-ext` with hooks/hooks.json (probe hooks with
    ${extensionPath}) and an MCP server in gemini-extension.json."""
    src = os.path.join(ws.root, "ext-src", "helix")
    os.makedirs(os.path.join(src, "hooks"))
    log = os.path.join(ws.root, "hooks.jsonl")
    hooks = {}
    for ev in hook_events:
        hooks[ev] = [{"hooks": [{
            "type": "command", "name": f"ext-{ev}",
            "command": (f"python3 ${{extensionPath}}${{/}}probe_hook.py --log {shlex.quote(log)}"
                        f" --event {ev} --mode json")}]}]
    with open(PROBE) as f, open(os.path.join(src, "probe_hook.py"), "w") as g:
        g.write(f.read())
    h.write_json(os.path.join(src, "hooks", "hooks.json"), {"hooks": hooks})
    manifest = {"name": "helix", "version": "0.0.1",
                "description": "helix probe extension"}
    if with_mcp:
        with open(MCP) as f, open(os.path.join(src, "mcp_stub.py"), "w") as g:
            g.write(f.read())
        manifest["mcpServers"] = {"helix": {
            "command": "python3",
            "args": ["${extensionPath}${/}mcp_stub.py", "--log",
                     os.path.join(ws.root, "mcp.jsonl")]}}
    h.write_json(os.path.join(src, "gemini-extension.json"), manifest)
    # `extensions install` asks "Do you trust the files in this folder?" on stdin, even with
    # --consent, unless the source folder is trusted already.
    tf = os.path.join(ws.gemini_dir, "trustedFolders.json")
    h.write_json(tf, dict(h.read_json(tf, {}), **{src: "TRUST_FOLDER"}))
    return src


def scenario_extension(c, ws, opts):
    """An extension installed with `gemini extensions install <dir> --consent` carrying
    hooks/hooks.json and an MCP server: do its hooks run and reach the model, is its MCP
    tool offered (extensions cannot set trust)?"""
    ws.base_user_settings(trust="file")
    ws.allow_shell()
    src = make_extension(ws)
    inst = h.gemini_cli(ws, ["extensions", "install", src, "--consent"])
    print(f"  extensions install: exit {inst.returncode}\n  "
          + (inst.stdout + inst.stderr).strip().replace("\n", "\n  ")[-1500:])
    lst = h.gemini_cli(ws, ["extensions", "list"])
    print("  extensions list: " + (lst.stdout + lst.stderr).strip().replace("\n", "\n  ")[-800:])
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    o["install"] = {"rc": inst.returncode, "out": inst.stdout[-2000:],
                    "err": inst.stderr[-2000:]}
    o["ext_dir"] = sorted(os.listdir(os.path.join(ws.gemini_dir, "extensions")))
    print_observation("extension", o)
    c.check("extension: install exits 0", inst.returncode == 0)
    c.check("extension: its hooks' contexts reach the model",
            marker_in_main(o, "PROBE-SessionStart") and marker_in_main(o, "PROBE-BeforeAgent")
            and marker_in_main(o, "PROBE-AfterTool:read_file#1"))
    c.check("extension: its MCP tool is not offered in -p mode (no trust for extensions)",
            "mcp_helix_search" not in o["declared"])
    return o


def scenario_extension_policy(c, ws, opts):
    """As `extension`, plus a user policy allowing the extension server's tools
    (mcpName = "helix"), since extension servers cannot carry "trust"."""
    ws.base_user_settings(trust="file")
    ws.allow_shell()
    with open(os.path.join(ws.gemini_dir, "policies", "e2e.toml"), "a") as f:
        # toolName is required: a rule with mcpName alone fails schema validation at 0.61.0
        # ("rule.1.toolName: Invalid input"), and the whole file is then ignored.
        f.write('\n[[rule]]\nmcpName = "helix"\ntoolName = "search"\ndecision = "allow"\n'
                'priority = 100\n')
    src = make_extension(ws)
    inst = h.gemini_cli(ws, ["extensions", "install", src, "--consent"])
    res, reqs = session(ws)
    o = observe(ws, res, reqs)
    o["install"] = {"rc": inst.returncode, "out": inst.stdout[-2000:],
                    "err": inst.stderr[-2000:]}
    print_observation("extension-policy", o)
    c.check("extension-policy: a user policy rule (mcpName + toolName) offers its MCP tool",
            "mcp_helix_search" in o["declared"] and len(o["mcp_calls"]) == 1)
    return o


def scenario_hooks_cli(c, ws, opts):
    """What `gemini hooks` and `gemini mcp list` say about the probe installation."""
    standard(ws, events=["SessionStart", "BeforeAgent"])
    out = {}
    for args in (["hooks", "--help"], ["hooks", "list"], ["mcp", "list"]):
        p = h.gemini_cli(ws, args)
        out[" ".join(args)] = {"rc": p.returncode, "out": (p.stdout + p.stderr)[-3000:]}
        print(f"  gemini {' '.join(args)}: exit {p.returncode}\n    "
              + (p.stdout + p.stderr).strip().replace("\n", "\n    ")[-1500:])
    return {"cli": out}


SCENARIOS = {
    "main": scenario_main,
    "mode-text": variant("text", reaches=False),
    "mode-toplevel": variant("toplevel", reaches=False),
    "mode-snake": variant("snake", reaches=False),
    "mode-noname": variant("noname", reaches=True),
    "mode-wrongname": variant("wrongname", reaches=True),
    "mode-junk": variant("junk", reaches=False),
    "mode-exit1": variant("exit1", reaches=True),
    "mode-stderr": variant("stderr", reaches=False),
    "mode-stderr1": variant("stderr1", reaches=False),
    "mode-double": variant("double", reaches=True),
    "mode-json-sys": variant("json-sys", reaches=True, check=lambda c, o: c.check(
        "mode json-sys: the SessionStart systemMessage goes to stderr in -p mode",
        "SYS-PROBE-SessionStart" in o["stderr"] and "SYS-PROBE" not in json.dumps(
            o["last_main_contents"]))),
    "mode-exit2-aftertool": variant("exit2", events=("AfterTool",), check=lambda c, o: c.check(
        "mode exit2 (AfterTool): stderr replaces the tool result as its error",
        any(p.get("functionResponse", {}).get("response") == {
            "error": "PROBE-AfterTool:read_file#1 <ctx a=\"1\"> & </ctx>"}
            for cont in o["last_main_contents"] for p in cont.get("parts") or []))),
    "mode-exit2-sessionstart": variant("exit2", events=("SessionStart",), check=lambda c, o:
                                       c.check("mode exit2 (SessionStart): the run goes on",
                                               o["main_requests"] > 0)),
    "mode-exit2-beforeagent": variant("exit2", events=("BeforeAgent",), check=lambda c, o:
                                      c.check("mode exit2 (BeforeAgent): the prompt is "
                                              "blocked, no model request, exit status 0",
                                              o["main_requests"] == 0 and o["rc"] == 0)),
    "mode-crash-beforeagent": variant("crash", events=("BeforeAgent",), check=lambda c, o:
                                      c.check("mode crash (BeforeAgent): exit 101 + stderr "
                                              "blocks the prompt", o["main_requests"] == 0)),
    "mode-crash-aftertool": variant("crash", events=("AfterTool",), check=lambda c, o: c.check(
        "mode crash (AfterTool): exit 101 + stderr replaces the tool result",
        "acquire_pooled_conn" not in json.dumps(o["last_main_contents"])
        and "panicked" in json.dumps(o["last_main_contents"]))),
    "mode-crash-sessionstart": variant("crash", events=("SessionStart",), check=lambda c, o:
                                       c.check("mode crash (SessionStart): the run goes on",
                                               o["main_requests"] > 0)),
    "missing-command": scenario_missing_command,
    "guarded": scenario_guarded,
    "timeout": scenario_timeout,
    "user-scope": scenario_user_scope,
    "both-scopes": scenario_both_scopes,
    "trust-none": untrusted("none", lambda c, o: c.check(
        "trust-none: an untrusted folder makes gemini -p exit 55 before any hook or request",
        o["rc"] == 55 and not o["requests"] and not o["hooks"], str(o["rc"]))),
    "trust-off": untrusted("off", lambda c, o: c.check(
        "trust-off: folderTrust disabled applies project hooks and MCP",
        project_hooks_ran(o) and user_hooks_ran(o) and "mcp_helix_search" in o["declared"])),
    "trust-env": untrusted("env", lambda c, o: c.check(
        "trust-env: GEMINI_CLI_TRUST_WORKSPACE=true applies project hooks and MCP",
        project_hooks_ran(o) and user_hooks_ran(o) and "mcp_helix_search" in o["declared"])),
    "trust-flag": untrusted("flag", lambda c, o: c.check(
        "trust-flag: --skip-trust runs, but without the project's hooks and MCP server",
        o["rc"] == 0 and not project_hooks_ran(o) and user_hooks_ran(o)
        and "mcp_helix_search" not in o["declared"])),
    "untrusted-mcp": scenario_untrusted_mcp,
    "no-policy": scenario_no_policy,
    "yolo": scenario_yolo,
    "hooks-disabled": scenario_hooks_disabled,
    "big": scenario_big,
    "subdir": scenario_subdir,
    "github-env": scenario_github_env,
    "plain-env": scenario_plain_env,
    "interactive": scenario_interactive,
    "extension": scenario_extension,
    "extension-policy": scenario_extension_policy,
    "hooks-cli": scenario_hooks_cli,
}


def main(argv):
    opts = {"fixtures": False}
    out = os.path.join(HERE, "out")
    names = []
    it = iter(argv)
    for a in it:
        if a == "--list":
            for n, f in SCENARIOS.items():
                print(f"{n}: {' '.join((f.__doc__ or '').split())}")
            return 0
        if a == "--fixtures":
            opts["fixtures"] = True
        elif a == "--out":
            out = next(it)
        elif a in SCENARIOS:
            names.append(a)
        else:
            print(f"probe.py: unknown argument {a}", file=sys.stderr)
            return 2
    names = names or list(SCENARIOS)
    os.makedirs(out, exist_ok=True)
    c = Checks()
    keep = os.environ.get("KEEP") == "1"
    for name in names:
        root = h.new_temp_root(f"gemini-{name}-")
        ws = h.Workspace(root)
        try:
            o = SCENARIOS[name](c, ws, opts) or {}
            o["scenario"] = name
            o["root"] = root
            h.write_json(os.path.join(out, f"{name}.json"), o)
        except Exception:  # a broken scenario is a failure, the others still run
            c.check(f"{name}: scenario ran", False, traceback.format_exc())
            keep_this = True
        else:
            keep_this = keep
        if keep_this:
            print(f"  kept {root}")
        h.keep_or_remove(root, keep_this)
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
