#!/usr/bin/env python3
"""A tiny stdio MCP server standing in for `helix mcp` when probing what a client does with
MCP tools: server `helix` (--name), one tool, `search`.

Usage: mcp_stub.py [--log FILE] [--name NAME] [--marker TEXT] [--result TEMPLATE]
                   [--read-only] [TAG]

Newline-delimited JSON-RPC 2.0 on stdin/stdout (the MCP stdio transport). Answers
`initialize` (echoing the client's protocol version), `tools/list`, `tools/call`, `ping`, and
empty lists for `resources/list`, `resources/templates/list` and `prompts/list`.

A `search` call answers with one text block, --result formatted with {marker} (--marker,
default MCP-SEARCH-RESULT), {query} (the query, repr'd) and {args} (the arguments as JSON),
so a test can find the tool result in the next model request. A query containing `FAIL`
gets an `isError: true` result instead (how a tool-level failure reaches the agent).
--read-only marks the tool read-only (MCP annotations).

With --log, its start (argv, cwd, the names of its environment variables), every message
received ({"received": ...}) and the end of its input ({"eof": true}) are appended to FILE
as JSON lines. TAG is not read: it names the instance in argv (and so in the log).

Self-contained (a test may copy this file elsewhere, e.g. into a client extension). Python 3
standard library only.
"""

import argparse
import json
import os
import sys

RESULT = ("{marker}: 1 hit for {query}\n"
          "kb:db/pool-exhaustion.md  Connection pool exhausted in integration tests")
ERROR = "MCP-SEARCH-ERROR: the index is unavailable ({raw_query})"


def search_tool(read_only):
    tool = {
        "name": "search",
        "description": "Search the team's knowledge base (helix) for entries about a topic.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for."},
                "limit": {"type": "integer", "description": "At most this many hits."},
            },
            "required": ["query"],
        },
    }
    if read_only:
        tool["annotations"] = {"readOnlyHint": True, "openWorldHint": False}
    return tool


def handle(opts, method, params):
    """(result, error) for one request."""
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion") or "2025-06-18",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": opts.name, "version": "0.0.0-probe"},
                "instructions": "Team knowledge (probe stand-in)."}, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        return {"tools": [search_tool(opts.read_only)]}, None
    if method in ("resources/list", "resources/templates/list", "prompts/list"):
        key = {"resources/list": "resources", "resources/templates/list": "resourceTemplates",
               "prompts/list": "prompts"}[method]
        return {key: []}, None
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name != "search":
            return None, {"code": -32602, "message": f"unknown tool {name}"}
        query = str(args.get("query", ""))
        if "FAIL" in query:
            return {"content": [{"type": "text", "text": ERROR.format(raw_query=query)}],
                    "isError": True}, None
        text = opts.result.format(marker=opts.marker, query=repr(query), args=json.dumps(args))
        return {"content": [{"type": "text", "text": text}], "isError": False}, None
    return None, {"code": -32601, "message": f"method not found: {method}"}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log")
    p.add_argument("--name", default="helix")
    p.add_argument("--marker", default="MCP-SEARCH-RESULT")
    p.add_argument("--result", default=RESULT)
    p.add_argument("--read-only", action="store_true")
    p.add_argument("tag", nargs="?")
    opts = p.parse_args()

    def log(entry):
        if opts.log:
            with open(opts.log, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    log({"started": True, "argv": sys.argv, "cwd": os.getcwd(),
         "env_names": sorted(os.environ)})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            log({"unparsed": line[:500]})
            continue
        log({"received": msg})
        if "id" not in msg or "method" not in msg:
            continue  # a notification or a response
        result, error = handle(opts, msg["method"], msg.get("params") or {})
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        if error:
            reply["error"] = error
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    log({"eof": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
