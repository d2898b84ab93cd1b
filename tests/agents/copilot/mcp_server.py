#!/usr/bin/env python3
"""A tiny stdio MCP server standing in for `helix mcp`: server name `helix`, one tool `search`.

Usage: mcp_server.py [--log FILE]

Newline-delimited JSON-RPC 2.0 on stdin/stdout. Answers initialize, tools/list, tools/call,
ping, and empty resources/prompts lists. `search` answers with a text block holding
`MCP-SEARCH-RESULT` and the query; a query containing `FAIL` gets an `isError: true` result
(how a tool-level failure reaches the agent). Every message received, and the process's argv,
cwd and environment keys, are appended to FILE as JSON lines.

Python 3 standard library only.
"""

import json
import os
import sys

TOOLS = [{
    "name": "search",
    "description": "Search the team's knowledge base (helix) for entries about a topic.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "At most this many entries."},
        },
        "required": ["query"],
    },
}]


def main(argv):
    log = None
    if len(argv) >= 2 and argv[0] == "--log":
        log = argv[1]
    log = log or os.environ.get("PROBE_MCP_LOG")

    def record(obj):
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(obj) + "\n")

    record({"start": True, "argv": sys.argv, "cwd": os.getcwd(),
            "env_keys": sorted(os.environ)})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            record({"unparsable": line[:500]})
            continue
        record({"in": msg})
        if "id" not in msg or "method" not in msg:
            continue  # a notification or a response
        result, error = handle(msg["method"], msg.get("params") or {})
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        if error:
            reply["error"] = error
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    record({"eof": True})
    return 0


def handle(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "helix", "version": "0.0.0-probe"},
                "instructions": "helix: the team's knowledge base (probe stand-in)."}, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        return {"tools": TOOLS}, None
    if method == "resources/list":
        return {"resources": []}, None
    if method == "resources/templates/list":
        return {"resourceTemplates": []}, None
    if method == "prompts/list":
        return {"prompts": []}, None
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name != "search":
            return None, {"code": -32602, "message": f"unknown tool {name}"}
        query = str(args.get("query", ""))
        if "FAIL" in query:
            return {"content": [{"type": "text",
                                 "text": f"MCP-SEARCH-ERROR: the index is unavailable ({query})"}],
                    "isError": True}, None
        return {"content": [{"type": "text",
                             "text": f"MCP-SEARCH-RESULT for {query!r}: kb:db/pool-exhaustion.md "
                                     "Connection pool exhausted in integration tests"}],
                "isError": False}, None
    return None, {"code": -32601, "message": f"method not found: {method}"}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
