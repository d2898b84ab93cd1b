#!/usr/bin/env python3
"""Probes the real Codex CLI (`codex exec`, offline, against fake_responses.py) with a probe
hook on every hook event and a stand-in MCP server `helix`, and reports what each hook got
on stdin and where each hook's answer reached the model.

Run through run.sh (which installs the pinned Codex and sets CODEX_BIN). Arguments:
scenario names or group names (default: all; `--list` shows them), `--out DIR` (results.json
and a per-scenario copy of the captured requests/hook calls; default a temp dir),
`--fixtures DIR` (where sanitized stdin payloads are written; default ./fixtures next to
this file; `--no-fixtures` to skip), `--keep` (keep every workspace), `-v`.

Each scenario gets a fresh HOME/CODEX_HOME/XDG dirs, code repository and fake model. The
same machinery (harness.py) is meant to drive helix's own Codex hooks later: a scenario's
setup() installs hooks (here the probe; later `helix hooks install --agent codex
--project`), and checks look for markers in the recorded model requests.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import traceback

import harness as H
from harness import EVENTS, FAILING, MAIN, SUB

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT = "Why do the integration tests hang on the connection pool?"

# The scripted model: read the file (cat, then sed -n, as a model reads files with Codex),
# run a failing command, call the MCP tool, start a subagent and wait for it; then finish.
STEPS = [
    [{"type": "shell", "command": "cat src/db/pool.rs"}],
    [{"type": "shell", "command": "sed -n '1,20p' src/db/pool.rs"}],
    [{"type": "shell", "command": FAILING}],
    [{"type": "mcp", "server": "helix", "tool": "search",
      "arguments": {"query": "connection pool integration tests", "limit": 3}}],
    [{"type": "function", "namespace": "multi_agent_v1", "name": "spawn_agent",
      "arguments": {"message": f"{SUB} Check src/db/pool.rs and say done."}}],
    [{"type": "wait_agents"}],
]
# Events a plain session reaches (compaction, interrupt and permission have scenarios).
SESSION_EVENTS = ["SessionStart", "UserPromptSubmit", "PreModelRequest", "PostModelRequest",
                  "PreToolUse", "PostToolUse", "SubagentStart", "SubagentStop", "Stop",
                  "SessionEnd"]
NONBLOCKING_MODES = ["nested", "plain", "toplevel", "snake", "extra", "system", "exit1"]
BLOCKING_MODES = ["exit2", "block", "stop"]
ONCE = ("Stop", "SubagentStop")  # answered once, so a block cannot loop

SCENARIOS = {}


def scenario(name, group):
    def wrap(fn):
        SCENARIOS[name] = (fn, group)
        return fn
    return wrap


# ---------------------------------------------------------------- analysis

def describe_hit(run, hit, marker):
    ri, ii, typ, role, text = hit
    body = run.model_requests[ri]["body"]
    items = body.get("input") or []
    kind = run.request_kind(ri)

    def label(j):
        if not isinstance(j, int) or j < 0 or j >= len(items):
            return None
        it = items[j]
        t = it.get("type")
        if t == "message":
            return f"message/{it.get('role')}"
        if t == "function_call":
            return f"function_call {it.get('namespace', '') + '.' if it.get('namespace') else ''}{it.get('name')}"
        return t

    try:
        meta = json.loads(run.model_requests[ri]["headers"].get("x-codex-turn-metadata") or "{}")
    except ValueError:
        meta = {}
    return {"request": ri, "request_kind": kind, "thread": meta.get("thread_source"),
            "item": ii,
            "type": typ, "role": role,
            "after": label(ii - 1) if isinstance(ii, int) else None,
            "before": label(ii + 1) if isinstance(ii, int) else None,
            "requests_holding": sum(1 for r in run.model_requests if hit_marker_in(r, marker)),
            "text": text[:200]}


def hit_marker_in(req, marker):
    return marker in json.dumps(req.get("body") or {})


def where(run, marker):
    """Where marker reached the model: one entry per distinct input item holding it (an item
    keeps its id from request to request), at the first request that holds it."""
    seen, out = set(), []
    for h in run.find(marker):
        ri, ii = h[0], h[1]
        if isinstance(ii, int):
            item = run.model_requests[ri]["body"]["input"][ii]
            key = item.get("id") or json.dumps(item, sort_keys=True)
        else:
            key = ii
        if key in seen:
            continue
        seen.add(key)
        out.append(describe_hit(run, h, marker))
    return out


def warnings(run):
    """Codex's own messages: --json `error` items and stderr lines (noise filtered)."""
    out = []
    for e in run.events:
        item = e.get("item") or {}
        if e.get("type") == "item.completed" and item.get("type") == "error":
            msg = item.get("message", "")
            if ("dangerously-bypass-hook-trust" in msg or "Model metadata" in msg
                    or "bubblewrap" in msg or "clamping" in msg):
                continue
            out.append(msg)
        elif e.get("type") in ("error", "turn.failed"):
            out.append(json.dumps(e)[:400])
    for line in run.stderr.splitlines():
        if not line.strip() or "Reading additional input" in line or "bubblewrap" in line:
            continue
        out.append("stderr: " + line[:400])
    return out


