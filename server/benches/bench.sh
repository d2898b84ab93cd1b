#!/usr/bin/env bash
# helix-server benchmarks on loopback with a 10k-entry project (entries replicated from
# corpora/til under new paths): conditional GETs/s (304), full downloads/s,
# one-entry commit -> served artifact latency after refresh, store throughput with 50
# concurrent writers. Needs: git, GNU tar, curl, wrk. Prints a Markdown summary on stdout.
#
# Usage: server/benches/bench.sh [DURATION_SECONDS]
# Env: HELIX_BENCH_SERVER=BIN benchmarks that binary (e.g. the released one) instead of
#      building this checkout's.
set -euo pipefail

DUR=${1:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
ENTRIES=${HELIX_BENCH_ENTRIES:-10000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target-server}
BIN=${HELIX_BENCH_SERVER:-$CARGO_TARGET_DIR/release/helix-server}

# shellcheck source=lib.sh
. "$ROOT/server/benches/lib.sh"
log() { echo "bench: $*" >&2; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install -y wrk)" >&2; exit 1; }

if [ -z "${HELIX_BENCH_SERVER:-}" ]; then
  log "building release binary"
  (cd "$ROOT" && cargo build --release -q -p helix-server)
fi

WORK=$(mktemp -d)
SERVER_PID=
KEEP_LOG=${HELIX_BENCH_SERVER_LOG:-}
cleanup() {
  bench_stop
  if [ -n "$KEEP_LOG" ] && [ -f "$WORK/server.log" ]; then cp "$WORK/server.log" "$KEEP_LOG"; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

log "generating a $ENTRIES-entry upstream from $CORPUS"
bench_upstream "$CORPUS" "$ENTRIES" "$WORK/src" "$WORK/up.git"

cat > "$WORK/server.toml" <<EOF
[[projects]]
name = "bench"
upstream = "$WORK/up.git"
poll_interval_secs = 3600
EOF
TOKEN=$("$BIN" --config "$WORK/server.toml" token add --project bench --name bench --scope read,write 2>/dev/null)

log "starting server"
bench_start "$BIN" "$WORK/server.toml" "$WORK"
AUTH="Authorization: Bearer $TOKEN"

t0=$(date +%s.%N)
until [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$URL/v1/projects/bench/index")" = 200 ]; do sleep 0.05; done
t1=$(date +%s.%N)
STATUS=$(curl -s -H "$AUTH" "$URL/v1/projects/bench/status")
ETAG=$(curl -s -D - -o /dev/null -H "$AUTH" "$URL/v1/projects/bench/index" | tr -d '\r' | sed -n 's/^etag: //Ip')
ART_BYTES=$(curl -s -o /dev/null -w '%{size_download}' -H "$AUTH" "$URL/v1/projects/bench/index")
log "initial ingest: $(echo "$t1 - $t0" | bc) s; status: $STATUS"

rps() { sed -n 's/^Requests\/sec: *//p'; }
lat() { awk '/Latency/ {print $2; exit}'; }

log "conditional GETs (304)"
W304=$(wrk -t2 -c32 -d"${DUR}s" -H "$AUTH" -H "If-None-Match: $ETAG" "$URL/v1/projects/bench/index")
echo "$W304" >&2
log "full downloads"
W200=$(wrk -t2 -c32 -d"${DUR}s" -H "$AUTH" "$URL/v1/projects/bench/index")
echo "$W200" >&2

log "one-entry commit -> served artifact after refresh"
LAT=()
for i in 1 2 3 4 5; do
  (cd "$WORK/src" && mkdir -p bench-new && printf '# Fresh note %s\n\nSomething learned in round %s.\n' "$i" "$i" > "bench-new/fresh-$i.md" \
    && git add -A && git commit -q -m "fresh $i" && git push -q "$WORK/up.git" main)
  want=$(git -C "$WORK/up.git" rev-parse main)
  s=$(date +%s.%N)
  curl -s -o /dev/null -X POST -H "$AUTH" "$URL/v1/projects/bench/refresh"
  until [ "$(curl -s -o /dev/null -D - -H "$AUTH" "$URL/v1/projects/bench/index" | tr -d '\r' | sed -n 's/^x-helix-commit: //Ip')" = "$want" ]; do :; done
  e=$(date +%s.%N)
  LAT+=("$(echo "$e - $s" | bc)")
done
log "refresh latencies: ${LAT[*]}"

log "store throughput, 50 concurrent writers"
bench_post_lua "$WORK/post.lua"
BEFORE=$(git -C "$WORK/up.git" ls-tree -r --name-only main | grep -c '^bench-writes/' || true)
WPOST=$(wrk -t2 -c50 -d"${DUR}s" --timeout 30s -s "$WORK/post.lua" -H "$AUTH" "$URL/v1/projects/bench/entries")
echo "$WPOST" >&2
sleep 1
AFTER=$(git -C "$WORK/up.git" ls-tree -r --name-only main | grep -c '^bench-writes/' || true)
COMMITS=$(git -C "$WORK/up.git" rev-list --count main)
git -C "$WORK/up.git" fsck --no-dangling >/dev/null 2>&1 && FSCK=clean || FSCK=FAILED
NON2XX=$(echo "$WPOST" | sed -n 's/^ *Non-2xx or 3xx responses: *//p')

cat <<EOF
| measure | result |
|---|---|
| entries / Markdown bytes / artifact bytes | $ENTRIES / $MD_BYTES / $ART_BYTES |
| initial ingest (fetch+parse+compile), s | $(echo "$t1 - $t0" | bc) |
| conditional GET (304), requests/s (wrk -t2 -c32 -d${DUR}s) | $(echo "$W304" | rps) (mean latency $(echo "$W304" | lat)) |
| full download 200, requests/s (wrk -t2 -c32 -d${DUR}s) | $(echo "$W200" | rps) (mean latency $(echo "$W200" | lat)) |
| one-entry commit -> new artifact served after refresh, s (5 runs) | ${LAT[*]} |
| stores acknowledged/s, 50 writers (wrk -t2 -c50 -d${DUR}s) | $(echo "$WPOST" | rps) (mean latency $(echo "$WPOST" | lat); non-2xx: ${NON2XX:-0}) |
| entries that landed in upstream git / commits on main / fsck | $((AFTER - BEFORE)) / $COMMITS / $FSCK |
EOF
