#!/usr/bin/env bash
# Initial ingest of a forge-like upstream: 10k entries (replicated from
# corpora/til) committed over a history of 200 commits, a quarter of them pull
# requests by other authors merged with --no-ff, in authors' own time zones; then the same
# repository with 500 extra branches (one commit each, as pull-request and bot branches
# are). For each helix-server binary given, and each repository: time from start to the
# first artifact served, and the server's peak resident memory (VmHWM) after it. Runs are
# interleaved and repeated; the median is printed, as a Markdown table on stdout.
#
# Usage: server/benches/ingest.sh [RUNS] [BINARY...]
#   (default: 3 runs of target/release/helix-server; e.g. also /work/baseline/helix-server)
set -euo pipefail
export LC_ALL=C # byte lengths for fast-import

RUNS=${1:-3}
shift || true
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$ROOT/target/release/helix-server")
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
ENTRIES=${HELIX_BENCH_ENTRIES:-10000}
BRANCHES=${HELIX_BENCH_BRANCHES:-500}
COMMITS=200

log() { echo "ingest: $*" >&2; }
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

log "generating a $ENTRIES-entry history of $COMMITS commits from $CORPUS"
mapfile -t FILES < <(find "$CORPUS" -mindepth 2 -name '*.md' | sort)
git init -q --bare -b main "$WORK/one.git"
git init -q -b main "$WORK/src"
per=$(( (ENTRIES + COMMITS - 1) / COMMITS ))
zones=(-0500 +0100 +0900 -0800 +0530)
n=0
for c in $(seq 0 $((COMMITS - 1))); do
  pr=$(( c % 4 == 3 ))
  if [ "$pr" = 1 ]; then git -C "$WORK/src" checkout -q -b "pr-$c"; fi
  for _ in $(seq 1 "$per"); do
    [ "$n" -ge "$ENTRIES" ] && break
    f=${FILES[$(( n % ${#FILES[@]} ))]}
    rel=${f#"$CORPUS"/}
    dest="$WORK/src/${rel%%/*}-r$(( n / ${#FILES[@]} ))/${rel#*/}"
    mkdir -p "$(dirname "$dest")"
    cp "$f" "$dest"
    n=$((n + 1))
  done
  git -C "$WORK/src" add -A
  GIT_AUTHOR_NAME="author$((c % 7))" GIT_AUTHOR_EMAIL="a$((c % 7))@example.com" \
    GIT_AUTHOR_DATE="$((1700000000 + c * 3600)) ${zones[$((c % 5))]}" \
    git -C "$WORK/src" commit -q -m "batch $c"
  if [ "$pr" = 1 ]; then
    git -C "$WORK/src" checkout -q main
    GIT_AUTHOR_NAME=merger GIT_AUTHOR_EMAIL=m@example.com \
      git -C "$WORK/src" merge -q --no-ff --no-edit "pr-$c"
    git -C "$WORK/src" branch -q -D "pr-$c"
  fi
done
git -C "$WORK/src" push -q "$WORK/one.git" main
MD_BYTES=$(du -sb --exclude=.git "$WORK/src" | cut -f1)

log "the same repository with $BRANCHES extra branches"
git clone -q --bare "$WORK/one.git" "$WORK/many.git"
{
  for i in $(seq 0 $((BRANCHES - 1))); do
    body="# Work in progress $i"$'\n\n'"$(head -c 2000 "${FILES[$(( i % ${#FILES[@]} ))]}" | tr -d '\000')"$'\n'
    printf 'commit refs/heads/pr-%d\ncommitter Bot <bot@example.com> 1700000000 +0000\ndata 6\npr %03d\nfrom refs/heads/main^0\nM 100644 inline wip/pr-%d.md\ndata %d\n%s\n' \
      "$i" "$((i % 1000))" "$i" "${#body}" "$body"
  done
} | git -C "$WORK/many.git" fast-import --quiet
log "branches: one.git $(git -C "$WORK/one.git" for-each-ref refs/heads | wc -l), many.git $(git -C "$WORK/many.git" for-each-ref refs/heads | wc -l)"

# One ingest: prints "seconds peak_kib parse_ms" (parse_ms: listing, last-change metadata
# and parsing, from the server's "compiled new artifact" log line).
ingest() {
  local bin=$1 up=$2 dir=$WORK/run
  rm -rf "$dir"; mkdir -p "$dir"
  printf 'anonymous_loopback = true\n[[projects]]\nname = "bench"\nupstream = "%s"\npoll_interval_secs = 3600\n' "$up" > "$dir/server.toml"
  local t0 t1 url
  t0=$(date +%s.%N)
  "$bin" --config "$dir/server.toml" --data-dir "$dir/data" --listen 127.0.0.1:0 \
    > "$dir/stdout" 2> "$dir/log" &
  SERVER_PID=$!
  for _ in $(seq 1 400); do grep -q listening "$dir/stdout" 2>/dev/null && break; sleep 0.025; done
  url=$(sed -n 's/^listening on //p' "$dir/stdout")
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/v1/projects/bench/index")" = 200 ]; do sleep 0.02; done
  t1=$(date +%s.%N)
  local hwm parse
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status")
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
  parse=$(sed 's/\x1b\[[0-9;]*m//g' "$dir/log" | sed -n 's/.*parse_ms=\([0-9]*\).*/\1/p' | head -1)
  echo "$(echo "$t1 - $t0" | bc) $hwm ${parse:-0}"
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A SECS MEM PARSE
for r in $(seq 1 "$RUNS"); do
  for bin in "${BINS[@]}"; do
    for repo in one many; do
      read -r s m p < <(ingest "$bin" "$WORK/$repo.git")
      log "run $r $bin $repo: ${s}s ${m} KiB, parse ${p} ms"
      SECS[$bin,$repo]+="$s "
      MEM[$bin,$repo]+="$m "
      PARSE[$bin,$repo]+="$p "
    done
  done
done

echo "| binary | upstream | initial ingest, s (median of $RUNS) | of which list + metadata + parse, ms | peak RSS, MiB |"
echo "|---|---|---|---|---|"
for bin in "${BINS[@]}"; do
  for repo in one many; do
    s=$(tr ' ' '\n' <<< "${SECS[$bin,$repo]}" | grep . | median)
    m=$(tr ' ' '\n' <<< "${MEM[$bin,$repo]}" | grep . | median)
    p=$(tr ' ' '\n' <<< "${PARSE[$bin,$repo]}" | grep . | median)
    label="1 branch"; [ "$repo" = many ] && label="1 + $BRANCHES branches"
    echo "| $bin | $ENTRIES entries, $COMMITS commits, $label | $s | $p | $(echo "scale=1; $m / 1024" | bc) |"
  done
done
echo
echo "Markdown bytes: $MD_BYTES"
