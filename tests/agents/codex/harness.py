"""Reusable pieces for driving the real Codex CLI offline against fake_responses.py.

A `Workspace` is a fresh temp root with its own HOME, CODEX_HOME, XDG dirs, TMPDIR and a git
code repository holding `src/db/pool.rs`. `Workspace.configure()` writes the user config
(model provider on loopback, the project trusted); `install_probe_hooks()` /
`register_mcp()` put a hooks.json and an `[mcp_servers.helix]` table in the project's (or
the user's) `.codex/`; `Session.run()` starts the fake model, runs `codex exec` and
collects what happened: the model requests, the hook invocations, codex's JSONL events.
`Run` has helpers to find where a marker reached the model.

Needs CODEX_BIN in the environment (run.sh sets it). Python 3 standard library only.
"""

import hashlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = os.path.join(os.path.dirname(HERE), "common")
sys.path.insert(0, COMMON)

from fake_http import FakeServer  # noqa: E402
from workspace import git_repo, read_jsonl, run, sandbox_env  # noqa: E402,F401

MAIN = "HELIX-E2E-MAIN"
SUB = "HELIX-E2E-SUB"

# Every hook event Codex 0.169.0 runs from hooks.json (the /hooks list of the TUI; the
# binary's HookEventName). PreModelRequest/PostModelRequest have no published schema.
EVENTS = ["SessionStart", "UserPromptSubmit", "PreModelRequest", "PostModelRequest",
          "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
          "SubagentStart", "SubagentStop", "Stop", "Interrupt", "SessionEnd"]
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")

POOL_RS = ("use crate::db::Conn;\n\n"
           "/// Hands out pooled connections; integration tests share one pool.\n"
           "pub fn acquire_pooled_conn() -> Conn {\n"
           "    POOL.get().expect(\"pool\")\n"
           "}\n")

FAILING = ("sh -c 'printf \"error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n\""
           " >&2; exit 1'")

# The stand-in MCP server (../common/mcp_stub.py) as the probe runs it: read-only, its search
# result echoing the arguments as JSON.
MCP_STUB = os.path.join(COMMON, "mcp_stub.py")
MCP_RESULT = ("{marker} for {args}: kb:db/pool-exhaustion.md "
              "Connection pool exhausted in integration tests")


def toml_str(s):
    return json.dumps(s)  # a JSON string is a valid TOML basic string


