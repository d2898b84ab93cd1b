#!/usr/bin/env bash
# Does leaving out the blobs helix never reads pay? A forge-like knowledge repository:
# 10k Markdown entries (corpora/til, replicated) beside binary assets
# (incompressible "images" and "fonts", replaced once in history, as docs repositories
# hold them), fetched the way helix-server fetches (one branch, into a bare mirror):
#   full            git fetch of the branch (what the server does)
#   blob:limit=1m   partial clone leaving out blobs over 1 MiB (entries are at most 1 MiB)
#   blob:none+md    partial clone without blobs, then one fetch of the Markdown blobs the
#                   tip's tree names (what ingest reads)
# For each: wall time, bytes on disk of the mirror, and for the incremental case the time
# of a second fetch after one new commit. Prints a Markdown table on stdout.
#
# Usage: server/benches/partial-clone.sh [ASSET_MB]   (default 80)
set -euo pipefail
export LC_ALL=C

ASSET_MB=${1:-80}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${HELIX_BENCH_CORPUS:-$ROOT/corpora/til}
ENTRIES=${HELIX_BENCH_ENTRIES:-10000}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export GIT_CONFIG_NOSYSTEM=1 HOME=$WORK
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=b@example.com
log() { echo "partial: $*" >&2; }

log "upstream: $ENTRIES entries + ${ASSET_MB} MB of assets (twice, over two commits)"
git init -q -b main "$WORK/src"
mapfile -t FILES < <(find "$CORPUS" -mindepth 2 -name '*.md' | sort)
for n in $(seq 0 $((ENTRIES - 1))); do
  f=${FILES[$(( n % ${#FILES[@]} ))]}
  rel=${f#"$CORPUS"/}
  dest="$WORK/src/${rel%%/*}-r$(( n / ${#FILES[@]} ))/${rel#*/}"
  mkdir -p "$(dirname "$dest")"
  cp "$f" "$dest"
done
assets() { # $1: seed
  mkdir -p "$WORK/src/assets/img" "$WORK/src/assets/fonts"
  local count=$(( ASSET_MB * 1024 / 200 ))
  for i in $(seq 1 "$count"); do
    head -c $(( 100 * 1024 + (i * 7919 % 200) * 1024 )) /dev/urandom > "$WORK/src/assets/img/shot-$i.png"
  done
  for i in 1 2 3 4; do head -c $((2 * 1024 * 1024)) /dev/urandom > "$WORK/src/assets/fonts/font-$i.woff2"; done

}
assets 1
git -C "$WORK/src" add -A && git -C "$WORK/src" commit -q -m "knowledge and assets"
assets 2
git -C "$WORK/src" add -A && git -C "$WORK/src" commit -q -m "new screenshots"
git init -q --bare -b main "$WORK/up.git"
git -C "$WORK/up.git" config uploadpack.allowFilter true
git -C "$WORK/up.git" config uploadpack.allowAnySHA1InWant true
git -C "$WORK/src" push -q "$WORK/up.git" main
git -C "$WORK/up.git" gc -q
UP_BYTES=$(du -sb "$WORK/up.git" | cut -f1)

now() { date +%s.%N; }
mirror() { # $1 dir, $2 filter or ""
  git init -q --bare "$1"
  if [ -n "$2" ]; then
    git -C "$1" config remote.origin.url "$WORK/up.git"
    git -C "$1" config remote.origin.promisor true
    git -C "$1" config remote.origin.partialclonefilter "$2"
  fi
}
fetch() { # $1 dir, $2 filter or ""
  if [ -n "$2" ]; then
    git -C "$1" -c core.bigFileThreshold=1m fetch -q --no-tags --filter="$2" origin +refs/heads/main:refs/heads/main
  else
    git -C "$1" -c core.bigFileThreshold=1m fetch -q --no-tags "$WORK/up.git" +refs/heads/main:refs/heads/main
  fi
}
md_blobs() { # Markdown blobs of the tip that the mirror lacks (asking must not fetch them)
  git -C "$1" ls-tree -r main | awk '$2 == "blob" && $4 ~ /\.md$/ {print $3}' \
    | GIT_NO_LAZY_FETCH=1 git -C "$1" cat-file --batch-check='%(objectname) %(objecttype)' 2>/dev/null \
    | awk '$2 == "missing" {print $1}'
}
fetch_md() {
  local want
  want=$(md_blobs "$1")
  [ -z "$want" ] && return 0
  # shellcheck disable=SC2086
  git -C "$1" -c fetch.negotiationAlgorithm=noop fetch -q --no-tags --filter=blob:none origin $want
}

declare -A T D I
for mode in full limit none; do
  dir=$WORK/m-$mode
  case $mode in full) f="" ;; limit) f="blob:limit=1m" ;; none) f="blob:none" ;; esac
  mirror "$dir" "$f"
  s=$(now)
  fetch "$dir" "$f"
  [ "$mode" = none ] && fetch_md "$dir"
  e=$(now)
  T[$mode]=$(echo "$e - $s" | bc)
  D[$mode]=$(du -sb "$dir" | cut -f1)
  missing=$(md_blobs "$dir" | wc -l)
  log "$mode: ${T[$mode]} s, ${D[$mode]} bytes, markdown blobs missing: $missing"
done

log "one more commit (a new entry and a new screenshot), fetched again"
mkdir -p "$WORK/src/notes-new" && echo "# New note" > "$WORK/src/notes-new/new-note.md"
head -c 300000 /dev/urandom > "$WORK/src/assets/img/new.png"
git -C "$WORK/src" add -A && git -C "$WORK/src" commit -q -m more && git -C "$WORK/src" push -q "$WORK/up.git" main
for mode in full limit none; do
  dir=$WORK/m-$mode
  case $mode in full) f="" ;; limit) f="blob:limit=1m" ;; none) f="blob:none" ;; esac
  s=$(now)
  fetch "$dir" "$f"
  [ "$mode" = none ] && fetch_md "$dir"
  e=$(now)
  I[$mode]=$(echo "$e - $s" | bc)
done

mib() { echo "scale=1; $1 / 1048576" | bc; }
echo "| mirror of a ${ENTRIES}-entry repository with $((ASSET_MB * 2)) MB of assets in history (upstream $(mib "$UP_BYTES") MiB packed) | first fetch, s | mirror on disk, MiB | next fetch (1 entry + 1 image), s |"
echo "|---|---|---|---|"
echo "| full fetch of the branch (helix-server) | ${T[full]} | $(mib "${D[full]}") | ${I[full]} |"
echo "| \`--filter=blob:limit=1m\` | ${T[limit]} | $(mib "${D[limit]}") | ${I[limit]} |"
echo "| \`--filter=blob:none\`, then the tip's Markdown blobs | ${T[none]} | $(mib "${D[none]}") | ${I[none]} |"
