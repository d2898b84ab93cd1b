#!/usr/bin/env python3
"""Research driver: runs the real Copilot CLI (print mode, offline) through the scripted
session of harness.STEPS with probe hooks on every event and the stand-in `helix` MCP server,
and reports what each hook received and where each hook's output reached the model.

Run through run.sh (which installs the pinned Copilot CLI and sets COPILOT_BIN). Arguments:
scenario names (default: all of DEFAULT); `--fixtures` rewrites fixtures/ from the scenarios
in FIXTURE_SCENARIOS. Each scenario gets a fresh temp root (HOME, XDG dirs, code repository,
stand-in) and writes report.json there; KEEP=1 keeps the roots (their paths are printed),
otherwise they are removed. Prints a summary per scenario.
"""

import json
import os
import re
import shutil
import sys
import tempfile

import harness as h
from harness import EVENTS, SDK_ONLY_EVENTS, Fake, Workspace

FIXTURES = os.path.join(h.HERE, "fixtures")


# ---------------------------------------------------------------------- scenarios
# A scenario sets up the workspace and returns options: copilot args / env, whether to pass
# --trust-folder, the model script.

def sc_project(ws):
    """Project hooks (.github/hooks/probe.json) on every event + workspace .mcp.json, trusted
    with --trust-folder."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.project_hooks_file(ws.probe_hooks("project-sdkonly", events=SDK_ONLY_EVENTS),
                          name="sdk-only.json")
    ws.workspace_mcp()
    return {}


def sc_user(ws):
    """User hooks (~/.copilot/hooks/probe.json) + user MCP written by `copilot mcp add`; no
    --trust-folder."""
    ws.user_hooks_file(ws.probe_hooks("user"))
    p = h.run([os.environ["COPILOT_BIN"], "mcp", "add", "helix", "--", sys.executable,
               *ws.mcp_args("user")],
              h.copilot_env(ws, 1), ws.repo, check=False)
    cfg = os.path.join(ws.home, ".copilot", "mcp-config.json")
    written = open(cfg).read() if os.path.exists(cfg) else None
    return {"trust": False, "notes": {"copilot mcp add": {"exit": p.returncode,
                                                          "out": (p.stdout + p.stderr)[-400:],
                                                          "mcp-config.json": written}}}


def sc_untrusted(ws):
    """Project hooks + .mcp.json + .github/mcp.json, NOT trusted (no --trust-folder); a user
    sessionStart hook as a control."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    ws.workspace_mcp(".github/mcp.json", tag="github-mcp-json")
    ws.user_hooks_file(ws.probe_hooks("user", events=["sessionStart"]))
    return {"trust": False}


def sc_trusted_config(ws):
    """Project hooks + .mcp.json, the folder trusted in ~/.copilot/config.json (trustedFolders,
    what the interactive trust prompt records), no --trust-folder."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    ws.trust_folder_in_config()
    return {"trust": False}


def sc_allow_all_env(ws):
    """Project hooks + .mcp.json, COPILOT_ALLOW_ALL=true instead of --trust-folder."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    return {"trust": False, "env": {"COPILOT_ALLOW_ALL": "true"}}


def sc_github_mcp_json(ws):
    """Workspace MCP from .github/mcp.json only (trusted)."""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart", "postToolUse"]))
    ws.workspace_mcp(".github/mcp.json", tag="github-mcp-json")
    return {}


