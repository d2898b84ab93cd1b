#!/usr/bin/env python3
"""A loopback stand-in for the OpenAI Responses API, for driving the real Codex CLI offline.

It records every request (method, path, selected headers, JSON body) as one JSON line in
--log, and answers `POST /v1/responses` (streamed as server-sent events, the way Codex asks
for it) from a script. The main conversation (the one whose user input holds --main-marker)
gets the scripted steps in order: the first step none of whose calls (call ids
`call_e2e_<step>_<n>`) appear in the request's `input` yet; once the script is used up it
gets --final-text. A subagent (a user message holds --sub-marker) gets --sub-text; a request
whose x-codex-turn-metadata says it is not a turn (a compaction...) gets a short summary;
anything else gets "ok".

The script is JSON: {"steps": [[call, ...], ...]}, where a call is one of
  {"type": "shell", "command": "cat src/db/pool.rs"}
        a shell command, sent through whatever shell tool the request offers:
        `exec_command` ({"cmd": ...}), `shell_command` ({"command": ...}) or `shell`
        ({"command": ["bash", "-lc", ...]}); "workdir" may be given, and "extra": {...}
        adds exec_command arguments (sandbox_permissions, justification, ...).
  {"type": "mcp", "server": "helix", "tool": "search", "arguments": {...}}
        an MCP tool, under whatever name the request gives it (`mcp__helix__search`, or a
        namespace `mcp__helix__` holding the function `search`).
  {"type": "function", "name": "...", "arguments": {...}, "namespace": "..."}
        any function tool by its exact name (namespace: for a tool inside a `namespace`
        tool, e.g. "multi_agent_v1" for spawn_agent).
  {"type": "wait_agents"}
        multi_agent_v1.wait_agent on every agent id that earlier spawn_agent calls returned.
  {"type": "custom", "name": "apply_patch", "input": "..."}
        a freeform (custom) tool call.
  {"type": "text", "text": "..."}
        assistant text before the calls.
A step's calls are returned together, as parallel tool calls.

Python 3 standard library only. Prints the port it listens on to --port-file.
"""

import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from fake_http import LOCK, Handler, arguments, serve  # noqa: E402
from fake_http import Script as BaseScript  # noqa: E402

SHELL_TOOLS = ("exec_command", "shell_command", "shell")


