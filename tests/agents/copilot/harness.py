"""Reusable pieces for driving the real GitHub Copilot CLI offline: a temporary HOME/XDG
tree and code repository, the loopback model stand-in (fake_model.py), hook and MCP
configuration writers, the `copilot -p` run, and readers for what it left behind (requests
the model saw, hook invocations, MCP traffic, Copilot's own JSONL output and session events).

Python 3 standard library only. COPILOT_BIN must name the pinned copilot executable (run.sh
installs it); COPILOT_PKG_CACHE_HOME (optional) lets every run share one unpacked package
instead of unpacking ~235 MB into each run's XDG cache.
"""

import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = os.path.join(os.path.dirname(HERE), "common")
sys.path.insert(0, COMMON)

from fake_http import FakeServer  # noqa: E402
from workspace import git_repo, read_jsonl, run, sandbox_env, write_json  # noqa: E402,F401

MAIN = "HELIX-E2E-MAIN"
SUB = "HELIX-E2E-SUB"
PROMPT = f"{MAIN} Why do the integration tests hang on the connection pool?"
MODEL = "claude-sonnet-4.5"

# Every hook event Copilot CLI 1.0.102 knows (schemas/api.schema.json `HookType`). The
# settings schema lists all but postResult and prePRDescription as file-configurable.
EVENTS = ["sessionStart", "userPromptSubmitted", "userPromptTransformed", "preToolUse",
          "preMcpToolCall", "postToolUse", "postToolUseFailure", "permissionRequest",
          "subagentStart", "subagentStop", "agentStop", "sessionEnd", "errorOccurred",
          "preCompact", "notification"]
SDK_ONLY_EVENTS = ["postResult", "prePRDescription"]

POOL_RS = "pub fn acquire_pooled_conn() -> Conn {\n    POOL.get().expect(\"pool\")\n}\n"
FAILING = ("printf 'error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n' >&2; "
           "echo 'partial stdout before the failure'; exit 3")
SUCCEEDING = "echo 'build ok: 3 crates compiled'"

# The stand-in MCP server (../common/mcp_stub.py): its search result repeats the query; a
# query holding FAIL gets an isError result.
MCP_STUB = os.path.join(COMMON, "mcp_stub.py")
MCP_RESULT = ("{marker} for {query}: kb:db/pool-exhaustion.md "
              "Connection pool exhausted in integration tests")

# The scripted model: read a file, run a failing and a succeeding shell command, call the
# MCP tool (once fine, once failing), read a file that does not exist, start a subagent; then
# finish.
STEPS = [
    [{"type": "tool_use", "name": "view", "input": {"path": "{repo}/src/db/pool.rs"}}],
    [{"type": "tool_use", "name": "bash",
      "input": {"command": FAILING, "description": "Run the failing build step"}}],
    [{"type": "tool_use", "name": "bash",
      "input": {"command": SUCCEEDING, "description": "Run the passing build step"}}],
    [{"type": "tool_use", "name": "@mcp:helix/search",
      "input": {"query": "connection pool integration tests", "limit": 3}}],
    [{"type": "tool_use", "name": "@mcp:helix/search", "input": {"query": "FAIL on purpose"}}],
    [{"type": "tool_use", "name": "view", "input": {"path": "{repo}/src/db/missing.rs"}}],
    [{"type": "tool_use", "name": "@agent",
      "input": {"description": "Check the pool", "agent_type": "explore", "name": "pool-check",
                "prompt": f"{SUB} Look at src/db/pool.rs and say done."}}],
]


