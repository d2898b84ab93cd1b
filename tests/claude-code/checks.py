"""What reached the model in a real Claude Code session: reads the requests the stand-in
recorded and Claude Code's stream-json output, and prints PASS/FAIL/INFO lines.
"""

import json
import os
import re

MAIN = "HELIX-E2E-MAIN"
SUB = "HELIX-E2E-SUB"

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


class Checks:
    """Counts and prints the checks of one scenario."""

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
        note = f"  [known problem: {problem}]" if problem and not ok else ""
        detail = " ".join(str(detail).split())
        print(f"{tag} {self.scenario}: {name}{' — ' + detail if detail else ''}{note}", flush=True)

    def info(self, name, detail):
        print(f"INFO {self.scenario}: {name} — {' '.join(str(detail).split())}", flush=True)


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
    and ToolSearch loads a schema). A plugin's server gets `mcp__plugin_<plugin>_<server>__`.
    Also every helix tool name offered (two servers can offer the same tool)."""
    schema = [t.get("name") or "" for t in body.get("tools") or [] if isinstance(t, dict)]
    deferred = re.findall(r"(?m)^(mcp__\w+)$", model_text(body))
    offered, how, every = {}, {}, set()
    for kind, names in (("schema", schema), ("deferred", deferred)):
        for n in names:
            m = HELIX_TOOL.fullmatch(n)
            if m:
                every.add(n)
            if m and m.group(1) not in offered:
                offered[m.group(1)], how[m.group(1)] = n, kind
    return offered, how, every


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
            problem=problems.get("dup", "injected twice"))

    # MCP tools offered to the model.
    offered, how, every = offered_tools(main[0])
    missing = [t for t in MCP_TOOLS if t not in offered]
    kinds = sorted(set(how.values()))
    detail = ("missing: " + ", ".join(missing) if missing else
              f"as {offered['search']}…, " + ("full schemas in `tools`" if kinds == ["schema"]
                                               else "deferred (names only; ToolSearch loads them)"))
    c.check("helix MCP tools are offered to the model", not missing, detail,
            problem=problems.get("mcp", "MCP server not registered"))
    wrong = sorted(mentioned_tools(seen) - every)
    c.check("hook texts name only MCP tools the session has", not wrong,
            ("texts point at " + ", ".join(wrong) + "; the session has "
             + (", ".join(sorted(every)) or "no helix MCP tools")) if wrong else "",
            problem=problems.get("names", "MCP server not registered"))

    # The search call: allowed without any permission flag.
    calls = [u for u in tool_uses(last) if HELIX_TOOL.fullmatch(str(u.get("name")))]
    call = next((u for u in calls if u["name"].endswith("helix__search")), None)
    result = tool_result(last, call["id"]) if call else None
    if result is None:
        c.check("helix search call gets a result", False, "no tool_result found")
        return
    body = result_text(result)
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
    # What each helix tool call handed the model: measured, and text rather than JSON.
    for u in calls:
        result = tool_result(last, u["id"])
        if result is None:
            c.check(f"{u['name']} gets a result", False, "no tool_result found")
            continue
        body = result_text(result)
        content = result.get("content")
        shape = ("a JSON string" if isinstance(content, str) and body.lstrip().startswith("{")
                 else "a string" if isinstance(content, str)
                 else "text blocks" if isinstance(content, list) else type(content).__name__)
        label = call_label(u)
        c.info(f"{label} tool_result", f"{shape}, {len(body)} characters: {body[:100]!r}")
        if result.get("is_error"):
            c.check(f"{label} succeeds", False, body[:160])
        elif check_text:
            c.check(f"the model gets {label}'s text, not structuredContent JSON",
                    not body.lstrip().startswith("{"), "got " + shape,
                    problem=problems.get("text", "MCP result as JSON"))


def result_text(result):
    content = result.get("content")
    return text_of(content) if isinstance(content, list) else str(content)


def call_label(use):
    """`search`, `brief(topic=db)`: a tool call named by its helix tool and telling arguments."""
    tool = HELIX_TOOL.fullmatch(use["name"]).group(1)
    args = use.get("input") or {}
    extra = {k: v for k, v in args.items() if k == "topic" and tool == "brief"}
    return tool + ("(" + ",".join(f"{k}={v}" for k, v in extra.items()) + ")" if extra else "")


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
