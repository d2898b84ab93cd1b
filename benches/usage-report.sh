#!/usr/bin/env bash
# What a usage report adds to `helix sync` (docs/usage.md): wall time and bytes on the wire
# of a sync that reports a week of a heavy user's injection log, against the same sync with
# `[usage] report = false`, and a sync with nothing new to report. Real release binaries on
# loopback, ENTRIES entries (corpora/til replicated, as server/benches/bench.sh does), the
# cache up to date (the server answers 304), the variants alternated in one run; medians.
# Bytes are counted by a TCP proxy in front of the server (one run of each variant).
#
# Usage: benches/usage-report.sh [ENTRIES]        (default 10000)
# Env: RUNS (default 15), DAYS (7), SESSIONS (sessions a day, 8), CALLS (hook calls that
#      inject, per session, 60), READS (entries read in full per session, 4), SEED (1),
#      CARGO_TARGET_DIR (default target).
# Needs: git, GNU tar, curl, python3; `cargo build --release -p helix-client-net -p helix-server`.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/server/benches/lib.sh"
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/release
ENTRIES=${1:-10000}
for b in helix helix-net helix-server; do
  [ -x "$TARGET/$b" ] || { echo "missing $TARGET/$b (cargo build --release -p helix-client-net -p helix-server)" >&2; exit 1; }
done
for t in git curl python3; do
  command -v $t >/dev/null || { echo "$t is needed" >&2; exit 1; }
done

WORK=$(mktemp -d)
cleanup() { bench_stop; rm -rf "$WORK"; }
trap cleanup EXIT
echo "bench: $ENTRIES entries" >&2
bench_upstream "$CORPUS" "$ENTRIES" "$WORK/src" "$WORK/up.git"
printf 'anonymous_loopback = true\n[[projects]]\nname = "bench"\nupstream = "%s"\npoll_interval_secs = 3600\n' \
  "$WORK/up.git" > "$WORK/server.toml"
bench_start "$TARGET/helix-server" "$WORK/server.toml" "$WORK"
until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/projects/bench/index")" = 200 ]; do sleep 0.1; done

RUNS=${RUNS:-15} DAYS=${DAYS:-7} SESSIONS=${SESSIONS:-8} CALLS=${CALLS:-60} READS=${READS:-4} SEED=${SEED:-1} \
python3 - "$TARGET/helix" "$URL" "$WORK" <<'EOF'
import json, os, random, shutil, socket, statistics, subprocess, sys, threading, time

helix, url, work = sys.argv[1:4]
env_int = lambda k: int(os.environ[k])
RUNS, DAYS, SESSIONS, CALLS, READS = (env_int(k) for k in ("RUNS", "DAYS", "SESSIONS", "CALLS", "READS"))
rng = random.Random(env_int("SEED"))
MAX_BYTES = 512 * 1024  # journal.rs: a log file rotates past this size

# A counting proxy in front of the server: bytes each way, per variant run.
class Proxy:
    def __init__(self, target):
        host, port = target.replace("http://", "").split(":")
        self.target = (host, int(port))
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.reset()
        threading.Thread(target=self.accept, daemon=True).start()
    def reset(self):
        with self.lock:
            self.up = self.down = self.report_up = self.report_down = self.requests = 0
            self.report = b""
    def accept(self):
        while True:
            c, _ = self.sock.accept()
            s = socket.create_connection(self.target)
            flags = {"report": None}
            threading.Thread(target=self.pipe, args=(c, s, "up", flags), daemon=True).start()
            threading.Thread(target=self.pipe, args=(s, c, "down", flags), daemon=True).start()
    def pipe(self, a, b, way, flags):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                with self.lock:
                    if way == "up":
                        self.requests += data.count(b" HTTP/1.1\r\n")
                        if flags["report"] is None:
                            flags["report"] = data.startswith(b"POST /v1/projects/bench/usage ")
                    setattr(self, way, getattr(self, way) + len(data))
                    if flags["report"]:
                        name = "report_" + way
                        setattr(self, name, getattr(self, name) + len(data))
                        if way == "up":
                            self.report += data
                b.sendall(data)
        except OSError:
            pass
        finally:
            try:
                b.shutdown(socket.SHUT_WR)
            except OSError:
                pass

proxy = Proxy(url)

# The entry ids the server serves: the corpus's paths.
src = os.path.join(work, "src")
ids = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src)
             if ".git" not in d for f in fs if f.endswith(".md"))
ids = [i for i in ids if "/" in i]
rng.shuffle(ids)
# Popularity: a few entries come up again and again (Zipf, s = 1.1).
weights = [1 / (k + 1) ** 1.1 for k in range(len(ids))]

def machine(name, report):
    home = os.path.join(work, name)
    for d in ("code-direct", "code-proxy", "home/.config/helix"):
        os.makedirs(os.path.join(home, d), exist_ok=True)
    for code, server in (("code-direct", url), ("code-proxy", proxy.url)):
        with open(os.path.join(home, code, ".helix.toml"), "w") as f:
            f.write('server = "%s"\nprojects = ["bench"]\n' % server)
    if not report:
        with open(os.path.join(home, "home/.config/helix/config.toml"), "w") as f:
            f.write("[usage]\nreport = false\n")
    return home

def env_of(home):
    h = os.path.join(home, "home")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "HELIX_"))}
    e.update(HOME=h, XDG_CONFIG_HOME=h + "/.config", XDG_CACHE_HOME=h + "/.cache",
             XDG_DATA_HOME=h + "/.local/share", XDG_STATE_HOME=h + "/.local/state",
             HELIX_SYNC_MAX_AGE="off")
    return e

