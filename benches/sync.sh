#!/usr/bin/env bash
# `helix sync` after a one-entry commit: bytes on the wire and wall time of the whole
# artifact plain (the released client), zstd-coded and as a patch (this client), at several
# sizes; the server's one-time cost of each coding and patch, and its CPU per request of
# each form once cached. Real binaries on loopback; prints a Markdown table on stdout.
#
# Usage: benches/sync.sh [SIZES...]      e.g. benches/sync.sh til 10000 100000
#   til = the real corpus (corpora/til) as it is; N = it replicated to N entries
#   under new topic folders (as server/benches/bench.sh does).
# Env: HELIX_BENCH_BASELINE=DIR with the released helix, helix-net (default /work/baseline),
#      RUNS (default 10), CARGO_TARGET_DIR (default target).
# Needs: git, curl, hyperfine, python3.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
BASE=${HELIX_BENCH_BASELINE:-/work/baseline}
RUNS=${RUNS:-10}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/release
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(til 10000 100000)
log() { echo "bench: $*" >&2; }
for t in git curl hyperfine python3; do
  command -v $t >/dev/null || { echo "$t is needed" >&2; exit 1; }
done
for b in "$TARGET/helix" "$TARGET/helix-net" "$TARGET/helix-server" "$BASE/helix" "$BASE/helix-net"; do
  [ -x "$b" ] || { echo "missing $b (cargo build --release -p helix-client -p helix-client-net -p helix-server)" >&2; exit 1; }
done

WORK=$(mktemp -d)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com

# corpus N DEST: the real corpus, or replicated to N entries.
corpus() {
  python3 - "$CORPUS" "$1" "$2" <<'EOF'
import os, shutil, sys
src, n, dest = sys.argv[1], sys.argv[2], sys.argv[3]
files = sorted(os.path.relpath(os.path.join(d, f), src) for d, _, fs in os.walk(src)
               for f in fs if f.endswith('.md') and os.sep in os.path.relpath(os.path.join(d, f), src))
want = len(files) if n == 'til' else int(n)
k = 0
rnd = 0
while k < want:
    for rel in files:
        if k >= want:
            break
        topic, rest = rel.split(os.sep, 1)
        out = os.path.join(dest, topic if rnd == 0 else f"{topic}-r{rnd}", rest)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.copyfile(os.path.join(src, rel), out)
        k += 1
    rnd += 1
EOF
}

# cpu PID: utime+stime of a process in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
metric() { curl -s "$URL/metrics" | awk -v m="$1" -v f="$2" 'index($0, m"{project=\"bench\",form=\""f"\"}") == 1 {print $2}' | head -1; }

