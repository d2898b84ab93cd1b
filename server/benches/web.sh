#!/usr/bin/env bash
# helix-server's web view under load on loopback, with wrk against the release server:
#  - latency (p50, p99, max) and requests/s of the search, entry and project pages at
#    1,871 entries (corpora/til as is), 10k and 100k (til replicated under new paths, as
#    bench.sh does), at a team's load (8 connections) and a heavier one (64);
#  - an entry's first view (its git history read) against a later one, by curl;
#  - at 10k: bench.sh's 304s/s and stores/s alone and while a paced mix of page views
#    (~100/s) runs, alternated alone/loaded twice to show the noise.
# Needs: git, GNU tar, curl, wrk. Prints a Markdown summary on stdout, progress on stderr.
#
# Usage: server/benches/web.sh [DURATION_SECONDS]   (default 10 per measurement)
# Env: HELIX_BENCH_SERVER=BIN benchmarks that binary instead of building this checkout's;
#      HELIX_BENCH_CORPUS=DIR (default corpora/til);
#      HELIX_BENCH_SIZES="all 10000 100000" (all: the corpus as is);
#      HELIX_BENCH_INTERFERE="10000" sizes that also get the 304/stores runs ("" for none);
#      HELIX_BENCH_CONNS=8, HELIX_BENCH_HEAVY=64 wrk connections; HELIX_BENCH_PACE=100
#      page views/s during the interference runs.
set -euo pipefail

DUR=${1:-10}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
SIZES=${HELIX_BENCH_SIZES:-all 10000 100000}
INTERFERE=${HELIX_BENCH_INTERFERE-10000}
CONNS=${HELIX_BENCH_CONNS:-8}
HEAVY=${HELIX_BENCH_HEAVY:-64}
PACE=${HELIX_BENCH_PACE:-100}
WARM=3          # seconds of warm-up per page kind
IDS=1000        # entry ids the entry page cycles through
COLD=200        # other entry ids, each viewed once (then once more) by curl
TARGET_MS=15    # the issue's p99 target
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target-server}
BIN=${HELIX_BENCH_SERVER:-$CARGO_TARGET_DIR/release/helix-server}

# shellcheck source=lib.sh
. "$ROOT/server/benches/lib.sh"
log() { echo "web: $*" >&2; }
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install -y wrk)" >&2; exit 1; }

if [ -z "${HELIX_BENCH_SERVER:-}" ]; then
  log "building release binary"
  (cd "$ROOT" && cargo build --release -q -p helix-server)
fi

WORK=$(mktemp -d)
SERVER_PID=
PACED_PID=
cleanup() {
  if [ -n "$PACED_PID" ]; then kill "$PACED_PID" 2>/dev/null || true; wait "$PACED_PID" 2>/dev/null || true; fi
  bench_stop
  rm -rf "$WORK"
}
trap cleanup EXIT

