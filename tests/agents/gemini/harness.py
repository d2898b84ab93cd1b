"""The reusable part of the Gemini CLI real-client tests: a throw-away workspace (HOME, XDG
dirs, a small code repository), the loopback model stand-in (fake_gemini.py), one
`gemini -p` run, and helpers to read what reached the model.

probe.py uses it to probe the client with probe_hook.py; a test of helix's own adapter can
use it the same way with `helix hooks install --agent gemini --project` in place of the probe
(see README.md). Needs GEMINI_BIN (run.sh sets it). Python 3 standard library only.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
COMMON = os.path.join(os.path.dirname(HERE), "common")
sys.path.insert(0, COMMON)

from fake_http import FakeServer  # noqa: E402
from workspace import git_repo, read_jsonl, run, sandbox_env, write_json  # noqa: E402,F401

MAIN = "HELIX-E2E-MAIN"
PROMPT = f"{MAIN} Why do the integration tests hang on the connection pool?"
MODEL = "gemini-2.5-flash"
# Every event Gemini CLI 0.61.0 knows (HookEventName in packages/core/src/hooks/types.ts).
EVENTS = ["SessionStart", "BeforeAgent", "BeforeModel", "BeforeToolSelection", "AfterModel",
          "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "Notification", "SessionEnd"]
FAILING = ("printf 'error: linking with cc failed\\n  = note: ld: cannot find -lssl\\n' >&2;"
           " exit 1")
SUCCEEDING = "echo SHELL-OK-MARKER; ls src/db"
POOL_RS = "pub fn acquire_pooled_conn() -> Conn {\n    POOL.get().expect(\"pool\")\n}\n"
MCP_STUB = os.path.join(COMMON, "mcp_stub.py")  # the stand-in MCP server


def default_steps(repo):
    """The scripted model: read a file, read a missing one (a tool error), run a failing
    command, run a succeeding one, call helix's MCP search tool; then answer. One function
    call per model turn."""
    return [
        [{"functionCall": {"name": "read_file",
                           "args": {"file_path": os.path.join(repo, "src/db/pool.rs")}}}],
        [{"functionCall": {"name": "read_file",
                           "args": {"file_path": os.path.join(repo, "src/db/missing.rs")}}}],
        [{"functionCall": {"name": "run_shell_command",
                           "args": {"command": FAILING,
                                    "description": "Run the failing build step"}}}],
        [{"functionCall": {"name": "run_shell_command",
                           "args": {"command": SUCCEEDING, "description": "List the db code"}}}],
        [{"functionCall": {"name": "@mcp:helix/search",
                           "args": {"query": "connection pool integration tests",
                                    "limit": 3}}}],
    ]


def read_json(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def merge(base, extra):
    """Deep-merge dict `extra` into `base` (lists and scalars replace)."""
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            merge(base[k], v)
        else:
            base[k] = v
    return base


class Workspace:
    """A temporary HOME with its XDG dirs and a git repository `repo` holding src/db/pool.rs.
    Nothing of the caller's environment leaks in but PATH's system part."""

    def __init__(self, root):
        self.root = root
        self.home = os.path.join(root, "home")
        self.repo = os.path.join(root, "repo")
        self.bindir = os.path.join(root, "bin")
        os.makedirs(self.repo, exist_ok=True)
        self.env = dict(sandbox_env(root, self.home, self.bindir),
                        # No telemetry, update checks or IDE discovery in a test.
                        GEMINI_TELEMETRY_ENABLED="false", NO_BROWSER="1")
        git_repo(self.repo, {"src/db/pool.rs": POOL_RS}, self.env)
        self.extra_args = []

    # -- settings

    @property
    def gemini_dir(self):
        return os.path.join(self.home, ".gemini")

    def settings_path(self, scope):
        if scope == "user":
            return os.path.join(self.gemini_dir, "settings.json")
        if scope == "project":
            return os.path.join(self.repo, ".gemini", "settings.json")
        raise ValueError(scope)

    def update_settings(self, scope, doc):
        path = self.settings_path(scope)
        write_json(path, merge(read_json(path, {}), doc))
        return path

    def base_user_settings(self, trust="file"):
        """User settings for a headless test: API-key auth, no update nag, usage statistics
        off, and (`trust`) how the project folder gets trusted: "file" records it in
        ~/.gemini/trustedFolders.json as the interactive trust dialog does; "off" disables
        folder trust; "env" sets GEMINI_CLI_TRUST_WORKSPACE=true; "flag" passes
        --skip-trust; "none" leaves the folder untrusted."""
        self.update_settings("user", {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
            "ui": {"hideTips": True, "hideBanner": True},
        })
        if trust == "file":
            write_json(os.path.join(self.gemini_dir, "trustedFolders.json"),
                       {self.repo: "TRUST_FOLDER"})
        elif trust == "off":
            self.update_settings("user", {"security": {"folderTrust": {"enabled": False}}})
        elif trust == "env":
            self.env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        elif trust == "flag":
            self.extra_args.append("--skip-trust")
        elif trust != "none":
            raise ValueError(trust)

    def allow_shell(self):
        """A user policy that lets run_shell_command run in -p mode, redirections included
        (without it the tool is left out of the request; without allowRedirection a command
        with `>&2` is refused: "requires user confirmation, which is not supported in
        non-interactive mode")."""
        path = os.path.join(self.gemini_dir, "policies", "e2e.toml")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write('[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\n'
                    'priority = 100\nallowRedirection = true\n')

    def scrub(self, obj):
        """`obj` with this workspace's temporary paths replaced by stable placeholders:
        the code repository becomes /path/to/code, HOME /path/to/home, the temp root
        /path/to/tmp, this directory and ../common (the MCP stub's) /path/to/harness."""
        text = json.dumps(obj)
        for real, placeholder in ((self.repo, "/path/to/code"), (self.home, "/path/to/home"),
                                  (self.root, "/path/to/tmp"), (HERE, "/path/to/harness"),
                                  (COMMON, "/path/to/harness")):
            text = text.replace(real, placeholder)
            text = text.replace(json.dumps(real)[1:-1], placeholder)
        return json.loads(text)


class Fake(FakeServer):
    """fake_gemini.py on a free loopback port, answering `steps` to the main conversation."""

    def __init__(self, ws, steps, final_text="All done.", name="fake"):
        self.ws = ws
        self.script = os.path.join(ws.root, f"{name}-script.json")
        write_json(self.script, {"steps": steps})
        super().__init__(os.path.join(HERE, "fake_gemini.py"),
                         os.path.join(ws.root, f"{name}-requests.jsonl"),
                         os.path.join(ws.root, f"{name}.port"),
                         ["--script", self.script, "--main-marker", MAIN,
                          "--final-text", final_text])

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.port}"

    def requests(self):
        return read_jsonl(self.log)


