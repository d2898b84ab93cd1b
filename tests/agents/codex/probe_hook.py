#!/usr/bin/env python3
"""A probe command hook: records what Codex gives a hook, answers in a chosen shape.

Usage: probe_hook.py EVENT --log FILE [--modes FILE] [--tag TAG]

Appends one JSON line to --log: {"event", "argv", "cwd", "time", "env" (CODEX_*/HOME/PWD/
SHELL only), "stdin_raw" (when not JSON), "stdin"}. Then answers on stdout (and exit code)
according to the mode for EVENT in --modes (a JSON object {"<Event>": "<mode>", "*": ...};
re-read on every call, so a driver can change it between runs). The answer carries a marker
`PROBE-<Event>-<mode>` (`PROBE-<Event>-<TAG>-<mode>` with --tag, whose mode is looked up as
"<Event>:<TAG>" first) so a test can find where it reached the model:

  nested      {"hookSpecificOutput": {"hookEventName": EVENT, "additionalContext": MARK}}
  plain       MARK as plain text (not JSON)
  toplevel    {"additionalContext": MARK}              (a field Codex's schema lacks)
  snake       {"additional_context": MARK}             (Cursor's spelling)
  extra       the nested form plus an unknown top-level field "helixExtra"
  system      {"systemMessage": MARK}
  block       {"decision": "block", "reason": MARK}
  deny        PreToolUse: {"hookSpecificOutput": {..., "permissionDecision": "deny",
                            "permissionDecisionReason": MARK}}
              PermissionRequest: {"hookSpecificOutput": {..., "decision": {"behavior": "deny",
                            "message": MARK}}}
  allow       PermissionRequest: {"hookSpecificOutput": {..., "decision": {"behavior": "allow"}}}
              PreToolUse: {"hookSpecificOutput": {..., "permissionDecision": "allow"}}
  stop        {"continue": false, "stopReason": MARK}
  exit2       MARK on stderr, exit 2
  exit1       MARK on stderr, exit 1
  empty       nothing, exit 0
  sleep       sleeps 30 s then answers nested (for timeouts)
  big         the nested form with MARK followed by ~24,000 characters of filler (spill)
A mode "once:<mode>" answers <mode> the first time (per log file and event) and `empty`
afterwards (so a Stop block does not loop).
Python 3 standard library only.
"""

import json
import os
import sys
import time


def main():
    args = sys.argv[1:]
    event = args[0] if args else "?"
    opts = {}
    i = 1
    while i < len(args) - 1:
        if args[i].startswith("--"):
            opts[args[i][2:]] = args[i + 1]
            i += 2
        else:
            i += 1
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = None
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
            parent = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        parent = None
    entry = {
        "event": event,
        "parent_argv": parent,
        "tag": opts.get("tag"),
        "argv": sys.argv[1:],
        "cwd": os.getcwd(),
        "time": time.time(),
        "env": {k: v for k, v in os.environ.items()
                if k.startswith("CODEX") or k in ("HOME", "PWD", "SHELL", "CLAUDE_PROJECT_DIR")},
        "stdin": payload,
    }
    if payload is None:
        entry["stdin_raw"] = raw
    log = opts.get("log")
    previous = 0
    if log:
        if os.path.exists(log):
            with open(log, encoding="utf-8") as f:
                previous = sum(1 for line in f
                               if json.loads(line).get("event") == event
                               and json.loads(line).get("tag") == opts.get("tag"))
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    mode = "nested"
    if opts.get("modes") and os.path.exists(opts["modes"]):
        with open(opts["modes"], encoding="utf-8") as f:
            modes = json.load(f)
        tagged = modes.get(f"{event}:{opts['tag']}") if opts.get("tag") else None
        mode = tagged or modes.get(event, modes.get("*", mode))
    if mode.startswith("once:"):
        mode = mode[5:] if previous == 0 else "empty"
    mark = f"PROBE-{event}-{opts['tag']}-{mode}" if opts.get("tag") else f"PROBE-{event}-{mode}"
    nested = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": mark}}
    out, code, err = None, 0, None
    if mode == "nested":
        out = nested
    elif mode == "plain":
        out = mark
    elif mode == "toplevel":
        out = {"additionalContext": mark}
    elif mode == "snake":
        out = {"additional_context": mark}
    elif mode == "extra":
        out = dict(nested, helixExtra=True)
    elif mode == "system":
        out = {"systemMessage": mark}
    elif mode == "block":
        out = {"decision": "block", "reason": mark}
    elif mode == "deny" and event == "PermissionRequest":
        out = {"hookSpecificOutput": {"hookEventName": event,
                                      "decision": {"behavior": "deny", "message": mark}}}
    elif mode == "deny":
        out = {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "deny",
                                      "permissionDecisionReason": mark}}
    elif mode == "allow" and event == "PermissionRequest":
        out = {"hookSpecificOutput": {"hookEventName": event, "decision": {"behavior": "allow"}}}
    elif mode == "allow":
        out = {"hookSpecificOutput": {"hookEventName": event, "permissionDecision": "allow"}}
    elif mode == "stop":
        out = {"continue": False, "stopReason": mark}
    elif mode in ("exit2", "exit1"):
        err, code = mark, int(mode[-1])
    elif mode == "big":
        filler = " ".join(f"line{i:05d} pool connection knowledge" for i in range(800))
        out = {"hookSpecificOutput": {"hookEventName": event,
                                      "additionalContext": mark + " " + filler + " END-" + mark}}
    elif mode == "sleep":
        time.sleep(30)
        out = nested
    elif mode == "empty":
        pass
    else:
        err, code = f"probe_hook: unknown mode {mode}", 1
    if out is not None:
        sys.stdout.write(out if isinstance(out, str) else json.dumps(out))
        sys.stdout.write("\n")
    if err:
        sys.stderr.write(err + "\n")
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
