#!/usr/bin/env python3
"""Judged relevance benchmark for the context hooks (`helix hook prompt|ambient|error`).

Feeds every case of benches/relevance/judgements.jsonl to the real hook binary exactly as
Claude Code would (stdin JSON, one process per event, a fresh session id per case) over a
cache compiled from the real til corpus, and reports, per kind of hook:

  targeted cases: hit@1 and hit@3 (an expected note among the first 1 / 3 injected entries),
                  share that injects anything, mean characters injected;
  everyday cases: share that injects anything (target: at most 10%), mean characters;
  all cases:      mean characters injected per case (0 when nothing is injected).

Two binaries side by side in one run: --helix (the candidate) and --baseline (the last
released behaviour). Each gets its own temp directory: isolated HOME and XDG_* dirs, a code
repository whose `.helix.toml` says `local = <corpus>`, and a cache built with the binary's
own commands (`helix sync` when `helix-net` is available for it, else `helix build` into the
local-mode cache path).

Every case can also take the input form of another agent helix serves (`--agent codex|copilot|
gemini|cursor`: that agent's stdin JSON, its event's `helix hook <name> --agent NAME`, its answer
field), and `--compare-agents` runs the candidate once per agent and counts, per kind and class,
the cases whose injected entry ids equal Claude Code's (docs/agents.md, "At a glance").

Usage:
  python3 benches/relevance.py --helix target/release/helix --baseline /work/notes/helix-baseline
  python3 benches/relevance.py --helix BIN [--json] [--verbose] [--corpus DIR] [--cases FILE]
  python3 benches/relevance.py --helix BIN --baseline BIN --also main=BIN   (three columns)
  python3 benches/relevance.py --helix BIN --agent gemini                   (one agent's form)
  python3 benches/relevance.py --helix BIN --compare-agents [--verbose]     (every agent vs Claude Code)
  python3 benches/relevance.py --helix BIN --model "$(benches/get-model.sh)" [--every-hook]
      [--cosine POINTS,FLOOR[,ERROR_POINTS,ERROR_FLOOR] ...]   (semantic candidates off and on)

With --model, a second world runs the same binary with the corpus embedded at `helix sync`
(local mode) and a warm `helix-net embedder`; its hooks wait up to --embed-budget-ms for it,
so the figures measure quality, not the 20 ms deadline. The tables then also group the
splits: `tune` + `heldout`, where the gate's constants were chosen, and the rest (blind).

Only the Python standard library. See docs/benchmarks.md ("Relevance").
"""
import argparse
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CORPUS = os.path.join(ROOT, "corpora", "til")
DEFAULT_CASES = os.path.join(ROOT, "benches", "relevance", "judgements.jsonl")
PROJECT = "til"
HOOK_TIMEOUT_S = 5  # what `helix hooks install` configures; Claude Code drops late output
KINDS = ("prompt", "ambient", "error")
EVENTS = {  # kind -> (helix hook name, Claude Code event)
    "prompt": ("prompt", "UserPromptSubmit"),
    "ambient": ("ambient", "PreToolUse"),
    "error": ("error", "PostToolUseFailure"),
}
TARGETS = {"everyday_inject": 0.10, "targeted_hit3": 0.90}
# The agents helix's hooks serve (client/src/hook/agent/), Claude Code first: the reference.
AGENTS = ("claude", "codex", "copilot", "gemini", "cursor")
TITLES = {"claude": "Claude Code", "codex": "Codex CLI", "copilot": "Copilot CLI",
          "gemini": "Gemini CLI", "cursor": "Cursor"}
# A case's Claude Code file tool -> each agent's tool for the same action (None: the agent has
# no such tool its hooks see, so the case does not apply to it). Codex reads through the
# shell (`cat FILE`) and edits with apply_patch, which its hooks are not bound to; Cursor's
# hook tools are Read, Write, Grep, Delete and Shell (tests/agents/cursor/README.md).
FILE_TOOLS = {  # Claude Code tool -> action
    "Read": "read", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Write": "write", "Glob": "search", "Grep": "search",
}
AGENT_FILE_TOOLS = {
    "codex": {"read": "cat"},
    "copilot": {"read": "view", "edit": "edit", "write": "create", "search": "grep"},
    "gemini": {"read": "read_file", "edit": "replace", "write": "write_file", "search": "grep_search"},
    "cursor": {"read": "Read", "write": "Write", "search": "Grep"},
}
# What answers after a tool when the call did not read as a failure: the post-build nudge
# (`events::post_build`), not knowledge; counted apart from injections.
NUDGE_START = "helix: if this build needed"
# `tune`: the cases the ranking and the gate were developed against. Every other split was
# written before the changes it measures, and its first run is its blind figure; from
# `fresh2` on, a helper who had not read helix's code wrote each from notes drawn at random
# that no earlier case expects (seeds below). What was looked at after the first run (the
# table in docs/benchmarks.md, "Hook relevance"):
# `heldout`: written before any tuning, then looked at case by case for recall;
# `fresh`: written blind to the gate, then looked at case by case;
# `fresh2`: looked at case by case (its own-code, error and tool-file misses);
# `fresh3`: its error misses only;
# `fresh4` (100): case by case (the gate's error and prompt misses);
# `fresh5` (100): in aggregate only (it decided the prompt term budget);
# `fresh6` (100): never looked at;
# `fresh7`, `fresh8` (100 each, seeds 7057, 8069): `fresh7` case by case, `fresh8`'s
# results read once with no change judged on them;
# `fresh9`, `fresh10` (100 each, seeds 9091, 10103): never looked at;
# `fresh11`, `fresh12` (100 each, seeds 11113, 12119): their reads, for the path-words bar;
# `fresh13` to `fresh16` (100 each, seeds 13127, 14143, 15149, 16157; everyday errors half
# tool failures, everyday reads half ordinary project files): misses and everyday
# injections read, no change judged on them;
# `fresh17`, `fresh18` (48 file reads each that also give the file's `content`, seeds
# 17167, 18181): `fresh18` looked at for a content layer not kept, `fresh17` run once;
# `fresh19` (60 errors, 24 of them everyday, seed 19193): its everyday errors looked at for
# the traceback rule.
# `negatives` (a file of its own, `negatives.jsonl`, run with `--cases`, not part of the
# judged mix): 64 ordinary project files and 30 tool failures written to stress the gate's
# rules, and 80 tool failures written blind (`nb-*`, `nt-*`).
SPLITS = (
    "tune", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7",
    "fresh8", "fresh9", "fresh10", "fresh11", "fresh12", "fresh13", "fresh14", "fresh15",
    "fresh16", "fresh17", "fresh18", "fresh19", "negatives",
)