def sc_both(ws):
    """The same probe in user and project scope, helix MCP in both (user + .mcp.json)."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.user_hooks_file(ws.probe_hooks("user"))
    ws.workspace_mcp()
    ws.user_mcp()
    return {}


def sc_same_command(ws):
    """Byte-identical hook entries in user and project scope (what `--project` plus a user
    install of the same command would give): does Copilot run them once or twice?"""
    doc = ws.probe_hooks("same", events=["sessionStart", "userPromptSubmitted", "postToolUse"])
    ws.project_hooks_file(doc)
    ws.user_hooks_file(doc)
    ws.workspace_mcp()
    return {}


def mode_scenario(mode, events=EVENTS, keep_json=("permissionRequest",)):
    def sc(ws):
        ws.project_hooks_file(ws.probe_hooks(mode, events=events, mode=mode,
                                             modes={e: "json" for e in keep_json}))
        ws.workspace_mcp()
        return {}
    sc.__doc__ = (f"Every project hook answers in mode `{mode}` (see probe_hook.py), "
                  f"except {', '.join(keep_json)} (json).")
    return sc


def sc_pre_tool_exit(ws):
    """preToolUse answers differently per call: 1 view exit 1, 2 bash exit 2 (JSON on
    stdout), 3 bash exit 2 with only stderr, 4 helix-search plain text, 5 helix-search invalid
    JSON, 6 view `permissionDecision: deny`; postToolUse/postToolUseFailure json."""
    ws.project_hooks_file(ws.probe_hooks("pre", events=["preToolUse", "postToolUse",
                                                        "postToolUseFailure"],
                                         modes={"preToolUse": "json+exit1@1+exit2@2+stderr2@3"
                                                              "+text@4+invalid@5+deny@6"}))
    ws.workspace_mcp()
    return {}


def perm_scenario(mode):
    def sc(ws):
        ws.project_hooks_file(ws.probe_hooks("perm", events=["permissionRequest", "postToolUse",
                                                             "postToolUseFailure"],
                                             modes={"permissionRequest": mode}))
        ws.workspace_mcp()
        return {"allow_all": False}
    sc.__doc__ = (f"No --allow-all-tools; the permissionRequest hook answers `{mode}` "
                  "(probe_hook.py): does it approve tools in prompt mode?")
    return sc


def sc_pre_allow(ws):
    """No --allow-all-tools; preToolUse answers {"permissionDecision": "allow"}."""
    ws.project_hooks_file(ws.probe_hooks("preallow", events=["preToolUse", "permissionRequest",
                                                             "postToolUse", "postToolUseFailure"],
                                         modes={"preToolUse": "permC"}))
    ws.workspace_mcp()
    return {"allow_all": False}


def sc_no_allow(ws):
    """Control: no --allow-all-tools, the permissionRequest hook answers json (no decision)."""
    return perm_scenario("json")(ws)


def sc_stop_block(ws):
    """agentStop answers {"decision": "block", "reason": ...} once; subagentStop too."""
    ws.project_hooks_file(ws.probe_hooks("stop", events=["agentStop", "subagentStop",
                                                         "sessionEnd"], mode="block"))
    ws.workspace_mcp()
    return {"steps": h.STEPS[:1]}


def sc_model_error(ws):
    """The model API answers HTTP 400 after the first tool call: errorOccurred, sessionEnd."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    return {"steps": h.STEPS[:1] + [[{"type": "http_error", "status": 400,
                                      "message": "scripted: invalid request"}]]}


def sc_compact(ws):
    """The model API answers HTTP 400 "prompt is too long" after the first tool call: does
    Copilot compact (preCompact) and go on?"""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    return {"steps": h.STEPS[:1] + [[{"type": "http_error", "status": 400,
                                      "message": "prompt is too long: 250000 tokens > 200000 "
                                                 "maximum"}]]}


def sc_subagent_tools(ws):
    """Two subagents (`explore`, then `general-purpose`) each read a file, run a failing
    command and call helix-search: which hooks fire for a subagent's tool calls, with which
    session/agent ids, where their context goes, which tools each agent type has."""
    ws.project_hooks_file(ws.probe_hooks("project"))
    ws.workspace_mcp()
    task = json.loads(json.dumps(h.STEPS[-1]))
    task[0]["input"]["agent_type"] = "general-purpose"
    return {"steps": [h.STEPS[-1], task],
            "sub_steps": [h.STEPS[0], h.STEPS[1], h.STEPS[3]]}


def sc_resume(ws):
    """A second `copilot -p ... --continue` after the first run: sessionStart source, ids.
    (--trust-folder cannot be combined with --continue, so the folder is trusted in
    config.json for both runs.)"""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart",
                                                            "userPromptSubmitted", "sessionEnd"]))
    ws.trust_folder_in_config()
    return {"steps": h.STEPS[:1], "then": ["--continue"], "trust": False}


def sc_subdir_trusted_root(ws):
    """copilot started in code/src, the repository root trusted in config.json."""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart", "postToolUse"]))
    ws.workspace_mcp()
    ws.trust_folder_in_config()
    return {"cwd": os.path.join(ws.repo, "src"), "trust": False}


def sc_subdir_local(ws):
    """copilot started in code/src with --trust-folder, hooks and .mcp.json in code/src
    itself (control for `subdir`)."""
    src = os.path.join(ws.repo, "src")
    ws.write_json(os.path.join(src, ".github", "hooks", "probe.json"),
                  ws.probe_hooks("src", events=["sessionStart", "postToolUse"]))
    ws.write_json(os.path.join(src, ".mcp.json"), {"mcpServers": {"helix": ws.mcp_entry("src")}})
    return {"cwd": src}


def sc_optin_env(ws):
    """Project hooks + .mcp.json, not trusted, but GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true
    and GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP=true (cli-main.js reads these in -p mode)."""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart", "postToolUse"]))
    ws.workspace_mcp()
    return {"trust": False, "env": {"GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS": "true",
                                    "GITHUB_COPILOT_PROMPT_MODE_WORKSPACE_MCP": "true"}}