# --- wrk scripts ---------------------------------------------------------------------------
# paths.lua FILE: cycles through FILE's paths, one a line; each thread starts elsewhere.
cat > "$WORK/paths.lua" <<'EOF'
local paths = {}
local i = 0
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end
function init(args)
  for line in io.lines(args[1]) do paths[#paths + 1] = line end
  i = (tid or 0) * math.floor(#paths / 2)
end
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
EOF
# paced.lua FILE MS: the same, each connection waiting MS ms before each request.
{
  cat "$WORK/paths.lua"
  cat <<'EOF'
local pause = 0
local base_init = init
function init(args)
  base_init(args)
  pause = tonumber(args[2])
end
function delay()
  return pause
end
EOF
} > "$WORK/paced.lua"
bench_post_lua "$WORK/post.lua"

# --- wrk output --------------------------------------------------------------------------
# wrk_stat OUTPUT p50|p99|max|rps|bad: a figure of wrk --latency's output (ms for latencies;
# bad = non-2xx/3xx responses + socket errors).
wrk_stat() {
  echo "$1" | awk -v want="$2" '
    function ms(v) {
      if (v ~ /us$/) return substr(v, 1, length(v) - 2) / 1000
      if (v ~ /ms$/) return substr(v, 1, length(v) - 2) + 0
      if (v ~ /m$/) return substr(v, 1, length(v) - 1) * 60000
      if (v ~ /s$/) return substr(v, 1, length(v) - 1) * 1000
      return v + 0
    }
    /^ *Latency / && !max { max = ms($4) }
    /^ *50% / { p50 = ms($2) }
    /^ *99% / { p99 = ms($2) }
    /^Requests\/sec:/ { rps = $2 }
    /Non-2xx or 3xx responses:/ { bad += $NF }
    /Socket errors:/ { gsub(",", ""); bad += $4 + $6 + $8 + $10 }
    END {
      if (want == "p50") printf "%.2f", p50
      else if (want == "p99") printf "%.2f", p99
      else if (want == "max") printf "%.1f", max
      else if (want == "rps") printf "%.0f", rps
      else printf "%d", bad
    }'
}

# quantiles < ms-per-line: "p50 p99 max" of the numbers on stdin.
quantiles() {
  sort -n | awk '{ v[NR] = $1 } END {
    i50 = int(NR * 0.5 + 0.999999); i99 = int(NR * 0.99 + 0.999999)
    printf "%.2f %.2f %.1f", v[i50], v[i99], v[NR] }'
}

# html_esc TEXT: TEXT as the pages escape it.
html_esc() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' -e 's/"/\&quot;/g' -e "s/'/\&#39;/g"; }

# wrk_run NAME CONNS PATHS [wrk options]: runs paths.lua over PATHS for DUR, prints to
# stderr, and leaves the output in $OUT.
wrk_run() {
  local name=$1 conns=$2 paths=$3
  shift 3
  log "$name: wrk -t2 -c$conns -d${DUR}s"
  OUT=$(wrk -t2 -c"$conns" -d"${DUR}s" --timeout 10s --latency "$@" -s "$WORK/paths.lua" \
    -H "$READ" "$URL" "$paths")
  echo "$OUT" >&2
}

LAT_ROWS=()      # rows of the latency table
EXTRA_ROWS=()    # rows of the first-view and content-check table
TARGETS=()       # "size kind p99 met|not met"
INTER_ROWS=()

# --- one corpus size ---------------------------------------------------------------------
run_size() {
  local size=$1 d="$WORK/$1"
  mkdir -p "$d"
  log "size $size: generating the upstream from $CORPUS"
  bench_upstream "$CORPUS" "$size" "$d/src" "$d/up.git"
  local entries
  entries=$(git -C "$d/src" ls-files | wc -l)
  cat > "$d/server.toml" <<EOF
[[projects]]
name = "bench"
upstream = "$d/up.git"
poll_interval_secs = 3600
EOF
  local rtoken wtoken
  rtoken=$("$BIN" --config "$d/server.toml" token add --project bench --name reader --scope read 2>/dev/null)
  wtoken=$("$BIN" --config "$d/server.toml" token add --project bench --name writer --scope read,write 2>/dev/null)
  READ="Authorization: Bearer $rtoken"
  WRITE="Authorization: Bearer $wtoken"
  log "size $size: $entries entries; starting the server"
  bench_start "$BIN" "$d/server.toml" "$d"
  local t0 t1
  t0=$(date +%s.%N)
  for _ in $(seq 1 3000); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$READ" "$URL/p/bench")" = 200 ] && break
    sleep 0.2
  done
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$READ" "$URL/p/bench")" = 200 ] \
    || { log "the project page never answered 200"; tail -20 "$d/server.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  log "size $size: serving after $(echo "$t1 - $t0" | bc) s"

  # The paths. Entry ids: a fixed shuffle of every id, IDS for wrk and COLD others.
  git -C "$d/src" ls-files | sort | shuf --random-source=<(yes) > "$d/ids"
  head -n "$IDS" "$d/ids" | sed 's|^|/p/bench/e/|' > "$d/entry.paths"
  sed -n "$((IDS + 1)),$((IDS + COLD))p" "$d/ids" > "$d/cold.ids"
  # Queries: 50 titles of plain words, each cut to its first 2 or 3 words that are not
  # stop words; the title is kept to check that the page finds it.
  (cd "$CORPUS" && find . -mindepth 2 -name '*.md' -print0 | sort -z \
    | xargs -0 awk 'FNR == 1 && sub(/^# /, "")') | grep -E '^[A-Za-z0-9 ]+$' | shuf --random-source=<(yes) | awk '
    BEGIN { split("a an and are as at be by can for from how in into is it of on or out the to up use using with your you all its that this when", s, " ")
            for (i in s) stop[s[i]] = 1 }
    { want = (NR % 2) ? 2 : 3; q = ""; n = 0
      for (i = 1; i <= NF && n < want; i++) { w = tolower($i); if (!(w in stop)) { q = q (n ? "+" : "") w; n++ } }
      if (n == want && !(q in seen) && k < 50) { seen[q] = 1; print q "\t" $0; k++ } }' > "$d/queries"
  cut -f1 "$d/queries" | sed 's|^|/p/bench/search?q=|' > "$d/search.paths"
  # Project pages: the first, pages 1-9, and 20 topics.
  {
    echo /p/bench
    for n in 1 2 3 4 5 6 7 8 9; do echo "/p/bench?page=$n"; done
    git -C "$d/src" ls-files | cut -d/ -f1 | sort -u | shuf -n 20 --random-source=<(yes) \
      | sed 's|^|/p/bench?topic=|'
  } > "$d/project.paths"
  # The paced mix: entry, search and project pages in turn.
  paste -d '\n' "$d/entry.paths" \
    <(for _ in $(seq 1 $((IDS / 50 + 1))); do cat "$d/search.paths"; done | head -n "$IDS") \
    <(for _ in $(seq 1 $((IDS / 30 + 1))); do cat "$d/project.paths"; done | head -n "$IDS") \
    > "$d/mix.paths"

  # Content: one page of each kind holds what it should.
  local q title id sz_s sz_e sz_p check=()
  q=$(head -n1 "$d/queries" | cut -f1)
  title=$(head -n1 "$d/queries" | cut -f2)
  curl -s -H "$READ" "$URL/p/bench/search?q=$q" > "$d/search.html"
  grep -qF "$(html_esc "$title")" "$d/search.html" && check+=("search finds \"$title\"") \
    || check+=("**search for $q misses \"$title\"**")
  id=$(head -n1 "$d/ids")
  title=$(sed -n '1s/^# //p' "$d/src/$id")
  curl -s -H "$READ" "$URL/p/bench/e/$id" > "$d/entry.html"
  grep -qF "<h1>$(html_esc "$title")</h1>" "$d/entry.html" && check+=("entry shows its title") \
    || check+=("**entry $id lacks its title**")
  curl -s -H "$READ" "$URL/p/bench" > "$d/project.html"
  grep -qF "$entries entries in" "$d/project.html" && check+=("project page counts $entries entries") \
    || check+=("**project page does not count $entries entries**")
  sz_s=$(wc -c < "$d/search.html"); sz_e=$(wc -c < "$d/entry.html"); sz_p=$(wc -c < "$d/project.html")

  # First views of entries (the history read from git) against second views (cached).
  log "size $size: first and second views of $COLD entries"
  local first second
  first=$(while IFS= read -r i; do
    curl -s -o /dev/null -w '%{time_total}\n' -H "$READ" "$URL/p/bench/e/$i"; done < "$d/cold.ids" \
    | awk '{ print $1 * 1000 }' | quantiles)
  second=$(while IFS= read -r i; do
    curl -s -o /dev/null -w '%{time_total}\n' -H "$READ" "$URL/p/bench/e/$i"; done < "$d/cold.ids" \
    | awk '{ print $1 * 1000 }' | quantiles)

  local label kind c
  label=$(echo "$entries" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta')
  for kind in search entry project; do
    log "size $size: $kind page warm-up"
    wrk -t2 -c"$CONNS" -d"${WARM}s" -s "$WORK/paths.lua" -H "$READ" "$URL" "$d/$kind.paths" > /dev/null
    for c in "$CONNS" "$HEAVY"; do
      wrk_run "size $size: $kind page" "$c" "$d/$kind.paths"
      local p99
      p99=$(wrk_stat "$OUT" p99)
      LAT_ROWS+=("| $label | $kind | $c | $(wrk_stat "$OUT" p50) | $p99 | $(wrk_stat "$OUT" max) | $(wrk_stat "$OUT" rps) | $(wrk_stat "$OUT" bad) |")
      if [ "$c" = "$CONNS" ]; then
        if awk -v p="$p99" -v t="$TARGET_MS" 'BEGIN { exit !(p <= t) }'; then
          TARGETS+=("$label $kind: p99 $p99 ms, **met**")
        else
          TARGETS+=("$label $kind: p99 $p99 ms, **not met**")
        fi
      fi
    done
  done
  read -r f50 f99 fmax <<< "$first"
  read -r s50 s99 smax <<< "$second"
  EXTRA_ROWS+=("| $label | $f50 / $f99 / $fmax | $s50 / $s99 / $smax | $sz_s / $sz_e / $sz_p | $(IFS=';'; echo "${check[*]}" | sed 's/;/; /g') |")

  case " $INTERFERE " in *" $size "*) interfere "$d" "$label" ;; esac
  bench_stop
  rm -rf "$d"
}