def sync(home, code="code-direct"):
    t0 = time.perf_counter()
    r = subprocess.run([helix, "sync", "--quiet"], cwd=os.path.join(home, code), env=env_of(home),
                       capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0 or r.stderr.strip():
        sys.exit("helix sync (%s): %d %s" % (home, r.returncode, r.stderr))
    return dt

# A week of a heavy user's injection log, as the hooks write it.
def journal(home):
    code = os.path.join(home, "code-direct")
    now = int(time.time() * 1000) - 60_000
    start = now - DAYS * 86_400_000
    recs = []
    for day in range(DAYS):
        for s in range(SESSIONS):
            sid = "%08x-%04x-4%03x-a%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16),
                  rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(48))
            agent = "claude" if s % 4 else "codex"
            t = start + day * 86_400_000 + rng.randrange(0, 86_400_000 - CALLS * 30_000)
            given = []
            for _ in range(CALLS):
                t += rng.randrange(5_000, 30_000)
                hook = rng.choices(["ambient", "prompt", "error"], [50, 35, 15])[0]
                chosen = rng.choices(ids, weights, k=rng.randint(1, 3))
                given += chosen
                r = {"t": t, "session": sid, "hook": hook, "agent": agent,
                     "entries": [{"id": "bench:" + i, "score": round(rng.uniform(2, 12), 2),
                                  "signal": rng.choice(["separation", "coverage", "file-name", "source"]),
                                  "points": round(rng.uniform(0, 8), 2)} for i in chosen],
                     "chars": rng.randrange(300, 1500)}
                if hook == "ambient":
                    r["file"] = "%s/src/module_%d/file_%d.rs" % (code, rng.randrange(40), rng.randrange(20))
                else:
                    r["cwd"] = code
                recs.append(r)
            for i in rng.sample(given, min(READS, len(given))):
                recs.append({"t": t + rng.randrange(1_000, 60_000), "hook": "read", "cwd": code,
                             "entries": [{"id": "bench:" + i, "score": 0.0, "signal": "read"}],
                             "chars": 0})
    recs.sort(key=lambda r: r["t"])
    d = os.path.join(home, "home/.cache/helix")
    os.makedirs(d, exist_ok=True)
    cur, prev = [], []
    size = 0
    for r in recs:
        line = json.dumps(r, separators=(",", ":")) + "\n"
        if size > MAX_BYTES:
            prev, cur, size = cur, [], 0
        cur.append(line)
        size += len(line)
    for name, lines in (("injections.log.1", prev), ("injections.log", cur)):
        with open(os.path.join(d, name), "w") as f:
            f.writelines(lines)
    return len(recs), len(prev) + len(cur), sum(map(len, prev + cur))

# Machines: the cache synced (through both URLs), then the log written.
homes = {}
for name, report in (("off", False), ("week", True)):
    h = machine("m-" + name, report)
    sync(h)
    sync(h, "code-proxy")
    homes[name] = h
written, kept, log_bytes = journal(homes["week"])
for f in ("injections.log", "injections.log.1"):
    shutil.copy2(os.path.join(homes["week"], "home/.cache/helix", f),
                 os.path.join(homes["off"], "home/.cache/helix", f))
# `nothing new`: the week reported once already (both URLs: their states are per server).
homes["settled"] = os.path.join(work, "m-settled")
shutil.copytree(homes["week"], homes["settled"], symlinks=True)
sync(homes["settled"])
sync(homes["settled"], "code-proxy")
for k in list(homes):
    shutil.copytree(homes[k], homes[k] + ".snap", symlinks=True)

def reset(k):
    shutil.rmtree(homes[k])
    shutil.copytree(homes[k] + ".snap", homes[k], symlinks=True)

times = {k: [] for k in homes}
order = ["off", "week", "settled"]
for i in range(RUNS):
    for k in (order if i % 2 == 0 else order[::-1]):
        reset(k)
        times[k].append(sync(homes[k]))

wire = {}
for k in order:
    reset(k)
    time.sleep(0.2)
    proxy.reset()
    sync(homes[k], "code-proxy")
    time.sleep(0.3)
    wire[k] = (proxy.up, proxy.down, proxy.requests, proxy.report_up, proxy.report_down)
    if k == "week":
        report = json.loads(proxy.report.split(b"\r\n\r\n", 1)[1])

med = {k: statistics.median(v) * 1000 for k, v in times.items()}
names = {"off": "`[usage] report = false`", "week": "report of the week's log",
         "settled": "report on, nothing new since the last"}
print("| `helix sync` (cache up to date) | wall time, median of %d | bytes sent | bytes received | requests |" % RUNS)
print("|---|---|---|---|---|")
for k in order:
    up, down, n, _, _ = wire[k]
    print("| %s | %.1f ms | %d | %d | %d |" % (names[k], med[k], up, down, n))
up_w, down_w, _, rep_up, rep_down = wire["week"]
print()
print("log: %d records written for %d days × %d sessions × %d calls (+ %d reads a session); "
      "%d kept by the bounded log (%d KiB), the rest rotated out" %
      (written, DAYS, SESSIONS, CALLS, READS, kept, log_bytes // 1024))
print("report: %d rows (day, entry) of %d entries; POST %d bytes (body %d), answer %d bytes" %
      (len(report["rows"]), len({r["id"] for r in report["rows"]}), rep_up,
       len(json.dumps(report, separators=(",", ":"))), rep_down))
print("added by the report: %+.1f ms (× %.2f), %+d bytes sent, %+d received; nothing new: %+.1f ms" %
      (med["week"] - med["off"], med["week"] / med["off"], up_w - wire["off"][0],
       down_w - wire["off"][1], med["settled"] - med["off"]))
EOF