def tool_items(run):
    """Tools Codex ran, from --json items: (type, what, status/exit code)."""
    out = []
    for e in run.events:
        item = e.get("item") or {}
        if e.get("type") != "item.completed":
            continue
        t = item.get("type")
        if t == "command_execution":
            out.append(f"cmd[{item.get('exit_code')}/{item.get('status')}] {item.get('command')}")
        elif t == "mcp_tool_call":
            out.append(f"mcp[{item.get('status')}] {item.get('server')}.{item.get('tool')}")
        elif t == "collab_tool_call" or t == "collab_agent_tool_call":
            out.append(f"{t} {item.get('tool')}")
    return out


def final_messages(run):
    return [(e.get("item") or {}).get("text") for e in run.events
            if e.get("type") == "item.completed"
            and (e.get("item") or {}).get("type") == "agent_message"]


def summarize(run):
    out = {"rc": run.rc, "seconds": round(run.seconds, 1),
           "model_requests": len(run.model_requests),
           "request_kinds": [run.request_kind(i) for i in range(len(run.model_requests))],
           "hook_calls": run.hook_events(), "tools": tool_items(run),
           "agent_messages": final_messages(run), "warnings": warnings(run)}
    if hasattr(run, "hook_runs"):
        out["hook_runs"] = hook_run_summary(run)
    return out


def hook_run_summary(run):
    """{event: [(status, [entry kind: text]), ...]} from app-server hook/completed."""
    out = {}
    for hr in run.hook_runs:
        ev = hr.get("eventName")
        out.setdefault(ev, [])
        rec = [hr.get("status"), [f"{e.get('kind')}: {e.get('text')}" for e in
                                  hr.get("entries") or []]]
        if rec not in out[ev]:
            out[ev].append(rec)
    return out


def event_result(run, event, mode, tag=None):
    calls = [h for h in run.hooks if h["event"] == event and h.get("tag") == tag]
    marker = f"PROBE-{event}-{tag + '-' if tag else ''}{mode}"
    return {"fired": len(calls), "reached": where(run, marker)}


def output_item_for(run, call_id):
    """The model-visible output of one tool call in the last request that holds it."""
    for r in reversed(run.model_requests):
        for it in r["body"].get("input") or []:
            if it.get("type") in ("function_call_output", "custom_tool_call_output") \
                    and it.get("call_id") == call_id:
                return H.item_text(it)
    return None


# ---------------------------------------------------------------- setups

def base_setup(modes, scope="project", mcp_scope=None, trust_project=True, events=EVENTS,
               extra_user_config="", matcher=None, timeout=30, handler_extra=None):
    def setup(ws, port):
        ws.configure(port, trust_project=trust_project)
        if extra_user_config:
            ws.append_user_config(extra_user_config)
        ws.set_modes(modes)
        if scope:
            ws.install_probe_hooks(scope, events=events, matcher=matcher, timeout=timeout,
                                   handler_extra=handler_extra)
        ws.register_mcp(mcp_scope or scope or "project")
    return setup


def run_session(ctx, name, setup, steps=STEPS, via="exec", **kw):
    """One session of the scripted model: through `codex exec` (via="exec") or through a
    thread of `codex app-server` (via="app": hooks trusted by recorded hashes, and the
    hook/completed notifications say how Codex judged each hook's answer)."""
    if via == "exec":
        ws, run = H.session(steps, PROMPT, setup, name="codex-" + name, **kw)
        # (a cwd given as "{repo}/..." is resolved by H.session)
    else:
        ws = H.Workspace(name="codex-" + name)
        fake = H.FakeModel(ws, json.loads(json.dumps(steps).replace("{repo}", ws.repo)),
                           input_tokens=kw.pop("input_tokens", 1000))
        try:
            setup(ws, fake.port)
            run = H.app_session(ws, fake, [f"{MAIN} {PROMPT}"], **kw)
        finally:
            fake.stop()
    ctx.workspaces.append((name, ws, run))
    return ws, run


class Ctx:
    def __init__(self, args):
        self.args = args
        self.vias = ["exec", "app"] if args.via == "both" else [args.via]
        self.results = {}
        self.workspaces = []
        self.fixtures = {}  # fixture file name -> sanitized payload

    def fixture(self, name, ws, payload):
        if payload is not None and name not in self.fixtures:
            self.fixtures[name] = H.sanitize(payload, ws)


def first_call(run, event, pred=lambda s: True):
    for h in run.hooks:
        if h["event"] == event and pred(h.get("stdin") or {}):
            return h["stdin"]
    return None


def cmd_is(text):
    return lambda s: (s.get("tool_input") or {}).get("command", "").startswith(text)


# ---------------------------------------------------------------- scenarios