def sc_trusted_parent(ws):
    """trustedFolders holds the code repository's parent directory, not the repository."""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart", "postToolUse"]))
    ws.workspace_mcp()
    ws.trust_folder_in_config(os.path.dirname(ws.repo))
    return {"trust": False}


def sc_subdir(ws):
    """copilot started in code/src with --trust-folder: do the repository root's
    .github/hooks and .mcp.json load, and in which directory do hooks run?"""
    ws.project_hooks_file(ws.probe_hooks("project", events=["sessionStart", "postToolUse"]))
    ws.workspace_mcp()
    return {"cwd": os.path.join(ws.repo, "src")}


def pascal_scenario(mode):
    def sc(ws):
        pascal = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                  "PostToolUseFailure", "SubagentStart", "Stop", "SubagentStop", "SessionEnd",
                  "Notification", "PreCompact"]
        ws.project_hooks_file({"hooks": {pc: [{"matcher": "*", "hooks": [
            {"type": "command", "command": ws.probe_command(pc, "pascal", mode)}]}]
            for pc in pascal}}, name="pascal.json")
        ws.workspace_mcp()
        return {}
    sc.__doc__ = (f"Claude Code's PascalCase events and nested matcher form; every hook answers "
                  f"in mode `{mode}`: which output shape does Copilot read for them?")
    return sc


def sc_model_error_500(ws):
    """The model API answers HTTP 500 (retryable) after the first tool call."""
    ws.project_hooks_file(ws.probe_hooks("project", events=["errorOccurred", "sessionEnd",
                                                            "agentStop"]))
    return {"steps": h.STEPS[:1] + [[{"type": "http_error", "status": 500,
                                      "error_type": "api_error",
                                      "message": "scripted: overloaded"}]]}


def sc_format(ws):
    """Hook file variants, each its own scope: `command` instead of `bash`; `timeout` instead
    of `timeoutSec`; no `version`; PascalCase events in Claude Code's nested matcher form
    (`PascalCase` scope); a preToolUse `matcher`; `cwd` and `env` keys; inline hooks in
    ~/.copilot/settings.json and .github/copilot/settings.json."""
    evs = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
           "postToolUseFailure"]
    ws.project_hooks_file({"version": 1, "hooks": {ev: [
        {"type": "command", "command": ws.probe_command(ev, "cmdkey"), "timeout": 30}]
        for ev in evs}}, name="cmdkey.json")
    ws.project_hooks_file({"hooks": {ev: [
        {"type": "command", "bash": ws.probe_command(ev, "noversion")}] for ev in evs}},
        name="noversion.json")
    pascal = {"SessionStart": "sessionStart", "UserPromptSubmit": "userPromptSubmitted",
              "PreToolUse": "preToolUse", "PostToolUse": "postToolUse",
              "PostToolUseFailure": "postToolUseFailure", "SubagentStart": "subagentStart",
              "Stop": "agentStop", "SessionEnd": "sessionEnd"}
    ws.project_hooks_file({"hooks": {pc: [{"matcher": "*", "hooks": [
        {"type": "command", "command": ws.probe_command(pc, "pascal", "nested")}]}]
        for pc in pascal}}, name="pascal.json")
    ws.project_hooks_file({"version": 1, "hooks": {
        "preToolUse": [{"type": "command", "matcher": "bash",
                        "bash": ws.probe_command("preToolUse", "matcher-bash")}],
        "postToolUse": [{"type": "command", "matcher": "helix-.*",
                         "bash": ws.probe_command("postToolUse", "matcher-mcp")}],
        "sessionStart": [{"type": "command", "cwd": "src",
                          "env": {"PROBE_EXTRA": "from-env-key"},
                          "bash": ws.probe_command("sessionStart", "cwd-env")}],
    }}, name="keys.json")
    ws.write_json(os.path.join(ws.home, ".copilot", "settings.json"), {"hooks": {
        "sessionStart": [{"type": "command", "bash": ws.probe_command("sessionStart",
                                                                      "user-settings")}]}})
    ws.write_json(os.path.join(ws.repo, ".github", "copilot", "settings.json"), {"hooks": {
        "sessionStart": [{"type": "command", "bash": ws.probe_command("sessionStart",
                                                                      "repo-settings")}]}})
    ws.workspace_mcp()
    return {}


def sc_timeout(ws):
    """sessionStart, preToolUse and postToolUse sleep 4 s with `timeoutSec: 1`; a second
    sessionStart hook answers at once."""
    doc = ws.probe_hooks("slow", events=["sessionStart", "preToolUse", "postToolUse"],
                         mode="sleep4", extra={"timeoutSec": 1})
    doc["hooks"]["sessionStart"].append({"type": "command", "timeoutSec": 30,
                                         "bash": ws.probe_command("sessionStart", "fast")})
    ws.project_hooks_file(doc)
    return {"steps": h.STEPS[:1]}


