#!/usr/bin/env python3
"""helix end to end with the real Gemini CLI (headless, `gemini -p`) against fake_gemini.py.

In a fresh temporary workspace (own HOME and XDG dirs, a git repository holding
src/db/pool.rs): a local knowledge directory with three entries, `.helix.toml`, `helix
sync`; the real `helix hooks install --agent gemini --project` (helix on PATH through a bin
dir); `helix hooks status` before and after trusting the folder the way Gemini's trust dialog
records it (~/.gemini/trustedFolders.json). Then one scripted session: the model reads
src/db/pool.rs, runs a failing build command, calls helix's MCP `search` (served by the real
`helix mcp` the installer registered) and answers. The checks read the request bodies the
stand-in recorded, the hook calls (see below) and `helix log`. A second session runs with
helix NOT on PATH: the prompt must still reach the model.

bin/helix is a symlink to HELIX_BIN (helix-net beside it) for the set-up; for the sessions
it is a small recording wrapper: for `helix hook …` it saves stdin, stdout, stderr and the
exit status under hook-calls/ and passes them through unchanged; anything else is exec'd.

Run through e2e.sh, which installs the pinned Gemini CLI and sets GEMINI_BIN and HELIX_BIN.
Prints INFO lines, one PASS/FAIL line per check, "N passed, N failed"; exits 1 if a check
failed. The temp dir is kept on failure or with KEEP=1. Python 3 standard library only.
"""

import glob
import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import traceback

import harness as h
from helix_kb import (ENTRIES, LINKER, POOL, Checks, helix_on_path, install_helix, sync,
                      write_knowledge)

FAILING = (r"""sh -c 'printf "error: linking with cc failed\n  = note: ld: cannot find -lssl\n" """
           r""">&2; exit 1'""")
SEARCH_ARGS = {"query": "connection pool integration tests", "limit": 3}
FINAL = "HELIX-E2E-FINAL The pool is smaller than the test thread count."
HELIX_MCP_TOOLS = ["search", "read", "brief", "topics", "store", "edit"]
CONTEXT = re.compile(r"<hook_context>(.*?)</hook_context>", re.S)


def steps(repo):
    """The scripted model, one function call per turn; then FINAL."""
    return [
        [{"functionCall": {"name": "read_file",
                           "args": {"file_path": os.path.join(repo, "src/db/pool.rs")}}}],
        [{"functionCall": {"name": "run_shell_command",
                           "args": {"command": FAILING,
                                    "description": "Run the failing build step"}}}],
        [{"functionCall": {"name": "@mcp:helix/search", "args": SEARCH_ARGS}}],
    ]


def cut(text, n=220):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "…"


# ---------------------------------------------------------------- set-up

WRAPPER = """#!/bin/sh
# helix e2e: records each `helix hook` call (stdin, stdout, stderr, exit status) in {rec}
# and passes it through unchanged; runs helix itself for anything else.
if [ "$1" = hook ]; then
    r={rec}/$(date +%s%N)-$$
    cat > "$r.in"
    {real} "$@" < "$r.in" > "$r.out" 2> "$r.err"
    rc=$?
    printf '%s\\n' "$*" > "$r.args"
    printf '%s\\n' "$rc" > "$r.rc"
    cat "$r.out"
    cat "$r.err" >&2
    exit "$rc"
fi
exec {real} "$@"
"""