echo "| entries | artifact | form | bytes on the wire | ratio to the artifact | \`helix sync\` wall time (mean ± σ of $RUNS) | server, once per artifact or pair |"
echo "|---|---|---|---|---|---|---|"
CPU_ROWS=()
for size in "${SIZES[@]}"; do
  D="$WORK/$size"
  mkdir -p "$D"
  log "$size: corpus"
  corpus "$size" "$D/src"
  git init -q --bare -b main "$D/up.git"
  (cd "$D/src" && git init -q -b main && git add -A && git commit -q -m corpus && git push -q "$D/up.git" main)
  printf 'anonymous_loopback = true\n[[projects]]\nname = "bench"\nupstream = "%s"\npoll_interval_secs = 3600\n' "$D/up.git" > "$D/server.toml"
  "$TARGET/helix-server" --config "$D/server.toml" --data-dir "$D/data" --listen 127.0.0.1:0 > "$D/stdout" 2> "$D/server.log" &
  SPID=$!
  PIDS+=("$SPID")
  for _ in $(seq 1 600); do grep -q listening "$D/stdout" 2>/dev/null && break; sleep 0.05; done
  URL=$(sed -n 's/^listening on //p' "$D/stdout")
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/projects/bench/index")" = 200 ]; do sleep 0.1; done

  # Two machines holding artifact A: this client, and the released one.
  for who in new old; do
    H="$D/$who"
    mkdir -p "$H/home" "$H/code"
    printf 'server = "%s"\nprojects = ["bench"]\n' "$URL" > "$H/code/.helix.toml"
  done
  run() { # who args...: helix in that machine
    local who=$1; shift
    local bin=$TARGET/helix; [ "$who" = old ] && bin=$BASE/helix
    (cd "$D/$who/code" && HOME="$D/$who/home" XDG_CONFIG_HOME="$D/$who/home/.config" XDG_CACHE_HOME="$D/$who/home/.cache" \
      XDG_DATA_HOME="$D/$who/home/.local/share" HELIX_SYNC_MAX_AGE=off "$bin" "$@")
  }
  run new sync --quiet
  run old sync --quiet
  for who in new old; do cp -a "$D/$who/home" "$D/$who/home-A"; done
  ART=$(curl -s "$URL/v1/projects/bench/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact_bytes"])')

  log "$size: one-entry commit"
  (cd "$D/src" && mkdir -p bench-new && printf '# Fresh note\n\nSomething learned today about arm runners.\n' > bench-new/fresh-1.md \
    && git add -A && git commit -q -m fresh && git push -q "$D/up.git" main)
  curl -s -o /dev/null -X POST "$URL/v1/projects/bench/refresh?wait=1"
  ART2=$(curl -s "$URL/v1/projects/bench/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["artifact_bytes"])')
  HASH_A=$(python3 -c 'import glob,json,sys; m=json.load(open(glob.glob(sys.argv[1])[0])); print(m["etag"].split(chr(34))[1])' "$D/new/home-A/.cache/helix/*/bench/meta.json")
  # Before each timed run: the machine back at artifact A (for `zstd`, with no ETag in the
  # cache's metadata: no If-None-Match, no base, so the whole artifact).
  {
    echo '#!/bin/sh'
    echo "rm -rf \"$D/\$1/home\" && cp -a \"$D/\$1/home-A\" \"$D/\$1/home\""
    echo "[ \"\$2\" = noetag ] && python3 -c 'import glob,json,sys; p=glob.glob(sys.argv[1])[0]; m=json.load(open(p)); m[\"etag\"]=None; json.dump(m,open(p,\"w\"))' \"$D/\$1/home/.cache/helix/*/bench/meta.json\""
    echo 'exit 0'
  } > "$D/reset"
  chmod +x "$D/reset"

  # The first request of each form computes it (timed by the server's log), later ones
  # are served from memory: prime both, then time whole `helix sync` processes.
  curl -s -o /dev/null -H 'Accept-Encoding: zstd' "$URL/v1/projects/bench/index"
  curl -s -o /dev/null "$URL/v1/projects/bench/index?from=$HASH_A"
  curl -s -o /dev/null -H 'Accept-Encoding: gzip' "$URL/v1/projects/bench/index"
  ZMS=$(sed 's/\x1b\[[0-9;]*m//g' "$D/server.log" | sed -n 's/.*computed what="zstd coding" .* ms=\([0-9]*\).*/\1/p' | tail -1)
  PMS=$(sed 's/\x1b\[[0-9;]*m//g' "$D/server.log" | sed -n 's/.*computed what="patch" .* ms=\([0-9]*\).*/\1/p' | tail -1)
  GMS=$(sed 's/\x1b\[[0-9;]*m//g' "$D/server.log" | sed -n 's/.*computed what="gzip coding" .* ms=\([0-9]*\).*/\1/p' | tail -1)

  for form in identity zstd patch; do
    case $form in
      identity) who=old; prep="$D/reset old"; once="-" ;;
      # No ETag in the cache's metadata: no If-None-Match, no base, the whole artifact.
      zstd) who=new; prep="$D/reset new noetag"; once="zstd coding ${ZMS:-?} ms (gzip ${GMS:-?} ms)" ;;
      patch) who=new; prep="$D/reset new"; once="patch ${PMS:-?} ms" ;;
    esac
    n0=$(metric helix_index_responses_total $form); b0=$(metric helix_index_response_bytes_total $form)
    bin=$TARGET/helix; [ $who = old ] && bin=$BASE/helix
    hyperfine -N --runs "$RUNS" --prepare "$prep" --export-json "$D/$form.json" \
      "env HOME=$D/$who/home XDG_CONFIG_HOME=$D/$who/home/.config XDG_CACHE_HOME=$D/$who/home/.cache XDG_DATA_HOME=$D/$who/home/.local/share HELIX_SYNC_MAX_AGE=off sh -c 'cd $D/$who/code && exec $bin sync --quiet'" >&2
    n1=$(metric helix_index_responses_total $form); b1=$(metric helix_index_response_bytes_total $form)
    per=$(( (b1 - ${b0:-0}) / (n1 - ${n0:-0}) ))
    t=$(python3 -c "import json; r=json.load(open('$D/$form.json'))['results'][0]; print(f\"{r['mean']*1000:.0f} ± {r['stddev']*1000:.0f} ms\")")
    label=$size; [ "$size" = til ] && label="1,871 (til)"
    echo "| $label | $ART2 | $form | $per | $(python3 -c "print(f'{$per/$ART2:.4f}')") | $t | $once |"
  done

  # Server CPU per request of each form, once cached: 200 sequential requests each.
  for form in identity zstd patch 304; do
    case $form in
      identity) args=() ; q= ;;
      zstd) args=(-H 'Accept-Encoding: zstd'); q= ;;
      patch) args=(); q="?from=$HASH_A" ;;
      304) args=(-H "If-None-Match: \"$(curl -s -D - -o /dev/null "$URL/v1/projects/bench/index" | tr -d '\r' | sed -n 's/^etag: "\(.*\)"/\1/Ip')\""); q= ;;
    esac
    c0=$(cpu "$SPID")
    for _ in $(seq 1 200); do curl -s -o /dev/null "${args[@]}" "$URL/v1/projects/bench/index$q"; done
    c1=$(cpu "$SPID")
    CPU_ROWS+=("| $size | $form | $(python3 -c "print(f'{($c1-$c0)*1000/$(getconf CLK_TCK)/200:.2f}')") |")
  done
  kill "$SPID"; wait "$SPID" 2>/dev/null || true
  rm -rf "$D"
done
echo
echo "| entries | form (cached) | server CPU per request, ms (200 requests) |"
echo "|---|---|---|"
printf '%s\n' "${CPU_ROWS[@]}"