def sc_large(ws):
    """Large context: sessionStart / userPromptSubmitted / postToolUse answer ~40,000 chars."""
    cmd = (f"{sys.executable} -c 'import sys,json; sys.stdin.read(); "
           f"print(json.dumps({{\"additionalContext\": \"PROBE-LARGE-\" + sys.argv[1] + \" \" + "
           f"\"xxxxxxxxxx\" * 4000 + \" PROBE-LARGE-END-\" + sys.argv[1]}}))'")
    ws.project_hooks_file({"version": 1, "hooks": {ev: [
        {"type": "command", "bash": cmd + f" {ev}"}] for ev in LARGE_EVENTS}})
    ws.workspace_mcp()
    return {"steps": [h.STEPS[0], h.STEPS[5], h.STEPS[6]], "large": True}


LARGE_EVENTS = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
                "postToolUseFailure", "subagentStart"]


SCENARIOS = {
    "project": sc_project,
    "user": sc_user,
    "untrusted": sc_untrusted,
    "trusted-config": sc_trusted_config,
    "allow-all-env": sc_allow_all_env,
    "github-mcp-json": sc_github_mcp_json,
    "both": sc_both,
    "same-command": sc_same_command,
    "text": mode_scenario("text"),
    "nested": mode_scenario("nested"),
    "both-forms": mode_scenario("both"),
    "snake": mode_scenario("snake", ["sessionStart", "userPromptSubmitted", "postToolUse"]),
    "invalid": mode_scenario("invalid"),
    "exit1": mode_scenario("exit1", keep_json=("permissionRequest", "preToolUse")),
    "exit2": mode_scenario("exit2", keep_json=("permissionRequest", "preToolUse")),
    "stderr2": mode_scenario("stderr2", keep_json=("permissionRequest", "preToolUse")),
    "pre-tool-exit": sc_pre_tool_exit,
    "no-allow": sc_no_allow,
    "perm-a": perm_scenario("permA"),
    "perm-b": perm_scenario("permB"),
    "perm-c": perm_scenario("permC"),
    "perm-d": perm_scenario("permD"),
    "pre-allow": sc_pre_allow,
    "stop-block": sc_stop_block,
    "model-error": sc_model_error,
    "model-error-500": sc_model_error_500,
    "compact": sc_compact,
    "subagent-tools": sc_subagent_tools,
    "resume": sc_resume,
    "optin-env": sc_optin_env,
    "trusted-parent": sc_trusted_parent,
    "subdir": sc_subdir,
    "subdir-trusted-root": sc_subdir_trusted_root,
    "subdir-local": sc_subdir_local,
    "pascal-json": pascal_scenario("json"),
    "pascal-nested": pascal_scenario("nested"),
    "pascal-both": pascal_scenario("both"),
    "format": sc_format,
    "large": sc_large,
    "timeout": sc_timeout,
}
DEFAULT = list(SCENARIOS)


# ---------------------------------------------------------------------- the report