class Workspace:
    """A temporary HOME, CODEX_HOME, XDG dirs and a code repository."""

    def __init__(self, root=None, name="codex"):
        self.root = root or tempfile.mkdtemp(prefix=f"helix-{name}-")
        self.home = os.path.join(self.root, "home")
        self.codex_home = os.path.join(self.home, ".codex")
        self.repo = os.path.join(self.root, "repo")
        self.bindir = os.path.join(self.root, "bin")
        for d in (self.codex_home, self.repo):
            os.makedirs(d, exist_ok=True)
        self.env = dict(sandbox_env(self.root, self.home, self.bindir),
                        CODEX_HOME=self.codex_home, SHELL="/bin/bash", NO_COLOR="1")
        self.hook_log = os.path.join(self.root, "hooks.jsonl")
        self.modes_file = os.path.join(self.root, "modes.json")
        self.mcp_log = os.path.join(self.root, "mcp.jsonl")
        git_repo(self.repo, {"src/db/pool.rs": POOL_RS, "README.md": "# app\n"}, self.env)

    # ------------------------------------------------------------ configuration

    def user_config_path(self):
        return os.path.join(self.codex_home, "config.toml")

    def configure(self, port, trust_project=True, model="gpt-5.4", extra=""):
        """The user config: the fake model provider, the project trusted (what
        `codex exec --trust` records) unless trust_project is False."""
        lines = [
            f"model = {toml_str(model)}",
            'model_provider = "fake"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.fake]",
            'name = "fake"',
            f'base_url = "http://127.0.0.1:{port}/v1"',
            'env_key = "FAKE_OPENAI_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
        ]
        if trust_project:
            lines += [f"[projects.{toml_str(self.repo)}]", 'trust_level = "trusted"', ""]
        with open(self.user_config_path(), "w") as f:
            f.write("\n".join(lines) + extra)

    def append_user_config(self, text):
        with open(self.user_config_path(), "a") as f:
            f.write("\n" + text + "\n")

    def scope_dir(self, scope):
        """`.codex/` of the project, or CODEX_HOME for the user scope."""
        d = os.path.join(self.repo, ".codex") if scope == "project" else self.codex_home
        os.makedirs(d, exist_ok=True)
        return d

    def set_modes(self, modes):
        with open(self.modes_file, "w") as f:
            json.dump(modes, f)

    def probe_command(self, event, tag=None):
        cmd = (f"python3 {os.path.join(HERE, 'probe_hook.py')} {event} "
               f"--log {self.hook_log} --modes {self.modes_file}")
        return cmd + (f" --tag {tag}" if tag else "")

    def install_probe_hooks(self, scope="project", events=EVENTS, matcher=None, timeout=30,
                            extra_events=(), handler_extra=None):
        """A hooks.json with the probe for every event (tool events with `matcher`, when
        given; "*" and absent both match everything)."""
        hooks = {}
        for ev in list(events) + list(extra_events):
            handler = {"type": "command", "command": self.probe_command(ev)}
            if timeout is not None:
                handler["timeout"] = timeout
            handler.update(handler_extra or {})
            group = {"hooks": [handler]}
            if matcher is not None and ev in TOOL_EVENTS:
                group["matcher"] = matcher
            hooks[ev] = [group]
        path = os.path.join(self.scope_dir(scope), "hooks.json")
        with open(path, "w") as f:
            json.dump({"hooks": hooks}, f, indent=2)
        return path

    def register_mcp(self, scope="project", name="helix", command=None, args=None, extra=""):
        """`[mcp_servers.<name>]` in the scope's config.toml; by default the stand-in server."""
        command = command or "python3"
        if args is None:
            args = [MCP_STUB, "--log", self.mcp_log, "--read-only", "--result", MCP_RESULT]
        path = os.path.join(self.scope_dir(scope), "config.toml")
        with open(path, "a") as f:
            f.write(f"\n[mcp_servers.{name}]\ncommand = {toml_str(command)}\n"
                    f"args = [{', '.join(toml_str(a) for a in args)}]\n{extra}\n")
        return path

    def git_commit(self, msg="config"):
        run(["git", "add", "-A"], self.env, self.repo)
        run(["git", "commit", "-qm", msg, "--allow-empty"], self.env, self.repo)

    # ------------------------------------------------------------ results

    def hook_calls(self):
        return read_jsonl(self.hook_log)


class FakeModel(FakeServer):
    """fake_responses.py in a subprocess."""

    def __init__(self, ws, steps, final_text="All done.", tag="fake", input_tokens=1000):
        self.ws = ws
        self.script = os.path.join(ws.root, f"{tag}-script.json")
        with open(self.script, "w") as f:
            json.dump({"steps": steps}, f, indent=1)
        super().__init__(os.path.join(HERE, "fake_responses.py"),
                         os.path.join(ws.root, f"{tag}-requests.jsonl"),
                         os.path.join(ws.root, f"{tag}.port"),
                         ["--script", self.script, "--main-marker", MAIN, "--sub-marker", SUB,
                          "--final-text", final_text, "--input-tokens", str(input_tokens)])

    def requests(self):
        return read_jsonl(self.log)


