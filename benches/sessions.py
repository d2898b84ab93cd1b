#!/usr/bin/env python3
"""Context per session: the judged relevance cases (benches/relevance/judgements.jsonl) run as
agent sessions through the real `helix hook` binary, and the characters of context each session
is given, all hooks together. It chose the default session budget (docs/hooks.md, "Session
budget"; docs/benchmarks.md, "Context per session").

A session works in one area of the til corpus (a topic, drawn as often as the judged cases
have targeted cases for it), as Claude Code would run it:

  session-start (startup);
  2-12 prompts (uniform); after each, 1-5 file tool calls (uniform; PreToolUse) and, with
  probability 0.4, a failed command (PostToolUseFailure) followed by a build that passes
  (PostToolUse `cargo build`: the post-build nudge);
  in one session of five, a subagent start after the first prompt;
  in a session of more than 8 prompts, a compaction after the 8th (PreCompact, then
  SessionStart with source compact);
  stop at the end.

Each prompt, file call and failure is a judged case of that kind: with probability
--targeted (default 0.5) a targeted case of the session's topic (any topic's once the topic's
are used up), else an everyday case of any topic. Session ids are shared by the calls, so the
no-repeats rule and the post-build and stop once-rules act as in a real session. Characters
are the length of what reaches the model: `additionalContext`, or a stop hook's `reason`.

The budget is off (HELIX_SESSION_BUDGET=0) unless --budget N, which runs the same sessions
under that budget and reports how many it cut. The binary's own count (`helix log --stats`)
is checked against this script's when the binary has it.

Usage:
  python3 benches/sessions.py --helix target/release/helix
  python3 benches/sessions.py --helix BIN --sessions 300 --seed 1 --targeted 0.5 [--budget N] [--json]

Only the Python standard library; the worlds and inputs are benches/relevance.py's.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relevance as rel  # noqa: E402

HOOKS = {  # what the script runs -> (helix hook, Claude Code event)
    "session-start": ("session-start", "SessionStart"),
    "compact-start": ("session-start", "SessionStart"),
    "pre-compact": ("pre-compact", "PreCompact"),
    "subagent": ("subagent-start", "SubagentStart"),
    "post-build": ("post-build", "PostToolUse"),
    "stop": ("stop", "Stop"),
}


def pct(sorted_xs, q):
    """Nearest-rank percentile, as `helix log --stats` computes it."""
    if not sorted_xs:
        return 0
    rank = -(-len(sorted_xs) * q // 100)
    return sorted_xs[max(rank, 1) - 1]


def plan(rng, cases, n_sessions, targeted):
    """Each session: its topic and its calls, ("case", case) or (hook name, None)."""
    by_kind = {k: [c for c in cases if c["kind"] == k] for k in rel.KINDS}
    everyday = {k: [c for c in v if c["class"] == "everyday"] for k, v in by_kind.items()}
    any_targeted = {k: [c for c in v if c["class"] == "targeted"] for k, v in by_kind.items()}
    def topic_of(c):
        return c["expected"][0].split("/")[0]

    topics = sorted({topic_of(c) for c in cases if c["class"] == "targeted"})
    weight = [sum(1 for c in cases if c["class"] == "targeted" and topic_of(c) == t) for t in topics]
    sessions = []
    for _ in range(n_sessions):
        topic = rng.choices(topics, weight)[0]
        pools = {k: [c for c in any_targeted[k] if topic_of(c) == topic] for k in rel.KINDS}
        for p in pools.values():
            rng.shuffle(p)

        def draw(kind):
            if rng.random() < targeted:
                return pools[kind].pop() if pools[kind] else rng.choice(any_targeted[kind])
            return rng.choice(everyday[kind])

        calls = [("session-start", None)]
        prompts = rng.randint(2, 12)
        subagent = rng.random() < 0.2
        for i in range(prompts):
            calls.append(("case", draw("prompt")))
            if subagent and i == 0:
                calls.append(("subagent", None))
            for _ in range(rng.randint(1, 5)):
                calls.append(("case", draw("ambient")))
            if rng.random() < 0.4:
                calls.append(("case", draw("error")))
                calls.append(("post-build", None))
            if prompts > 8 and i == 7:
                calls += [("pre-compact", None), ("compact-start", None)]
        calls.append(("stop", None))
        sessions.append({"topic": topic, "calls": calls})
    return sessions


def stdin_of(world, sid, what, case, n):
    if what == "case":
        hook, stdin = world.stdin_for(case)
        d = json.loads(stdin)
    else:
        hook, event = HOOKS[what]
        d = {"cwd": world.repo, "permission_mode": "default", "hook_event_name": event}
        if what == "session-start":
            d["source"] = "startup"
        elif what == "compact-start":
            d["source"] = "compact"
        elif what == "pre-compact":
            d["trigger"] = "auto"
        elif what == "subagent":
            d.update(agent_id=uuid.uuid4().hex[:8], agent_type="general-purpose")
        elif what == "post-build":
            d.update(tool_name="Bash", tool_input={"command": "cargo build"},
                     tool_response={"stdout": "Finished", "stderr": ""}, tool_use_id=f"toolu_{n:024d}")
        elif what == "stop":
            d["stop_hook_active"] = False
    d["session_id"] = sid
    d["transcript_path"] = os.path.join(world.home, ".claude", "projects", "sessions", sid + ".jsonl")
    if "prompt" in d:
        d["prompt_id"] = str(uuid.uuid4())
    return hook, json.dumps(d)


def said(stdout):
    """What reaches the model: the context, or a stop hook's reason."""
    out = stdout.strip()
    if not out:
        return ""
    try:
        v = json.loads(out)
    except json.JSONDecodeError:
        return ""
    if isinstance(v, dict) and v.get("decision") == "block":
        return v.get("reason") or ""
    return rel.answer_context(v, "claude")


