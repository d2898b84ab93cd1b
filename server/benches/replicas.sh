#!/usr/bin/env bash
# Stores per second with 50 concurrent writers through haproxy, over 1 and over 2
# helix-server replicas of one project on one upstream (a bare repository on this machine),
# then what landed upstream (exactly once?) and whether both replicas serve the same ETag.
# The upstream is the 10k-entry corpus of bench.sh. Prints a Markdown table on stdout.
#
# Usage: server/benches/replicas.sh [DURATION_SECONDS]
# Env: HELIX_BENCH_SERVER=BIN (default: this checkout's release build), HELIX_BENCH_ENTRIES.
# Needs: git, curl, wrk, haproxy.
set -euo pipefail

DUR=${1:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
ENTRIES=${HELIX_BENCH_ENTRIES:-10000}
BIN=${HELIX_BENCH_SERVER:-${CARGO_TARGET_DIR:-$ROOT/target}/release/helix-server}
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
log() { echo "bench: $*" >&2; }
for t in git curl wrk "$HAPROXY" "$BIN"; do
  command -v "$t" >/dev/null || [ -x "$t" ] || { echo "$t is needed" >&2; exit 1; }
done

WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

log "generating a $ENTRIES-entry corpus"
mkdir -p "$WORK/src"
n=0 round=0
while [ "$n" -lt "$ENTRIES" ]; do
  while IFS= read -r f; do
    [ "$n" -ge "$ENTRIES" ] && break
    rel=${f#"$CORPUS"/}
    dest="$WORK/src/${rel%%/*}-r${round}/${rel#*/}"
    mkdir -p "$(dirname "$dest")"
    cp "$f" "$dest"
    n=$((n + 1))
  done < <(find "$CORPUS" -mindepth 2 -name '*.md' | sort)
  round=$((round + 1))
done
(cd "$WORK/src" && git init -q -b main && git add -A && git commit -q -m corpus)

cat > "$WORK/post.lua" <<'EOF'
local counter = 0
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local key = string.format("@RUN@-%s-%d", tid, counter)
  wrk.headers["Idempotency-Key"] = key
  local body = string.format('{"topic":"bench-writes","title":"Stored note %s","body":"Learned thing %s the hard way."}', key, key)
  return wrk.format(nil, nil, nil, body)
end
EOF

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

echo "| replicas behind haproxy | stores acknowledged/s (wrk -t2 -c50 -d${DUR}s) | mean latency | non-2xx | landed upstream / acknowledged+in flight | commits | same ETag on every replica |"
echo "|---|---|---|---|---|---|---|"
for R in 1 2; do
  D="$WORK/r$R"
  mkdir -p "$D"
  git clone -q --bare "$WORK/src" "$D/up.git"
  printf '[[projects]]\nname = "bench"\nupstream = "%s"\npoll_interval_secs = 5\n' "$D/up.git" > "$D/server.toml"
  TOKEN=$("$BIN" --config "$D/server.toml" token add --project bench --name bench --scope read,write 2>/dev/null)
  URLS=()
  for i in $(seq 1 "$R"); do
    "$BIN" --config "$D/server.toml" --data-dir "$D/data$i" --listen 127.0.0.1:0 > "$D/stdout$i" 2> "$D/server$i.log" &
    PIDS+=("$!")
    for _ in $(seq 1 600); do grep -q listening "$D/stdout$i" 2>/dev/null && break; sleep 0.05; done
    URLS+=("$(sed -n 's/^listening on //p' "$D/stdout$i")")
  done
  for u in "${URLS[@]}"; do
    until [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$u/v1/projects/bench/index")" = 200 ]; do sleep 0.1; done
  done
  PORT=$(free_port)
  {
    printf 'global\n  maxconn 512\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 120s\n  timeout server 120s\n'
    printf 'frontend helix\n  bind 127.0.0.1:%s\n  default_backend replicas\nbackend replicas\n  balance roundrobin\n' "$PORT"
    i=0; for u in "${URLS[@]}"; do printf '  server r%s %s\n' "$i" "${u#http://}"; i=$((i + 1)); done
  } > "$D/haproxy.cfg"
  "$HAPROXY" -db -f "$D/haproxy.cfg" > /dev/null 2> "$D/haproxy.log" &
  PIDS+=("$!")
  until curl -s -o /dev/null "http://127.0.0.1:$PORT/healthz"; do sleep 0.05; done
  log "$R replica(s): 50 writers for ${DUR}s"
  sed "s/@RUN@/r$R/" "$WORK/post.lua" > "$D/post.lua"
  OUT=$(wrk -t2 -c50 -d"${DUR}s" --timeout 60s -s "$D/post.lua" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/projects/bench/entries")
  echo "$OUT" >&2
  sleep 3
  LANDED=$(git -C "$D/up.git" ls-tree -r --name-only main | grep -c '^bench-writes/' || true)
  COMMITS=$(( $(git -C "$D/up.git" rev-list --count main) - 1 ))
  REQS=$(echo "$OUT" | awk '/requests in/ {print $1}')
  HEAD=$(git -C "$D/up.git" rev-parse main)
  ETAGS=()
  for u in "${URLS[@]}"; do
    curl -s -o /dev/null -X POST -H "Authorization: Bearer $TOKEN" "$u/v1/projects/bench/refresh?wait=1"
    ETAGS+=("$(curl -s -D - -o /dev/null -H "Authorization: Bearer $TOKEN" "$u/v1/projects/bench/index" | tr -d '\r' | sed -n 's/^etag: //Ip')")
  done
  SAME=yes; for e in "${ETAGS[@]}"; do [ "$e" = "${ETAGS[0]}" ] || SAME=no; done
  echo "| $R | $(echo "$OUT" | sed -n 's/^Requests\/sec: *//p') | $(echo "$OUT" | awk '/Latency/ {print $2; exit}') | $(echo "$OUT" | sed -n 's/^ *Non-2xx or 3xx responses: *//p' | grep . || echo 0) | $LANDED / $REQS | $COMMITS | $SAME |"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  PIDS=()
done