def text_of(content):
    """All text in an input item's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def user_texts(body):
    return [text_of(i.get("content")) for i in body.get("input") or []
            if isinstance(i, dict) and i.get("type", "message") == "message"
            and i.get("role") == "user"]


def call_ids(body):
    return {i.get("call_id") for i in body.get("input") or []
            if isinstance(i, dict) and i.get("call_id")}


def tools_by_name(body):
    """Function/custom tools of a request, by the name the model calls them; tools inside a
    `namespace` tool (Codex puts each MCP server's tools in one, `mcp__<server>`) are listed
    under `<namespace>__<function>` (and `<namespace><function>`)."""
    out = {}
    for t in body.get("tools") or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            for sub in t.get("tools") or []:
                if isinstance(sub, dict) and sub.get("name"):
                    ns = t.get("name") or ""
                    entry = dict(sub, _namespace=ns)
                    out[ns + sub["name"]] = entry
                    out[ns.rstrip("_") + "__" + sub["name"]] = entry
        elif t.get("name"):
            out[t["name"]] = t
    return out


class Script(BaseScript):
    def __init__(self, args):
        super().__init__(args)
        self.issued = {}

    def reply(self, body, meta):
        """The output items answering one /v1/responses request. `meta` is the request's
        x-codex-turn-metadata header (request_kind "turn" for ordinary turns)."""
        users = user_texts(body)
        kind = meta.get("request_kind") or "turn"
        if any(self.sub_marker in u for u in users):
            return [message(self.sub_text)]
        if kind != "turn":  # a compaction, a title, a memory summary...
            return [message(f"Summary ({kind}): the session read src/db/pool.rs.")]
        if any(self.main_marker in u for u in users):
            return self.next_step(body)
        return [message("ok")]

    def next_step(self, body):
        """The first step neither answered in this request's input (its call ids) nor handed
        out before in this conversation (keyed by prompt_cache_key, the thread id): a
        compaction drops the calls from the input, and the script must not start over."""
        done = call_ids(body)
        key = body.get("prompt_cache_key") or ""
        with LOCK:
            issued = self.issued.setdefault(key, set())
            for i, step in enumerate(self.steps):
                ids = [f"call_e2e_{i}_{n}" for n in range(len(step))]
                if i in issued or any(c in done for c in ids):
                    continue
                issued.add(i)
                return self.items(step, i, body)
        return [message(self.final_text)]

    def items(self, step, turn, body):
        tools = tools_by_name(body)
        out = []
        for n, call in enumerate(step):
            cid = f"call_e2e_{turn}_{n}"
            kind = call["type"]
            if kind == "text":
                out.append(message(call["text"]))
            elif kind == "shell":
                out.append(shell_call(call, cid, tools))
            elif kind == "mcp":
                out.append(mcp_call(call, cid, tools))
            elif kind == "function":
                out.append(function_call(call["name"], call.get("arguments", {}), cid,
                                         namespace=call.get("namespace")))
            elif kind == "wait_agents":
                ids = spawned_agent_ids(body)
                out.append(function_call("wait_agent", {"targets": ids,
                                                        "timeout_ms": call.get("timeout_ms",
                                                                               30000)},
                                         cid, namespace=call.get("namespace",
                                                                 "multi_agent_v1")))
            elif kind == "custom":
                out.append({"type": "custom_tool_call", "id": "ctc_" + cid, "status": "completed",
                            "call_id": cid, "name": call["name"], "input": call["input"]})
            else:
                raise ValueError(f"unknown call type {kind!r}")
        return out


def spawned_agent_ids(body):
    """Agent ids from the outputs of earlier spawn_agent calls in the request's input."""
    spawn_calls = {i.get("call_id") for i in body.get("input") or []
                   if isinstance(i, dict) and i.get("type") == "function_call"
                   and i.get("name") == "spawn_agent"}
    ids = []
    for i in body.get("input") or []:
        if (isinstance(i, dict) and i.get("type") == "function_call_output"
                and i.get("call_id") in spawn_calls):
            out = i.get("output")
            text = out if isinstance(out, str) else json.dumps(out)
            try:
                doc = json.loads(text)
                aid = doc.get("agent_id") or doc.get("id")
            except (ValueError, AttributeError):
                aid = None
            if aid:
                ids.append(aid)
    return ids


def message(text):
    return {"type": "message", "role": "assistant", "id": "msg_e2e_" + uuid.uuid4().hex[:16],
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call(name, arguments, cid, namespace=None):
    item = {"type": "function_call", "id": "fc_" + cid, "status": "completed", "call_id": cid,
            "name": name, "arguments": json.dumps(arguments)}
    if namespace:
        item["namespace"] = namespace
    return item


def shell_call(call, cid, tools):
    cmd = call["command"]
    wd = call.get("workdir")
    name = next((n for n in SHELL_TOOLS if n in tools), None)
    if name == "exec_command":
        args = {"cmd": cmd}
        if wd:
            args["workdir"] = wd
        args.update(call.get("extra") or {})  # e.g. sandbox_permissions, justification
        return function_call(name, args, cid)
    if name == "shell_command":
        args = {"command": cmd}
        if wd:
            args["workdir"] = wd
        return function_call(name, args, cid)
    if name == "shell":
        args = {"command": ["bash", "-lc", cmd]}
        if wd:
            args["workdir"] = wd
        return function_call(name, args, cid)
    # No function shell tool: the built-in local_shell item.
    return {"type": "local_shell_call", "id": "lsc_" + cid, "call_id": cid, "status": "completed",
            "action": {"type": "exec", "command": ["bash", "-lc", cmd],
                       "working_directory": wd}}


def mcp_call(call, cid, tools):
    server, tool = call["server"], call["tool"]
    args = call.get("arguments", {})
    for name in (f"mcp__{server}__{tool}", f"{server}__{tool}", f"{server}.{tool}"):
        t = tools.get(name)
        if t is None:
            continue
        ns = t.get("_namespace")
        if ns:
            return function_call(t["name"], args, cid, namespace=ns)
        return function_call(name, args, cid)
    # Not offered: call the conventional name and let the client say what it thinks.
    return function_call(f"mcp__{server}__{tool}", args, cid)


def sse_events(items, model, input_tokens=1000):
    rid = "resp_e2e_" + uuid.uuid4().hex[:16]
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": base}
    for n, item in enumerate(items):
        yield "response.output_item.added", {"type": "response.output_item.added",
                                             "output_index": n, "item": item}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield "response.output_text.delta", {"type": "response.output_text.delta",
                                                 "item_id": item["id"], "output_index": n,
                                                 "content_index": 0, "delta": text}
        yield "response.output_item.done", {"type": "response.output_item.done",
                                            "output_index": n, "item": item}
    done = dict(base, status="completed", output=items,
                usage={"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": input_tokens + 20})
    yield "response.completed", {"type": "response.completed", "response": done}


class ResponsesHandler(Handler):
    server_version = "fake-responses/1"
    LOG_HEADERS = ("user-agent", "originator", "content-type", "accept", "openai-beta",
                   "session_id", "conversation_id", "version", "x-codex-turn-metadata")
    LOG_TIME = True
    REQUEST_ID_HEADER = "x-request-id"

    def do_GET(self):
        self.record(None, 0)
        path = self.path.split("?", 1)[0]
        if path.rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.send_json(404, {"error": {"message": "not here", "type": "not_found"}})

    def do_POST(self):
        body, n = self.read_body()
        self.record(body, n)
        path = self.path.split("?", 1)[0]
        if not path.endswith("/responses") or not isinstance(body, dict):
            self.send_json(404, {"error": {"message": f"no {path} here", "type": "not_found"}})
            return
        try:
            meta = json.loads(self.headers.get("x-codex-turn-metadata") or "{}")
        except ValueError:
            meta = {}
        items = self.server.script.reply(body, meta)
        model = body.get("model") or "gpt-e2e"
        self.send_sse(sse_events(items, model, self.server.input_tokens))


def main():
    p = arguments(__doc__)
    p.add_argument("--sub-marker", default="HELIX-E2E-SUB")
    p.add_argument("--sub-text", default="Subagent done.")
    p.add_argument("--input-tokens", type=int, default=1000,
                   help="usage.input_tokens reported for every response (drives auto-compaction)")
    args = p.parse_args()
    return serve(ResponsesHandler, args.log, args.port_file, script=Script(args),
                 input_tokens=args.input_tokens)


if __name__ == "__main__":
    sys.exit(main())