# --- 304s/s and stores/s, alone and with pages --------------------------------------------
interfere() {
  local d=$1 label=$2 etag ms
  etag=$(curl -s -D - -o /dev/null -H "$READ" "$URL/v1/projects/bench/index" | tr -d '\r' | sed -n 's/^etag: //Ip')
  ms=$((CONNS / 2 * 1000 / PACE))
  local -A got=()
  local pages=() kind run mode
  for kind in 304 stores; do
    for run in 1 2; do
      for mode in alone loaded; do
        if [ "$mode" = loaded ]; then
          log "interference: $PACE page views/s (wrk -t2 -c$((CONNS / 2)), ${ms} ms apart per connection)"
          wrk -t2 -c$((CONNS / 2)) -d"$((DUR + 2))s" --timeout 10s --latency -s "$WORK/paced.lua" \
            -H "$READ" "$URL" "$d/mix.paths" "$ms" > "$d/paced.out" &
          PACED_PID=$!
          sleep 1
        fi
        log "interference: $kind, $mode, run $run"
        if [ "$kind" = 304 ]; then
          OUT=$(wrk -t2 -c32 -d"${DUR}s" -H "$READ" -H "If-None-Match: $etag" "$URL/v1/projects/bench/index")
        else
          OUT=$(wrk -t2 -c50 -d"${DUR}s" --timeout 30s -s "$WORK/post.lua" -H "$WRITE" \
            "$URL/v1/projects/bench/entries" "$mode$run-")
        fi
        echo "$OUT" >&2
        got[$kind.$mode.$run]=$(wrk_stat "$OUT" rps)
        got[$kind.$mode.$run.bad]=$(wrk_stat "$OUT" bad)
        if [ "$mode" = loaded ]; then
          wait "$PACED_PID" || true
          PACED_PID=
          cat "$d/paced.out" >&2
          local p
          p=$(cat "$d/paced.out")
          pages+=("$(wrk_stat "$p" rps)/s, p99 $(wrk_stat "$p" p99) ms, bad $(wrk_stat "$p" bad)")
        fi
      done
    done
  done
  local k a1 a2 l1 l2 i=0
  for k in 304 stores; do
    a1=${got[$k.alone.1]} a2=${got[$k.alone.2]} l1=${got[$k.loaded.1]} l2=${got[$k.loaded.2]}
    INTER_ROWS+=("| $label | $( [ "$k" = 304 ] && echo "304 requests/s (wrk -t2 -c32)" || echo "stores acknowledged/s (wrk -t2 -c50)") | $a1, $a2 | $l1, $l2 | $(awk -v a="$a1" -v b="$a2" 'BEGIN { printf "%.2f", b / a }') | **$(awk -v a="$a1" -v b="$a2" -v x="$l1" -v y="$l2" 'BEGIN { printf "%.2f", (x + y) / (a + b) }')** | ${pages[$i]}; ${pages[$((i + 1))]} | $((${got[$k.alone.1.bad]} + ${got[$k.alone.2.bad]} + ${got[$k.loaded.1.bad]} + ${got[$k.loaded.2.bad]})) |")
    i=$((i + 2))
  done
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)
for size in $SIZES; do run_size "$size"; done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