class Run:
    """What one `codex exec` did."""

    def __init__(self, ws, fake, rc, stdout, stderr, seconds, hooks_before=0):
        self.ws, self.rc, self.stdout, self.stderr, self.seconds = ws, rc, stdout, stderr, seconds
        self.requests = [r for r in fake.requests() if r["method"] == "POST"]
        self.model_requests = [r for r in self.requests
                               if r["path"].split("?")[0].endswith("/responses")]
        self.hooks = ws.hook_calls()[hooks_before:]
        self.events = []
        for line in stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def main_requests(self):
        return [r for r in self.model_requests
                if any(MAIN in t for t in input_texts(r["body"], roles=("user",)))]

    def hook_events(self):
        return [h["event"] for h in self.hooks]

    def request_kind(self, i):
        """x-codex-turn-metadata request_kind of model request i ("turn", "compaction")."""
        try:
            meta = json.loads(self.model_requests[i]["headers"].get("x-codex-turn-metadata")
                              or "{}")
        except ValueError:
            return None
        return meta.get("request_kind")

    def find(self, marker):
        """Where `marker` occurs in the model requests: (request index, input index, item
        type, role, text excerpt); the first request holding it, every item there."""
        hits = []
        for ri, r in enumerate(self.model_requests):
            body = r.get("body") or {}
            if marker in json.dumps(body.get("instructions", "")):
                hits.append((ri, "instructions", "instructions", None,
                             excerpt(body["instructions"], marker)))
            for ii, item in enumerate(body.get("input") or []):
                s = json.dumps(item)
                if marker in s:
                    hits.append((ri, ii, item.get("type"), item.get("role"),
                                 excerpt(item_text(item), marker)))
        return hits

    def first_request_with(self, marker):
        hits = self.find(marker)
        return hits[0][0] if hits else None


def item_text(item):
    t = item.get("type")
    if t == "message":
        c = item.get("content")
        return c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c or []
                                                      if isinstance(p, dict))
    if t in ("function_call_output", "custom_tool_call_output"):
        out = item.get("output")
        return out if isinstance(out, str) else json.dumps(out)
    return json.dumps(item)


def input_texts(body, roles=None):
    out = []
    for item in body.get("input") or []:
        if item.get("type") == "message" and (roles is None or item.get("role") in roles):
            out.append(item_text(item))
    return out