TUNING = frozenset(("tune", "heldout"))
BLIND = frozenset(SPLITS) - TUNING - {"negatives"}


def die(msg):
    print(f"relevance.py: {msg}", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- judgements


def corpus_ids(corpus):
    ids = set()
    for topic in os.listdir(corpus):
        d = os.path.join(corpus, topic)
        if os.path.isdir(d) and not topic.startswith("."):
            ids.update(f"{topic}/{n}" for n in os.listdir(d) if n.endswith(".md"))
    return ids


def load_cases(path, known):
    """Reads and checks the judgements: one JSON object per line, every expected id a real note."""
    cases, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                c = json.loads(line)
            except json.JSONDecodeError as e:
                die(f"{path}:{n}: not JSON: {e}")
            where = f"{path}:{n} ({c.get('id')})"
            if c.get("id") in seen:
                die(f"{where}: duplicate case id")
            seen.add(c.get("id"))
            if c.get("kind") not in KINDS or c.get("class") not in ("targeted", "everyday"):
                die(f"{where}: kind must be one of {KINDS}, class targeted|everyday")
            c.setdefault("split", "tune")
            if c["split"] not in SPLITS:
                die(f"{where}: split must be one of {SPLITS}")
            if not isinstance(c.get("input"), str) or not c["input"]:
                die(f"{where}: input must be a non-empty string")
            if "content" in c and (c["kind"] != "ambient" or not isinstance(c["content"], str)):
                die(f"{where}: content (the file's text) is a string, for ambient cases only")
            exp = c.get("expected")
            if not isinstance(exp, list) or (c["class"] == "targeted") != bool(exp):
                die(f"{where}: targeted cases need expected ids, everyday cases none")
            for i in exp:
                if i not in known:
                    die(f"{where}: expected id {i!r} is not a note of the corpus")
            cases.append(c)
    return cases


# ---------------------------------------------------------------- one binary's world


def find_net(helix):
    """helix execs `helix-net` from its own directory for `sync`. Accept one beside BIN, or
    BIN's name with `helix` replaced by `helix-net` (helix-baseline -> helix-net-baseline)."""
    d, name = os.path.split(os.path.abspath(helix))
    for cand in (os.path.join(d, "helix-net"), os.path.join(d, name.replace("helix", "helix-net", 1))):
        if os.path.isfile(cand) and os.access(cand, os.X_OK) and cand != os.path.abspath(helix):
            return cand
    return None


class World:
    """An isolated user: temp HOME/XDG dirs, a code repository following the corpus, a cache."""

    def __init__(self, label, helix, corpus, keep, model=None, embed_budget_ms=None):
        self.label = label
        self.embedder = None
        self.src = os.path.abspath(helix)
        if not (os.path.isfile(self.src) and os.access(self.src, os.X_OK)):
            die(f"{label}: {helix} is not an executable file")
        self.dir = tempfile.mkdtemp(prefix="helix-relevance-")  # same length for every binary: paths appear in context
        self.keep = keep
        self.written = set()  # files a case wrote content to
        bindir = os.path.join(self.dir, "bin")
        os.makedirs(bindir)
        # Copies, not symlinks: helix finds helix-net through /proc/self/exe, which resolves links.
        self.helix = os.path.join(bindir, "helix")
        shutil.copy2(self.src, self.helix)
        net = find_net(self.src)
        self.net_src = net
        if net:
            shutil.copy2(net, os.path.join(bindir, "helix-net"))
        self.home = os.path.join(self.dir, "home")
        # The project directory's name is a made-up product name found in no note: the
        # ambient hook searches the parent directory's name for generic file names (main.rs,
        # Makefile), and a name like "repo" or "app" would match notes by accident.
        self.repo = os.path.join(self.dir, "ledgerly")
        os.makedirs(self.home)
        os.makedirs(self.repo)
        self.env = {
            "PATH": bindir + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_STATE_HOME": os.path.join(self.home, ".local", "state"),
            "HELIX_SYNC_MAX_AGE": "off",  # no background sync from session-start
            "CLAUDE_PROJECT_DIR": self.repo,
            "LANG": "C.UTF-8",
        }
        if model:
            # Semantic candidates: local mode embeds the corpus with the model at `helix
            # sync`, and a warm embedder answers the hooks. The budget measures quality,
            # not latency (client/benches/semantic.sh measures that): a late answer would
            # make a case lexical at random.
            self.env["HELIX_MODEL_DIR"] = os.path.abspath(model)
            self.env["HELIX_EMBED_BUDGET_MS"] = str(embed_budget_ms)
            self.socket = os.path.join(self.home, "embed.sock")
            self.env["HELIX_EMBED_SOCKET"] = self.socket
        if shutil.which("git"):
            subprocess.run(["git", "init", "-q", self.repo], check=False, env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(self.repo, ".helix.toml"), "w") as f:
            f.write(f"local = {json.dumps(os.path.abspath(corpus))}\nproject = {json.dumps(PROJECT)}\n")
        self.version = self.run(["--version"]).stdout.strip() or "?"
        self.cache_how = self.build_cache(corpus, timeout=3600 if model else 120)
        if model:
            self.start_embedder()
            self.cache_how += f", embedded with {os.path.basename(os.path.normpath(model))}, warm embedder"

    def start_embedder(self):
        """`helix-net embedder` in the foreground of this world, waited for until it answers
        a search with vectors (`helix search --explain` names a vector-only hit's cosine)."""
        if not self.net_src:
            die(f"{self.label}: --model needs helix-net beside {self.src}")
        self.embedder = subprocess.Popen(
            [os.path.join(os.path.dirname(self.helix), "helix-net"), "embedder", "--foreground",
             "--idle-secs", "86400"], cwd=self.repo, env=self.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Listening before the first search: a search that found no socket would start an
        # embedder of its own, which this world would never stop.
        for _ in range(6000):
            if self.embedder.poll() is not None:
                die(f"{self.label}: the embedder exited: {self.embedder.stderr.read()[-500:]}")
            try:
                with socket.socket(socket.AF_UNIX) as c:
                    c.connect(self.socket)
                break
            except OSError:
                time.sleep(0.05)
        for _ in range(600):
            if self.embedder.poll() is not None:
                die(f"{self.label}: the embedder exited: {self.embedder.stderr.read()[-500:]}")
            s = self.run(["search", "--json", "-n", "3", "re-parent", "a", "branch"])
            try:
                hits = json.loads(s.stdout).get("hits", [])
            except (json.JSONDecodeError, AttributeError):
                hits = []
            if any(h.get("cosine") is not None for h in hits):
                return
            time.sleep(0.5)
        die(f"{self.label}: the embedder did not answer within 5 minutes")

    def run(self, args, stdin=None, timeout=120, env=None):
        return subprocess.run([self.helix] + args, input=stdin, capture_output=True, text=True,
                              cwd=self.repo, env=env or self.env, timeout=timeout)

    def build_cache(self, corpus, timeout=120):
        if self.net_src:
            r = self.run(["sync"], timeout=timeout)
            how = f"`helix sync` (local mode; helix-net from {self.net_src})"
        else:
            out = os.path.join(self.cache_dir(), "index.hix")
            r = self.run(["build", os.path.abspath(corpus), "--no-git", "--project", PROJECT, "-o", out])
            how = "`helix build --no-git` into the local-mode cache (no helix-net found)"
        if r.returncode != 0:
            die(f"{self.label}: building the cache failed ({how}):\n{r.stdout}{r.stderr}")
        # The cache must answer: a search through the configured project finds the note.
        # Lexically (and without starting an embedder: `start_embedder` runs the one).
        s = self.run(["search", "--json", "-n", "3", "rebase", "onto", "another", "base"],
                     env=dict(self.env, HELIX_EMBED="off"))
        try:
            hits = [h.get("id") for h in json.loads(s.stdout).get("hits", [])]
        except (json.JSONDecodeError, AttributeError):
            hits = []
        if "git/transition-a-branch-from-one-base-to-another.md" not in hits:
            die(f"{self.label}: the cache does not answer a sanity search (got {hits!r}; "
                f"stdout {s.stdout[:200]!r}, stderr {s.stderr[:200]!r})")
        return how

    def cache_dir(self):
        """Where this binary keeps the project's cache, as `helix status --json` says (local
        caches carry a hash of the knowledge directory); the old fixed place for a binary
        too old to say."""
        r = self.run(["status", "--json"])
        try:
            return json.loads(r.stdout)["projects"][0]["cache_dir"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError):
            return os.path.join(self.env["XDG_CACHE_HOME"], "helix", "local", PROJECT)

    def path_for(self, p, content=None):
        """A case's file path as Claude Code sends it (absolute); creates the file for paths
        in the project or the home directory so that the Read would succeed: with the
        case's `content`, else empty (also when an earlier case wrote content there)."""
        if p.startswith("~/"):
            full = os.path.join(self.home, p[2:])
        elif os.path.isabs(p):
            return p  # system files (/etc/hosts): left as the machine has them
        else:
            full = os.path.join(self.repo, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if content is not None or full in self.written or not os.path.exists(full):
            with open(full, "w", encoding="utf-8") as f:
                f.write(content or "")
            if content:
                self.written.add(full)
            else:
                self.written.discard(full)
        return full

    def stdin_for(self, c):
        sid = str(uuid.uuid4())  # fresh session per case: no cross-case session state
        hook, event = EVENTS[c["kind"]]
        d = {
            "session_id": sid,
            "transcript_path": os.path.join(self.home, ".claude", "projects", "relbench", sid + ".jsonl"),
            "cwd": self.repo,
            "permission_mode": "default",
            "hook_event_name": event,
        }
        if c["kind"] == "prompt":
            d["prompt"] = c["input"]
        elif c["kind"] == "ambient":
            d["tool_name"] = c.get("tool", "Read")
            d["tool_input"] = {"file_path": self.path_for(c["input"], c.get("content"))}
            d["tool_use_id"] = "toolu_" + uuid.uuid4().hex[:24]
        else:
            d["tool_name"] = "Bash"
            d["tool_input"] = {"command": c.get("command", ""), "description": "Run command"}
            d["tool_use_id"] = "toolu_" + uuid.uuid4().hex[:24]
            d["error"] = c["input"]
            d["is_interrupt"] = False
        return hook, json.dumps(d)

    def file_text(self, path):
        """What a read of `path` returns (Gemini's AfterTool carries it): the file's text, or
        empty when it is missing or unreadable."""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read(200_000)
        except OSError:
            return ""

    def input_for(self, c, agent):
        """The case as `agent` sends it: (helix hook name, stdin JSON), or (None, why) when the
        agent has no tool for the case (Codex and Cursor have no edit tool their hooks see).
        Claude Code's form is `stdin_for`'s, unchanged; the others follow their adapters
        (client/src/hook/agent/) and the payloads captured from the real clients
        (tests/agents/<agent>/fixtures/). Each gets a fresh session per case."""
        if agent == "claude":
            return self.stdin_for(c)
        sid = str(uuid.uuid4())
        kind = c["kind"]
        if kind == "ambient":
            action = FILE_TOOLS.get(c.get("tool", "Read"), "read")
            tool = AGENT_FILE_TOOLS[agent].get(action)
            if tool is None:
                return None, f"{TITLES[agent]} has no {action} tool its hooks see (case tool {c.get('tool', 'Read')})"
            path = self.path_for(c["input"], c.get("content"))
        command = c.get("command", "")
        output = c["input"]
        if agent == "codex":
            d = {"session_id": sid, "turn_id": str(uuid.uuid4()),
                 "transcript_path": os.path.join(self.home, ".codex", "sessions", f"rollout-{sid}.jsonl"),
                 "cwd": self.repo}
            if kind == "prompt":
                d.update(hook_event_name="UserPromptSubmit", model="gpt-5.4",
                         permission_mode="bypassPermissions", prompt=c["input"])
                return "prompt", json.dumps(d)
            d.update(model="gpt-5.4", permission_mode="bypassPermissions", tool_name="Bash",
                     tool_use_id="call_" + uuid.uuid4().hex[:12])
            if kind == "ambient":
                # Codex reads through the shell, from the project directory; the file hook
                # reads the file off the command. The path as a shell user writes it, not
                # Claude Code's absolute one: relative in the project, `~/…` for the home
                # directory (the shell expands it; the hook sees `~`), absolute elsewhere.
                p = c["input"]
                arg = "~/" + shlex.quote(p[2:]) if p.startswith("~/") else shlex.quote(p)
                d.update(hook_event_name="PreToolUse", tool_input={"command": f"cat {arg}"})
                return "ambient", json.dumps(d)
            # The output alone, no exit code: the adapter decides from the text.
            d.update(hook_event_name="PostToolUse", tool_input={"command": command}, tool_response=output)
            return "post-tool", json.dumps(d)
        if agent == "copilot":
            d = {"sessionId": sid, "timestamp": 1795885451857, "cwd": self.repo}
            if kind == "prompt":
                d["prompt"] = c["input"]
                return "prompt", json.dumps(d)
            if kind == "ambient":
                d.update(toolName=tool, toolArgs={"path": path})
                return "ambient", json.dumps(d)
            # A failed command is a postToolUse whose last line holds the exit code.
            d.update(toolName="bash", toolArgs={"command": command, "description": "Run command"},
                     toolResult={"resultType": "success",
                                 "textResultForLlm": f"{output}\n<shellId: 0 completed with exit code 1>"})
            return "post-tool", json.dumps(d)
        if agent == "gemini":
            d = {"session_id": sid,
                 "transcript_path": os.path.join(self.home, ".gemini", "tmp", "ledgerly", "chats", f"session-{sid}.jsonl"),
                 "cwd": self.repo, "timestamp": "2026-11-28T17:06:48.233Z"}
            if kind == "prompt":
                d.update(hook_event_name="BeforeAgent", prompt=c["input"])
                return "prompt", json.dumps(d)
            d["hook_event_name"] = "AfterTool"  # Gemini has no event with context before a tool
            if kind == "ambient":
                if tool == "read_file":
                    resp = {"llmContent": self.file_text(path), "returnDisplay": ""}
                else:
                    resp = {"llmContent": f"Successfully modified file: {path} (1 replacements).",
                            "returnDisplay": ""}
                d.update(tool_name=tool, tool_input={"file_path": path}, tool_response=resp)
                return "post-tool", json.dumps(d)
            d.update(tool_name="run_shell_command",
                     tool_input={"command": command, "description": "Run command"},
                     tool_response={"llmContent": f"<untrusted_context>\nOutput: {output}\nExit Code: 1\n"
                                                  "Process Group PGID: 1\n</untrusted_context>",
                                    "returnDisplay": output})
            return "post-tool", json.dumps(d)
        if agent == "cursor":
            d = {"conversation_id": sid, "generation_id": str(uuid.uuid4()), "model": "claude-4.5-sonnet",
                 "cursor_version": "2.1.0", "workspace_roots": [self.repo],
                 "user_email": "dev@example.invalid", "transcript_path": None}
            if kind == "prompt":  # no cwd: the adapter takes the first workspace root
                d.update(hook_event_name="beforeSubmitPrompt", prompt=c["input"], attachments=[])
                return "prompt", json.dumps(d)
            tid = "toolu_" + uuid.uuid4().hex[:24]
            if kind == "ambient":
                d.update(hook_event_name="preToolUse", tool_name=tool, tool_input={"file_path": path},
                         tool_use_id=tid, cwd=self.repo)
                return "ambient", json.dumps(d)
            d.update(hook_event_name="postToolUse", tool_name="Shell",
                     tool_input={"command": command, "cwd": self.repo},
                     tool_output=json.dumps({"output": output, "exitCode": 1}),
                     duration=812, tool_use_id=tid, cwd=self.repo)
            return "post-tool", json.dumps(d)
        die(f"unknown agent {agent!r}")

    def close(self):
        if self.embedder:
            self.embedder.kill()
            self.embedder.wait()
        if self.keep:
            print(f"kept {self.label} world: {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- output parsing

ID_RE = re.compile(r"(?<![\w.-])" + re.escape(PROJECT) + r":([A-Za-z0-9_][A-Za-z0-9_./-]*)")


def norm(i):
    i = i.rstrip(".,;:")
    return i[:-3] if i.endswith(".md") else i


def json_ids(v, out):
    """Entry ids from a structured context (a possible future format): every `id` field."""
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "id" and isinstance(x, str):
                out.append(x.split(":", 1)[1] if x.startswith(PROJECT + ":") else x)
            else:
                json_ids(x, out)
    elif isinstance(v, list):
        for x in v:
            json_ids(x, out)


def answer_context(v, agent):
    """The context field of `agent`'s answer: `hookSpecificOutput.additionalContext` for
    Claude Code, Codex and Gemini CLI, top-level `additionalContext` for Copilot CLI,
    `additional_context` for Cursor."""
    if not isinstance(v, dict):
        return ""
    if agent == "copilot":
        return v.get("additionalContext") or ""
    if agent == "cursor":
        return v.get("additional_context") or ""
    return (v.get("hookSpecificOutput") or {}).get("additionalContext") or ""


def parse_output(kind, stdout, agent="claude"):
    """What reaches the model, and the entry ids in it, in order of appearance.

    Context is the agent's answer field of a JSON object on stdout (`answer_context`); plain
    (non-JSON) stdout also reaches the model for UserPromptSubmit only (hook protocol).
    Ids are the `til:<id>` names anywhere in that text (today on `- til:<id> · …` lines);
    when the context is itself JSON, every `id` field counts instead.
    """
    out = stdout.strip()
    if not out:
        return "", []
    ctx = ""
    if out.startswith("{"):
        try:
            v = json.loads(out)
            ctx = answer_context(v, agent)
            if not isinstance(ctx, str):
                ctx = json.dumps(ctx)
        except json.JSONDecodeError:
            ctx = out if kind == "prompt" else ""
    elif kind == "prompt":
        ctx = out
    ids = []
    try:
        structured = json.loads(ctx) if ctx.lstrip().startswith(("{", "[")) else None
    except json.JSONDecodeError:
        structured = None
    if structured is not None:
        json_ids(structured, ids)
    else:
        ids = [m.group(1) for m in ID_RE.finditer(ctx)]
    seen, uniq = set(), []
    for i in ids:
        n = norm(i)
        if n not in seen:
            seen.add(n)
            uniq.append(n)
    return ctx, uniq


# ---------------------------------------------------------------- running and scoring


def run_cases(world, cases, agent="claude", env=None):
    """One hook process per case in `agent`'s form. A case the agent has no tool for is kept
    with `na` (why) and left out of the metrics; a post-build nudge answered instead of
    knowledge (a failure the agent's output did not show as one) is `nudge`, 0 chars."""
    results = []
    for c in cases:
        hook, stdin = world.input_for(c, agent)
        base = {"id": c["id"], "kind": c["kind"], "class": c["class"], "split": c["split"]}
        if hook is None:
            results.append(dict(base, na=stdin, chars=0, ids=[], rank=None, exit=None,
                                timed_out=False, nudge=False))
            continue
        args = ["hook", hook] if agent == "claude" else ["hook", hook, "--agent", agent]
        timed_out = False
        try:
            r = world.run(args, stdin=stdin, timeout=HOOK_TIMEOUT_S, env=env)
            stdout, rc = r.stdout, r.returncode
        except subprocess.TimeoutExpired:
            stdout, rc, timed_out = "", None, True
        ctx, ids = parse_output(c["kind"], stdout, agent)
        nudge = hook == "post-tool" and not ids and ctx.startswith(NUDGE_START)
        if nudge:
            ctx = ""
        exp = [norm(e) for e in c["expected"]]
        results.append(dict(base,
            chars=len(ctx), ids=ids,
            rank=next((k + 1 for k, i in enumerate(ids) if i in exp), None) if exp else None,
            exit=rc, timed_out=timed_out, nudge=nudge, na=None,
        ))
    return results


def mean(xs):
    return sum(xs) / len(xs) if xs else None


def metrics(results, split=None, only=None):
    """Per kind; cases the agent has no tool for (`na`) are left out. `only`: a set of case
    ids to keep (the cases another agent could run)."""
    if isinstance(split, (set, frozenset)):
        results = [r for r in results if r["split"] in split]
    elif split:
        results = [r for r in results if r["split"] == split]
    results = [r for r in results if not r.get("na") and (only is None or r["id"] in only)]
    m = {}
    for kind in KINDS + ("all",):
        rs = [r for r in results if kind == "all" or r["kind"] == kind]
        t = [r for r in rs if r["class"] == "targeted"]
        e = [r for r in rs if r["class"] == "everyday"]
        m[kind] = {
            "targeted_n": len(t),
            "targeted_hit1": mean([r["rank"] == 1 for r in t]),
            "targeted_hit3": mean([r["rank"] is not None and r["rank"] <= 3 for r in t]),
            "targeted_inject": mean([r["chars"] > 0 for r in t]),
            "targeted_chars": mean([r["chars"] for r in t]),
            "everyday_n": len(e),
            "everyday_inject": mean([r["chars"] > 0 for r in e]),
            "everyday_chars": mean([r["chars"] for r in e]),
            "everyday_entries": mean([len(r["ids"]) for r in e]),
            "all_chars": mean([r["chars"] for r in rs]),
            "nonzero_exit": sum(1 for r in rs if r["exit"] not in (0, None)),
            "timeouts": sum(1 for r in rs if r["timed_out"]),
            "nudges": sum(1 for r in rs if r.get("nudge")),
        }
    return m


# ---------------------------------------------------------------- agents against Claude Code


def same_ids(a, b):
    return a["ids"] == b["ids"]


def compare_agent(ref, res):
    """`res` (one agent's results) against `ref` (Claude Code's on the same cases), per kind and
    class: cases it could run, how many inject exactly Claude Code's entry ids (in order),
    where they differ, and hit@3 / inject-anything of both over those cases."""
    by_id = {r["id"]: r for r in ref}
    rows = {}
    for kind in KINDS + ("all",):
        for cls in ("targeted", "everyday"):
            rs = [r for r in res if (kind == "all" or r["kind"] == kind) and r["class"] == cls]
            ok = [r for r in rs if not r.get("na")]
            pairs = [(by_id[r["id"]], r) for r in ok]
            only = {r["id"] for r in ok}
            mr, ma = metrics(ref, only=only)[kind], metrics(res, only=only)[kind]
            rows[f"{kind}/{cls}"] = {
                "cases": len(rs), "na": len(rs) - len(ok),
                "same": sum(1 for a, b in pairs if same_ids(a, b)),
                "ref_only": sum(1 for a, b in pairs if a["ids"] and not b["ids"]),
                "agent_only": sum(1 for a, b in pairs if b["ids"] and not a["ids"]),
                "both_differ": sum(1 for a, b in pairs if a["ids"] and b["ids"] and not same_ids(a, b)),
                "nudges": sum(1 for _, b in pairs if b.get("nudge")),
                "ref_hit3": mr["targeted_hit3"] if cls == "targeted" else None,
                "agent_hit3": ma["targeted_hit3"] if cls == "targeted" else None,
                "ref_inject": mr[f"{cls}_inject"], "agent_inject": ma[f"{cls}_inject"],
            }
    differing = [{"id": b["id"], "kind": b["kind"], "class": b["class"], "claude": by_id[b["id"]]["ids"],
                  "agent": b["ids"], "nudge": b.get("nudge", False)}
                 for b in res if not b.get("na") and not same_ids(by_id[b["id"]], b)]
    na = [{"id": r["id"], "kind": r["kind"], "class": r["class"], "why": r["na"]} for r in res if r.get("na")]
    return {"rows": rows, "differing": differing, "not_applicable": na}


def print_comparison(comp):
    """comp: {agent: compare_agent(...)}. One markdown table, agents by kind and class."""
    print("| agent | kind | class | cases | n/a | same ids as Claude Code | only Claude Code injects | only the agent injects | both, other ids | hit@3 Claude Code / agent | injects anything Claude Code / agent |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for agent, cmp_ in comp.items():
        for key, r in cmp_["rows"].items():
            kind, cls = key.split("/")
            if not r["cases"]:
                continue
            n = r["cases"] - r["na"]
            same = f"{r['same']} ({100 * r['same'] / n:.1f}%)" if n else "–"
            hit = f"{fmt(r['ref_hit3'], 'pct')} / {fmt(r['agent_hit3'], 'pct')}" if cls == "targeted" else ""
            inj = f"{fmt(r['ref_inject'], 'pct')} / {fmt(r['agent_inject'], 'pct')}"
            nudge = f" (+{r['nudges']} build nudges)" if r["nudges"] else ""
            kind_s = f"**{kind}**" if kind == "all" else kind
            print(f"| {agent} | {kind_s} | {cls} | {r['cases']} | {r['na'] or ''} | {same} | {r['ref_only'] or ''} | "
                  f"{r['agent_only'] or ''} | {r['both_differ'] or ''} | {hit} | {inj}{nudge} |")


def print_differing(agent, cases, cmp_):
    by_id = {c["id"]: c for c in cases}
    print(f"\n### {agent}: cases whose injected entry ids differ from Claude Code's ({len(cmp_['differing'])})")
    for d in cmp_["differing"]:
        c = by_id[d["id"]]
        extra = f" command {c['command'][:60]!r}" if c.get("command") else ""
        nudge = " (answered with the build nudge)" if d["nudge"] else ""
        print(f"- {d['id']} [{d['kind']}, {d['class']}] {c['input'][:90]!r}{extra}\n"
              f"    claude: {', '.join(d['claude']) or 'nothing'}\n    {agent}: {', '.join(d['agent']) or 'nothing'}{nudge}")
    if cmp_["not_applicable"]:
        print(f"\n### {agent}: cases not applicable ({len(cmp_['not_applicable'])})")
        for d in cmp_["not_applicable"]:
            print(f"- {d['id']} [{d['kind']}, {d['class']}] {by_id[d['id']]['input'][:90]!r}: {d['why']}")


ROWS = [  # (key, label, format, target)
    ("targeted_hit3", "targeted: hit@3", "pct", ("targeted_hit3", ">=")),
    ("targeted_hit1", "targeted: hit@1", "pct", None),
    ("targeted_inject", "targeted: inject anything", "pct", None),
    ("targeted_chars", "targeted: mean chars injected", "num", None),
    ("everyday_inject", "everyday: inject anything", "pct", ("everyday_inject", "<=")),
    ("everyday_entries", "everyday: mean entries injected", "num1", None),
    ("everyday_chars", "everyday: mean chars injected", "num", None),
    ("all_chars", "all cases: mean chars injected", "num", None),
]


def fmt(v, kind):
    if v is None:
        return "–"
    return {"pct": f"{100 * v:.1f}%", "num": f"{v:.0f}", "num1": f"{v:.2f}"}[kind]


def case_counts(cases):
    return {k: (sum(1 for c in cases if (k == "all" or c["kind"] == k) and c["class"] == "targeted"),
                sum(1 for c in cases if (k == "all" or c["kind"] == k) and c["class"] == "everyday"))
            for k in KINDS + ("all",)}


def print_table(cols, counts):
    """cols: [(label, metrics)]. One markdown table, binaries side by side."""
    head = "| kind | measure | " + " | ".join(l for l, _ in cols) + " | target |"
    print(head)
    print("|---|---|" + "---:|" * len(cols) + "---|")
    for kind in KINDS + ("all",):
        n_t, n_e = counts[kind]
        for key, label, f, target in ROWS:
            tgt = ""
            if target:
                op, lim = target[1], TARGETS[target[0]]
                tgt = f"{op} {100 * lim:.0f}%: " + ", ".join(
                    ("met" if (m[kind][key] is not None and (m[kind][key] >= lim if op == ">=" else m[kind][key] <= lim)) else "not met")
                    for _, m in cols)
            name = f"{kind} ({n_t} targeted, {n_e} everyday)" if key == ROWS[0][0] else ""
            print(f"| {name} | {label} | " + " | ".join(fmt(m[kind][key], f) for _, m in cols) + f" | {tgt} |")


def print_verbose(label, cases, results):
    by_id = {c["id"]: c for c in cases}
    print(f"\n### {label}: targeted cases whose note is not in the first 3 injected")
    for r in results:
        if r["class"] == "targeted" and not (r["rank"] and r["rank"] <= 3):
            c = by_id[r["id"]]
            got = ", ".join(r["ids"][:4]) or "nothing"
            where = f" (rank {r['rank']})" if r["rank"] else ""
            print(f"- {r['id']} [{r['kind']}] {c['input'][:90]!r}\n    expected {', '.join(c['expected'])}{where}; injected: {got}")
    print(f"\n### {label}: everyday cases that injected something")
    for r in results:
        if r["class"] == "everyday" and r["chars"] > 0:
            c = by_id[r["id"]]
            print(f"- {r['id']} [{r['kind']}] {c['input'][:90]!r} ({r['chars']} chars): {', '.join(r['ids']) or '(no entry ids)'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--helix", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "helix"),
                    help="the helix binary to judge (default: target/release/helix)")
    ap.add_argument("--baseline", help="a second helix binary shown side by side (last released behaviour)")
    ap.add_argument("--also", action="append", default=[], metavar="LABEL=BIN",
                    help="more helix binaries shown between the baseline and the candidate (repeatable)")
    ap.add_argument("--model", metavar="DIR",
                    help="also run --helix with semantic candidates: the corpus embedded with this "
                         "sentence-embedding model at sync, a warm embedder for the hooks "
                         "(benches/get-model.sh fetches all-MiniLM-L6-v2)")
    ap.add_argument("--embed-budget-ms", type=int, default=5000,
                    help="with --model: the hooks' wait for the embedder (default 5000: quality, "
                         "not latency)")
    ap.add_argument("--cosine", action="append", default=[], metavar="POINTS,FLOOR",
                    help="with --model: one more column per value, the gate's cosine weight and "
                         "floor (HELIX_GATE_COSINE) instead of its built-in ones (repeatable)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE[,NAME=VALUE]",
                    help="with --model: one more column with these environment variables set "
                         "for the hooks (repeatable), e.g. HELIX_EMBED_HOOKS=prompt,error")
    ap.add_argument("--every-hook", action="store_true",
                    help="with --model: one more column with every hook asking the embedder "
                         "(HELIX_EMBED_HOOKS=prompt,error,ambient; by default only the prompt hook does)")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS, help="the til corpus (default corpora/til)")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="judgements file (JSON lines)")
    ap.add_argument("--json", action="store_true", help="print machine-readable results instead of the table")
    ap.add_argument("--verbose", action="store_true", help="list misses and false injections with what was injected")
    ap.add_argument("--keep", action="store_true", help="keep the temp directories (for debugging)")
    ap.add_argument("--split", choices=SPLITS, help="run only the cases of this split")
    ap.add_argument("--agent", choices=AGENTS, default="claude",
                    help="the agent whose hook input and answer form every case takes (default claude)")
    ap.add_argument("--compare-agents", action="store_true",
                    help="run --helix once per agent and compare each with Claude Code")
    ap.add_argument("--agents", metavar="LIST",
                    help="--compare-agents with these agents only (comma-separated, e.g. codex,gemini)")
    a = ap.parse_args()

    corpus = os.path.abspath(a.corpus)
    if not os.path.isdir(corpus):
        die(f"corpus not found: {corpus} (use --corpus)")
    cases = load_cases(a.cases, corpus_ids(corpus))
    if a.split:
        cases = [c for c in cases if c["split"] == a.split]
    if a.compare_agents or a.agents:
        return compare_main(a, corpus, cases)
    runs = [("baseline", a.baseline)] if a.baseline else []
    for spec in a.also:
        label, sep, binary = spec.partition("=")
        if not sep or not label or not binary:
            die(f"--also takes LABEL=BIN, not {spec!r}")
        runs.append((label, binary))
    runs.append(("helix", a.helix))

    if (a.cosine or a.every_hook or a.env) and not a.model:
        die("--cosine, --env and --every-hook need --model")
    extra_envs = []
    for spec in a.env:
        pairs = {}
        for kv in re.split(r",(?=[A-Z_]+=)", spec):
            name, sep, value = kv.partition("=")
            if not sep or not re.fullmatch(r"[A-Z_][A-Z0-9_]*", name):
                die(f"--env takes NAME=VALUE[,NAME=VALUE], not {spec!r}")
            pairs[name] = value
        extra_envs.append((spec, pairs))
    if a.model:
        runs.append(("helix+model", a.helix))

    out = []
    for label, binary in runs:
        model = a.model if label == "helix+model" else None
        w = World(label, binary, corpus, a.keep, model=model, embed_budget_ms=a.embed_budget_ms)
        try:
            variants = [(label, None)]
            if model:
                variants += [(f"model {c}", dict(w.env, HELIX_GATE_COSINE=c)) for c in a.cosine]
                variants += [(f"model {spec}", dict(w.env, **pairs)) for spec, pairs in extra_envs]
                if a.every_hook:
                    variants.append(("model, every hook",
                                     dict(w.env, HELIX_EMBED_HOOKS="prompt,error,ambient")))
            for name, env in variants:
                res = run_cases(w, cases, a.agent, env=env)
                out.append({"label": name, "binary": w.src, "version": w.version, "cache": w.cache_how,
                            "agent": a.agent,
                            "metrics": metrics(res),
                            "split_metrics": {s: metrics(res, s) for s in SPLITS},
                            "results": res})
        finally:
            w.close()

    counts = case_counts(cases)
    if a.json:
        json.dump({"corpus": corpus, "cases": os.path.abspath(a.cases), "agent": a.agent,
                   "targets": TARGETS, "runs": out}, sys.stdout, indent=1)
        print()
        return
    print(f"corpus: {corpus} ({len(corpus_ids(corpus))} notes); cases: {a.cases} ({len(cases)})")
    for o in out:
        print(f"{o['label']}: {o['binary']} ({o['version']}); cache by {o['cache']}")
        bad = o["metrics"]["all"]
        if bad["nonzero_exit"] or bad["timeouts"]:
            print(f"  WARNING: {bad['nonzero_exit']} hook runs exited non-zero, {bad['timeouts']} timed out")
    if a.agent != "claude":
        na = [r for r in out[-1]["results"] if r.get("na")]
        nudges = out[-1]["metrics"]["all"]["nudges"]
        print(f"agent: {TITLES[a.agent]} (`helix hook <hook> --agent {a.agent}`, its input and answer form); "
              f"{len(na)} cases not applicable, left out of the figures below"
              + (f" ({na[0]['na']})" if na else "")
              + (f"; {nudges} failures answered with the post-build nudge (0 chars here)" if nudges else ""))
    splits = [s for s in SPLITS if any(c["split"] == s for c in cases)]
    if len(splits) > 1:
        print("\n## all cases")
    print()
    print_table([(f"{o['label']}", o["metrics"]) for o in out], counts)
    if len(splits) > 1:
        # Where the gate's constants were chosen, and the rest: every other split was
        # written before the change it measures (for semantic candidates, all of them).
        for title, group in (("`tune` + `heldout` (constants chosen here)", TUNING),
                             ("every other split but `negatives` (blind)", BLIND)):
            sel = [c for c in cases if c["split"] in group]
            if sel:
                print(f"\n## {title}")
                print()
                print_table([(f"{o['label']}", metrics(o["results"], group)) for o in out],
                            case_counts(sel))
        for sp in splits:
            print(f"\n## split `{sp}` only")
            print()
            print_table([(f"{o['label']}", o["split_metrics"][sp]) for o in out],
                        case_counts([c for c in cases if c["split"] == sp]))
    print("\nhit@k: an expected note among the first k entries injected (in the order they appear);"
          " chars: length of additionalContext, 0 when nothing is injected.")
    if a.verbose:
        for o in out:
            print_verbose(o["label"], cases, [r for r in o["results"] if not r.get("na")])


def compare_main(a, corpus, cases):
    """--compare-agents / --agents: the candidate once per agent in one world (one cache), each
    against Claude Code's run."""
    if a.baseline or a.also:
        die("--compare-agents runs one binary (--helix); leave out --baseline and --also")
    agents = ["claude"]
    for name in (a.agents.split(",") if a.agents else AGENTS):
        name = name.strip()
        if name not in AGENTS:
            die(f"--agents: unknown agent {name!r} (one of {', '.join(AGENTS)})")
        if name not in agents:
            agents.append(name)
    w = World("helix", a.helix, corpus, a.keep)
    out = []
    try:
        for agent in agents:
            res = run_cases(w, cases, agent)
            out.append({"label": agent, "agent": agent, "metrics": metrics(res), "results": res})
    finally:
        w.close()
    ref = out[0]["results"]
    comp = {o["agent"]: compare_agent(ref, o["results"]) for o in out[1:]}
    if a.json:
        json.dump({"corpus": corpus, "cases": os.path.abspath(a.cases), "binary": w.src,
                   "version": w.version, "cache": w.cache_how, "targets": TARGETS, "runs": out,
                   "comparison": comp}, sys.stdout, indent=1)
        print()
        return
    print(f"corpus: {corpus} ({len(corpus_ids(corpus))} notes); cases: {a.cases} ({len(cases)})")
    print(f"helix: {w.src} ({w.version}); cache by {w.cache_how}")
    for o in out:
        bad = o["metrics"]["all"]
        if bad["nonzero_exit"] or bad["timeouts"]:
            print(f"  WARNING: {o['agent']}: {bad['nonzero_exit']} hook runs exited non-zero, {bad['timeouts']} timed out")
    print("\n## Each agent against Claude Code (same cases, same cache)\n")
    print_comparison(comp)
    print("\nsame ids: the agent injects exactly Claude Code's entry ids, in the same order (nothing"
          " = nothing counts as the same). hit@3 and injects anything are over the cases the agent"
          " could run (n/a: it has no tool for the case). A build nudge is the post-build hook's"
          " answer to a failure the agent's output did not show as one: not counted as an injection.")
    print("\n## Each agent's own figures (its applicable cases)\n")
    print_table([(o["agent"], o["metrics"]) for o in out], case_counts(cases))
    na = {o["agent"]: sum(1 for r in o["results"] if r.get("na")) for o in out}
    if any(na.values()):
        print("\nCase counts in the first column are Claude Code's; not applicable and left out: "
              + ", ".join(f"{k} {v}" for k, v in na.items() if v) + " (all ambient).")
    if a.verbose:
        for agent, cmp_ in comp.items():
            print_differing(agent, cases, cmp_)


if __name__ == "__main__":
    main()