@scenario("main", "core")
def sc_main(ctx):
    """Every event with the nested hookSpecificOutput.additionalContext answer; project
    scope hooks.json + MCP in .codex/config.toml; trusted project; --dangerously-bypass-
    hook-trust. Captures the fixtures."""
    modes = {"*": "nested"}
    ws, run = run_session(ctx, "main", base_setup(modes))
    res = summarize(run)
    res["events"] = {ev: event_result(run, ev, "nested") for ev in EVENTS}
    res["tools_offered"] = tool_names(run.model_requests[0]["body"]) if run.model_requests else []
    res["mcp_tool_entry"] = next((t for t in run.model_requests[0]["body"].get("tools", [])
                                  if "helix" in json.dumps(t)), None) if run.model_requests else None
    # tool outputs as the model sees them
    res["tool_outputs"] = {cid: output_item_for(run, cid)
                           for cid in ("call_e2e_0_0", "call_e2e_2_0", "call_e2e_3_0",
                                       "call_e2e_4_0", "call_e2e_5_0")}
    res["first_request_input"] = [
        {"type": it.get("type"), "role": it.get("role"),
         "text": H.item_text(it)[:120]} for it in
        (run.model_requests[0]["body"].get("input") if run.model_requests else [])]
    res["request_keys"] = sorted(run.model_requests[0]["body"].keys()) if run.model_requests else []
    res["hook_env"] = run.hooks[0]["env"] if run.hooks else None
    res["hook_cwd"] = run.hooks[0]["cwd"] if run.hooks else None
    res["hook_argv"] = run.hooks[0]["argv"] if run.hooks else None
    res["hook_parent_argv"] = run.hooks[0].get("parent_argv") if run.hooks else None
    ctx.fixture("session-start.json", ws, first_call(run, "SessionStart"))
    ctx.fixture("prompt.json", ws, first_call(run, "UserPromptSubmit",
                                              lambda s: "agent_id" not in s))
    ctx.fixture("prompt-subagent.json", ws, first_call(run, "UserPromptSubmit",
                                                       lambda s: "agent_id" in s))
    ctx.fixture("pre-model-request.json", ws, first_call(run, "PreModelRequest"))
    ctx.fixture("post-model-request.json", ws, first_call(run, "PostModelRequest"))
    ctx.fixture("pre-tool-read.json", ws, first_call(run, "PreToolUse", cmd_is("cat ")))
    ctx.fixture("post-tool-ok.json", ws, first_call(run, "PostToolUse", cmd_is("cat ")))
    ctx.fixture("pre-tool-read-sed.json", ws, first_call(run, "PreToolUse", cmd_is("sed ")))
    ctx.fixture("post-tool-read-sed.json", ws, first_call(run, "PostToolUse", cmd_is("sed ")))
    ctx.fixture("pre-tool-fail.json", ws, first_call(run, "PreToolUse", cmd_is("sh -c")))
    ctx.fixture("post-tool-fail.json", ws, first_call(run, "PostToolUse", cmd_is("sh -c")))
    is_mcp = lambda s: s.get("tool_name", "").startswith("mcp__")
    ctx.fixture("pre-tool-mcp.json", ws, first_call(run, "PreToolUse", is_mcp))
    ctx.fixture("post-tool-mcp.json", ws, first_call(run, "PostToolUse", is_mcp))
    ctx.fixture("pre-tool-spawn-agent.json", ws, first_call(
        run, "PreToolUse", lambda s: "spawn_agent" in s.get("tool_name", "")))
    ctx.fixture("post-tool-wait-agent.json", ws, first_call(
        run, "PostToolUse", lambda s: "wait_agent" in s.get("tool_name", "")))
    ctx.fixture("subagent-start.json", ws, first_call(run, "SubagentStart"))
    ctx.fixture("subagent-stop.json", ws, first_call(run, "SubagentStop"))
    ctx.fixture("stop.json", ws, first_call(run, "Stop"))
    ctx.fixture("session-end.json", ws, first_call(run, "SessionEnd"))
    ctx.results["main"] = res


def tool_names(body):
    out = []
    for t in body.get("tools") or []:
        if t.get("type") == "namespace":
            out += [f"{t['name']}.{s.get('name')}" for s in t.get("tools") or []]
        else:
            out.append(t.get("name") or t.get("type"))
    return out


@scenario("compact", "core")
def sc_compact(ctx):
    """Auto-compaction (model_auto_compact_token_limit below the reported usage):
    PreCompact/PostCompact stdin, SessionStart source=compact, which contexts survive."""
    for mode in ("nested", "plain"):
        modes = {"*": mode}
        ws, run = run_session(ctx, f"compact-{mode}", base_setup(
            modes, extra_user_config=""), steps=STEPS[:2], input_tokens=5000,
            args=("-c", "model_auto_compact_token_limit=2000"))
        res = summarize(run)
        res["events"] = {ev: event_result(run, ev, mode) for ev in EVENTS}
        res["session_start_sources"] = [(h["stdin"] or {}).get("source") for h in run.hooks
                                        if h["event"] == "SessionStart"]
        comp = [i for i in range(len(run.model_requests))
                if run.request_kind(i) == "compaction"]
        if comp:
            after = comp[0] + 1
            if after < len(run.model_requests):
                res["input_after_first_compaction"] = [
                    {"type": it.get("type"), "role": it.get("role"),
                     "text": H.item_text(it)[:160]}
                    for it in run.model_requests[after]["body"].get("input") or []]
            res["compaction_request_last_item"] = H.item_text(
                run.model_requests[comp[0]]["body"]["input"][-1])[:300]
        ctx.results[f"compact-{mode}"] = res
        if mode == "nested":
            ctx.fixture("pre-compact.json", ws, first_call(run, "PreCompact"))
            ctx.fixture("post-compact.json", ws, first_call(run, "PostCompact"))
            ctx.fixture("session-start-compact.json", ws, first_call(
                run, "SessionStart", lambda s: s.get("source") == "compact"))


