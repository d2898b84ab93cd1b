#!/usr/bin/env python3
"""End-to-end check of helix with the real Codex CLI: `helix hooks install --agent codex
--project` in a fresh workspace with a local knowledge base, Codex's two gates passed the way
a user's approvals record them (project trusted, each hook's hash approved; no
--dangerously-bypass-hook-trust), one scripted `codex exec` session against
fake_responses.py, and checks on what reached the model. A second pass of the same session
through `codex app-server` reports how Codex judged each hook answer.

Run through e2e.sh (which installs the pinned Codex and finds helix); this file needs
CODEX_BIN and HELIX_BIN. Prints one PASS/FAIL/INFO line per check, "N passed, N failed" last,
and exits 1 if any check failed. The workspace is kept when a check fails (KEEP=1 always),
and removed otherwise.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time

import harness as H
from harness import FAILING, MAIN
from helix_kb import POOL, PROJECT, Checks, helix_on_path, sync, write_knowledge
from helix_kb import LINKER as SSL

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = "Why do the integration tests hang on the connection pool?"

READ = "sed -n '1,40p' src/db/pool.rs"
SEARCH_ARGS = {"query": "connection pool integration tests"}
# The scripted model: read the file, run the failing build step, ask helix's MCP server;
# then a final text. One call per step, so each call's context can be told apart.
STEPS = [
    [{"type": "shell", "command": READ}],
    [{"type": "shell", "command": FAILING}],
    [{"type": "mcp", "server": "helix", "tool": "search", "arguments": SEARCH_ARGS}],
]
FINAL = "The pool runs out: max_connections is below the test thread count."
CALL_READ, CALL_FAIL, CALL_MCP = "call_e2e_0_0", "call_e2e_1_0", "call_e2e_2_0"

# The fixed openings of helix's texts (docs/hooks.md; tests/claude-code/checks.py MARK).
SESSION_START = "helix team knowledge:"
AMBIENT = "helix team knowledge for src/db/pool.rs"


def short(text, n=200):
    return " ".join(str(text).split())[:n]


# ---------------------------------------------------------------- the workspace

def hooks_status(ws, helix):
    p = H.run([helix, "hooks", "status"], ws.env, ws.repo, check=False)
    out = p.stdout + p.stderr
    problems = [ln.strip() for ln in out.splitlines()
                if ln.startswith("codex:") and re.search(r"will not|not trusted|not approved",
                                                         ln)]
    return p.returncode, out, problems


def helix_mcp_tools(ws, helix):
    """The tools `helix mcp` lists (initialize, tools/list over stdio), in the repository."""
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "helix-e2e", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    proc, send = H.stdio_peer([helix, "mcp"], ws.repo, ws.env, subprocess.DEVNULL)
    try:
        for m in msgs:
            send(m)
        deadline = time.time() + 30
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("id") == 2:
                return [t["name"] for t in (msg.get("result") or {}).get("tools") or []]
    finally:
        H.end_stdio(proc)
    return []


# ---------------------------------------------------------------- reading the requests

def developer_text(item):
    if item.get("type") == "message" and item.get("role") == "developer":
        return H.item_text(item)
    return None


def call_window(run, call_id):
    """The input items between a tool call and its output, in the first request that holds
    the output: where Codex puts the Pre/PostToolUse contexts of that call."""
    for r in run.model_requests:
        items = r["body"].get("input") or []
        idx = {it.get("call_id"): i for i, it in enumerate(items)
               if it.get("type") == "function_call"}
        out = next((i for i, it in enumerate(items)
                    if it.get("type") == "function_call_output"
                    and it.get("call_id") == call_id), None)
        if out is not None and call_id in idx:
            return items[idx[call_id] + 1:out], items[out]
    return None, None


def contexts_after_prompt(run):
    """Developer messages right after the prompt's user message in the first main request
    (where Codex puts the UserPromptSubmit context)."""
    reqs = run.main_requests()
    if not reqs:
        return []
    items = reqs[0]["body"].get("input") or []
    at = next((i for i, it in enumerate(items) if it.get("type") == "message"
               and it.get("role") == "user" and MAIN in H.item_text(it)), None)
    out = []
    for it in items[at + 1:] if at is not None else []:
        t = developer_text(it)
        if t is None:
            break
        out.append(t)
    return out


def contexts_before_prompt(run):
    """Developer messages between <environment_context> and the prompt (SessionStart)."""
    reqs = run.main_requests()
    if not reqs:
        return []
    items = reqs[0]["body"].get("input") or []
    out = []
    for it in items:
        if it.get("type") == "message" and it.get("role") == "user" \
                and MAIN in H.item_text(it):
            break
        t = developer_text(it)
        if t is not None and not t.startswith(H.CODEX_PREAMBLES):
            out.append(t)
    return out


def helix_namespace(body):
    for t in body.get("tools") or []:
        if t.get("type") == "namespace" and t.get("name") == "mcp__helix":
            return t
    return None


def exec_thread_id(run):
    for e in run.events:
        if e.get("type") == "thread.started":
            return e.get("thread_id")
    return None


# ---------------------------------------------------------------- the test

def main():
    helix_real = os.path.realpath(os.environ["HELIX_BIN"])
    t_start = time.time()
    c = Checks()
    ws = H.Workspace(name="codex-e2e")
    helix = helix_on_path(ws.env, ws.root, ws.bindir, helix_real)
    fake = None
    try:
        fake = H.FakeModel(ws, STEPS, final_text=FINAL, tag="exec")
        # The user config: the fake provider only; the project not trusted yet.
        ws.configure(fake.port, trust_project=False)

        # 1. The knowledge base: a local knowledge directory, the repository's .helix.toml
        # pointing at it, helix sync.
        write_knowledge(ws.root, ws.repo)
        p = sync(ws.env, ws.repo)
        c.info("helix sync", short(p.stdout + p.stderr))

        # 2. The real installer, then Codex's gates.
        p = H.install_with(ws, [helix, "hooks", "install", "--agent", "codex", "--project"],
                           check=False)
        hooks_json = os.path.join(ws.repo, ".codex", "hooks.json")
        config_toml = os.path.join(ws.repo, ".codex", "config.toml")
        c.check("helix hooks install --agent codex --project writes .codex/hooks.json and "
                "[mcp_servers.helix]",
                p.returncode == 0 and os.path.exists(hooks_json)
                and os.path.exists(config_toml)
                and "[mcp_servers.helix]" in open(config_toml).read(),
                f"exit {p.returncode}: {short(p.stderr, 300)}")
        if p.returncode != 0 or not os.path.exists(hooks_json):
            return finish(c, ws, t_start, keep=True)
        ws.git_commit("helix for codex")  # what a team commits

        rc, out, problems = hooks_status(ws, helix)
        c.check("before trust, helix hooks status reports both Codex gates (exit 1)",
                rc != 0 and any("not trusted" in ln for ln in problems)
                and any("not approved" in ln for ln in problems),
                f"exit {rc}: " + (problems[0] if problems else short(out, 300)))

        # Gate 1: trust the project (what answering "Trust this folder?" records).
        ws.append_user_config(f"[projects.{H.toml_str(ws.repo)}]\ntrust_level = \"trusted\"")
        rc, out, problems = hooks_status(ws, helix)
        c.check("project trusted, hooks not approved: status still reports the approvals",
                rc != 0 and any("not approved" in ln for ln in problems)
                and not any("not trusted" in ln for ln in problems),
                f"exit {rc}: " + (problems[0] if problems else short(out, 300)))

        # Control: trusted but unapproved, Codex skips every hook without a word (the MCP
        # server loads). Shows that the approvals below are what makes the hooks run.
        ctl_fake = H.FakeModel(ws, STEPS, final_text=FINAL, tag="control")
        try:
            set_provider_port(ws, fake.port, ctl_fake.port)
            ctl = H.codex_exec(ws, ctl_fake, f"{MAIN} {PROMPT}", bypass_hook_trust=False)
        finally:
            ctl_fake.stop()
            set_provider_port(ws, ctl_fake.port, fake.port)
        ctl_ctx = H.injected_contexts(ctl)
        c.check("control: unapproved, no helix context reaches the model (MCP still offered)",
                ctl.rc == 0 and bool(ctl.model_requests) and not ctl_ctx
                and helix_namespace(ctl.model_requests[0]["body"]) is not None,
                f"exit {ctl.rc}, {len(ctl.model_requests)} requests, "
                f"{len(ctl_ctx)} contexts {[short(x['text'], 60) for x in ctl_ctx]}")

        # Gate 2: approve each hook (what /hooks records: [hooks.state."<key>"]).
        entries = H.trust_entries(hooks_json)
        H.write_trust(ws, entries)
        rc, out, problems = hooks_status(ws, helix)
        c.check("after approving, helix hooks status reports no Codex problem",
                not problems,  # exit 1 could come from another agent; Codex's lines say
                f"exit {rc}; " + "; ".join(ln for ln in out.splitlines()
                                           if ln.startswith("codex:"))[:300])
        listed = H.app_server_hooks(ws)
        helix_listed = [h for h in listed if "helix hook" in str(h.get("command"))]
        c.check("codex app-server lists helix's hooks as trusted",
                len(helix_listed) == len(entries) and
                all(h.get("trustStatus") == "trusted" for h in helix_listed),
                ", ".join(f"{h.get('eventName')}={h.get('trustStatus')}"
                          for h in helix_listed) or f"{len(listed)} hooks listed")

        tools_expected = helix_mcp_tools(ws, helix)
        c.info("helix mcp tools/list", ", ".join(tools_expected))

        # 3. The session, through codex exec, without the bypass flag.
        run = H.codex_exec(ws, fake, f"{MAIN} {PROMPT}", bypass_hook_trust=False,
                           timeout=float(os.environ.get("HELIX_E2E_TIMEOUT", "180")))
        fake.stop()
        errs = [e.get("item", {}).get("message") for e in run.events
                if (e.get("item") or {}).get("type") == "error"
                and "Model metadata" not in str(e.get("item", {}).get("message"))]
        c.info("codex exec", f"exit {run.rc} in {run.seconds:.1f} s, "
                             f"{len(run.model_requests)} model requests"
               + (f"; errors: {errs}" if errs else "")
               + (f"; stderr: {short(run.stderr, 200)}"
                  if run.stderr.strip() and "Reading additional" not in run.stderr else ""))
        c.check("codex exec finished the scripted session",
                run.rc == 0 and any((e.get("item") or {}).get("text") == FINAL
                                    for e in run.events),
                f"exit {run.rc}")
        check_session(c, ws, run, tools_expected)
        check_stop(c, run)

        # helix's injection log for that session.
        thread = exec_thread_id(run)
        p = H.run([helix, "log", "--agent", "codex", "--json"], ws.env, ws.repo, check=False)
        try:
            injections = json.loads(p.stdout).get("injections") or []
        except ValueError:
            injections = []
        check_log(c, injections, thread, p)

        # 4. The same session through codex app-server: Codex's verdict on each hook run.
        fake2 = H.FakeModel(ws, STEPS, final_text=FINAL, tag="app")
        try:
            set_provider_port(ws, fake.port, fake2.port)
            app = H.app_session(ws, fake2, [f"{MAIN} {PROMPT}"], trust=False,
                                timeout=float(os.environ.get("HELIX_E2E_TIMEOUT", "180")))
        finally:
            fake2.stop()
        check_hook_runs(c, app)
        return finish(c, ws, t_start, keep=c.failed > 0)
    except Exception as e:  # a broken set-up is a failure, not a crash
        import traceback
        traceback.print_exc()
        c.check("the test ran", False, f"{type(e).__name__}: {e}")
        return finish(c, ws, t_start, keep=True)
    finally:
        if fake:
            fake.stop()


def set_provider_port(ws, old, new):
    path = ws.user_config_path()
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text.replace(f"127.0.0.1:{old}/", f"127.0.0.1:{new}/"))


def check_session(c, ws, run, tools_expected):
    main_reqs = run.main_requests()
    if not main_reqs:
        c.check("the main conversation reached the stand-in", False)
        return
    helix_ctx = H.injected_contexts(run)
    for ctx in helix_ctx:
        c.info(f"context (request {ctx['request']})", short(ctx["text"], 240))

    # Session start.
    before = contexts_before_prompt(run)
    ss = [t for t in before if t.startswith(SESSION_START)]
    c.check("session-start context reached the model before the prompt, naming entry counts",
            bool(ss) and re.search(r"\b3 entr", ss[0]) is not None
            and PROJECT in ss[0],
            short(ss[0], 240) if ss else f"developer messages before the prompt: "
                                         f"{[short(t, 80) for t in before]}")

    # The prompt.
    after = contexts_after_prompt(run)
    hit = [t for t in after if POOL in t]
    c.check(f"prompt context right after the prompt names {POOL}", bool(hit),
            short(hit[0], 240) if hit else f"after the prompt: {[short(t, 120) for t in after]}")

    # The file read: ambient context between the call and its output.
    window, output = call_window(run, CALL_READ)
    texts = [t for t in (developer_text(it) for it in window or []) if t]
    amb = [t for t in texts if POOL in t]
    c.check(f"file-read context ({READ}) sits between the call and its output, "
            f"naming {POOL}",
            bool(amb) and any(t.startswith(AMBIENT) or "src/db/pool.rs" in t for t in amb),
            short(amb[0], 240) if amb else
            ("no output for the read" if window is None else f"between: {texts}"))
    c.check("the read's output reached the model unchanged",
            output is not None and "acquire_pooled_conn" in H.item_text(output),
            short(H.item_text(output), 160) if output else "no output")

    # The failing command: the error context.
    window, output = call_window(run, CALL_FAIL)
    texts = [t for t in (developer_text(it) for it in window or []) if t]
    err = [t for t in texts if SSL in t]
    c.check(f"failing command's context sits between the call and its output, naming {SSL}",
            bool(err), short(err[0], 240) if err else
            ("no output for the failing command" if window is None else f"between: {texts}"))
    c.check("the failing command's output reached the model (not replaced by a block)",
            output is not None and "cannot find -lssl" in H.item_text(output)
            and "exited with code 1" in H.item_text(output),
            short(H.item_text(output), 200) if output else "no output")

    # MCP: offered and called.
    ns = helix_namespace(main_reqs[0]["body"])
    offered = [t.get("name") for t in (ns or {}).get("tools") or []]
    c.check("helix's MCP tools are offered as namespace mcp__helix, as `helix mcp` lists them",
            ns is not None and bool(tools_expected) and sorted(offered) == sorted(tools_expected)
            and "search" in offered,
            f"offered {offered}; helix mcp lists {tools_expected}")
    window, output = call_window(run, CALL_MCP)
    text = H.item_text(output) if output else ""
    call = next((it for r in run.model_requests for it in r["body"].get("input") or []
                 if it.get("type") == "function_call" and it.get("call_id") == CALL_MCP), None)
    c.check("the search call went to mcp__helix.search and returned helix's result naming a "
            f"{PROJECT} entry",
            call is not None and call.get("namespace") == "mcp__helix"
            and call.get("name") == "search"
            and re.search(rf"\b{PROJECT}:[\w./-]+\.md", text) is not None
            and POOL in text and "MCP-SEARCH-RESULT" not in text,  # not the probe's stub
            short(text, 240) if output else "no output for the search call")
    mcp_items = [(e.get("item") or {}) for e in run.events
                 if (e.get("item") or {}).get("type") == "mcp_tool_call"]
    c.info("exec mcp_tool_call items", [(i.get("server"), i.get("tool"), i.get("status"))
                                        for i in mcp_items])

    # No helix context twice in one request.
    dup = 0
    for r in main_reqs:
        seen = {}
        for it in r["body"].get("input") or []:
            t = developer_text(it)
            if t and not t.startswith(H.CODEX_PREAMBLES):
                seen[t] = seen.get(t, 0) + 1
        dup = max([dup] + list(seen.values()))
    c.check("no helix context appears twice in one request", dup <= 1, f"worst: ×{dup}")


def check_log(c, injections, thread, p):
    """helix log records each call that injected entries (prompt, ambient, error); the
    session-start text names counts and topics, no entries, so it is not logged
    (docs/hooks.md "The injection log")."""
    mine = [i for i in injections if thread and i.get("session") == thread]
    c.info("helix log --agent codex", f"{len(injections)} injections, {len(mine)} of session "
                                      f"{thread}: "
           + ", ".join(f"{i.get('hook')}({i.get('file') or ''}) "
                       f"{[e.get('id') for e in i.get('entries') or []]}" for i in mine))

    def has(hook, entry, file=None):
        return any(i.get("hook") == hook and i.get("agent") == "codex"
                   and (file is None or i.get("file") == file)
                   and any(e.get("id") == entry for e in i.get("entries") or [])
                   for i in mine)
    want = {"prompt": has("prompt", POOL), "ambient": has("ambient", POOL, "src/db/pool.rs"),
            "error": has("error", SSL)}
    c.check(f"helix log --agent codex lists the session's injections: prompt {POOL}, ambient "
            f"src/db/pool.rs {POOL}, error {SSL}",
            p.returncode == 0 and thread is not None and all(want.values()),
            f"exit {p.returncode}; session {thread}; "
            + ", ".join(f"{k}={'yes' if v else 'MISSING'}" for k, v in want.items())
            + (f"; stderr {short(p.stderr, 200)}" if p.stderr.strip() else ""))


def check_stop(c, run):
    """helix's stop hook asks once, after a failure with nothing stored, whether to store it:
    Codex continues the turn with the reason as a <hook_prompt> user message, and the next
    Stop (stop_hook_active) lets the session end."""
    prompts = set()
    for r in run.main_requests():
        for it in r["body"].get("input") or []:
            if it.get("type") == "message" and it.get("role") == "user":
                t = H.item_text(it)
                if t.startswith("<hook_prompt") and "Before you finish" in t:
                    prompts.add(it.get("id") or t)
    finals = sum(1 for e in run.events if (e.get("item") or {}).get("text") == FINAL)
    c.check("stop hook: its store nudge reached the model once, then the session ended",
            len(prompts) == 1 and run.rc == 0,
            f"{len(prompts)} nudge(s), {finals} final message(s), exit {run.rc}")


def check_hook_runs(c, app):
    """Codex's verdict on every hook run of the app-server pass: each `completed`, except
    helix's stop hook, which blocks once by design (the store nudge after a failure; see
    check_stop) and completes on the next Stop."""
    runs = app.hook_runs
    summary = {}
    for hr in runs:
        summary.setdefault(hr.get("eventName"), []).append(hr.get("status"))
    c.info("app-server hook runs", summary)

    def expected(hr):
        if hr.get("status") == "completed":
            return True
        return (hr.get("eventName") == "stop" and hr.get("status") == "blocked"
                and all(str(e.get("text", "")).startswith("Before you finish")
                        for e in hr.get("entries") or []))
    bad = [hr for hr in runs if not expected(hr)]
    stops = summary.get("stop") or []
    c.check("app-server pass: no hook failed (all completed; stop blocked once with the "
            "store nudge, then completed)",
            bool(runs) and not bad and app.rc == 0 and stops.count("blocked") <= 1
            and stops[-1:] == ["completed"],
            f"rc {app.rc}; " + ("; ".join(
                f"{hr.get('eventName')}: {hr.get('status')} "
                f"{[e.get('text') for e in hr.get('entries') or []]}" for hr in bad)[:400]
                or f"{len(runs)} hook runs"))
    # Which hook delivered which context: a run's id is "<event>:<index>:<hooks.json>"
    # plus ":<call id>" for tool events.
    def ctx_of(event, call=None):
        return [str(e.get("text")) for hr in runs
                if hr.get("eventName") == event
                and (call is None or str(hr.get("id", "")).endswith(":" + call))
                for e in hr.get("entries") or [] if e.get("kind") == "context"]
    want = {
        "sessionStart: counts": any(t.startswith(SESSION_START) for t in ctx_of("sessionStart")),
        f"userPromptSubmit: {POOL}": any(POOL in t for t in ctx_of("userPromptSubmit")),
        f"preToolUse (before the read): {POOL}": any(
            t.startswith(AMBIENT) and POOL in t for t in ctx_of("preToolUse", CALL_READ)),
        f"postToolUse (failing command): {SSL}": any(
            SSL in t for t in ctx_of("postToolUse", CALL_FAIL)),
    }
    c.check("app-server pass: each context came from its hook (session start, prompt, "
            "PreToolUse before the read, PostToolUse after the failure)",
            all(want.values()),
            ", ".join(f"{k}={'yes' if v else 'MISSING'}" for k, v in want.items()))


def finish(c, ws, t_start, keep):
    keep = keep or os.environ.get("KEEP") == "1"
    if keep:
        print(f"     (files kept in {ws.root})")
    else:
        shutil.rmtree(ws.root, ignore_errors=True)
    print(f"{c.passed} passed, {c.failed} failed ({time.time() - t_start:.1f} s)")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