def setup(ws, c):
    helix_on_path(ws.env, ws.root, ws.bindir, os.environ["HELIX_BIN"])
    write_knowledge(ws.root, ws.repo)
    p = sync(ws.env, ws.repo)
    c.info("helix sync", p.stdout + p.stderr)

    ws.base_user_settings(trust="none")  # trusted below, after the first `hooks status`
    ws.allow_shell()  # the policy that lets run_shell_command exist in -p mode
    p = h.run(["helix", "hooks", "install", "--agent", "gemini", "--project"], ws.env, ws.repo,
              check=False)
    said = p.stdout + p.stderr
    c.info("helix hooks install --agent gemini --project", f"exit {p.returncode}: {said}")
    c.check("install warns of nothing but the untrusted folder",
            not re.search(r"warning", said, re.I)
            and all("trusted folder" in ln for ln in said.splitlines()
                    if re.search(r"\bnote\b", ln, re.I)), cut(said, 300))
    settings = h.read_json(ws.settings_path("project"), {})
    hooks = settings.get("hooks") or {}
    commands = [hk.get("command", "") for defs in hooks.values() for d in defs
                for hk in d.get("hooks") or []]
    server = (settings.get("mcpServers") or {}).get("helix") or {}
    c.check("install wrote the hooks and a trusted helix MCP server to .gemini/settings.json",
            p.returncode == 0 and {"SessionStart", "BeforeAgent", "AfterTool"} <= set(hooks)
            and server.get("command") == "helix" and server.get("args") == ["mcp"]
            and server.get("trust") is True,
            f"events {sorted(hooks)}, mcpServers.helix {json.dumps(server)}")
    c.check("every installed hook command is guarded (`2>/dev/null || true`)",
            commands and all(cmd.startswith("helix hook ")
                             and cmd.endswith("2>/dev/null || true") for cmd in commands),
            "; ".join(commands))

    before = h.run(["helix", "hooks", "status"], ws.env, ws.repo, check=False)
    out = before.stdout + before.stderr
    gate = [ln for ln in out.splitlines() if ln.startswith("gemini:") and "trusted" in ln]
    c.check("helix hooks status reports the trust gate before the folder is trusted",
            before.returncode != 0 and bool(gate),
            f"exit {before.returncode}: " + (gate[0] if gate else cut(out, 400)))

    # What Gemini's trust dialog records ("Trust folder").
    h.write_json(os.path.join(ws.gemini_dir, "trustedFolders.json"), {ws.repo: "TRUST_FOLDER"})
    after = h.run(["helix", "hooks", "status"], ws.env, ws.repo, check=False)
    out = after.stdout + after.stderr
    gem = [ln for ln in out.splitlines() if "gemini" in ln.lower()]
    c.check("helix hooks status reports no Gemini problem once it is trusted",
            after.returncode == 0 and not re.search(r"problem|will not|not a trusted", out, re.I)
            and any("3 of 3 installed" in ln and "MCP server registered" in ln for ln in gem),
            f"exit {after.returncode}: " + " | ".join(gem))


def record_hooks(ws):
    """From here on, the `helix` on PATH is the recording wrapper (after install and status,
    which compare the `helix` on PATH with themselves and look for helix-net beside it)."""
    rec = os.path.join(ws.root, "hook-calls")
    os.makedirs(rec)
    real = os.environ["HELIX_BIN"]
    install_helix(ws.bindir, real,
                  WRAPPER.format(rec=shlex.quote(rec), real=shlex.quote(real)))
    return rec


def hook_calls(rec):
    calls = []
    for args in sorted(glob.glob(os.path.join(rec, "*.args"))):
        base = args[:-len(".args")]

        def read(ext):
            try:
                with open(base + ext, encoding="utf-8", errors="replace") as f:
                    return f.read()
            except FileNotFoundError:
                return ""
        raw = read(".in")
        try:
            stdin = json.loads(raw)
        except ValueError:
            stdin = {"_raw": raw}
        calls.append({"args": read(".args").strip(), "stdin": stdin, "stdout": read(".out"),
                      "stderr": read(".err"), "rc": read(".rc").strip(), "file": base})
    return calls


# ---------------------------------------------------------------- reading the requests

def function_response(reqs, name):
    """The output (or error) the model got for the first call of tool `name`."""
    for r in reversed(h.main_requests(reqs)):
        for c in (r.get("body") or {}).get("contents") or []:
            for p in c.get("parts") or []:
                fr = p.get("functionResponse")
                if fr and fr.get("name") == name:
                    return fr.get("response") or {}
    return None