@scenario("shapes", "shapes")
def sc_shapes(ctx):
    """Non-blocking answer shapes, every event at once: nested, plain text, top-level
    additionalContext, snake_case additional_context, nested + unknown field, systemMessage,
    exit 1 with stderr."""
    for mode in NONBLOCKING_MODES:
        modes = {"*": mode}
        for ev in ONCE:
            modes[ev] = "once:" + mode
        for via in ctx.vias:
            name = f"shape-{mode}" + ("" if via == "exec" else "-app")
            ws, run = run_session(ctx, name, base_setup(modes), via=via)
            res = summarize(run)
            res["events"] = {ev: event_result(run, ev, mode) for ev in SESSION_EVENTS}
            ctx.results[name] = res


@scenario("blocking", "blocking")
def sc_blocking(ctx):
    """Blocking answers, one event at a time (the others answer nothing): exit 2 with
    stderr, {"decision":"block","reason"}, {"continue":false,"stopReason"}; and PreToolUse
    permissionDecision deny."""
    cases = [(mode, ev) for mode in BLOCKING_MODES for ev in SESSION_EVENTS
             if ev != "SessionEnd"] + [("deny", "PreToolUse"), ("allow", "PreToolUse")]
    for (mode, ev), via in ((c, v) for c in cases for v in ctx.vias):
        modes = {"*": "empty", ev: ("once:" + mode) if ev in ONCE or ev == "PreToolUse"
                 or ev == "PostToolUse" else mode}
        name = f"block-{mode}-{ev}" + ("" if via == "exec" else "-app")
        ws, run = run_session(ctx, name, base_setup(modes), via=via)
        res = summarize(run)
        res["event"] = event_result(run, ev, mode)
        res["tool_outputs"] = {cid: (output_item_for(run, cid) or "")[:300]
                               for cid in ("call_e2e_0_0", "call_e2e_1_0")}
        if ev == "Stop":
            res["stop_inputs"] = [(h["stdin"] or {}).get("stop_hook_active")
                                  for h in run.hooks if h["event"] == "Stop"]
            if mode == "block":
                ctx.fixture("stop-hook-active.json", ws, first_call(
                    run, "Stop", lambda s: s.get("stop_hook_active")))
        ctx.results[name] = res


@scenario("trust", "trust")
def sc_trust(ctx):
    """Which settings make project/user hooks and MCP load and run."""
    def record(name, run, ws, extra=None):
        res = summarize(run)
        res["hooks_fired"] = sorted(set(run.hook_events()))
        res["mcp_offered"] = any("mcp__helix" in n for n in
                                 (tool_names(run.model_requests[0]["body"])
                                  if run.model_requests else []))
        with open(ws.user_config_path()) as f:
            res["user_config_after"] = f.read()[-600:]
        if extra:
            res.update(extra)
        ctx.results[name] = res

    modes = {"*": "nested"}
    # 1. trusted project, no bypass flag, no recorded hook trust
    ws, run = run_session(ctx, "trust-no-bypass", base_setup(modes), bypass_hook_trust=False)
    record("trust-no-bypass", run, ws)
    # 2. untrusted project, bypass flag
    ws, run = run_session(ctx, "trust-untrusted-project", base_setup(modes, trust_project=False))
    record("trust-untrusted-project", run, ws)
    # 3. untrusted project, --trust + bypass
    ws, run = run_session(ctx, "trust-flag", base_setup(modes, trust_project=False),
                          args=("--trust",))
    record("trust-flag", run, ws)
    # 4. user scope hooks + MCP, untrusted project, bypass
    ws, run = run_session(ctx, "trust-user-scope", base_setup(modes, scope="user",
                                                              trust_project=False))
    record("trust-user-scope", run, ws)
    # 5. user scope, no bypass
    ws, run = run_session(ctx, "trust-user-no-bypass", base_setup(modes, scope="user"),
                          bypass_hook_trust=False)
    record("trust-user-no-bypass", run, ws)

    # 6./7. recorded trust (hooks.state trusted_hash), computed here, no bypass flag; the
    # hashes are compared with what `codex app-server` hooks/list reports.
    for scope in ("project", "user"):
        name = f"trust-hash-{scope}"
        state = {}

        def setup(ws, port, scope=scope, state=state):
            base_setup(modes, scope=scope)(ws, port)
            path = os.path.join(ws.scope_dir(scope), "hooks.json")
            entries = H.trust_entries(path)
            listed = H.app_server_hooks(ws)
            state["computed"] = entries
            state["listed_before"] = {h["key"]: (h.get("currentHash"), h.get("trustStatus"))
                                      for h in listed}
            H.write_trust(ws, entries)
            state["listed_after"] = {h["key"]: h.get("trustStatus")
                                     for h in H.app_server_hooks(ws)}
        ws, run = run_session(ctx, name, setup, bypass_hook_trust=False)
        computed = state.get("computed", {})
        before = state.get("listed_before", {})
        record(name, run, ws, {
            "hash_matches": {k.rsplit("/", 1)[-1]: before.get(k, (None,))[0] == v
                             for k, v in computed.items()},
            "listed_status_before": sorted({s for _, s in before.values()}),
            "listed_status_after": sorted(set(state.get("listed_after", {}).values())),
            "example_key": H.sanitize(next(iter(computed), None), ws),
        })

    # 8. the same probe commands in both scopes
    def both(ws, port):
        base_setup(modes)(ws, port)
        ws.install_probe_hooks("user")
    ws, run = run_session(ctx, "trust-both-scopes", both)
    record("trust-both-scopes", run, ws, {
        "calls_per_event": {ev: run.hook_events().count(ev) for ev in SESSION_EVENTS},
        "events": {ev: event_result(run, ev, "nested") for ev in ("SessionStart",
                                                                  "UserPromptSubmit")}})


