#!/usr/bin/env python3
"""A tiny stdio MCP server standing in for `helix mcp`: one tool, `search`.

Newline-delimited JSON-RPC 2.0 on stdin/stdout (the MCP stdio transport). Answers
`initialize` (echoing the client's protocol version), `tools/list`, `tools/call`, `ping`,
and empty lists for `resources/list`, `resources/templates/list`, `prompts/list`. Every
message received is appended to --log as a JSON line when given. Tool results carry the
marker `MCP-SEARCH-RESULT` and echo the arguments.
Python 3 standard library only.
"""

import json
import sys

TOOLS = [{
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
    "annotations": {"readOnlyHint": True, "openWorldHint": False},
}]


def main():
    log = None
    if "--log" in sys.argv:
        log = sys.argv[sys.argv.index("--log") + 1]
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(json.dumps(msg) + "\n")
        if "id" not in msg or "method" not in msg:
            continue  # a notification or a response
        method, params = msg["method"], msg.get("params") or {}
        result, error = None, None
        if method == "initialize":
            result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                      "capabilities": {"tools": {"listChanged": False}},
                      "serverInfo": {"name": "helix", "version": "0.0.0-e2e"},
                      "instructions": "Team knowledge base (probe stand-in)."}
        elif method == "tools/list":
            result = {"tools": TOOLS}
        elif method == "tools/call":
            name = params.get("name")
            if name == "search":
                args = params.get("arguments") or {}
                text = (f"MCP-SEARCH-RESULT for {json.dumps(args)}: "
                        "kb:db/pool-exhaustion.md Connection pool exhausted in integration tests")
                result = {"content": [{"type": "text", "text": text}], "isError": False}
            else:
                error = {"code": -32602, "message": f"unknown tool {name}"}
        elif method == "ping":
            result = {}
        elif method in ("resources/list",):
            result = {"resources": []}
        elif method in ("resources/templates/list",):
            result = {"resourceTemplates": []}
        elif method in ("prompts/list",):
            result = {"prompts": []}
        else:
            error = {"code": -32601, "message": f"method not found: {method}"}
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        if error:
            reply["error"] = error
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