class Result:
    def __init__(self, rc, stdout, stderr, seconds):
        self.rc, self.stdout, self.stderr, self.seconds = rc, stdout, stderr, seconds


def gemini_env(ws, fake):
    return dict(ws.env, GEMINI_API_KEY="e2e-dummy", GOOGLE_GEMINI_BASE_URL=fake.base_url)


def run_gemini(ws, fake, prompt=PROMPT, args=(), timeout=None, cwd=None):
    """One headless run (`gemini -p PROMPT -m MODEL`) in the repository."""
    cmd = [os.environ["GEMINI_BIN"], "-p", prompt, "-m", MODEL, *ws.extra_args, *args]
    timeout = timeout or float(os.environ.get("HELIX_E2E_TIMEOUT", "180"))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=gemini_env(ws, fake), cwd=cwd or ws.repo,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        out = out.decode() if isinstance(out, bytes) else out
        err = err.decode() if isinstance(err, bytes) else err
    with open(os.path.join(ws.root, "gemini.stdout"), "w") as f:
        f.write(out)
    with open(os.path.join(ws.root, "gemini.stderr"), "w") as f:
        f.write(err)
    return Result(rc, out, err, time.time() - t0)


def run_gemini_tmux(ws, fake, prompts=None, approve=True, timeout=None,
                    final_text="All done."):
    """One interactive session in a tmux pane (200x50): type each of `prompts` in turn (the
    next once the stand-in has answered the previous one with `final_text`), answer every
    tool confirmation dialog with Enter ("Allow once") while `approve`, then /quit. Needs
    tmux. Returns a Result whose stdout is the last screen. (A prompt must not end with
    "?": typed into an empty line it opens the shortcuts help.)"""
    prompts = list(prompts or [PROMPT.rstrip("?")])

    def finals():
        return sum(1 for r in fake.requests() if r.get("kind") == "main"
                   and r.get("reply") == [{"text": final_text}])
    timeout = timeout or float(os.environ.get("HELIX_E2E_TIMEOUT", "180"))
    sock = os.path.join(ws.root, "tmux.sock")
    env = dict(gemini_env(ws, fake), TERM="xterm-256color")
    script = os.path.join(ws.root, "gemini-tmux.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ncd " + shlex_quote(ws.repo) + " || exit 1\nexec env -i "
                + " ".join(f"{k}={shlex_quote(v)}" for k, v in env.items()) + " "
                + " ".join(shlex_quote(a) for a in [os.environ["GEMINI_BIN"], "-m", MODEL,
                                                     *ws.extra_args])
                + " 2>" + shlex_quote(os.path.join(ws.root, "gemini.stderr")) + "\n")
    os.chmod(script, 0o755)
    tmux = ["tmux", "-S", sock]
    subprocess.run(tmux + ["new-session", "-d", "-x", "200", "-y", "50", "-s", "g", script],
                   check=True, env=dict(ws.env, TERM="xterm-256color"))

    def screen():
        p = subprocess.run(tmux + ["capture-pane", "-p", "-t", "g"], capture_output=True,
                           text=True)
        return p.stdout if p.returncode == 0 else None

    def keys(*k, literal=False):
        subprocess.run(tmux + ["send-keys", "-t", "g", *(["-l"] if literal else []), *k],
                       capture_output=True)

    t0 = time.time()
    state, last, quit_at = "start", "", None
    while time.time() - t0 < timeout:
        time.sleep(0.5)
        scr = screen()
        if scr is None:  # the session (and gemini) ended
            break
        last = scr
        if state == "start" and "Type your message" in scr:
            sent = 0
            state = "next"
        if state == "next":
            if sent < len(prompts):
                keys(prompts[sent], literal=True)
                time.sleep(0.5)
                keys("Enter")
                sent += 1
                state = "running"
            else:
                keys("/quit", literal=True)
                time.sleep(0.5)
                keys("Enter")
                state, quit_at = "quitting", time.time()
        elif state == "running":
            if approve and "Allow once" in scr:
                keys("Enter")
                time.sleep(1)
            elif finals() >= sent and "Type your message" in scr:
                time.sleep(1)  # let AfterAgent hooks finish
                state = "next"
        elif state == "quitting" and time.time() - quit_at > 20:
            break
    rc = 0 if screen() is None else "timeout"
    subprocess.run(tmux + ["kill-server"], capture_output=True)
    try:
        with open(os.path.join(ws.root, "gemini.stderr")) as f:
            err = f.read()
    except FileNotFoundError:
        err = ""
    with open(os.path.join(ws.root, "gemini.screen"), "w") as f:
        f.write(last)
    return Result(rc, last, err, time.time() - t0)