def run(world, sessions, budget):
    world.env["HELIX_SESSION_BUDGET"] = str(budget)
    out = []
    n = 0
    for s in sessions:
        sid = str(uuid.uuid4())
        per_hook, calls, bad = {}, 0, 0
        for what, case in s["calls"]:
            n += 1
            hook, stdin = stdin_of(world, sid, what, case, n)
            name = case["kind"] if case else what
            try:
                r = world.run(["hook", hook], stdin=stdin, timeout=rel.HOOK_TIMEOUT_S)
                text = said(r.stdout)
                bad += r.returncode != 0
            except subprocess.TimeoutExpired:
                text, bad = "", bad + 1
            if text:
                calls += 1
                per_hook[name] = per_hook.get(name, 0) + len(text)
        out.append({"session": sid, "topic": s["topic"], "calls": len(s["calls"]), "spoke": calls,
                    "chars": sum(per_hook.values()), "per_hook": per_hook, "bad": bad,
                    "logged": logged(world, sid)})
    return out


def logged(world, sid):
    """The binary's own account of a session (`helix log --stats --json`), asked as it ends
    (the injection log keeps about 1 MiB): (chars, whether the budget withheld a call), or
    None for a binary without it."""
    r = world.run(["log", "--stats", "--json", "--session", sid])
    try:
        s = json.loads(r.stdout)["sessions"]
        return (s[0]["chars"], s[0]["capped"]) if s else (0, False)
    except (json.JSONDecodeError, KeyError, TypeError):
        return None


def summary(res):
    chars = sorted(r["chars"] for r in res)
    hooks = sorted({h for r in res for h in r["per_hook"]})
    return {
        "sessions": len(res),
        "hook_calls": sum(r["calls"] for r in res),
        "calls_that_spoke": sum(r["spoke"] for r in res),
        "mean": sum(chars) / len(chars) if chars else 0,
        "p50": pct(chars, 50), "p90": pct(chars, 90), "p95": pct(chars, 95), "p99": pct(chars, 99),
        "max": chars[-1] if chars else 0,
        "mean_per_hook": {h: sum(r["per_hook"].get(h, 0) for r in res) / len(res) for h in hooks},
        "bad_exits": sum(r["bad"] for r in res),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--helix", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(rel.ROOT, "target")), "release", "helix"))
    ap.add_argument("--corpus", default=rel.DEFAULT_CORPUS)
    ap.add_argument("--cases", default=rel.DEFAULT_CASES)
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--targeted", type=float, default=0.5,
                    help="share of prompts, file calls and failures drawn from targeted cases")
    ap.add_argument("--budget", type=int, default=0, help="HELIX_SESSION_BUDGET for the run (0: off)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    corpus = os.path.abspath(a.corpus)
    cases = [c for c in rel.load_cases(a.cases, rel.corpus_ids(corpus)) if c["split"] != "negatives"]
    sessions = plan(random.Random(a.seed), cases, a.sessions, a.targeted)
    w = rel.World("helix", a.helix, corpus, a.keep)
    try:
        res = run(w, sessions, a.budget)
    finally:
        w.close()
    s = summary(res)
    mismatch = capped = None
    if all(r["logged"] is not None for r in res):
        mismatch = sum(1 for r in res if r["logged"][0] != r["chars"])
        capped = sum(1 for r in res if r["logged"][1])
    if a.json:
        json.dump({"binary": w.src, "version": w.version, "seed": a.seed, "targeted": a.targeted,
                   "budget": a.budget, "summary": s, "log_mismatches": mismatch, "capped": capped,
                   "sessions": res},
                  sys.stdout, indent=1)
        print()
        return
    print(f"{w.src} ({w.version}); {len(cases)} judged cases; seed {a.seed}; targeted share {a.targeted}; "
          f"budget {a.budget or 'off'}")
    print(f"{s['sessions']} sessions, {s['hook_calls']} hook calls, {s['calls_that_spoke']} gave context"
          + (f"; WARNING: {s['bad_exits']} runs exited non-zero or timed out" if s["bad_exits"] else ""))
    print(f"characters per session: mean {s['mean']:.0f}, p50 {s['p50']}, p90 {s['p90']}, "
          f"p95 {s['p95']}, p99 {s['p99']}, max {s['max']}")
    print("mean per session by hook: " + ", ".join(f"{h} {v:.0f}" for h, v in s["mean_per_hook"].items()))
    if a.budget and capped is not None:
        past = sum(1 for r in res if r["chars"] > a.budget)
        print(f"sessions the budget silenced: {capped}; past it (a compaction's session start "
              f"still speaks): {past}")
    if mismatch is not None:
        print(f"`helix log --stats` agrees with this count on {len(res) - mismatch} of {len(res)} sessions")


if __name__ == "__main__":
    main()