@scenario("config", "config")
def sc_config(ctx):
    """Alternative hook declarations: [hooks] tables in .codex/config.toml; a Claude-style
    hooks.json without the "hooks" wrapper; an unknown event name; an invalid matcher."""
    modes = {"*": "nested"}

    def toml_hooks(ws, port):
        ws.configure(port)
        ws.set_modes(modes)
        lines = []
        for ev in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
            lines += [f"[[hooks.{ev}]]", f"[[hooks.{ev}.hooks]]", 'type = "command"',
                      f"command = {H.toml_str(ws.probe_command(ev))}", "timeout = 30", ""]
        with open(os.path.join(ws.scope_dir("project"), "config.toml"), "w") as f:
            f.write("\n".join(lines))
        ws.register_mcp("project")
    ws, run = run_session(ctx, "config-toml-hooks", toml_hooks)
    res = summarize(run)
    res["events"] = {ev: event_result(run, ev, "nested")
                     for ev in ("SessionStart", "UserPromptSubmit", "PostToolUse")}
    ctx.results["config-toml-hooks"] = res

    def claude_style(ws, port):
        ws.configure(port)
        ws.set_modes(modes)
        doc = {ev: [{"hooks": [{"type": "command", "command": ws.probe_command(ev)}]}]
               for ev in ("SessionStart", "UserPromptSubmit")}
        with open(os.path.join(ws.scope_dir("project"), "hooks.json"), "w") as f:
            json.dump(doc, f)
    ws, run = run_session(ctx, "config-unwrapped-hooks-json", claude_style)
    res = summarize(run)
    res["hooks_fired"] = sorted(set(run.hook_events()))
    ctx.results["config-unwrapped-hooks-json"] = res

    def odd(ws, port):
        ws.configure(port)
        ws.set_modes(modes)
        doc = {"hooks": {
            "NoSuchEvent": [{"hooks": [{"type": "command",
                                        "command": ws.probe_command("NoSuchEvent")}]}],
            "PreToolUse": [{"matcher": "[", "hooks": [{"type": "command", "command":
                                                      ws.probe_command("PreToolUse", "badre")}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command":
                                         ws.probe_command("SessionStart"),
                                         "statusMessage": "probing", "unknownKey": 1}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command":
                                             ws.probe_command("UserPromptSubmit")}]}],
        }}
        with open(os.path.join(ws.scope_dir("project"), "hooks.json"), "w") as f:
            json.dump(doc, f)
    ws, run = run_session(ctx, "config-odd-entries", odd)
    res = summarize(run)
    res["hooks_fired"] = [(h["event"], h.get("tag")) for h in run.hooks]
    ctx.results["config-odd-entries"] = res


MATCHERS = ["Bash", "^Bash$", "bash", "Shell", "exec_command", "mcp__helix__search",
            "mcp__helix__.*", "mcp__helix", "helix", "*", "", "Read", "Bash|mcp__.*",
            "spawn_agent", "wait_agent", ".*"]