def shlex_quote(s):
    import shlex
    return shlex.quote(str(s))


def gemini_cli(ws, args, fake=None, check=False):
    """A management command (`gemini extensions ...`, `gemini hooks ...`) in the repository."""
    env = gemini_env(ws, fake) if fake else dict(ws.env, GEMINI_API_KEY="e2e-dummy")
    return run([os.environ["GEMINI_BIN"], *args], env, ws.repo, check=check)


# -- reading requests

def main_requests(reqs):
    return [r for r in reqs if r.get("kind") == "main"]


def declared_names(body):
    return [d.get("name") for t in (body or {}).get("tools") or []
            for d in (t or {}).get("functionDeclarations") or []]


def declaration(body, name):
    for t in (body or {}).get("tools") or []:
        for d in (t or {}).get("functionDeclarations") or []:
            if d.get("name") == name:
                return d
    return None


def part_texts(part):
    """(kind, text) of a content part: plain text, or a function response's JSON."""
    if "text" in part:
        return "text", part.get("text") or ""
    if "functionResponse" in part:
        return "functionResponse", json.dumps(part["functionResponse"])
    if "functionCall" in part:
        return "functionCall", json.dumps(part["functionCall"])
    return "other", json.dumps(part)


def find(reqs, needle, excerpt=160):
    """Where `needle` occurs in each request: [{request, kind, where, role, part, excerpt}],
    `where` being "contents[i].parts[j]" or "systemInstruction"."""
    hits = []
    for ri, r in enumerate(reqs):
        body = r.get("body") or {}
        for ci, c in enumerate(body.get("contents") or []):
            for pi, p in enumerate(c.get("parts") or []):
                kind, text = part_texts(p)
                at = text.find(needle)
                if at >= 0:
                    hits.append({"request": ri, "kind": r.get("kind"),
                                 "where": f"contents[{ci}].parts[{pi}]", "role": c.get("role"),
                                 "part": kind,
                                 "excerpt": text[max(0, at - excerpt // 2):at + excerpt]})
        si = json.dumps(body.get("systemInstruction") or "")
        if needle in si:
            hits.append({"request": ri, "kind": r.get("kind"), "where": "systemInstruction"})
    return hits


def last_main_contents(reqs):
    m = main_requests(reqs)
    return (m[-1].get("body") or {}).get("contents") or [] if m else []


def new_temp_root(prefix):
    base = os.environ.get("HELIX_E2E_TMP") or None
    return tempfile.mkdtemp(prefix=prefix, dir=base)


def keep_or_remove(root, keep):
    if keep:
        return
    shutil.rmtree(root, ignore_errors=True)


def shorten(obj, limit=300):
    """A copy of a JSON value with long strings cut (for printing)."""
    if isinstance(obj, str):
        return obj if len(obj) <= limit else obj[:limit] + f"...[{len(obj)} chars]"
    if isinstance(obj, list):
        return [shorten(x, limit) for x in obj]
    if isinstance(obj, dict):
        return {k: shorten(v, limit) for k, v in obj.items()}
    return obj


def regex_excerpt(text, pattern, width=200):
    m = re.search(pattern, text)
    if not m:
        return None
    return text[max(0, m.start() - width // 2):m.end() + width // 2]