def excerpt(text, marker, width=160):
    i = text.find(marker)
    if i < 0:
        return text[:width]
    a = max(0, i - width // 2)
    return text[a:i + len(marker) + width // 2]


def codex_exec(ws, fake, prompt, args=(), timeout=180, json_events=True,
               bypass_hook_trust=True, sandbox="danger-full-access", env_extra=None,
               interrupt_on=None, cwd=None):
    """Runs `codex exec` in the repository (or cwd); returns a Run. interrupt_on=(event, n):
    send SIGINT to codex once the probe has logged the n-th call of that hook event."""
    cmd = [os.environ["CODEX_BIN"], "exec", "--skip-git-repo-check"]
    if json_events:
        cmd.append("--json")
    if bypass_hook_trust:
        cmd.append("--dangerously-bypass-hook-trust")
    if sandbox:
        cmd += ["-s", sandbox]
    cmd += list(args)
    cmd.append(prompt)
    env = dict(ws.env, FAKE_OPENAI_KEY="sk-e2e-dummy", **(env_extra or {}))
    before = len(ws.hook_calls())
    out_path = os.path.join(ws.root, "codex.stdout")
    err_path = os.path.join(ws.root, "codex.stderr")
    t0 = time.time()
    with open(out_path, "a") as out_f, open(err_path, "a") as err_f:
        start_out, start_err = out_f.tell(), err_f.tell()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd or ws.repo, stdout=out_f, stderr=err_f,
                                stdin=subprocess.DEVNULL)
        rc, interrupted = None, False
        while rc is None:
            try:
                rc = proc.wait(0.2)
            except subprocess.TimeoutExpired:
                pass
            if rc is None and interrupt_on and not interrupted:
                ev, n = interrupt_on
                if sum(1 for h in ws.hook_calls()[before:] if h["event"] == ev) >= n:
                    time.sleep(0.5)
                    proc.send_signal(signal.SIGINT)
                    interrupted = True
            if rc is None and time.time() - t0 > timeout:
                proc.kill()
                proc.wait()
                rc = "timeout"
    with open(out_path) as f:
        f.seek(start_out)
        out = f.read()
    with open(err_path) as f:
        f.seek(start_err)
        err = f.read()
    return Run(ws, fake, rc, out, err, time.time() - t0, before)


def session(steps, prompt_text, setup, args=(), final_text="All done.", name="codex",
            input_tokens=1000, **kw):
    """One scenario: a workspace, the fake model on `steps`, setup(ws, port), codex exec.
    Returns (ws, run); the caller removes ws.root unless it wants to keep it."""
    ws = Workspace(name=name)
    steps = json.loads(json.dumps(steps).replace("{repo}", ws.repo))
    fake = FakeModel(ws, steps, final_text=final_text, input_tokens=input_tokens)
    if isinstance(kw.get("cwd"), str):
        kw["cwd"] = kw["cwd"].replace("{repo}", ws.repo)
    try:
        setup(ws, fake.port)
        r = codex_exec(ws, fake, f"{MAIN} {prompt_text}", args=args, **kw)
    finally:
        fake.stop()
    return ws, r


def sanitize(obj, ws):
    """A payload with this workspace's paths replaced by stable placeholders."""
    s = json.dumps(obj)
    s = s.replace(ws.repo, "/path/to/code")
    s = s.replace(ws.codex_home, "/path/to/home/.codex")
    s = s.replace(ws.home, "/path/to/home")
    s = s.replace(ws.root, "/path/to/tmp")
    s = s.replace(HERE, "/path/to/tests/agents/codex")
    s = s.replace(COMMON, "/path/to/tests/agents/common")
    return json.loads(s)


# ---------------------------------------------------------------- hook trust

EVENT_KEYS = {"SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit",
              "PreModelRequest": "pre_model_request", "PostModelRequest": "post_model_request",
              "PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
              "PostToolUse": "post_tool_use", "PreCompact": "pre_compact",
              "PostCompact": "post_compact", "SubagentStart": "subagent_start",
              "SubagentStop": "subagent_stop", "Stop": "stop", "Interrupt": "interrupt",
              "SessionEnd": "session_end"}
# Events whose matcher Codex ignores (normalized to no matcher before hashing).
NO_MATCHER = {"UserPromptSubmit", "Stop"}


def hook_hash(event, matcher, handler):
    """The trusted_hash Codex 0.169.0 computes for one command handler: sha256 over the
    compact, key-sorted JSON of {"event_name": <snake_case event>, "matcher"?: ...,
    "hooks": [<the handler as Codex normalizes it: type, command, timeout (effective
    seconds), async, statusMessage?, commandWindows?, additionalContextLimit?>]}; fields
    that are unset are left out (they go through TOML, which has no null)."""
    h = {"type": "command", "command": handler["command"],
         "timeout": effective_timeout(event, handler.get("timeout")),
         "async": bool(handler.get("async", False))}
    for k in ("statusMessage", "commandWindows", "additionalContextLimit"):
        if handler.get(k) is not None:
            h[k] = handler[k]
    ident = {"event_name": EVENT_KEYS[event], "hooks": [h]}
    if matcher is not None and event not in NO_MATCHER:
        ident["matcher"] = matcher
    data = json.dumps(ident, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def effective_timeout(event, timeout):
    """Seconds; default 600, at least 1; SessionEnd and Interrupt are clamped to 3 s (what
    the binary warns: "clamping SessionEnd hook timeout to 3s")."""
    if event in ("SessionEnd", "Interrupt"):
        return max(1, min(3, timeout if timeout is not None else 3))
    return max(1, timeout if timeout is not None else 600)


def trust_entries(hooks_json_path):
    """{key: trusted_hash} for every command handler of a hooks.json, keyed the way Codex
    keys hooks.state: "<absolute hooks.json path>:<event snake>:<group>:<handler>"."""
    with open(hooks_json_path) as f:
        doc = json.load(f)
    out = {}
    for event, groups in (doc.get("hooks") or {}).items():
        if event not in EVENT_KEYS:
            continue
        for gi, group in enumerate(groups):
            for hi, handler in enumerate(group.get("hooks") or []):
                if handler.get("type", "command") != "command":
                    continue
                key = f"{os.path.abspath(hooks_json_path)}:{EVENT_KEYS[event]}:{gi}:{hi}"
                out[key] = hook_hash(event, group.get("matcher"), handler)
    return out


def write_trust(ws, entries):
    """What approving hooks in the TUI's /hooks records: [hooks.state."<key>"] trusted_hash
    in the user config (only the user layer may hold hook state)."""
    ws.append_user_config("\n".join(
        f"[hooks.state.{toml_str(k)}]\ntrusted_hash = {toml_str(v)}\n"
        for k, v in entries.items()))


def stdio_peer(argv, cwd, env, stderr):
    """argv started as a newline-delimited JSON-RPC peer on stdin/stdout: (proc, send)."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, text=True, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr)

    def send(msg):
        proc.stdin.write(json.dumps(msg) + "\n")
        proc.stdin.flush()
    return proc, send


def end_stdio(proc, timeout=10):
    """Closes a stdio peer's input and waits for it to exit; kills it after timeout."""
    try:
        proc.stdin.close()
        proc.wait(timeout)
    except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
        proc.kill()
        proc.wait()


# The app-server handshake: initialize (id 1), then, once answered, initialized.
APP_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"clientInfo": {"name": "helix-e2e", "version": "0"},
                             "capabilities": {}}}