cat <<EOF
Page latency, wrk -t2 -d${DUR}s --latency after a ${WARM} s warm-up per kind; each request a
different page of its kind (search: 50 queries from titles; entry: $IDS ids; project: first
page, pages 1-9, 20 topics). ms; "bad" = non-2xx responses + socket errors.

| entries | page | connections | p50 | p99 | max | requests/s | bad |
|---:|---|---:|---:|---:|---:|---:|---:|
$(printf '%s\n' "${LAT_ROWS[@]}")

Target p99 ≤ ${TARGET_MS} ms at ${CONNS} connections: $(IFS=';'; echo "${TARGETS[*]}" | sed 's/;/; /g').

Entry pages viewed once by curl, one at a time ($COLD ids not among the $IDS above: the first
view reads the file's history from git), then once more (cached per commit); p50 / p99 / max
ms. Bytes of one search, entry and project page.

| entries | first view | second view | bytes: search / entry / project | content |
|---:|---:|---:|---:|---|
$(printf '%s\n' "${EXTRA_ROWS[@]}")
EOF
if [ ${#INTER_ROWS[@]} -gt 0 ]; then
cat <<EOF

bench.sh's 304s and stores, ${DUR} s each, alone and while paced page views run (wrk
-t2 -c$((CONNS / 2)), a mix of entry, search and project pages, target ${PACE}/s), in the order
alone, loaded, alone, loaded. Noise = alone run 2 / run 1; effect = loaded / alone (sums).

| entries | measure | alone | with pages | noise | effect | pages achieved (per loaded run) | bad |
|---:|---|---:|---:|---:|---:|---|---:|
$(printf '%s\n' "${INTER_ROWS[@]}")
EOF
fi
cat <<EOF

$(date -u +%Y-%m-%d), $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- server index-format 2>/dev/null || echo " (modified)"), load average $LOAD0 before and $LOAD1 after, $(( $(date +%s) - START )) s.
EOF