class Workspace:
    """A temporary root with HOME, XDG dirs, TMPDIR and a git code repository holding
    src/db/pool.rs; logs of the stand-in, the hooks and the MCP server go in the root."""

    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.home = os.path.join(self.root, "home")
        self.repo = os.path.join(self.root, "code")
        os.makedirs(self.repo, exist_ok=True)
        self.hook_log = os.path.join(self.root, "hooks.jsonl")
        self.mcp_log = os.path.join(self.root, "mcp.jsonl")
        self.request_log = os.path.join(self.root, "requests.jsonl")
        self.env = sandbox_env(self.root, self.home)
        if os.environ.get("COPILOT_PKG_CACHE_HOME"):
            self.env["COPILOT_PKG_CACHE_HOME"] = os.environ["COPILOT_PKG_CACHE_HOME"]
        git_repo(self.repo, {"src/db/pool.rs": POOL_RS}, self.env)

    # ------------------------------------------------------------------ configuration

    def write_json(self, path, doc):
        return write_json(path, doc)

    def probe_command(self, event, scope, mode="json"):
        return (f"{sys.executable} {os.path.join(HERE, 'probe_hook.py')} --log {self.hook_log} "
                f"{event} {scope} {mode}")

    def probe_hooks(self, scope, events=EVENTS, modes=None, mode="json", extra=None):
        """A hooks document ({"version": 1, "hooks": {...}}) running the probe for events."""
        modes = modes or {}
        hooks = {}
        for ev in events:
            entry = {"type": "command", "bash": self.probe_command(ev, scope, modes.get(ev, mode)),
                     "timeoutSec": 30}
            entry.update(extra or {})
            hooks[ev] = [entry]
        return {"version": 1, "hooks": hooks}

    def project_hooks_file(self, doc, name="probe.json"):
        return self.write_json(os.path.join(self.repo, ".github", "hooks", name), doc)

    def user_hooks_file(self, doc, name="probe.json"):
        return self.write_json(os.path.join(self.home, ".copilot", "hooks", name), doc)

    def mcp_args(self, tag):
        """The stand-in MCP server's arguments; `tag` (last) names the instance in its log."""
        return [MCP_STUB, "--log", self.mcp_log, "--result", MCP_RESULT, tag]

    def mcp_entry(self, tag="mcp"):
        return {"type": "stdio", "command": sys.executable, "args": self.mcp_args(tag),
                "tools": ["*"]}

    def workspace_mcp(self, path=".mcp.json", tag="workspace"):
        return self.write_json(os.path.join(self.repo, path),
                               {"mcpServers": {"helix": self.mcp_entry(tag)}})

    def user_mcp(self, tag="user"):
        return self.write_json(os.path.join(self.home, ".copilot", "mcp-config.json"),
                               {"mcpServers": {"helix": self.mcp_entry(tag)}})

    def trust_folder_in_config(self, folder=None):
        """What an interactive "trust this folder" records: trustedFolders in
        ~/.copilot/config.json."""
        return self.write_json(os.path.join(self.home, ".copilot", "config.json"),
                               {"trustedFolders": [folder or self.repo]})

    # ------------------------------------------------------------------ reading the results

    def hook_calls(self):
        return read_jsonl(self.hook_log)

    def mcp_messages(self):
        return read_jsonl(self.mcp_log)

    def requests(self):
        """The /v1/messages request bodies, in order, with the stand-in's answer attached."""
        out = []
        for e in read_jsonl(self.request_log):
            if e["method"] == "POST" and e["path"].split("?")[0] == "/v1/messages" \
                    and isinstance(e.get("body"), dict):
                out.append(dict(e["body"], _answer=e.get("answer")))
        return out

    def session_events(self):
        out = []
        for p in sorted(glob.glob(os.path.join(self.home, ".copilot", "session-state", "*",
                                               "events.jsonl"))):
            out.extend(read_jsonl(p))
        return out


class Fake(FakeServer):
    """fake_model.py on a free loopback port, for one workspace."""

    def __init__(self, ws, steps=None, sub_steps=None, final_text="All done."):
        self.ws = ws
        script = os.path.join(ws.root, "script.json")
        doc = {"steps": STEPS if steps is None else steps, "sub_steps": sub_steps or []}
        doc = json.loads(json.dumps(doc).replace("{repo}", ws.repo))
        with open(script, "w") as f:
            json.dump(doc, f, indent=1)
        super().__init__(os.path.join(HERE, "fake_model.py"), ws.request_log,
                         os.path.join(ws.root, "port"),
                         ["--script", script, "--main-marker", MAIN, "--sub-marker", SUB,
                          "--final-text", final_text], stop_wait=10)


def copilot_env(ws, port, extra=None):
    env = dict(ws.env,
               COPILOT_OFFLINE="true",
               COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}",
               COPILOT_PROVIDER_TYPE="anthropic",
               COPILOT_PROVIDER_API_KEY="sk-e2e-dummy",
               COPILOT_MODEL=MODEL,
               COPILOT_AUTO_UPDATE="false")
    env.update(extra or {})
    return {k: v for k, v in env.items() if v is not None}