@scenario("matchers", "config")
def sc_matchers(ctx):
    """Which tool names each matcher selects (PreToolUse, PostToolUse), and whether
    SessionStart/UserPromptSubmit matchers are honoured."""
    modes = {"*": "empty"}
    tags = {}

    def setup(ws, port):
        ws.configure(port)
        ws.set_modes(modes)
        hooks = {"PreToolUse": [], "PostToolUse": [], "SessionStart": [],
                 "UserPromptSubmit": []}
        for i, m in enumerate(MATCHERS):
            tag = f"m{i}"
            tags[tag] = m
            for ev in ("PreToolUse", "PostToolUse"):
                hooks[ev].append({"matcher": m, "hooks": [
                    {"type": "command", "command": ws.probe_command(ev, tag)}]})
        for i, m in enumerate(["startup", "resume", "nomatch", "*"]):
            tag = f"s{i}"
            tags[tag] = m
            hooks["SessionStart"].append({"matcher": m, "hooks": [
                {"type": "command", "command": ws.probe_command("SessionStart", tag)}]})
            hooks["UserPromptSubmit"].append({"matcher": m, "hooks": [
                {"type": "command", "command": ws.probe_command("UserPromptSubmit", tag)}]})
        with open(os.path.join(ws.scope_dir("project"), "hooks.json"), "w") as f:
            json.dump({"hooks": hooks}, f, indent=1)
        ws.register_mcp("project")
    ws, run = run_session(ctx, "matchers", setup)
    res = summarize(run)
    table = {}
    for h in run.hooks:
        m = tags.get(h.get("tag"))
        key = f"{h['event']} matcher={m!r}"
        name = (h.get("stdin") or {}).get("tool_name") or (h.get("stdin") or {}).get("source") \
            or "-"
        table.setdefault(key, [])
        if name not in table[key]:
            table[key].append(name)
    res["selected"] = table
    res["never_fired"] = [f"{ev} matcher={tags[t]!r}" for t in tags
                          for ev in (("PreToolUse", "PostToolUse") if t.startswith("m")
                                     else ("SessionStart", "UserPromptSubmit"))
                          if not any(h["event"] == ev and h.get("tag") == t for h in run.hooks)]
    ctx.results["matchers"] = res


@scenario("limits", "limits")
def sc_limits(ctx):
    """A large additionalContext (spilled to a file, the model gets a preview), the same
    with additionalContextLimit 0, and a hook that outlives its timeout."""
    for name, extra in (("limit-big", None), ("limit-big-nolimit", {"additionalContextLimit": 0})):
        modes = {"*": "empty", "UserPromptSubmit": "big", "PostToolUse": "big"}
        ws, run = run_session(ctx, name, base_setup(modes, handler_extra=extra),
                              steps=STEPS[:1])
        res = summarize(run)
        res["events"] = {ev: event_result(run, ev, "big") for ev in ("UserPromptSubmit",
                                                                     "PostToolUse")}
        for e in res["events"].values():
            for hit in e["reached"]:
                hit["text"] = hit["text"][:120]
        res["end_marker_reached"] = bool(run.find("END-PROBE-UserPromptSubmit-big"))
        spilled = []
        for dirpath, _, files in os.walk(ws.root):
            if "sessions" in dirpath or dirpath.startswith(ws.repo):
                continue
            for fn in files:
                p = os.path.join(dirpath, fn)
                if fn.endswith((".jsonl", ".sqlite", ".json")):
                    continue
                try:
                    with open(p, errors="replace") as f:
                        if "line00400 pool" in f.read(400000):
                            spilled.append(H.sanitize(p, ws))
                except OSError:
                    pass
        res["spill_files"] = spilled
        hits = run.find("PROBE-UserPromptSubmit-big")
        if hits:
            text = H.item_text(run.model_requests[hits[0][0]]["body"]["input"][hits[0][1]])
            cut = text.find("tokens truncated")
            res["model_sees_chars"] = len(text)
            res["model_sees_head"] = H.sanitize(text[:200], ws)
            res["model_sees_cut"] = H.sanitize(text[max(0, cut - 80):cut + 60], ws) \
                if cut >= 0 else None
            res["model_sees_tail"] = H.sanitize(text[-260:], ws)
        ctx.results[name] = res

    for via in ctx.vias:
        name = "limit-timeout" + ("" if via == "exec" else "-app")
        modes = {"*": "empty", "UserPromptSubmit": "sleep"}
        ws, run = run_session(ctx, name, base_setup(modes, timeout=2), steps=STEPS[:1],
                              via=via)
        res = summarize(run)
        res["events"] = {"UserPromptSubmit": event_result(run, "UserPromptSubmit", "sleep")}
        ctx.results[name] = res


@scenario("interrupt", "lifecycle")
def sc_interrupt(ctx):
    """SIGINT to `codex exec` while a command runs: Interrupt (and SessionEnd) hooks."""
    modes = {"*": "nested"}
    steps = [[{"type": "shell", "command": "sleep 20"}]]
    ws, run = run_session(ctx, "interrupt", base_setup(modes), steps=steps,
                          interrupt_on=("PreToolUse", 1))
    res = summarize(run)
    res["events"] = {ev: event_result(run, ev, "nested") for ev in ("Interrupt", "SessionEnd",
                                                                    "Stop", "PostToolUse")}
    ctx.results["interrupt"] = res
    ctx.fixture("interrupt.json", ws, first_call(run, "Interrupt"))
    ctx.fixture("session-end-interrupt.json", ws, first_call(run, "SessionEnd"))