def summarise(ws, opts, rc, err, out, secs):
    reqs = ws.requests()
    calls = ws.hook_calls()
    rep = {"exit": rc, "seconds": round(secs, 1), "stderr": err[-2000:],
           "requests": len(reqs),
           "conversations": [("main" if h.is_main(b) else "sub" if h.is_sub(b) else "other")
                             for b in reqs],
           "notes": opts.get("notes", {})}
    if reqs:
        rep["tools_first_request"] = h.tool_list(reqs[0])
        mcp_tools = [t for t in reqs[0].get("tools") or [] if "helix" in t.get("name", "")]
        rep["mcp_tools"] = mcp_tools
        rep["answers"] = [b.get("_answer") for b in reqs]
    rep["fired"] = {}
    for c in calls:
        rep["fired"].setdefault(f"{c['event']}/{c['scope']}", 0)
        rep["fired"][f"{c['event']}/{c['scope']}"] += 1
    rep["calls"] = []
    for c in calls:
        stdin = c.get("stdin") if isinstance(c.get("stdin"), dict) else {}
        entry = {"event": c["event"], "scope": c["scope"], "n": c["n"], "mode": c["mode"],
                 "toolName": stdin.get("toolName", stdin.get("tool_name")),
                 "stdin_keys": sorted(stdin), "cwd": c["cwd"],
                 "env": {k: v for k, v in c.get("env", {}).items()
                         if k not in ("PATH", "HOME", "SHELL")},
                 "stdin": stdin}
        for needle in marker_needles(c):
            entry.setdefault("reached", {})[needle] = h.locate(reqs, needle)
        rep["calls"].append(entry)
    events = h.read_jsonl(out)
    rep["output_event_types"] = sorted({e.get("type", "?") for e in events})
    rep["hook_output_events"] = [e for e in events if "hook" in str(e.get("type", ""))][:60]
    sev = ws.session_events()
    rep["session_event_types"] = sorted({e.get("type", "?") for e in sev})
    rep["hook_ends"] = [{k: v for k, v in e.get("data", {}).items() if k != "hookInvocationId"}
                        for e in sev if e.get("type") == "hook.end"]
    rep["mcp_started"] = [m for m in ws.mcp_messages() if m.get("started")]
    rep["mcp_calls"] = [m["received"] for m in ws.mcp_messages()
                        if isinstance(m.get("received"), dict)
                        and m["received"].get("method") == "tools/call"]
    log = h.copilot_log_text(ws)
    rep["log_lines"] = [ln[:600] for ln in log.splitlines()
                        if re.match(r"\d{4}-\d\d-\d\dT", ln)
                        and re.search(r"hook|Hook|folder_trust|trusted|workspace MCP|mcp-config|"
                                      r"\.mcp\.json|\[ERROR\]", ln)
                        and not re.search(r"host_delivery|MCP lifecycle", ln)][:300]
    if opts.get("large"):
        rep["large"] = {}
        for ev in LARGE_EVENTS:
            start = h.locate(reqs, f"PROBE-LARGE-{ev} ")
            end = h.locate(reqs, f"PROBE-LARGE-END-{ev}")
            kept = None
            if start:
                text = json.dumps(reqs[start["request"]])
                i = text.find(f"PROBE-LARGE-{ev} ")
                j = i
                while text.startswith("PROBE", j) or text[j] in "xPROBE-LARGE " + ev:
                    j += 1
                kept = j - i
            rep["large"][ev] = {"reached": bool(start), "whole": bool(end),
                                "chars_kept": kept, "of": 40000 + len(f"PROBE-LARGE-{ev} ")
                                + len(f" PROBE-LARGE-END-{ev}")}

    return rep


def marker_needles(call):
    m = call["marker"]
    if call["mode"] == "both":
        return [m + "-top", m + "-nested"]
    if call["mode"] in ("exit1", "exit2", "stderr2"):
        return [m + " ", m + "-stderr"]
    return [m + " " if call["mode"] != "block" else m]


def print_summary(name, rep):
    print(f"== {name}: copilot exit {rep['exit']} in {rep['seconds']} s, "
          f"{rep['requests']} model requests {rep['conversations']}")
    if rep["exit"] != 0 and rep["stderr"].strip():
        print("   stderr: " + " ".join(rep["stderr"].split())[-300:])
    tools = rep.get("tools_first_request") or []
    print(f"   tools: {', '.join(tools)}")
    print(f"   MCP servers started: {[m['argv'][-1] for m in rep['mcp_started']]}; "
          f"tools/call: {len(rep['mcp_calls'])}")
    if rep.get("large"):
        print("   large: " + json.dumps(rep["large"]))
    bad = [e for e in rep.get("hook_ends", []) if not e.get("success")]
    if bad:
        print(f"   hook.end with success=false: " + "; ".join(
            f"{e.get('hookType')}: {json.dumps(e.get('error'))[:160]}" for e in bad[:8]))
    for c in rep["calls"]:
        where = []
        for needle, loc in (c.get("reached") or {}).items():
            if loc:
                where.append(f"{loc.get('conversation')} req{loc['request']} {loc['where']} "
                             f"{loc.get('role', '')}/{loc.get('block_type')}")
            else:
                where.append("not in any request")
        print(f"   {c['event']:<22} {c['scope']:<14} #{c['n']} tool={c['toolName']!s:<12} "
              f"-> {'; '.join(where)}")


