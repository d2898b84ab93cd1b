#!/usr/bin/env python3
"""A probe command hook: records what the agent hands a hook and answers with a unique marker,
so a test can see where each hook's output reaches the model.

Usage (as a hook command): probe_hook.py --log FILE EVENT SCOPE [MODE]

It appends one JSON line to FILE: the event and scope it was configured for, its argv, its
working directory, the environment variables an agent might set for hooks, the raw stdin and
stdin parsed as JSON, and what it answered. Then it answers according to MODE, with the
marker `PROBE-<EVENT>-<SCOPE>-<MODE>-<N>` (N counts this event+scope's invocations from 1):

  json      {"additionalContext": "<marker> ..."}                (the default)
  text      the marker as plain text
  nested    Claude Code's {"hookSpecificOutput": {"hookEventName": ..., "additionalContext"}}
  both      json and nested together, each with its own marker (-top / -nested)
  snake     Cursor's {"additional_context": ...}
  invalid   a broken JSON document holding the marker
  exit1     json on stdout, a marker on stderr, exit status 1
  exit2     json on stdout, a marker on stderr, exit status 2
  stderr2   only a marker on stderr, exit status 2
  block     {"decision": "block", "reason": "<marker>"} unless the input says a stop hook is
            already active (stopHookActive / stop_hook_active), then nothing
  silent    no output
  permA     {"behavior": "allow"}                      (permission-decision candidates)
  permB     Claude Code's {"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}}}
  permC     {"permissionDecision": "allow"}
  permD     {"decision": "allow"}
  deny      {"permissionDecision": "deny", "permissionDecisionReason": "<marker>"}
  sleepN    sleep N seconds, then answer as json
  MODE+OTHER@N...  on invocation N use mode OTHER instead (e.g. json+exit1@1+exit2@2)

Python 3 standard library only.
"""

import fcntl
import json
import os
import sys
import time

ENV_PREFIXES = ("COPILOT", "CLAUDE", "GITHUB", "PLUGIN", "HOOK", "PROBE", "TRACE", "OTEL")
ENV_NAMES = ("PWD", "HOME", "SHELL", "PATH", "TRACEPARENT", "TRACESTATE")


def main(argv):
    args = list(argv)
    log = None
    if len(args) >= 2 and args[0] == "--log":
        log = args[1]
        args = args[2:]
    log = log or os.environ.get("PROBE_HOOK_LOG")
    event = args[0] if args else "unknown"
    scope = args[1] if len(args) > 1 else "any"
    mode = args[2] if len(args) > 2 else "json"
    mode, *overrides = mode.split("+")
    overrides = {int(n): m for m, _, n in (o.partition("@") for o in overrides)}
    raw = sys.stdin.read()
    try:
        parsed = json.loads(raw) if raw.strip() else None
    except ValueError as e:
        parsed = {"_unparsable": str(e)}

    with open(log, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        n = 1 + sum(1 for line in f if line.strip()
                    and json.loads(line).get("event") == event
                    and json.loads(line).get("scope") == scope)
        mode = overrides.get(n, mode)
        marker = f"PROBE-{event}-{scope}-{mode}-{n}"
        out, err, status = answer(mode, marker, event, parsed)
        f.seek(0, os.SEEK_END)
        f.write(json.dumps({
            "event": event, "scope": scope, "mode": mode, "n": n, "marker": marker,
            "time": time.time(), "argv": sys.argv, "cwd": os.getcwd(),
            "env": {k: v for k, v in sorted(os.environ.items())
                    if k.startswith(ENV_PREFIXES) or k in ENV_NAMES},
            "env_keys": sorted(os.environ),
            "stdin_raw": raw, "stdin": parsed,
            "stdout": out, "stderr": err, "exit": status,
        }) + "\n")
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    return status


def answer(mode, marker, event, parsed):
    text = f"{marker} (context from the {event} probe hook)"
    nested = {"hookSpecificOutput": {"hookEventName": event[:1].upper() + event[1:],
                                     "additionalContext": text}}
    if mode == "json":
        return json.dumps({"additionalContext": text}), "", 0
    if mode == "text":
        return text + "\n", "", 0
    if mode == "nested":
        return json.dumps(nested), "", 0
    if mode == "both":
        top = f"{marker}-top (top-level context from the {event} probe hook)"
        nested["hookSpecificOutput"]["additionalContext"] = f"{marker}-nested (nested context)"
        return json.dumps(dict(nested, additionalContext=top)), "", 0
    if mode == "snake":
        return json.dumps({"additional_context": text}), "", 0
    if mode == "invalid":
        return '{"additionalContext": "' + text + '", oops\n', "", 0
    if mode in ("exit1", "exit2"):
        return (json.dumps({"additionalContext": text}),
                f"{marker}-stderr (stderr of the {event} probe hook)\n", int(mode[-1]))
    if mode == "stderr2":
        return "", f"{marker}-stderr (stderr of the {event} probe hook)\n", 2
    if mode == "block":
        p = parsed if isinstance(parsed, dict) else {}
        if p.get("stopHookActive") or p.get("stop_hook_active"):
            return "", "", 0
        return json.dumps({"decision": "block", "reason": f"{marker} (stop hook: keep going)"}), "", 0
    if mode == "silent":
        return "", "", 0
    if mode.startswith("sleep"):
        time.sleep(float(mode[5:]))
        return json.dumps({"additionalContext": text}), "", 0
    if mode == "permA":
        return json.dumps({"behavior": "allow"}), "", 0
    if mode == "permB":
        return json.dumps({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                                                  "decision": {"behavior": "allow"}}}), "", 0
    if mode == "permC":
        return json.dumps({"permissionDecision": "allow"}), "", 0
    if mode == "permD":
        return json.dumps({"decision": "allow"}), "", 0
    if mode == "deny":
        return json.dumps({"permissionDecision": "deny",
                           "permissionDecisionReason": f"{marker} (denied by the probe)"}), "", 0
    return json.dumps({"additionalContext": text}), "", 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
