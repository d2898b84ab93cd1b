#!/usr/bin/env bash
# Client process benches: `helix sync` with nothing new (the 304 path against the real
# server) and `helix search` at 10k entries (til corpus replicated under new paths), as
# whole processes, release build. Uses hyperfine when installed, else a timing loop.
#
# Usage: client/benches/bench.sh          (N=10000 RUNS=200 by default)
set -euo pipefail

N=${N:-10000}
RUNS=${RUNS:-200}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/corpora/til}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }

echo "building release helix and helix-server..." >&2
cargo build --release -p helix-client-net -p helix-server --quiet
HELIX=$CARGO_TARGET_DIR/release/helix
SERVER=$CARGO_TARGET_DIR/release/helix-server

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-client-bench.XXXXXX")
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# N entries: copies of the corpus under new topic folders (r0-git/…, r1-git/…).
KB=$WORK/kb
mkdir -p "$KB"
count=0 round=0
while [ "$count" -lt "$N" ]; do
    for f in "$CORPUS"/*/*.md; do
        [ "$count" -ge "$N" ] && break
        topic=$(basename "$(dirname "$f")")
        mkdir -p "$KB/r$round-$topic"
        cp "$f" "$KB/r$round-$topic/"
        count=$((count + 1))
    done
    round=$((round + 1))
done
git -C "$KB" init -q -b main
git -C "$KB" add -A
git -C "$KB" -c user.name=bench -c user.email=bench@helix.invalid commit -q -m "bench corpus"
git clone -q --bare "$KB" "$WORK/upstream.git"
echo "corpus: $count entries, $(du -sh --apparent-size --exclude=.git "$KB" | cut -f1) of Markdown" >&2

cat > "$WORK/server.toml" <<TOML
anonymous_loopback = true
[[projects]]
name = "bench"
upstream = "$WORK/upstream.git"
poll_interval_secs = 3600
TOML
RUST_LOG=error "$SERVER" --config "$WORK/server.toml" --listen 127.0.0.1:0 --data-dir "$WORK/data" \
    > "$WORK/server.out" 2> "$WORK/server.err" &
SERVER_PID=$!
for _ in $(seq 1 200); do grep -q '^listening on ' "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$WORK/server.out" | head -n1)
[ -n "$URL" ] || { echo "server did not start:" >&2; cat "$WORK/server.err" >&2; exit 1; }

export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/config XDG_CACHE_HOME=$WORK/home/cache XDG_DATA_HOME=$WORK/home/data
mkdir -p "$WORK/repo" "$HOME"
cd "$WORK/repo"
"$HELIX" init --server "$URL" --project bench > /dev/null
ok=
for _ in $(seq 1 300); do
    if "$HELIX" sync --quiet 2>/dev/null; then ok=1; break; fi
    sleep 0.2
done
[ -n "$ok" ] || { echo "first sync never succeeded" >&2; "$HELIX" sync; exit 1; }
"$HELIX" sync >&2
"$HELIX" build "$KB" -o "$WORK/bench.hix" --project bench 2>/dev/null

# Sanity: each command does what is measured.
"$HELIX" sync | grep -q "up to date" || { echo "sync is not on the 304 path" >&2; exit 1; }
"$HELIX" search --json git rebase | grep -q '"id"' || { echo "search found nothing" >&2; exit 1; }

CASES=(
    "helix --version (process floor)|$HELIX --version"
    "sync-304|$HELIX sync --quiet"
    "search-configured|$HELIX search --json git rebase interactive"
    "search-index-file|$HELIX search --index $WORK/bench.hix --json git rebase interactive"
    "status|$HELIX status --json"
)

# Full download: the cached artifact removed before each run, so sync downloads, verifies
# (full checksum) and installs the whole artifact.
CACHE=$(dirname "$(find "$XDG_CACHE_HOME/helix" -name index.hix | head -n1)")
echo "artifact: $(stat -c %s "$CACHE/index.hix") bytes" >&2
PREP="rm -f $CACHE/index.hix $CACHE/meta.json"

if command -v hyperfine > /dev/null; then
    args=()
    for c in "${CASES[@]}"; do args+=(-n "${c%%|*}" "${c#*|}"); done
    hyperfine -N --warmup 20 --runs "$RUNS" --export-markdown "$WORK/result.md" "${args[@]}" >&2
    cat "$WORK/result.md"
    hyperfine -N --warmup 3 --runs 30 --prepare "$PREP" --export-markdown "$WORK/full.md" \
        -n "sync-full-download" "$HELIX sync --quiet" >&2
    tail -n +3 "$WORK/full.md"
else
    echo "hyperfine not found; timing loop with date +%s%N" >&2
    echo "| case | runs | mean ms | p50 ms | p99 ms |"
    echo "|---|---|---|---|---|"
    for c in "${CASES[@]}"; do
        name=${c%%|*} cmd=${c#*|}
        for _ in $(seq 1 20); do $cmd > /dev/null 2>&1; done
        : > "$WORK/times"
        for _ in $(seq 1 "$RUNS"); do
            t0=$(date +%s%N); $cmd > /dev/null 2>&1; t1=$(date +%s%N)
            echo $((t1 - t0)) >> "$WORK/times"
        done
        sort -n "$WORK/times" | awk -v n="$name" '{a[NR]=$1; s+=$1} END {
            p50=a[int((NR+1)*0.5)]; p99=a[int(NR*0.99)>0?int(NR*0.99):1];
            printf "| %s | %d | %.2f | %.2f | %.2f |\n", n, NR, s/NR/1e6, p50/1e6, p99/1e6 }'
    done
    : > "$WORK/times"
    for _ in $(seq 1 30); do
        $PREP
        t0=$(date +%s%N); "$HELIX" sync --quiet; t1=$(date +%s%N)
        echo $((t1 - t0)) >> "$WORK/times"
    done
    sort -n "$WORK/times" | awk '{a[NR]=$1; s+=$1} END {
        printf "| sync-full-download | %d | %.2f | %.2f | %.2f |\n", NR, s/NR/1e6, a[int((NR+1)/2)]/1e6, a[NR]/1e6 }'
fi
