#!/usr/bin/env bash
# Semantic search's cost at compile time: a cold compile of a corpus (default corpora/til,
# every note) with and without a `[semantic]` model, then a one-entry commit, each timed by
# the server's own `compiled new artifact` log line (seconds, embed_ms, embedded). A cold
# compile of many entries is served first without vectors while they are embedded in the
# background; the `all vectors` row is the compile that brought the last of them, its
# seconds counted from the server's start (wall clock, model load included), with the CPU
# seconds the server had used by then (steadier than the wall clock on a busy machine).
#
# Usage: [HELIX_BENCH_ENTRIES=N] [HELIX_BENCH_POST=1] server/benches/semantic.sh MODEL_DIR [BINARY]
#   (default binary: target/release/helix-server; MODEL_DIR: e.g. target/models/all-MiniLM-L6-v2,
#    or a tiny model written by `cargo run -p helix-server --example tiny_model -- DIR`;
#    HELIX_BENCH_POST=1: then time a store sent during a cold compile with the model;
#    HELIX_BENCH_POST=only: that alone)
set -euo pipefail
MODEL=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${2:-$ROOT/target/release/helix-server}
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
ENTRIES=${HELIX_BENCH_ENTRIES:-all}
. "$ROOT/server/benches/lib.sh"
WORK=$(mktemp -d)
trap 'bench_stop; rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK

bench_upstream "$CORPUS" "$ENTRIES" "$WORK/src" "$WORK/up.git"
first=$(cd "$WORK/src" && find . -mindepth 2 -name '*.md' | sort | awk 'NR == 1')

# config DIR SEMANTIC: DIR/server.toml, with the model if SEMANTIC is not empty.
config() {
  mkdir -p "$1"
  # TOML: top-level keys first, then tables.
  { printf 'anonymous_loopback = true\n\n'
    [ -n "$2" ] && printf '[semantic]\nmodel = "%s"\n\n' "$MODEL"
    printf '[[projects]]\nname = "til"\nupstream = "%s"\npoll_interval_secs = 3600\n' "$WORK/up.git"
  } > "$1/server.toml"
}

# run NAME SEMANTIC: cold compile, the compile with every vector, then a one-entry commit;
# prints three table rows.
run() {
  local name=$1 semantic=$2 dir="$WORK/$1" t0 t1 n
  cpu=
  config "$dir" "$semantic"
  t0=$(date +%s.%N)
  RUST_LOG=info bench_start "$BIN" "$dir/server.toml" "$dir"
  for _ in $(seq 1 72000); do grep -q "compiled new artifact" "$dir/server.log" && break; sleep 0.05; done
  row "$name" cold "$dir/server.log" 1
  for _ in $(seq 1 72000); do n=$(complete "$dir/server.log") && break; sleep 0.05; done
  t1=$(date +%s.%N)
  cpu=$(cpu_secs "$SERVER_PID")
  row "$name" "all vectors" "$dir/server.log" "$n" "$(awk "BEGIN { print $t1 - $t0 }")"
  cpu=
  (cd "$WORK/src" && printf '\nOne more line.\n' >> "$first" && git commit -qam "one entry" && git push -q "$WORK/up.git" main)
  curl -sf -X POST "$URL/v1/projects/til/refresh?wait=1" > /dev/null
  for _ in $(seq 1 600); do [ "$(grep -c "compiled new artifact" "$dir/server.log")" -gt "$n" ] && break; sleep 0.05; done
  row "$name" one-entry "$dir/server.log" $((n + 1))
  bench_stop
  (cd "$WORK/src" && git reset -q --hard HEAD~1 && git push -qf "$WORK/up.git" main)
}

# post: with the model, a store sent 2 s after the server started listening (while the
# cold compile's entries are embedded): how long until it is acknowledged.
post() {
  local dir="$WORK/post" got
  config "$dir" yes
  RUST_LOG=info bench_start "$BIN" "$dir/server.toml" "$dir"
  sleep 2
  # Not -f: a store held up past the server's request timeout answers an error, reported.
  got=$(curl -s -o /dev/null -w '%{http_code} after %{time_total} s' -X POST -H 'Content-Type: application/json' \
    -d '{"topic":"bench-writes","title":"Stored during the cold compile","body":"Learned the hard way."}' \
    "$URL/v1/projects/til/entries" || true)
  echo
  echo "A store sent 2 s into the cold compile with $(basename "$MODEL"): HTTP $got."
  bench_stop
  (cd "$WORK/src" && git push -qf "$WORK/up.git" main)
}

# line LOG N: the N-th compile's log line, without colours.
line() { grep "compiled new artifact" "$1" | sed -n "${2}p" | sed 's/\x1b\[[0-9;]*m//g'; }

# complete LOG: prints the number of the first compile with no background embedding left
# (from a server that logs no `embedding`, which embeds while it compiles: the first);
# fails while there is none. One awk a poll: a loop of greps would take CPU from the
# server it times.
complete() {
  awk '/compiled new artifact/ {
    n++; gsub(/\033\[[0-9;]*m/, "")
    if ($0 !~ / embedding=/ || $0 ~ / embedding=0 /) { print n; found = 1; exit }
  } END { if (!found) exit 1 }' "$1"
}

# cpu_secs PID: the CPU seconds (user and system) process PID has used so far.
cpu_secs() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat"; }

# row NAME WHAT LOG N [WALL]: the N-th compile's figures (seconds: WALL if given).
row() {
  local l secs entries embed embedded bytes rate
  l=$(line "$3" "$4")
  secs=${5:-$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<< "$l")}
  entries=$(sed -n 's/.* entries=\([0-9]*\).*/\1/p' <<< "$l")
  bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<< "$l")
  embed=$(sed -n 's/.*embed_ms=\([0-9]*\).*/\1/p' <<< "$l")
  embedded=$(sed -n 's/.*embedded=\([0-9]*\).*/\1/p' <<< "$l")
  rate=$(awk "BEGIN { printf \"%.1f\", $entries / $secs }")
  printf '| %s | %s | %s | %s | %.3f | %s | %s | %s | %s |\n' "$1" "$2" "$entries" "$bytes" "$secs" "$rate" "$embed" "$embedded" "${cpu:-}"
}

if [ "${HELIX_BENCH_POST:-0}" != only ]; then
  echo "| model | compile | entries | artifact bytes | seconds | entries/s | embed ms | embedded here | server CPU s |"
  echo "|---|---|---|---|---|---|---|---|---|"
  run none ""
  run "$(basename "$MODEL")" yes
fi
if [ "${HELIX_BENCH_POST:-0}" != 0 ]; then post; fi