def output_text(response):
    out = (response or {}).get("output")
    if isinstance(out, str):
        return out
    return json.dumps(out) if out is not None else ""


def all_texts(reqs):
    """Every text the model was sent in the main conversation: text parts and tool outputs."""
    for r in h.main_requests(reqs):
        for c in (r.get("body") or {}).get("contents") or []:
            for p in c.get("parts") or []:
                if "text" in p:
                    yield p.get("text") or ""
                elif "functionResponse" in p:
                    resp = p["functionResponse"].get("response") or {}
                    yield output_text(resp) + str(resp.get("error") or "")


def escaped_brackets(blocks, entries=ENTRIES):
    """`&lt;…&gt;` phrases in helix's hook contexts that come from helix's own wording, as
    {phrase as the model read it: [openings of the texts holding it]}. A bracket is an entry's
    when the word holding it (unescaped, without surrounding punctuation) is in an entry's
    file."""
    corpus = "\n".join(entries.values())
    bad = {}
    for b in blocks:
        for m in re.finditer(r"&lt;[^&\s]*(?:&gt;)?|&gt;", b):
            s = b.rfind(" ", 0, m.start()) + 1
            e = b.find(" ", m.end())
            word = html.unescape(b[s:e if e >= 0 else len(b)]).strip("`*_,.;:()[]\"'…")
            if word not in corpus:
                bad.setdefault(m.group(0), set()).add(cut(b, 40))
    return {k: sorted(v) for k, v in bad.items()}


def helix_ids(blocks):
    return {m for b in blocks for m in re.findall(r"\bkb:[\w./-]+\.md", b)}


# ---------------------------------------------------------------- the sessions