APP_INITIALIZED = {"jsonrpc": "2.0", "method": "initialized"}


def app_server(ws, api_key):
    """`codex app-server` in the repository, its stderr appended to app-server.stderr."""
    return stdio_peer([os.environ["CODEX_BIN"], "app-server"], ws.repo,
                      dict(ws.env, FAKE_OPENAI_KEY=api_key),
                      open(os.path.join(ws.root, "app-server.stderr"), "a"))


def app_server_hooks(ws, timeout=60):
    """The hooks `codex app-server` lists for the repository (JSON-RPC hooks/list):
    [{key, eventName, command, currentHash, trustStatus, source, ...}]."""
    proc, send = app_server(ws, "x")

    def wait_for(rid):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                return None
            msg = json.loads(line)
            if msg.get("id") == rid:
                return msg
        return None

    try:
        send(APP_INITIALIZE)
        wait_for(1)
        send(APP_INITIALIZED)
        send({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [ws.repo]}})
        res = wait_for(2) or {}
    finally:
        end_stdio(proc)
    hooks = []
    for entry in (res.get("result") or {}).get("data") or []:
        hooks += entry.get("hooks") or []
    return hooks


# ---------------------------------------------------------------- app-server driver

class AppRun(Run):
    """What one thread driven through `codex app-server` did: like Run, plus hook_runs (the
    hook/completed notifications: event, status, entries such as the error Codex reports
    for a hook answer it rejects) and the raw notifications."""

    def __init__(self, ws, fake, rc, notes, stderr, seconds, hooks_before=0):
        super().__init__(ws, fake, rc, "", stderr, seconds, hooks_before)
        self.notes = notes
        self.hook_runs = [n["params"]["run"] for n in notes
                          if n.get("method") == "hook/completed"]
        # exec-like item events, for tool_items()/final_messages() in probe.py
        for n in notes:
            if n.get("method") == "item/completed":
                item = n["params"].get("item") or {}
                t = item.get("type")
                if t == "agentMessage":
                    self.events.append({"type": "item.completed",
                                        "item": {"type": "agent_message",
                                                 "text": item.get("text")}})
                elif t == "commandExecution":
                    self.events.append({"type": "item.completed", "item": {
                        "type": "command_execution", "command": item.get("command"),
                        "exit_code": item.get("exitCode"), "status": item.get("status")}})
                elif t == "mcpToolCall":
                    self.events.append({"type": "item.completed", "item": {
                        "type": "mcp_tool_call", "server": item.get("server"),
                        "tool": item.get("tool"), "status": item.get("status")}})
            elif n.get("method") in ("error", "warning", "configWarning"):
                self.events.append({"type": "item.completed", "item": {
                    "type": "error", "message": json.dumps(n.get("params"))[:400]}})