def run_copilot(ws, port, args=(), env_extra=None, prompt=PROMPT, trust=True, allow_all=True,
                timeout=None, cwd=None, tag=""):
    """`copilot -p PROMPT [--allow-all-tools] [--trust-folder] --output-format json` in the
    code repository (or cwd). Returns (exit status, stderr, path of the JSONL stdout,
    seconds); tag names a second run's output files."""
    out = os.path.join(ws.root, f"copilot{tag}.out.jsonl")
    logdir = os.path.join(ws.root, "copilot-logs")
    cmd = [os.environ["COPILOT_BIN"], "-p", prompt,
           "--output-format", "json", "--log-dir", logdir, "--log-level", "debug",
           "--no-auto-update", "--disable-client-telemetry"]
    if allow_all:
        cmd.append("--allow-all-tools")
    if trust:
        cmd.append("--trust-folder")
    cmd += list(args)
    with open(os.path.join(ws.root, f"copilot{tag}.cmd.json"), "w") as f:
        json.dump(cmd, f)
    t0 = time.time()
    with open(out, "w") as f:
        p = subprocess.run(cmd, env=copilot_env(ws, port, env_extra), cwd=cwd or ws.repo, stdout=f,
                           stderr=subprocess.PIPE, text=True,
                           timeout=timeout or float(os.environ.get("HELIX_E2E_TIMEOUT", "240")))
    with open(os.path.join(ws.root, f"copilot{tag}.stderr"), "w") as f:
        f.write(p.stderr)
    return p.returncode, p.stderr, out, time.time() - t0


def copilot_log_text(ws):
    text = []
    for p in sorted(glob.glob(os.path.join(ws.root, "copilot-logs", "*.log"))):
        with open(p, errors="replace") as f:
            text.append(f.read())
    return "\n".join(text)


# ---------------------------------------------------------------------- request analysis

def text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if isinstance(b, dict):
            if b.get("type") == "text":
                out.append(b.get("text", ""))
            elif b.get("type") == "tool_result":
                out.append(text_of(b.get("content")))
    return "\n".join(out)


def is_main(body):
    texts = [text_of([b for b in (m.get("content") if isinstance(m.get("content"), list)
                                  else [{"type": "text", "text": m.get("content") or ""}])
                      if isinstance(b, dict) and b.get("type") == "text"])
             for m in body.get("messages") or [] if m.get("role") == "user"]
    return any(MAIN in t for t in texts) and not any(SUB in t for t in texts)


def is_sub(body):
    return any(SUB in text_of([b for b in (m.get("content") if isinstance(m.get("content"), list)
                                           else [{"type": "text", "text": m.get("content")}])
                               if isinstance(b, dict) and b.get("type") == "text"])
               for m in body.get("messages") or [] if m.get("role") == "user")


def locate(requests, needle):
    """Where needle first appears in the requests: a dict with the request index, where
    (system / messages[i]), the role, the block index and type, the block's text around the
    needle, and in how many requests it appears; None if nowhere."""
    first = None
    count = 0
    for ri, body in enumerate(requests):
        hit = find_in_body(body, needle)
        if hit:
            count += 1
            if first is None:
                first = dict(hit, request=ri, conversation="main" if is_main(body) else
                             "sub" if is_sub(body) else "other")
    if first:
        first["requests_with_it"] = count
        first["occurrences_in_first"] = json.dumps(requests[first["request"]]).count(needle)
    return first


def find_in_body(body, needle):
    system = body.get("system")
    blocks = system if isinstance(system, list) else [{"type": "text", "text": system or ""}]
    for bi, b in enumerate(blocks):
        if isinstance(b, dict) and needle in (b.get("text") or ""):
            return {"where": "system", "block": bi, "block_type": b.get("type"),
                    "snippet": around(b["text"], needle)}
    for mi, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for bi, b in enumerate(content or []):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                inner = b.get("content")
                t = text_of(inner) if not isinstance(inner, str) else inner
                if needle in t:
                    return {"where": f"messages[{mi}]", "role": m.get("role"), "block": bi,
                            "block_type": "tool_result", "tool_use_id": b.get("tool_use_id"),
                            "is_error": b.get("is_error"), "snippet": around(t, needle),
                            "block_json": trim(json.dumps(b), 1500)}
            elif needle in json.dumps(b):
                t = b.get("text") if isinstance(b.get("text"), str) else json.dumps(b)
                return {"where": f"messages[{mi}]", "role": m.get("role"), "block": bi,
                        "block_type": b.get("type"), "snippet": around(t, needle),
                        "message_blocks": len(content)}
    if needle in json.dumps(body):
        return {"where": "elsewhere in the body", "snippet": ""}
    return None


def around(text, needle, before=300, after=200):
    i = text.find(needle)
    if i < 0:
        return ""
    return text[max(0, i - before):i + len(needle) + after]


def trim(s, n):
    return s if len(s) <= n else s[:n] + f"…(+{len(s) - n})"


def tool_list(body):
    return [t.get("name") for t in body.get("tools") or []]


def tool_results(body):
    """(tool_use_id, is_error, text) of every tool_result in the last user message."""
    msgs = body.get("messages") or []
    out = []
    for m in msgs:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                out.append((b.get("tool_use_id"), b.get("is_error"), text_of(b.get("content"))
                            if not isinstance(b.get("content"), str) else b.get("content")))
    return out