def session_main(ws, c, rec):
    fake = h.Fake(ws, steps(ws.repo), final_text=FINAL, name="main")
    try:
        res = h.run_gemini(ws, fake)
    finally:
        fake.stop()
    for n in ("stdout", "stderr"):
        os.replace(os.path.join(ws.root, f"gemini.{n}"), os.path.join(ws.root, f"main.{n}"))
    reqs = fake.requests()
    mains = h.main_requests(reqs)
    c.info("gemini -p (helix on PATH)",
           f"exit {res.rc} in {res.seconds:.1f} s; {len(reqs)} requests ({len(mains)} main); "
           f"stderr: {cut(res.stderr, 300) or '(empty)'}")
    c.check("gemini -p exits 0 with the model's final answer",
            res.rc == 0 and FINAL in res.stdout, f"exit {res.rc}, stdout {cut(res.stdout, 120)!r}")
    if not mains:
        c.check("the main conversation reached the stand-in", False)
        return
    calls = hook_calls(rec)
    c.info("helix hook calls", "; ".join(
        f"{k['args'].split()[1]}[{k['stdin'].get('hook_event_name')}"
        + (f" {k['stdin'].get('tool_name')}" if k['stdin'].get('tool_name') else "")
        + f"] exit {k['rc']}, {'answered' if k['stdout'].strip() else 'nothing'}"
        for k in calls) or "none")
    bad = []
    for k in calls:
        out = k["stdout"].strip()
        try:
            one_json = not out or isinstance(json.loads(out), dict)
        except ValueError:
            one_json = False
        if k["rc"] != "0" or k["stderr"].strip() or not one_json:
            bad.append(f"{k['args']}: exit {k['rc']}, stdout {cut(out, 80)!r}, "
                       f"stderr {cut(k['stderr'], 80)!r}")
    c.check("every helix hook call exits 0, prints one JSON object or nothing, stderr empty",
            calls and not bad, "; ".join(bad) or f"{len(calls)} calls")
    sessions = {k["stdin"].get("session_id") for k in calls} - {None}
    session = next(iter(sessions)) if len(sessions) == 1 else None
    c.info("session", ", ".join(sorted(sessions)) or "none seen")

    first = mains[0]["body"]
    first_user = next((x for x in first.get("contents") or [] if x.get("role") == "user"), {})
    texts = [p.get("text") or "" for p in first_user.get("parts") or [] if "text" in p]

    # 1. session-start context
    blocks = [b for t in texts for b in CONTEXT.findall(t)]
    ss = next((b for b in blocks if b.startswith("helix team knowledge:")), None)
    c.check("session-start context reached the model (<hook_context> with 'helix team "
            "knowledge:')", ss is not None, cut(ss or f"first user content: {texts}", 200))

    # 2. prompt hook: the prompt it got, stripped by helix, and its entry reached the model
    prompt_calls = [k for k in calls if k["args"].startswith("hook prompt")]
    pc = prompt_calls[0] if prompt_calls else None
    got = (pc or {}).get("stdin", {}).get("prompt", "")
    c.info("BeforeAgent stdin prompt (as Gemini sent it)", repr(cut(got, 260)))
    c.check("the model got the prompt", any(h.PROMPT in t for t in texts))
    if pc:
        stripped = strip_check(ws, c, pc)
    else:
        c.check("the prompt hook ran", False, "no `helix hook prompt` call recorded")
    pb = next((b for t in texts for b in CONTEXT.findall(t)
               if b.startswith("helix team knowledge that may apply to this prompt")), None)
    c.check(f"the prompt hook's entry {POOL} reached the model (BeforeAgent context)",
            pb is not None and POOL in pb, cut(pb or "no prompt context in the first request"))

    # 3. the file read
    read = function_response(reqs, "read_file")
    rb = CONTEXT.findall(output_text(read)) if read else []
    c.check(f"the read of src/db/pool.rs brought {POOL} in that read's functionResponse",
            any(POOL in b and "helix" in b for b in rb),
            cut(output_text(read) or json.dumps(read), 300))

    # 4. the failing command
    shell = function_response(reqs, "run_shell_command")
    sb = CONTEXT.findall(output_text(shell)) if shell else []
    c.check(f"the failing command brought {LINKER} in that command's functionResponse",
            "Exit Code: 1" in output_text(shell) and any(LINKER in b for b in sb),
            cut(output_text(shell) or json.dumps(shell), 400))

    # 5. MCP
    declared = h.declared_names(first)
    ours = [n for n in declared if n.startswith("mcp_helix_")]
    missing = [t for t in HELIX_MCP_TOOLS if f"mcp_helix_{t}" not in declared]
    c.check("helix's MCP tools are offered to the model", not missing,
            ", ".join(ours) + (f"; missing: {', '.join(missing)}" if missing else ""))
    search = function_response(reqs, "mcp_helix_search")
    st = output_text(search)
    c.check(f"mcp_helix_search returned helix's real result naming {POOL}",
            search is not None and "error" not in search and POOL in st,
            cut(st or json.dumps(search), 300))

    # 6. no escaped brackets from helix's own wording
    helix_blocks = [b for t in all_texts(reqs) for b in CONTEXT.findall(t) if "helix" in b]
    bad = escaped_brackets(helix_blocks)
    c.check("no helix hook context holds &lt;/&gt; from helix's own wording",
            helix_blocks and not bad,
            "; ".join(f"{k} in {' / '.join(repr(x) for x in v)}" for k, v in bad.items())
            or f"{len(helix_blocks)} helix contexts")
    # helix's context, each at most once per request
    dup = []
    for i, r in enumerate(mains):
        seen = {}
        for t in all_texts([r]):
            for b in CONTEXT.findall(t):
                if "helix" in b:
                    seen[b] = seen.get(b, 0) + 1
        dup += [f"request {i}: {cut(b, 60)} ×{n}" for b, n in seen.items() if n > 1]
    c.check("no helix context is sent twice in one request", not dup, "; ".join(dup))

    # 7. helix log
    log_check(ws, c, session, helix_ids(helix_blocks))
    return session


