#!/usr/bin/env python3
"""A loopback stand-in for the Anthropic Messages API, for driving the real GitHub Copilot CLI
(`COPILOT_PROVIDER_TYPE=anthropic`, `COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:PORT`).

Adapted from tests/claude-code/fake_anthropic.py. It records every request (method, path,
selected headers, JSON body) as one JSON line in --log, and answers `POST /v1/messages`
from a script:

- the main conversation (a user message, not counting tool results, holds --main-marker and
  none holds --sub-marker) gets the scripted steps in order: the first step whose tool calls
  (ids `toolu_e2e_<step>_<n>`) the conversation does not hold yet; once the script is used up
  it gets --final-text;
- a subagent conversation (a user message holds --sub-marker) gets the script's "sub_steps"
  the same way (ids `toolu_sub_<step>_<n>`), then --sub-text;
- every other request (titles, summaries, side queries) gets a generic short text.

The script is JSON: {"steps": [[block, ...], ...], "sub_steps": [...]} where a block is
  {"type": "text", "text": "..."},
  {"type": "tool_use", "name": "...", "input": {...}}, or
  {"type": "http_error", "status": 400, "message": "..."} (the whole step: the request is
  answered with that HTTP error, once; the next request goes on with the next step).
Tool names are taken as they are, except:
  "@agent"            the subagent tool, whatever this client calls it (`task`, `Agent`, `Task`);
  "@mcp:SERVER/TOOL"  that MCP tool under whatever name the client offers it
                      (`SERVER-TOOL` in Copilot CLI, `mcp__SERVER__TOOL` in Claude Code, ...).

Streaming requests (`"stream": true`) are answered in the server-sent-events format of the
Messages API; others with one JSON message. Python 3 standard library only. Prints the port
it listens on to --port-file.
"""

import json
import os
import re
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from fake_http import LOCK, Handler, arguments, serve  # noqa: E402
from fake_http import Script as BaseScript  # noqa: E402


def text_of(content, results=True):
    """All text in a message's content (a string or a list of blocks; tool results included
    unless results=False)."""
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result" and results:
            out.append(text_of(block.get("content")))
    return "\n".join(out)


def user_texts(messages):
    """The text of every user message, tool results left out."""
    return [text_of(m.get("content"), results=False) for m in messages
            if m.get("role") == "user"]


def tool_names(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def conversation_ids(messages):
    """The tool_use ids the conversation already holds (calls and their results)."""
    ids = set()
    for m in messages:
        if not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict):
                if b.get("type") == "tool_use":
                    ids.add(b.get("id", ""))
                elif b.get("type") == "tool_result":
                    ids.add(b.get("tool_use_id", ""))
    return ids


def resolve(name, body):
    """A concrete tool name for a script name (see the module doc)."""
    names = tool_names(body)
    if name == "@agent":
        return next((n for n in ("task", "Agent", "Task") if n in names), "task")
    if not name.startswith("@mcp:"):
        return name
    server, _, tool = name[len("@mcp:"):].partition("/")
    patterns = [re.escape(server) + r"[-_./:]+" + re.escape(tool),
                r"mcp__(?:[A-Za-z0-9_-]*_)?" + re.escape(server) + "__" + re.escape(tool)]
    for p in patterns:
        for n in names:
            if re.fullmatch(p, n or ""):
                return n
    return f"{server}-{tool}"


class Script(BaseScript):
    def __init__(self, args):
        super().__init__(args)
        self.errors_sent = set()

    def reply(self, body):
        """(blocks, stop_reason) or (None, http_error_block) for one /v1/messages request."""
        messages = body.get("messages") or []
        texts = user_texts(messages)
        if any(self.sub_marker in t for t in texts):
            return self.next_step(messages, body, self.sub_steps, "toolu_sub_", self.sub_text)
        if any(self.main_marker in t for t in texts):
            return self.next_step(messages, body, self.steps, "toolu_e2e_", self.final_text)
        return [{"type": "text", "text": "ok"}], "end_turn"

    def next_step(self, messages, body, steps, prefix, final_text):
        used = conversation_ids(messages)
        for i, step in enumerate(steps):
            if step and step[0].get("type") == "http_error":
                with LOCK:
                    if (prefix, i) in self.errors_sent:
                        continue
                    self.errors_sent.add((prefix, i))
                return None, step[0]
            if any(u.startswith(f"{prefix}{i}_") for u in used):
                continue
            return self.blocks(step, i, body, prefix)
        return [{"type": "text", "text": final_text}], "end_turn"

    @staticmethod
    def blocks(step, turn, body, prefix):
        out = []
        for i, b in enumerate(step):
            if b["type"] == "tool_use":
                out.append({"type": "tool_use", "id": f"{prefix}{turn}_{i}",
                            "name": resolve(b["name"], body), "input": b.get("input", {})})
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


class MessagesHandler(Handler):
    server_version = "fake-anthropic/1"
    LOG_HEADERS = ("anthropic-beta", "anthropic-version", "user-agent", "x-app", "content-type",
                   "x-initiator", "copilot-integration-id")
    REQUEST_ID_HEADER = "request-id"

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
        path = self.path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self.record(body, n)
            self.send_json(200, {"input_tokens": 100})
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self.record(body, n)
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                            "message": f"no {path} here"}})
            return
        blocks, stop = self.server.script.reply(body)
        if blocks is None:  # a scripted HTTP error
            err = stop
            self.record(body, n, answer={"http_error": err.get("status", 400)})
            self.send_json(err.get("status", 400), {"type": "error", "error": {
                "type": err.get("error_type", "invalid_request_error"),
                "message": err.get("message", "scripted failure")}})
            return
        msg = message(blocks, stop, body.get("model") or "claude-e2e")
        self.record(body, n, answer={"content": blocks, "stop_reason": stop})
        if not body.get("stream"):
            self.send_json(200, msg)
            return
        self.send_sse(sse_events(msg))


def main():
    p = arguments(__doc__)
    p.add_argument("--sub-marker", default="HELIX-E2E-SUB")
    p.add_argument("--sub-text", default="Subagent done.")
    args = p.parse_args()
    return serve(MessagesHandler, args.log, args.port_file, script=Script(args))


if __name__ == "__main__":
    sys.exit(main())