@scenario("permission", "lifecycle")
def sc_permission(ctx):
    """An escalation request (sandbox_permissions=require_escalated): which approval
    settings reach PermissionRequest, its stdin, and allow/deny answers."""
    steps = [[{"type": "shell", "command": "touch ../escalated.txt && echo ok",
               "extra": {"sandbox_permissions": "require_escalated",
                         "justification": "Write outside the workspace?"}}]]
    variants = [
        ("permission-exec-c-on-request", "exec", "allow",
         dict(sandbox="workspace-write", args=("-c", 'approval_policy="on-request"')), ""),
        ("permission-exec-config-on-request", "exec", "allow",
         dict(sandbox="workspace-write"), 'approval_policy = "on-request"'),
        ("permission-exec-approve-for-me", "exec", "allow",
         dict(sandbox=None, args=("--approve-for-me",)), ""),
        ("permission-app-allow", "app", "allow",
         dict(thread_params={"approvalPolicy": "on-request", "sandbox": "workspace-write"}), ""),
        ("permission-app-deny", "app", "deny",
         dict(thread_params={"approvalPolicy": "on-request", "sandbox": "workspace-write"}), ""),
        ("permission-app-nested", "app", "nested",
         dict(thread_params={"approvalPolicy": "on-request", "sandbox": "workspace-write"}), ""),
    ]
    for name, via, mode, kw, user_cfg in variants:
        modes = {"*": "nested", "PermissionRequest": mode}

        def setup(ws, port, user_cfg=user_cfg):
            if user_cfg:  # a top-level key: it must precede the tables
                ws.configure(port)
                with open(ws.user_config_path()) as f:
                    text = f.read()
                with open(ws.user_config_path(), "w") as f:
                    f.write(user_cfg + "\n" + text)
                ws.set_modes(modes)
                ws.install_probe_hooks("project")
                ws.register_mcp("project")
            else:
                base_setup(modes)(ws, port)
        ws, run = run_session(ctx, name, setup, steps=steps, via=via, **kw)
        res = summarize(run)
        res["events"] = {ev: event_result(run, ev, m) for ev, m in
                         (("PermissionRequest", mode), ("PreToolUse", "nested"),
                          ("PostToolUse", "nested"))}
        res["permission_modes"] = sorted({(h["stdin"] or {}).get("permission_mode")
                                          for h in run.hooks if h.get("stdin")} - {None})
        res["tool_output"] = (output_item_for(run, "call_e2e_0_0") or "")[:400]
        res["escalated_file_written"] = os.path.exists(os.path.join(ws.root, "escalated.txt"))
        if hasattr(run, "notes"):
            res["approval_requests"] = [n.get("method") for n in run.notes
                                        if "pproval" in (n.get("method") or "")]
        ctx.results[name] = res
        ctx.fixture("permission-request.json", ws, first_call(run, "PermissionRequest"))


@scenario("sandbox", "lifecycle")
def sc_sandbox(ctx):
    """The default sandbox (read-only, approvals never) and workspace-write + on-request:
    permission_mode in the hook input, whether reads and the failing command still run."""
    modes = {"*": "nested"}
    for name, sandbox, args in (("sandbox-default", None, ()),
                                ("sandbox-workspace-write", "workspace-write",
                                 ("-c", 'approval_policy="on-request"'))):
        ws, run = run_session(ctx, name, base_setup(modes), steps=STEPS[:4], sandbox=sandbox,
                              args=args)
        res = summarize(run)
        res["permission_modes"] = sorted({(h["stdin"] or {}).get("permission_mode")
                                          for h in run.hooks if h.get("stdin")} - {None})
        res["post_tool_responses"] = [(h["stdin"] or {}).get("tool_response")
                                      for h in run.hooks if h["event"] == "PostToolUse"]
        ctx.results[name] = res
        if name == "sandbox-default":
            ctx.fixture("prompt-default-sandbox.json", ws, first_call(run, "UserPromptSubmit"))


@scenario("subdir", "lifecycle")
def sc_subdir(ctx):
    """`codex exec` started in a subdirectory (src/) of the trusted repository: do the
    project's .codex/ files load, and what cwd do hooks get?"""
    modes = {"*": "nested"}
    ws, run = run_session(ctx, "subdir", base_setup(modes), steps=STEPS[:1],
                          cwd="{repo}/src")
    res = summarize(run)
    res["hook_cwds"] = sorted({H.sanitize(h["cwd"], ws) for h in run.hooks})
    res["stdin_cwds"] = sorted({H.sanitize((h["stdin"] or {}).get("cwd"), ws)
                                for h in run.hooks if h.get("stdin")})
    res["mcp_offered"] = any("mcp__helix" in n for n in (
        tool_names(run.model_requests[0]["body"]) if run.model_requests else []))
    ctx.results["subdir"] = res


@scenario("resume", "lifecycle")
def sc_resume(ctx):
    """A second prompt in the same session (`codex exec resume --last`): SessionStart
    source, what the second turn's request holds."""
    modes = {"*": "nested"}
    ws = H.Workspace(name="codex-resume")
    fake = H.FakeModel(ws, [STEPS[0]])
    try:
        base_setup(modes)(ws, fake.port)
        r1 = H.codex_exec(ws, fake, f"{MAIN} {PROMPT}")
        r2 = H.codex_exec(ws, fake, f"{MAIN} And the second question?",
                          args=("resume", "--last"))
    finally:
        fake.stop()
    ctx.workspaces.append(("resume", ws, r2))
    res = {"first": summarize(r1), "second": summarize(r2)}
    res["second"]["session_start_sources"] = [(h["stdin"] or {}).get("source")
                                              for h in r2.hooks if h["event"] == "SessionStart"]
    res["second"]["session_start_context_copies"] = [
        json.dumps(r.get("body")).count("PROBE-SessionStart-nested")
        for r in r2.model_requests]
    res["second"]["prompt_context_copies"] = [
        json.dumps(r.get("body")).count("PROBE-UserPromptSubmit-nested")
        for r in r2.model_requests]
    ctx.results["resume"] = res
    ctx.fixture("session-start-resume.json", ws, first_call(
        r2, "SessionStart", lambda s: s.get("source") == "resume"))