def main(argv):
    fixtures = "--fixtures" in argv
    names = [a for a in argv if not a.startswith("--")] or DEFAULT
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
        return 2
    keep = os.environ.get("KEEP") == "1"
    failed = 0
    for name in names:
        root = tempfile.mkdtemp(prefix=f"helix-copilot-{name}-")
        fake = None
        bad = 0
        try:
            ws = Workspace(root)
            opts = SCENARIOS[name](ws) or {}
            fake = Fake(ws, steps=opts.get("steps"), sub_steps=opts.get("sub_steps"))
            run_opts = dict(env_extra=opts.get("env"), trust=opts.get("trust", True),
                            allow_all=opts.get("allow_all", True), cwd=opts.get("cwd"))
            rc, err, out, secs = h.run_copilot(ws, fake.port, args=opts.get("args", ()),
                                               **run_opts)
            if opts.get("then") is not None:
                rc2, err2, _, secs2 = h.run_copilot(ws, fake.port, args=opts["then"],
                                                    tag="-2", **run_opts)
                opts.setdefault("notes", {})["second run"] = {
                    "args": opts["then"], "exit": rc2, "stderr": err2[-400:]}
                secs += secs2
            fake.stop()
            rep = summarise(ws, opts, rc, err, out, secs)
            rep["scenario"] = name
            rep["doc"] = SCENARIOS[name].__doc__
            rep["root"] = ws.root
            with open(os.path.join(ws.root, "report.json"), "w") as f:
                json.dump(rep, f, indent=1)
            print_summary(name, rep)
            bad = run_checks(name, rep)
            failed += bad
            if fixtures and name in FIXTURE_SCENARIOS:
                write_fixtures(ws, name)
        except Exception as e:  # a broken set-up fails the scenario, not the run
            bad = 1
            failed += 1
            print(f"== {name}: FAILED {type(e).__name__}: {e}"[:600])
        finally:
            if fake:
                fake.stop()
        if keep or bad:
            print(f"   (files kept in {root})")
        else:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(names)} scenario(s), {failed} failed check(s)")
    return 1 if failed else 0


# ---------------------------------------------------------------------- checks
# What FINDINGS.md says Copilot CLI 1.0.102 does, as checks: a newer version that behaves
# differently fails here. A scenario without checks only reports.

ALL_FIRED = ["sessionStart", "userPromptSubmitted", "userPromptTransformed", "preToolUse",
             "preMcpToolCall", "permissionRequest", "postToolUse", "postToolUseFailure",
             "subagentStart", "subagentStop", "agentStop", "sessionEnd"]


def calls_of(rep, event, scope=None):
    return [c for c in rep["calls"] if c["event"] == event
            and (scope is None or c["scope"] == scope)]


def first_reach(call):
    return next(iter((call.get("reached") or {}).values()), None)


def check_full(scope):
    def check(rep):
        out = []
        fired = {c["event"] for c in rep["calls"] if c["scope"] == scope}
        missing = [e for e in ALL_FIRED if e not in fired]
        out.append(("every expected event fired", not missing, f"missing: {missing}"))
        out.append(("MCP tool offered as helix-search",
                    "helix-search" in (rep.get("tools_first_request") or []), ""))
        ss = first_reach(calls_of(rep, "sessionStart", scope)[0]) if fired else None
        out.append(("sessionStart context: its own user text block in messages[0]",
                    bool(ss) and ss["where"] == "messages[0]" and ss["block_type"] == "text"
                    and ss["snippet"].startswith("PROBE-sessionStart"), str(ss)[:200]))
        up = first_reach(calls_of(rep, "userPromptSubmitted", scope)[0])
        out.append(("userPromptSubmitted context: <system_reminder> after the prompt",
                    bool(up) and "<system_reminder>\nPROBE-userPromptSubmitted" in up["snippet"],
                    str(up)[:200]))
        pre = first_reach(calls_of(rep, "preToolUse", scope)[0])
        out.append(("preToolUse context: user text 'Additional context from preToolUse hook:'",
                    bool(pre) and pre["block_type"] == "text"
                    and pre["snippet"].startswith("Additional context from preToolUse hook:\n"),
                    str(pre)[:200]))
        post = first_reach(calls_of(rep, "postToolUse", scope)[0])
        out.append(("postToolUse context: appended inside the tool_result",
                    bool(post) and post["block_type"] == "tool_result" and
                    'succeeded. Additional guidance from postToolUse hooks:\n' in post["snippet"],
                    str(post)[:200]))
        fail = [first_reach(c) for c in calls_of(rep, "postToolUseFailure", scope)]
        out.append(("postToolUseFailure context: user text after the failed tool_result",
                    bool(fail) and all(f and f["block_type"] == "text" and
                                       "failed. Additional guidance from postToolUseFailure hooks:"
                                       in f["snippet"] for f in fail), str(fail)[:200]))
        sub = first_reach(calls_of(rep, "subagentStart", scope)[0])
        out.append(("subagentStart context: prepended to the subagent's prompt",
                    bool(sub) and sub["conversation"] == "sub", str(sub)[:200]))
        bash_fail = [c for c in calls_of(rep, "postToolUse", scope) if c["toolName"] == "bash"
                     and "exit 3" in json.dumps(c["stdin"].get("toolArgs"))]
        out.append(("a failing shell command (exit 3) is a postToolUse with resultType success",
                    bool(bash_fail) and bash_fail[0]["stdin"]["toolResult"]["resultType"] ==
                    "success" and "exit code 3" in
                    bash_fail[0]["stdin"]["toolResult"]["textResultForLlm"], ""))
        mcp_fail = [c for c in calls_of(rep, "postToolUseFailure", scope)
                    if c["toolName"] == "helix-search"]
        out.append(("an MCP isError result is a postToolUseFailure with `error`",
                    bool(mcp_fail) and mcp_fail[0]["stdin"].get("error", "").startswith(
                        "MCP server 'helix': "), ""))
        out.append(("toolArgs is an object", all(isinstance(c["stdin"].get("toolArgs"), dict)
                                                 for c in calls_of(rep, "preToolUse", scope)), ""))
        return out
    return check