def app_session(ws, fake, prompts, thread_params=None, timeout=120, trust=True,
                approval="decline"):
    """Runs prompts (one turn each) on a new thread of `codex app-server` in the repository.
    With trust=True every hooks.json handler gets its computed trusted_hash first (the
    app-server has no bypass flag). Requests the server sends the client (approvals) are
    answered {"decision": approval} and kept in the notes. Returns an AppRun."""
    if trust:
        for path in (os.path.join(ws.repo, ".codex", "hooks.json"),
                     os.path.join(ws.codex_home, "hooks.json")):
            if os.path.exists(path):
                write_trust(ws, trust_entries(path))
    before = len(ws.hook_calls())
    err_path = os.path.join(ws.root, "app-server.stderr")
    proc, send = app_server(ws, "sk-e2e-dummy")
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(None)],
                     daemon=True).start()
    notes = []
    t0 = time.time()
    rc = 0

    def until(pred):
        while time.time() - t0 < timeout:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if line is None:
                return None
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "method" in msg:
                notes.append(msg)
                if "id" in msg:  # a request to the client: an approval, an elicitation
                    send({"jsonrpc": "2.0", "id": msg["id"],
                          "result": {"decision": approval}})
            if pred(msg):
                return msg
        return None

    try:
        send(APP_INITIALIZE)
        until(lambda m: m.get("id") == 1)
        send(APP_INITIALIZED)
        params = {"cwd": ws.repo, "approvalPolicy": "never", "sandbox": "danger-full-access"}
        params.update(thread_params or {})
        send({"jsonrpc": "2.0", "id": 2, "method": "thread/start", "params": params})
        started = until(lambda m: m.get("id") == 2) or {}
        if "error" in started or not started:
            rc = "thread/start failed: " + json.dumps(started.get("error"))[:300]
        else:
            tid = started["result"]["thread"]["id"]
            for i, prompt in enumerate(prompts):
                send({"jsonrpc": "2.0", "id": 10 + i, "method": "turn/start",
                      "params": {"threadId": tid,
                                 "input": [{"type": "text", "text": prompt}]}})
                if until(lambda m: m.get("method") == "turn/completed"
                         and (m.get("params") or {}).get("threadId") == tid) is None:
                    rc = "timeout"
                    break
    finally:
        end_stdio(proc)
    with open(os.path.join(ws.root, "app-server.notifications.jsonl"), "a") as f:
        for n in notes:
            f.write(json.dumps(n) + "\n")
    with open(err_path) as f:
        err = f.read()
    return AppRun(ws, fake, rc, notes, err, time.time() - t0, before)


# ---------------------------------------------------------------- what reached the model

CODEX_PREAMBLES = ("You are a coding agent", "<skills_instructions>", "<permissions",
                   "<collaboration_mode>", "<environment_context>")


def injected_contexts(run):
    """Hook contexts as the model received them: developer-role messages that are not
    Codex's own preambles, with the first request (index) that holds each. Codex puts every
    additionalContext (SessionStart, UserPromptSubmit, SubagentStart, PreToolUse,
    PostToolUse) in its own developer message; a helix check can look for its text here."""
    seen, out = set(), []
    for ri, r in enumerate(run.model_requests):
        for it in (r.get("body") or {}).get("input") or []:
            if it.get("type") != "message" or it.get("role") != "developer":
                continue
            text = item_text(it)
            if text.startswith(CODEX_PREAMBLES):
                continue
            key = it.get("id") or text
            if key in seen:
                continue
            seen.add(key)
            out.append({"request": ri, "text": text})
    return out


def install_with(ws, argv, env_extra=None, check=True):
    """Runs an installer (e.g. [helix, "hooks", "install", "--agent", "codex", "--project"])
    in the repository with the workspace's HOME/CODEX_HOME, instead of install_probe_hooks."""
    env = dict(ws.env, **(env_extra or {}))
    return run(list(argv), env, ws.repo, check=check)