@scenario("helix", "helix")
def sc_helix(ctx):
    """Listing for helix's own hooks: with HELIX_BIN set, `helix hooks install --agent
    codex --project` replaces the probe (HELIX_CODEX_INSTALL overrides the arguments); the
    result lists every hook context that reached the model. Skipped without HELIX_BIN.
    The real check (knowledge base, trust without the bypass flag, assertions) is e2e.sh."""
    helix = os.environ.get("HELIX_BIN")
    if not helix:
        print("   SKIP helix: HELIX_BIN is not set")
        return
    args = os.environ.get("HELIX_CODEX_INSTALL", "hooks install --agent codex --project").split()

    def setup(ws, port):
        ws.configure(port)
        os.symlink(os.path.abspath(helix), os.path.join(ws.bindir, "helix"))
        # A knowledge base for helix to serve would be set up here (see
        # tests/claude-code/e2e.py Workspace: `helix init --local kb`, `helix sync`).
        H.install_with(ws, [helix, *args])
    ws, run = run_session(ctx, "helix", setup)
    res = summarize(run)
    res["injected_contexts"] = [dict(c, text=c["text"][:300]) for c in H.injected_contexts(run)]
    res["mcp_offered"] = any("mcp__helix" in n for n in (
        tool_names(run.model_requests[0]["body"]) if run.model_requests else []))
    ctx.results["helix"] = res


# ---------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("names", nargs="*", help="scenarios or groups (default: all)")
    p.add_argument("--list", action="store_true")
    p.add_argument("--out", help="directory for results.json and the captured runs")
    p.add_argument("--fixtures", default=os.path.join(HERE, "fixtures"))
    p.add_argument("--no-fixtures", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep every workspace")
    p.add_argument("--via", choices=("exec", "app", "both"), default="both",
                   help="drivers for the shapes/blocking matrices (default both: exec is what "
                        "users run; app-server also reports how Codex judged each answer)")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.list:
        for name, (fn, group) in SCENARIOS.items():
            print(f"{name:12} [{group}] {fn.__doc__.strip().splitlines()[0]}")
        return 0
    if "CODEX_BIN" not in os.environ:
        print("probe.py: CODEX_BIN is not set; use run.sh", file=sys.stderr)
        return 2
    chosen = [n for n, (fn, g) in SCENARIOS.items()
              if (not args.names and g != "helix") or n in args.names or g in args.names]
    unknown = [n for n in args.names if n not in SCENARIOS
               and n not in {g for _, g in SCENARIOS.values()}]
    if unknown:
        print(f"probe.py: unknown scenario(s): {' '.join(unknown)}", file=sys.stderr)
        return 2
    out = args.out or tempfile.mkdtemp(prefix="helix-codex-probe-")
    os.makedirs(out, exist_ok=True)
    ctx = Ctx(args)
    failed = []
    for name in chosen:
        print(f"== {name}", flush=True)
        try:
            SCENARIOS[name][0](ctx)
        except Exception:  # report and go on with the other scenarios
            traceback.print_exc()
            failed.append(name)
        for sname, ws, run in ctx.workspaces:
            res = ctx.results.get(sname) or {}
            line = f"   {sname}: rc={run.rc} {run.seconds:.1f}s requests={len(run.model_requests)}" \
                   f" hooks={len(run.hooks)}"
            print(line, flush=True)
            dest = os.path.join(out, "runs", sname)
            os.makedirs(dest, exist_ok=True)
            for fn in os.listdir(ws.root):
                src = os.path.join(ws.root, fn)
                if os.path.isfile(src) and fn.endswith((".jsonl", ".stdout", ".stderr",
                                                        ".json")):
                    shutil.copy(src, dest)
            if not args.keep:
                shutil.rmtree(ws.root, ignore_errors=True)
            else:
                print(f"     kept {ws.root}")
        ctx.workspaces = []
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(ctx.results, f, indent=1)
    if ctx.fixtures and not args.no_fixtures:
        os.makedirs(args.fixtures, exist_ok=True)
        for fn, payload in sorted(ctx.fixtures.items()):
            with open(os.path.join(args.fixtures, fn), "w") as f:
                json.dump(payload, f, indent=2)
                f.write("\n")
        print(f"fixtures: {len(ctx.fixtures)} written to {args.fixtures}")
    print(f"results: {os.path.join(out, 'results.json')}")
    if args.verbose:
        print(json.dumps(ctx.results, indent=1)[:20000])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
