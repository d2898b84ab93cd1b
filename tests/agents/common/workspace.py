"""What the agents' workspaces share: a temporary root with its own HOME, XDG dirs, TMPDIR
and runtime dir, an environment holding nothing of the caller's but the system PATH, a git
repository with a few files committed, and small file and process helpers.

Python 3 standard library only.
"""

import json
import os
import subprocess

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


def run(cmd, env, cwd, check=True, timeout=120):
    """Runs cmd (stdin closed, output captured); raises when it fails and check is set."""
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def read_jsonl(path):
    """The JSON lines of a file ([] when it does not exist); a line that does not parse
    (one being written, say) as {"_unparsable": <its start>}."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    out.append({"_unparsable": line[:500]})
    return out


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return path


def sandbox_env(root, home, bindir=None):
    """Creates home, <root>/tmp, <root>/run (mode 700) and bindir; returns the environment
    for a run inside: PATH (bindir first, when given, then the system dirs), HOME, USER, LANG,
    TERM, the XDG dirs under home, XDG_RUNTIME_DIR, TMPDIR, and git's identity."""
    for d in (home, os.path.join(root, "tmp"), os.path.join(root, "run"), bindir):
        if d:
            os.makedirs(d, exist_ok=True)
    os.chmod(os.path.join(root, "run"), 0o700)
    return {
        "PATH": (bindir + ":" if bindir else "") + SYSTEM_PATH,
        "HOME": home,
        "USER": "e2e",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
        "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
        "XDG_RUNTIME_DIR": os.path.join(root, "run"),
        "TMPDIR": os.path.join(root, "tmp"),
        "GIT_AUTHOR_NAME": "e2e", "GIT_AUTHOR_EMAIL": "e2e@helix.invalid",
        "GIT_COMMITTER_NAME": "e2e", "GIT_COMMITTER_EMAIL": "e2e@helix.invalid",
    }


def git_repo(repo, files, env):
    """A git repository at repo (branch main) with `files` ({relative path: text})
    committed as "fixture"."""
    for rel, text in files.items():
        path = os.path.join(repo, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    run(["git", "init", "-q", "-b", "main"], env, repo)
    run(["git", "add", "-A"], env, repo)
    run(["git", "commit", "-qm", "fixture"], env, repo)