def check_untrusted(rep):
    return [("no project hook fired", not any(c["scope"] == "project" for c in rep["calls"]), ""),
            ("the user hook fired", any(c["scope"] == "user" for c in rep["calls"]), ""),
            ("no workspace MCP server started", not rep["mcp_started"], "")]


def check_nothing_reached(rep):
    reached = [c["event"] for c in rep["calls"] if c["event"] != "permissionRequest"
               and any((c.get("reached") or {}).values())]
    return [("no hook output reached the model", not reached, f"reached: {reached}")]


def check_both_forms(rep):
    top = [c for c in rep["calls"] if c["event"] in ("sessionStart", "postToolUse")]
    return [("top-level additionalContext is used, the nested one ignored",
             bool(top) and all(list(c["reached"].values())[0] and not list(c["reached"].values())[1]
                               for c in top), "")]


def check_stop_block(rep):
    c = calls_of(rep, "agentStop")
    r = first_reach(c[0]) if c else None
    return [("agentStop block reason comes back as a new user message",
             bool(r) and r["role"] == "user" and r["block_type"] == "text", str(r)[:200]),
            ("the re-entered agentStop says stop_hook_active",
             len(c) > 1 and c[1]["stdin"].get("stop_hook_active") is True, "")]


def check_large(rep):
    big = rep.get("large", {})
    return [("postToolUse / postToolUseFailure context cut at 10,240 chars",
             all(big.get(e, {}).get("chars_kept") == 10240 and not big[e]["whole"]
                 for e in ("postToolUse", "postToolUseFailure")), json.dumps(big)[:300]),
            ("sessionStart / prompt / preToolUse / subagentStart context kept whole (40 KB)",
             all(big.get(e, {}).get("whole") for e in ("sessionStart", "userPromptSubmitted",
                                                       "preToolUse", "subagentStart")), "")]


def check_perm_allow(rep):
    return [("permissionRequest {\"behavior\": \"allow\"} approves bash and MCP without "
             "--allow-all-tools", len(rep["mcp_calls"]) == 2, f"tools/call: {len(rep['mcp_calls'])}")]


def check_perm_denied(rep):
    return [("the MCP tool is refused (no approval in prompt mode)", not rep["mcp_calls"],
             f"tools/call: {len(rep['mcp_calls'])}")]


CHECKS = {
    "project": check_full("project"),
    "user": check_full("user"),
    "trusted-config": check_full("project"),
    "allow-all-env": check_full("project"),
    "untrusted": check_untrusted,
    "text": check_nothing_reached,
    "nested": check_nothing_reached,
    "snake": check_nothing_reached,
    "invalid": check_nothing_reached,
    "both-forms": check_both_forms,
    "stop-block": check_stop_block,
    "large": check_large,
    "perm-a": check_perm_allow,
    "perm-b": check_perm_denied,
    "no-allow": check_perm_denied,
}


def run_checks(name, rep):
    failed = 0
    for what, ok, detail in (CHECKS[name](rep) if name in CHECKS else []):
        failed += not ok
        print(f"   {'PASS' if ok else 'FAIL'} {what}" + ("" if ok or not detail
                                                         else f" — {detail}"))
    return failed


# ---------------------------------------------------------------------- fixtures

def scrub(obj, ws):
    """The payload with this run's temp paths replaced: the code repository by /path/to/code,
    HOME by /path/to/home, the temp root by /path/to/tmp."""
    s = json.dumps(obj)
    for real, fake in ((ws.repo, "/path/to/code"), (ws.home, "/path/to/home"),
                       (ws.root, "/path/to/tmp")):
        s = s.replace(real, fake)
        if os.path.realpath(real) != real:
            s = s.replace(os.path.realpath(real), fake)
    return json.loads(s)


FIXTURE_SCENARIOS = ("project", "model-error", "compact", "stop-block", "resume",
                     "subagent-tools", "format")


