#!/usr/bin/env python3
"""A loopback stand-in for the Gemini API (generativelanguage v1beta), for driving the real
Gemini CLI (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`).

It records every request (method, path, selected headers, JSON body, and the parts it
answered with) as one JSON line in --log, and answers:

- `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` and `...:generateContent`: the main
  conversation (the one whose first user content holds --main-marker) gets the scripted steps
  in order: the first step whose function calls (ids `e2e_<step>_<n>`) the conversation does
  not hold yet; once the script is used up it gets --final-text. Any other request (a side
  query: routing, next-speaker check, loop detection, summaries) that asks for JSON
  (`generationConfig.responseMimeType` = application/json) gets a minimal object that fits
  its schema; else a short text.
- `POST ...:countTokens` -> {"totalTokens": N}; `POST ...:embedContent` /
  `...:batchEmbedContents` -> zero vectors; `GET /v1beta/models...` -> a small model list.

The script is JSON: {"steps": [[part, ...], ...]} where a part is {"text": "..."} or
{"functionCall": {"name": "...", "args": {...}}}; every step holds at least one functionCall.
The name "@mcp:<server>/<tool>" stands for that MCP tool under whatever name the request's
functionDeclarations give it (`mcp_<server>_<tool>` at Gemini CLI 0.61, `<tool>` or
`<server>__<tool>` in older versions).

Python 3 standard library only. Prints the port it listens on to --port-file.
"""

import json
import os
import re
import sys
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from fake_http import Handler, arguments, serve  # noqa: E402
from fake_http import Script as BaseScript  # noqa: E402


def parts_text(parts):
    """All text of a content's parts, function responses included (as JSON)."""
    out = []
    for p in parts or []:
        if not isinstance(p, dict):
            continue
        if "text" in p:
            out.append(str(p.get("text") or ""))
        elif "functionResponse" in p:
            out.append(json.dumps(p["functionResponse"].get("response")))
    return "\n".join(out)


def first_user_text(contents):
    for c in contents or []:
        if c.get("role", "user") == "user":
            return parts_text(c.get("parts"))
    return ""


def declared_names(body):
    names = []
    for t in body.get("tools") or []:
        for d in (t or {}).get("functionDeclarations") or []:
            if isinstance(d, dict) and d.get("name"):
                names.append(d["name"])
    return names


def config_of(body):
    return body.get("generationConfig") or body.get("config") or {}


def example_for(schema, depth=0):
    """A minimal value that fits a JSON schema (OpenAPI-style uppercase types included)."""
    if not isinstance(schema, dict) or depth > 8:
        return None
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return example_for(schema[key][0], depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if str(x).lower() != "null"), t[0] if t else None)
    t = str(t or ("object" if "properties" in schema else "string")).lower()
    if t == "object":
        props = schema.get("properties") or {}
        return {k: example_for(v, depth + 1) for k, v in props.items()}
    if t == "array":
        n = schema.get("minItems") or 0
        return [example_for(schema.get("items") or {}, depth + 1) for _ in range(n)]
    if t in ("number", "integer"):
        return schema.get("minimum", 0)
    if t == "boolean":
        return False
    return "ok"