def strip_check(ws, c, pc):
    """Replays the recorded BeforeAgent input to the real helix under fresh session ids:
    as Gemini sent it, and with `prompt` the bare user prompt. Equal answers show helix read
    the prompt without the session-start context. (Also, as INFO, what the same input gives
    when read as Claude Code's, which strips nothing.)"""
    stdin = pc["stdin"]
    prefixed = stdin.get("prompt", "")
    c.check("Gemini passed the session-start context in front of the prompt (FINDINGS.md)",
            prefixed.startswith("<hook_context>helix team knowledge:")
            and prefixed.endswith("</hook_context>\n\n" + h.PROMPT), repr(cut(prefixed, 120)))
    cache = os.path.join(ws.root, "replay-cache")
    if not os.path.exists(cache):
        shutil.copytree(ws.env["XDG_CACHE_HOME"], cache)
    env = dict(ws.env, HELIX_LOG="", XDG_CACHE_HOME=cache)

    def replay(doc, agent="gemini"):
        p = subprocess.run([os.environ["HELIX_BIN"], "hook", "prompt", "--agent", agent],
                           input=json.dumps(doc), env=env, cwd=ws.repo, capture_output=True,
                           text=True, timeout=30)
        return p.stdout.strip()
    sid = stdin.get("session_id", "s")
    as_sent = replay(dict(stdin, session_id=sid + "-replay-as-sent"))
    bare = replay(dict(stdin, session_id=sid + "-replay-bare", prompt=h.PROMPT))
    ctx = lambda out: (json.loads(out).get("hookSpecificOutput") or {}).get(
        "additionalContext", "") if out else ""
    c.check("helix strips the session-start context: the recorded input answers as the bare "
            "prompt does", as_sent and as_sent == bare and POOL in ctx(as_sent),
            f"as sent: {cut(ctx(as_sent), 120)!r}; bare prompt: {cut(ctx(bare), 120)!r}")
    c.check("helix's recorded answer to the prompt hook is that same answer",
            pc["stdout"].strip() == as_sent, cut(pc["stdout"], 160))
    unstripped = replay(dict(stdin, session_id=sid + "-replay-claude",
                             hook_event_name="UserPromptSubmit"), agent="claude")
    c.info("control: the same prompt read as Claude Code's (nothing stripped)",
           repr(cut(ctx(unstripped), 160)) if unstripped else "no answer")
    return as_sent


def log_check(ws, c, session, shown):
    """`helix log --agent gemini` names the session and logs every entry its hook contexts
    brought (`shown`); `--json` for the details. (The log holds calls that injected entries:
    prompt, ambient, error; not session-start.)"""
    if not session:
        c.check("helix log lists the session's injections", False, "no single session id")
        return
    p = h.run(["helix", "log", "--agent", "gemini"], ws.env, ws.repo, check=False)
    text = p.stdout
    c.info("helix log --agent gemini", cut(text, 600))
    pj = h.run(["helix", "log", "--agent", "gemini", "--json"], ws.env, ws.repo, check=False)
    inj = [i for i in (json.loads(pj.stdout or "{}").get("injections") or [])
           if i.get("session") == session]
    by_hook = {}
    for i in inj:
        by_hook.setdefault(i.get("hook"), set()).update(e.get("id") for e in i.get("entries") or [])
    logged = set().union(*by_hook.values()) if by_hook else set()
    want = {"prompt": POOL, "ambient": POOL, "error": LINKER}
    missing = [f"{hk} {e}" for hk, e in want.items() if e not in by_hook.get(hk, set())]
    c.check("helix log --agent gemini lists this session's injections",
            p.returncode == 0 and session in text and POOL in text and LINKER in text
            and not missing and shown <= logged and all(i.get("agent") == "gemini" for i in inj),
            "; ".join(f"{k}: {', '.join(sorted(v))}" for k, v in sorted(by_hook.items()))
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; shown but not logged: {', '.join(sorted(shown - logged))}"
               if shown - logged else ""))


