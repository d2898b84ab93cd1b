#!/usr/bin/env bash
# Semantic search's cost at compile time: a cold compile of a corpus (default corpora/til,
# every note) with and without a `[semantic]` model, then a one-entry commit, each timed by
# the server's own `compiled new artifact` log line (seconds, embed_ms, embedded).
#
# Usage: [HELIX_BENCH_ENTRIES=N] server/benches/semantic.sh MODEL_DIR [BINARY]
#   (default binary: target/release/helix-server; MODEL_DIR: e.g. target/models/all-MiniLM-L6-v2,
#    or a tiny model written by `cargo run -p helix-server --example tiny_model -- DIR`)
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

# run NAME SEMANTIC: cold compile, then a one-entry commit; prints two table rows.
run() {
  local name=$1 semantic=$2 dir="$WORK/$1"
  mkdir -p "$dir"
  # TOML: top-level keys first, then tables.
  { printf 'anonymous_loopback = true\n\n'
    [ -n "$semantic" ] && printf '[semantic]\nmodel = "%s"\n\n' "$MODEL"
    printf '[[projects]]\nname = "til"\nupstream = "%s"\npoll_interval_secs = 3600\n' "$WORK/up.git"
  } > "$dir/server.toml"
  RUST_LOG=info bench_start "$BIN" "$dir/server.toml" "$dir"
  for _ in $(seq 1 36000); do grep -q "compiled new artifact" "$dir/server.log" && break; sleep 0.05; done
  row "$name" cold "$dir/server.log" 1
  (cd "$WORK/src" && printf '\nOne more line.\n' >> "$first" && git commit -qam "one entry" && git push -q "$WORK/up.git" main)
  curl -sf -X POST "$URL/v1/projects/til/refresh?wait=1" > /dev/null
  for _ in $(seq 1 600); do [ "$(grep -c "compiled new artifact" "$dir/server.log")" -ge 2 ] && break; sleep 0.05; done
  row "$name" one-entry "$dir/server.log" 2
  bench_stop
  (cd "$WORK/src" && git reset -q --hard HEAD~1 && git push -qf "$WORK/up.git" main)
}

# row NAME WHAT LOG N: the N-th compile's figures.
row() {
  local line secs entries embed embedded bytes
  line=$(grep "compiled new artifact" "$3" | sed -n "${4}p" | sed 's/\x1b\[[0-9;]*m//g')
  secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<< "$line")
  entries=$(sed -n 's/.* entries=\([0-9]*\).*/\1/p' <<< "$line")
  bytes=$(sed -n 's/.* bytes=\([0-9]*\).*/\1/p' <<< "$line")
  embed=$(sed -n 's/.*embed_ms=\([0-9]*\).*/\1/p' <<< "$line")
  embedded=$(sed -n 's/.*embedded=\([0-9]*\).*/\1/p' <<< "$line")
  printf '| %s | %s | %s | %s | %.3f | %s | %s |\n' "$1" "$2" "$entries" "$bytes" "$secs" "$embed" "$embedded"
}

echo "| model | compile | entries | artifact bytes | seconds | embed ms | embedded |"
echo "|---|---|---|---|---|---|---|"
run none ""
run "$(basename "$MODEL")" yes
