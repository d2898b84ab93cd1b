#!/usr/bin/env bash
# Prompt hook latency with semantic candidates: the til corpus copied to SIZE entries
# (default 10000), vectors from a model (MODEL_DIR; default the tiny test model, or
# target/models/<name> when it exists), the release `helix hook prompt` spawned ITER times
# per case, interleaved:
#   off     HELIX_EMBED=off (the lexical hook as before vectors)
#   absent  vectors in the artifact, no embedder listening (connect fails, lexical answer)
#   warm    the embedder up (`helix-net embedder`): connect, embed, top_k, fuse
# The corpus's notes are embedded once and each copy gets its original's vector (with a
# real model about a minute on two cores; RANDOM_VECTORS=1 skips it with random vectors,
# which the gate then reads as unrelated: the warm hook then answers nothing).
# Prints p50/p99 in ms per case.
#
# Usage: client/benches/semantic.sh      (ITER=300 SIZE=10000 PROMPT='how do I …')
#        BASELINE_NET=/path/to/other/helix-net client/benches/semantic.sh
#            (adds "warm, baseline embedder": that build's embedder, interleaved with this one)
#        SKIP_BUILD=1 MODEL_DIR=target/models/all-MiniLM-L6-v2 client/benches/semantic.sh
set -euo pipefail

ITER=${ITER:-300}
SIZE=${SIZE:-10000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/corpora/til}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }
if [ -z "${SKIP_BUILD:-}" ]; then
    echo "building release helix, helix-net and the vector_artifact example..." >&2
    cargo build --release -p helix-client-net --bins --quiet
    cargo build --release -p helix-client --example vector_artifact --quiet
fi
HELIX=$TARGET/release/helix
NET=$TARGET/release/helix-net

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-semantic-bench.XXXXXX")
EMBEDDER=
cleanup() {
    [ -n "$EMBEDDER" ] && kill "$EMBEDDER" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

export HOME=$WORK/home XDG_CACHE_HOME=$WORK/home/cache XDG_DATA_HOME=$WORK/home/data \
    XDG_CONFIG_HOME=$WORK/home/config XDG_RUNTIME_DIR=$WORK/home/run HELIX_SYNC_MAX_AGE=0
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
if [ -z "${MODEL_DIR:-}" ]; then
    MODEL_DIR=$(ls -d "$ROOT"/target/models/*/ 2>/dev/null | head -1 || true)
fi
# The example writes the tiny test model into a directory that does not exist yet.
[ -n "$MODEL_DIR" ] || MODEL_DIR=$WORK/tiny
echo "model: $MODEL_DIR" >&2

repo=$WORK/repo
mkdir -p "$repo/knowledge"
printf 'local = "knowledge"\nproject = "bench"\n' > "$repo/.helix.toml"
cache=$(cd "$repo" && "$HELIX" status --json | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["projects"][0]["cache_dir"])')
mkdir -p "$cache"
"$HELIX" build "$CORPUS" --no-git --project bench -o "$WORK/base.hix" 2> "$WORK/build.log" \
    || { cat "$WORK/build.log" >&2; exit 1; }
"$TARGET/release/examples/vector_artifact" "$WORK/base.hix" "$cache/index.hix" "$MODEL_DIR" "$SIZE"

# The prompt hook embeds the prompt itself (at most 500 characters: a longer one is not read).
prompt=${PROMPT:-'how do I rebase my git branch onto another base without losing local commits?'}
python3 - "$HELIX" "$NET" "$repo" "$MODEL_DIR" "$ITER" "$prompt" "${BASELINE_NET:-}" <<'PY'
import json, os, socket, subprocess, sys, time
helix, net, repo, model, iters, prompt, baseline_net = sys.argv[1:8]
iters = int(iters)
sock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "helix", "embed.sock")
base_sock = os.path.join(os.environ["XDG_RUNTIME_DIR"], "baseline", "embed.sock")

def run(i, env_extra):
    env = dict(os.environ, **env_extra)
    doc = {"session_id": f"bench-{i}", "cwd": repo, "hook_event_name": "UserPromptSubmit",
           "prompt": prompt}
    t = time.perf_counter_ns()
    out = subprocess.run([helix, "hook", "prompt"], input=json.dumps(doc).encode(),
                         capture_output=True, env=env, cwd=repo)
    return (time.perf_counter_ns() - t) / 1e6, out.stdout

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

# A model dir that does not exist: the embedder the "absent" case starts exits at once.
absent_env = {"HELIX_MODEL_DIR": "/nonexistent"}
cases = {"off": {"HELIX_EMBED": "off"}, "absent": absent_env}
times = {c: [] for c in list(cases) + ["warm"]}
outs = {}
for i in range(iters + 10):
    for c, env in cases.items():
        ms, out = run(f"{c}-{i}", env)
        if i >= 10:
            times[c].append(ms)
        outs[c] = out
# The warm case, and with BASELINE_NET another build's embedder on a socket of its own,
# interleaved with it (the same hook binary asks both).
embedders = {"warm": (net, sock)}
if baseline_net:
    embedders["warm, baseline embedder"] = (baseline_net, base_sock)
    os.makedirs(os.path.dirname(base_sock), mode=0o700, exist_ok=True)
procs = []
try:
    for c, (binary, path) in embedders.items():
        procs.append(subprocess.Popen(
            [binary, "embedder", "--foreground", "--idle-secs", "600"],
            env=dict(os.environ, HELIX_MODEL_DIR=model, HELIX_EMBED_SOCKET=path),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        times[c] = []
        deadline = time.time() + 60
        while True:
            try:
                s = socket.socket(socket.AF_UNIX); s.connect(path); s.close(); break
            except OSError:
                if time.time() > deadline:
                    sys.exit(f"the embedder {binary} never listened")
                time.sleep(0.05)
    for i in range(iters + 10):
        for c, (_, path) in embedders.items():
            ms, out = run(f"{c}-{i}", {"HELIX_EMBED_SOCKET": path})
            if i >= 10:
                times[c].append(ms)
            outs[c] = out
finally:
    for p in procs:
        p.kill(); p.wait()
print("| case | p50 ms | p99 ms | output bytes |")
print("|---|---:|---:|---:|")
for c in ["off", "absent", *embedders]:
    print(f"| {c} | {pct(times[c], 50):.2f} | {pct(times[c], 99):.2f} | {len(outs[c])} |")
PY