def run_without_helix(ws, name, steps_=()):
    """One `gemini -p` with helix's bin dir taken off PATH: (Result, requests), or None when
    a `helix` is still found on PATH."""
    env = dict(ws.env, PATH=":".join(d for d in ws.env["PATH"].split(":") if d != ws.bindir))
    found = subprocess.run(["sh", "-c", "command -v helix"], env=env, capture_output=True,
                           text=True).stdout.strip()
    if found:
        return None, found
    saved = ws.env
    ws.env = env
    fake = h.Fake(ws, list(steps_), final_text=FINAL, name=name)
    try:
        res = h.run_gemini(ws, fake)
    finally:
        fake.stop()
        ws.env = saved
    for n in ("stdout", "stderr"):
        os.replace(os.path.join(ws.root, f"gemini.{n}"), os.path.join(ws.root, f"{name}.{n}"))
    return res, fake.requests()


def session_nopath(ws, c):
    """helix not on PATH: every hook command fails (`helix: command not found`, guarded by
    `2>/dev/null || true`) and the MCP server does not start. The prompt must still reach
    the model. Control: the same with the guard taken off the installed commands is blocked
    (as FINDINGS.md says), which shows the check can fail."""
    res, reqs = run_without_helix(ws, "nopath")
    if res is None:
        c.check("helix is off PATH for this session", False, f"found {reqs}")
        return
    mains = h.main_requests(reqs)
    c.info("gemini -p (helix not on PATH)",
           f"exit {res.rc} in {res.seconds:.1f} s; {len(mains)} main requests; stderr: "
           f"{cut(res.stderr, 300) or '(empty)'}")
    texts = list(all_texts(reqs))
    c.check("without helix on PATH the prompt still reaches the model (not blocked)",
            res.rc == 0 and FINAL in res.stdout and any(h.PROMPT in t for t in texts)
            and "blocked" not in res.stderr.lower(),
            f"exit {res.rc}, {len(mains)} main requests, stdout {cut(res.stdout, 80)!r}")
    c.check("without helix on PATH no hook failure text reaches the model",
            not any(re.search(r"command not found|helix: not found", t) for t in texts))

    path = ws.settings_path("project")
    with open(path) as f:
        installed = f.read()
    guard = " 2>/dev/null || true"
    try:
        with open(path, "w") as f:
            f.write(installed.replace(guard, ""))
        res, reqs = run_without_helix(ws, "unguarded")
    finally:
        with open(path, "w") as f:
            f.write(installed)
    mains = h.main_requests(reqs)
    c.check("control: the same without the guard blocks the prompt (the check above can fail)",
            guard in installed and not mains and "blocked" in res.stderr.lower(),
            f"exit {res.rc}, {len(mains)} main requests, stderr "
            f"{cut(res.stderr[res.stderr.lower().find('blocked') - 40:], 160)!r}")


def main(argv):
    if argv:
        print("usage: e2e.sh (no arguments; KEEP=1 keeps the temp dir)")
        return 2
    t0 = time.time()
    c = Checks(limit=None, info_limit=None)  # details in full
    root = h.new_temp_root("helix-gemini-e2e-")
    try:
        ws = h.Workspace(root)
        setup(ws, c)
        rec = record_hooks(ws)
        session_main(ws, c, rec)
        session_nopath(ws, c)
    except Exception as e:  # a broken set-up is a failure, not a crash
        c.check("the test ran", False, f"{type(e).__name__}: {e}")
        traceback.print_exc()
    keep = os.environ.get("KEEP") == "1" or c.failed
    if keep:
        print(f"(files kept in {root})")
    else:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{c.passed} passed, {c.failed} failed ({time.time() - t0:.0f} s)")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
