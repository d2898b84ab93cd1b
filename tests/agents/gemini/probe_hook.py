#!/usr/bin/env python3
"""A probe command hook: records what the client hands a hook and answers with a marker.

    probe_hook.py --log FILE --event EVENT [--mode MODE] [--sleep SECONDS]

Appends one JSON line to --log: the event it was installed for, its argv, its stdin (parsed
if it is JSON, else raw), the GEMINI_*/CLAUDE_* variables of its environment and the names
of all others, and the mode it answered in. Then prints an answer holding the marker
`PROBE-<EVENT>` (`PROBE-<EVENT>:<tool_name>#<n>` for the n-th call of a tool) followed by characters that
show escaping (` <ctx a="1"> & </ctx>`), in the form MODE names:

  json       {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": MARKER}}
  json-sys   the same plus "systemMessage": "SYS-" + MARKER
  noname     hookSpecificOutput without hookEventName
  wrongname  hookEventName of another client ("UserPromptSubmit" / "PostToolUse" / ...)
  toplevel   {"additionalContext": MARKER}            (Copilot's shape)
  snake      {"additional_context": MARKER}            (Cursor's shape)
  text       MARKER as plain text
  junk       a plain-text line, then the json answer
  exit1      the json answer, exit status 1
  exit2      MARKER on stderr, exit status 2
  crash      a Rust-style panic message holding MARKER on stderr, exit status 101
  stderr1    MARKER on stderr, exit status 1
  stderr     nothing on stdout, MARKER on stderr, exit status 0
  silent     no output at all
  double     the json answer encoded as a JSON string (JSON in JSON)
  big        the json answer with 50,000 more characters and `BIG-END` after them

--sleep waits that long before answering (to probe timeouts).
Python 3 standard library only.
"""

import argparse
import json
import os
import sys
import time

OTHER_NAMES = {"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit",
               "AfterTool": "PostToolUse", "BeforeTool": "PreToolUse",
               "AfterAgent": "Stop", "PreCompress": "PreCompact"}
ESCAPES = ' <ctx a="1"> & </ctx>'


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    p.add_argument("--event", required=True)
    p.add_argument("--mode", default="json")
    p.add_argument("--sleep", type=float, default=0)
    args = p.parse_args()
    raw = sys.stdin.read()
    try:
        stdin = json.loads(raw)
    except ValueError:
        stdin = {"_raw": raw}
    tool = stdin.get("tool_name") if isinstance(stdin, dict) else None
    marker = f"PROBE-{args.event}" + (f":{tool}" if tool else "")
    if tool:  # number each call of a tool: PROBE-AfterTool:read_file#2
        seq = 1
        try:
            with open(args.log, encoding="utf-8") as f:
                for line in f:
                    e = json.loads(line)
                    if e.get("event") == args.event and (e.get("stdin") or {}).get(
                            "tool_name") == tool:
                        seq += 1
        except (OSError, ValueError):
            pass
        marker += f"#{seq}"
    env = {k: v for k, v in os.environ.items() if k.startswith(("GEMINI_", "CLAUDE_"))}
    entry = {"event": args.event, "mode": args.mode, "marker": marker, "argv": sys.argv[1:],
             "stdin": stdin, "env": env, "env_names": sorted(os.environ),
             "cwd": os.getcwd(), "t": time.time()}
    with open(args.log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    if args.sleep:
        time.sleep(args.sleep)

    ctx = marker + ESCAPES
    answer = {"hookSpecificOutput": {"hookEventName": args.event, "additionalContext": ctx}}
    mode = args.mode
    if mode == "json":
        print(json.dumps(answer))
    elif mode == "json-sys":
        answer["systemMessage"] = "SYS-" + marker
        print(json.dumps(answer))
    elif mode == "noname":
        print(json.dumps({"hookSpecificOutput": {"additionalContext": ctx}}))
    elif mode == "wrongname":
        other = OTHER_NAMES.get(args.event, "SessionStart")
        if other == args.event:
            other = "UserPromptSubmit"
        print(json.dumps({"hookSpecificOutput": {"hookEventName": other,
                                                 "additionalContext": ctx}}))
    elif mode == "toplevel":
        print(json.dumps({"additionalContext": ctx}))
    elif mode == "snake":
        print(json.dumps({"additional_context": ctx}))
    elif mode == "text":
        print(ctx)
    elif mode == "junk":
        print("probe: debug line on stdout")
        print(json.dumps(answer))
    elif mode == "exit1":
        print(json.dumps(answer))
        return 1
    elif mode == "exit2":
        print(ctx, file=sys.stderr)
        return 2
    elif mode == "crash":
        print(f"thread 'main' panicked at src/main.rs:1:1:\n{ctx}\n"
              "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
              file=sys.stderr)
        return 101
    elif mode == "stderr1":
        print(ctx, file=sys.stderr)
        return 1
    elif mode == "stderr":
        print(ctx, file=sys.stderr)
    elif mode == "silent":
        pass
    elif mode == "big":
        answer["hookSpecificOutput"]["additionalContext"] = ctx + " " + "x" * 50000 + " BIG-END"
        print(json.dumps(answer))
    elif mode == "double":
        print(json.dumps(json.dumps(answer)))
    else:
        print(f"probe_hook: unknown mode {mode}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
