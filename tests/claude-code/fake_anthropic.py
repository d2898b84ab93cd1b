#!/usr/bin/env python3
"""A loopback stand-in for the Anthropic Messages API, for driving the real Claude Code CLI.

It records every request (method, path, selected headers, JSON body) as one JSON line in
--log, and answers `POST /v1/messages` from a script: the main conversation (the one whose
first user message holds --main-marker) gets the scripted steps in order, the first step
whose tool calls (ids `toolu_e2e_<step>_<n>`) the conversation does not hold yet; once the
script is used up it gets --final-text. A subagent conversation (first user message holds
--sub-marker) gets a short text at once. Every other request (titles, summaries, side
queries) gets a generic short text. Streaming requests (`"stream": true`) are answered in
the server-sent-events format of the Messages API; others with one JSON message.

The script is JSON: {"steps": [[block, ...], ...]} where a block is
{"type": "text", "text": "..."} or {"type": "tool_use", "name": "...", "input": {...}}; every
step holds at least one tool_use. A tool the request names only as deferred (not in `tools`)
is loaded with a ToolSearch call `select:<name>` first, as a model does.
The tool name "@agent" stands for the subagent tool, whatever this Claude Code version
calls it ("Agent" or "Task"); "@mcp:helix__search" for helix's search tool under whatever
prefix the session gives it (a plugin's servers get `mcp__plugin_<plugin>_<server>__`).

Python 3 standard library only. Prints the port it listens on to --port-file.
"""

import argparse
import json
import os
import re
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def text_of(content):
    """All text in a message's content (a string or a list of blocks, tool results included)."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.append(text_of(block.get("content")))
    return "\n".join(out)


def first_user_text(messages):
    for m in messages:
        if m.get("role") == "user":
            return text_of(m.get("content"))
    return ""


def all_text(body):
    """The system prompt and every message's text, as the model reads them."""
    system = body.get("system")
    parts = [text_of(system) if isinstance(system, list) else str(system or "")]
    parts += [text_of(m.get("content")) for m in body.get("messages") or []]
    return "\n".join(parts)


def tool_names(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


class Script:
    def __init__(self, args):
        with open(args.script, encoding="utf-8") as f:
            self.steps = json.load(f)["steps"]
        self.main_marker = args.main_marker
        self.sub_marker = args.sub_marker
        self.final_text = args.final_text

    def reply(self, body):
        """The content blocks and stop reason answering one /v1/messages request."""
        messages = body.get("messages") or []
        first = first_user_text(messages)
        if self.main_marker in first and self.sub_marker not in first:
            return self.next_step(messages, body)
        if self.sub_marker in first:
            return [{"type": "text", "text": "Subagent done."}], "end_turn"
        return [{"type": "text", "text": "ok"}], "end_turn"

    def next_step(self, messages, body):
        """The first step whose tool calls are not in the conversation yet. A tool the request
        offers only as a deferred name is first loaded with ToolSearch, as a model would."""
        used = {b.get("id", "") for m in messages if m.get("role") == "assistant"
                and isinstance(m.get("content"), list)
                for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}
        names = tool_names(body)
        for i, step in enumerate(self.steps):
            if any(u.startswith(f"toolu_e2e_{i}_") for u in used):
                continue
            missing = [self.resolve(b["name"], body) for b in step if b["type"] == "tool_use"
                       and b["name"] != "@agent"]
            missing = [n for n in missing if n not in names]
            if missing and "ToolSearch" in names and f"toolu_e2e_ts{i}_0" not in used:
                return [{"type": "tool_use", "id": f"toolu_e2e_ts{i}_0", "name": "ToolSearch",
                         "input": {"query": "select:" + ",".join(missing),
                                   "max_results": 5}}], "tool_use"
            return self.blocks(step, i, body)
        return [{"type": "text", "text": self.final_text}], "end_turn"

    @staticmethod
    def resolve(name, body):
        """A concrete tool name: "@agent" is the subagent tool; "@mcp:<server>__<tool>" is
        that MCP tool under whatever prefix the session gives it (`mcp__<server>__<tool>`, or
        `mcp__plugin_<plugin>_<server>__<tool>` for a plugin's server), offered in `tools` or
        listed by name as deferred."""
        names = tool_names(body)
        if name == "@agent":
            return next((n for n in ("Agent", "Task") if n in names), "Agent")
        if not name.startswith("@mcp:"):
            return name
        suffix = name[len("@mcp:"):]
        pattern = r"mcp__(?:[A-Za-z0-9_-]*_)?" + re.escape(suffix)
        for n in names:
            if re.fullmatch(pattern, n or ""):
                return n
        m = re.search(r"(?m)^(" + pattern + r")$", all_text(body))
        return m.group(1) if m else "mcp__" + suffix

    def blocks(self, step, turn, body):
        out = []
        for i, b in enumerate(step):
            if b["type"] == "tool_use":
                name = self.resolve(b["name"], body)
                out.append({"type": "tool_use", "id": f"toolu_e2e_{turn}_{i}",
                            "name": name, "input": b.get("input", {})})
            else:
                out.append({"type": "text", "text": b["text"]})
        stop = "tool_use" if any(b["type"] == "tool_use" for b in out) else "end_turn"
        return out, stop


def message(blocks, stop, model):
    return {
        "id": "msg_e2e_" + uuid.uuid4().hex[:20],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
    }


def sse_events(msg):
    """The Messages API streaming events for a complete message."""
    start = dict(msg, content=[], stop_reason=None)
    start["usage"] = dict(msg["usage"], output_tokens=1)
    yield "message_start", {"type": "message_start", "message": start}
    for i, b in enumerate(msg["content"]):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "tool_use", "id": b["id"],
                                                            "name": b["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(b["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": msg["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": msg["usage"]["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, fmt, *args):  # quiet: the JSONL log is the record
        pass

    def record(self, body, raw_len):
        entry = {
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()
                        if k.lower() in ("anthropic-beta", "anthropic-version", "user-agent",
                                         "x-app", "content-type")},
            "bytes": raw_len,
            "body": body,
        }
        with LOCK:
            with open(self.server.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("request-id", "req_e2e_" + uuid.uuid4().hex[:16])
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return (json.loads(raw) if raw else None), len(raw)
        except ValueError:
            return {"_unparsed": raw[:2000].decode("utf-8", "replace")}, len(raw)

    def do_GET(self):
        self.record(None, 0)
        if self.path.startswith("/v1/models"):
            self.send_json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
        else:
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": "not here"}})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        body, n = self.read_body()
        self.record(body, n)
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": 100})
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": f"no {path} here"}})
            return
        blocks, stop = self.server.script.reply(body)
        msg = message(blocks, stop, body.get("model") or "claude-e2e")
        if not body.get("stream"):
            self.send_json(200, msg)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_e2e_" + uuid.uuid4().hex[:16])
        self.send_header("connection", "close")
        self.end_headers()
        for event, data in sse_events(msg):
            self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--main-marker", default="HELIX-E2E-MAIN")
    p.add_argument("--sub-marker", default="HELIX-E2E-SUB")
    p.add_argument("--final-text", default="All done.")
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.log_path = args.log
    server.script = Script(args)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