def pick_fixtures(calls, name):
    """{fixture file name: hook call} for one scenario's probe calls (see fixtures/README.md)."""
    def stdin(c):
        return c.get("stdin") if isinstance(c.get("stdin"), dict) else {}

    def tool(c):
        return str(stdin(c).get("toolName", stdin(c).get("tool_name", "")))

    def args(c):
        return json.dumps(stdin(c).get("toolArgs", stdin(c).get("toolInput", stdin(c).get("tool_input", ""))))

    def is_sub(c):
        return "agentId" in stdin(c) or "agent_id" in stdin(c)

    out = {}

    def first(fname, event, pred=lambda c: True):
        for c in calls:
            if fname not in out and c["event"] == event and pred(c):
                out[fname] = c

    view = lambda c: tool(c) == "view" and "missing.rs" not in args(c)  # noqa: E731
    missing = lambda c: tool(c) == "view" and "missing.rs" in args(c)  # noqa: E731
    failing = lambda c: tool(c) == "bash" and "exit 3" in args(c)  # noqa: E731
    ok = lambda c: tool(c) == "bash" and "build ok" in args(c)  # noqa: E731
    mcp = lambda c: tool(c) == "helix-search" and "FAIL" not in args(c)  # noqa: E731
    mcp_fail = lambda c: tool(c) == "helix-search" and "FAIL" in args(c)  # noqa: E731
    task = lambda c: tool(c) == "task"  # noqa: E731
    main_only = lambda c: not is_sub(c)  # noqa: E731
    if name == "project":
        first("session-start.json", "sessionStart")
        first("prompt.json", "userPromptSubmitted", main_only)
        first("prompt-subagent.json", "userPromptSubmitted", is_sub)
        first("prompt-transformed.json", "userPromptTransformed", main_only)
        first("pre-tool-view.json", "preToolUse", view)
        first("pre-tool-bash.json", "preToolUse", failing)
        first("pre-tool-mcp.json", "preToolUse", mcp)
        first("pre-tool-task.json", "preToolUse", task)
        first("post-tool-view.json", "postToolUse", view)
        first("post-tool-ok.json", "postToolUse", ok)
        first("post-tool-bash-failing.json", "postToolUse", failing)
        first("post-tool-mcp.json", "postToolUse", mcp)
        first("post-tool-task.json", "postToolUse", task)
        first("post-tool-failure.json", "postToolUseFailure", missing)
        first("post-tool-failure-mcp.json", "postToolUseFailure", mcp_fail)
        first("pre-mcp-tool-call.json", "preMcpToolCall")
        first("permission-request.json", "permissionRequest", failing)
        first("permission-request-mcp.json", "permissionRequest",
              lambda c: tool(c).startswith("helix/"))
        first("subagent-start.json", "subagentStart")
        first("subagent-stop.json", "subagentStop")
        first("agent-stop.json", "agentStop", main_only)
        first("agent-stop-subagent.json", "agentStop", is_sub)
        first("session-end.json", "sessionEnd")
    elif name == "model-error":
        first("error-occurred.json", "errorOccurred")
        first("session-end-error.json", "sessionEnd")
    elif name == "compact":
        first("pre-compact.json", "preCompact")
    elif name == "stop-block":
        first("agent-stop-active.json", "agentStop",
              lambda c: stdin(c).get("stop_hook_active") is True)
    elif name == "resume":
        first("session-start-resume.json", "sessionStart",
              lambda c: stdin(c).get("source") == "resume")
    elif name == "subagent-tools":
        first("pre-tool-subagent-view.json", "preToolUse", lambda c: is_sub(c) and view(c))
        first("post-tool-subagent-view.json", "postToolUse", lambda c: is_sub(c) and view(c))
        first("post-tool-subagent-bash-failing.json", "postToolUse",
              lambda c: is_sub(c) and failing(c))
    elif name == "format":
        for c in calls:
            if c["scope"] != "pascal":
                continue
            key = re.sub(r"(?<!^)(?=[A-Z])", "-", c["event"]).lower()
            t = tool(c)
            if t:
                key += "-" + ("mcp" if "helix" in t else t.lower())
                if "FAIL" in args(c) or "missing.rs" in args(c) or "exit 3" in args(c):
                    key += "-failing"
            elif is_sub(c):
                key += "-subagent"
            if f"pascal/{key}.json" not in out:
                out[f"pascal/{key}.json"] = c
    return out


def write_fixtures(ws, name):
    calls = ws.hook_calls()
    chosen = pick_fixtures(calls, name)
    os.makedirs(FIXTURES, exist_ok=True)
    for fname, c in chosen.items():
        path = os.path.join(FIXTURES, fname)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(scrub(c["stdin"], ws), f, indent=2)
            f.write("\n")
    print(f"   fixtures: {', '.join(sorted(chosen))}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