class Script(BaseScript):
    def reply(self, body):
        """The parts and finish reason answering one generateContent request."""
        contents = body.get("contents") or []
        if self.main_marker in first_user_text(contents) and declared_names(body):
            return self.next_step(contents, body), "main"
        cfg = config_of(body)
        if str(cfg.get("responseMimeType", "")).lower() == "application/json":
            schema = cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {}
            return [{"text": json.dumps(example_for(schema) or {})}], "json"
        return [{"text": "ok"}], "side"

    def next_step(self, contents, body):
        used = set()
        calls_so_far = 0
        for c in contents:
            if c.get("role") != "model":
                continue
            for p in c.get("parts") or []:
                fc = p.get("functionCall") if isinstance(p, dict) else None
                if fc:
                    calls_so_far += 1
                    used.add(str(fc.get("id") or ""))
        for i, step in enumerate(self.steps):
            if any(u.startswith(f"e2e_{i}_") for u in used):
                continue
            return self.parts(step, i, body)
        return [{"text": self.final_text}]

    @staticmethod
    def resolve(name, body):
        if not name.startswith("@mcp:"):
            return name
        server, tool = name[len("@mcp:"):].split("/", 1)
        names = declared_names(body)
        for cand in (f"mcp_{server}_{tool}", f"{server}__{tool}", tool):
            if cand in names:
                return cand
        for n in names:  # another prefix form that still names the server
            if re.fullmatch(r"(?:mcp_)?[A-Za-z0-9_.-]*" + re.escape(server) + r"[_.-]+"
                            + re.escape(tool), n):
                return n
        return f"mcp_{server}_{tool}"  # not offered: call it anyway, as a model might

    def parts(self, step, turn, body):
        out = []
        for i, p in enumerate(step):
            if "functionCall" in p:
                fc = p["functionCall"]
                out.append({"functionCall": {"id": f"e2e_{turn}_{i}",
                                             "name": self.resolve(fc["name"], body),
                                             "args": fc.get("args", {})}})
            else:
                out.append({"text": p["text"]})
        return out


def response(parts, model):
    return {
        "candidates": [{"content": {"role": "model", "parts": parts},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 20,
                          "totalTokenCount": 120},
        "modelVersion": model,
        "responseId": "e2e-" + uuid.uuid4().hex[:16],
    }


class GeminiHandler(Handler):
    server_version = "fake-gemini/1"
    LOG_HEADERS = ("user-agent", "x-goog-api-client", "x-goog-api-key", "content-type",
                   "x-gemini-api-privileged-user-id")
    JSON_TYPE = "application/json; charset=UTF-8"
    SSE_EOL = "\r\n"

    def do_GET(self):
        self.record(None, 0)
        path = self.path.split("?", 1)[0]
        if path.startswith("/v1beta/models") or path.startswith("/v1/models"):
            models = [{"name": f"models/{m}", "displayName": m, "inputTokenLimit": 1048576,
                       "outputTokenLimit": 65536,
                       "supportedGenerationMethods": ["generateContent", "countTokens"]}
                      for m in ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite")]
            self.send_json(200, {"models": models})
        else:
            self.send_json(404, {"error": {"code": 404, "message": f"no {path} here",
                                           "status": "NOT_FOUND"}})

    def do_POST(self):
        body, n = self.read_body()
        path = self.path.split("?", 1)[0]
        m = re.fullmatch(r"/v1(?:beta|alpha)?/models/([^/:]+):([A-Za-z]+)", path)
        if not m or not isinstance(body, dict):
            self.record(body, n, kind="unknown")
            self.send_json(404, {"error": {"code": 404, "message": f"no {path} here",
                                           "status": "NOT_FOUND"}})
            return
        model, method = m.groups()
        if method == "countTokens":
            self.record(body, n, kind="countTokens")
            self.send_json(200, {"totalTokens": 100})
            return
        if method in ("embedContent", "batchEmbedContents"):
            self.record(body, n, kind=method)
            vec = {"values": [0.0] * 8}
            if method == "embedContent":
                self.send_json(200, {"embedding": vec})
            else:
                self.send_json(200, {"embeddings": [vec for _ in body.get("requests") or []]})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self.record(body, n, kind="unknown")
            self.send_json(404, {"error": {"code": 404, "message": f"no {method} here",
                                           "status": "NOT_FOUND"}})
            return
        parts, kind = self.server.script.reply(body)
        self.record(body, n, kind=kind, reply=parts)
        resp = response(parts, model)
        if method == "generateContent":
            self.send_json(200, resp)
            return
        self.send_sse([(None, resp)])


def main():
    args = arguments(__doc__).parse_args()
    return serve(GeminiHandler, args.log, args.port_file, script=Script(args))


if __name__ == "__main__":
    sys.exit(main())
