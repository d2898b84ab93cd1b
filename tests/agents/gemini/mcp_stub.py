#!/usr/bin/env python3
"""A tiny MCP server over stdio (newline-delimited JSON-RPC 2.0) with one tool, `search`,
standing in for `helix mcp` when probing what a client does with MCP tools.

Every message it receives is appended as a JSON line to --log (with the names of the
environment variables it was started with, once), so a test can see the client's
handshake and tool calls. A `search` call answers with a text that holds --marker and the
query, so the test can find the tool result in the next model request.

Python 3 standard library only.
"""

import argparse
import json
import os
import sys

TOOLS = [{
    "name": "search",
    "description": "Search the team knowledge base (helix) for entries about a topic.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {"type": "integer", "description": "At most this many hits."},
        },
        "required": ["query"],
    },
}]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--log", required=True)
    p.add_argument("--name", default="helix")
    p.add_argument("--marker", default="MCP-SEARCH-RESULT")
    args = p.parse_args()

    def log(entry):
        with open(args.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    log({"started": True, "argv": sys.argv, "cwd": os.getcwd(),
         "env_names": sorted(os.environ)})

    def send(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

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
        mid = msg.get("id")
        method = msg.get("method")
        if mid is None:  # a notification
            continue
        if method == "initialize":
            version = (msg.get("params") or {}).get("protocolVersion") or "2025-06-18"
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": args.name, "version": "0.0.1"},
                "instructions": "Team knowledge (probe stand-in).",
            }})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            params = msg.get("params") or {}
            a = params.get("arguments") or {}
            if params.get("name") != "search":
                send({"jsonrpc": "2.0", "id": mid, "result": {
                    "isError": True,
                    "content": [{"type": "text", "text": f"no tool {params.get('name')}"}]}})
                continue
            text = (f"{args.marker}: 1 hit for {a.get('query')!r}\n"
                    "kb:db/pool-exhaustion.md  Connection pool exhausted in integration tests")
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": text}], "isError": False}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif method in ("resources/list", "resources/templates/list", "prompts/list"):
            key = {"resources/list": "resources", "resources/templates/list":
                   "resourceTemplates", "prompts/list": "prompts"}[method]
            send({"jsonrpc": "2.0", "id": mid, "result": {key: []}})
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": f"method not found: {method}"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
