#!/usr/bin/env bash
# Cost of the near-duplicate check per `helix store` at 10k entries (docs/benchmarks.md,
# "Duplicates"). A server-mode code repository (the server is a closed loopback port: the
# entry stays pending) whose cached artifact holds 10k notes — the til corpus without its
# `elixir/` folder, replicated under renamed topic folders — stores held-out elixir notes
# three ways, interleaved by hyperfine in one run:
#   check:   `helix store` (validate, near-duplicate check, pending file, overlay)
#   force:   `helix store --force` (the same without the check: a plain store)
#   baseline `helix store` of the baseline binary (before duplicates existed), if given
# The pending directory is emptied before every run, so each store writes a one-entry
# overlay, as the first store of a session does.
#
# With INSTR=1, also the instructions each store executes (valgrind's callgrind, user space):
# a load-independent figure for a busy machine.
#
# Usage: benches/duplicates-store.sh      (SKIP_BUILD=1, HELIX=, BASELINE=, N=10000, RUNS=40,
#                                          INSTR=1)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CORPUS=${CORPUS:-$ROOT/corpora/til}
N=${N:-10000}
RUNS=${RUNS:-40}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
HELIX=${HELIX:-$CARGO_TARGET_DIR/release/helix}
BASELINE=${BASELINE:-}
[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "needs hyperfine" >&2; exit 1; }
if [ -z "${SKIP_BUILD:-}" ]; then
    cargo build --release --locked -p helix-client-net --quiet
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-dup-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
KB=$WORK/kb
mkdir -p "$KB" "$WORK/repo" "$WORK/home"
# N notes: every topic but elixir, copied under t<k>-<topic>/ until there are N.
count=0
k=0
while [ "$count" -lt "$N" ]; do
    for f in "$CORPUS"/*/*.md; do
        topic=$(basename "$(dirname "$f")")
        [ "$topic" = elixir ] && continue
        mkdir -p "$KB/t$k-$topic"
        cp "$f" "$KB/t$k-$topic/"
        count=$((count + 1))
        [ "$count" -ge "$N" ] && break
    done
    k=$((k + 1))
done
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'server = "http://127.0.0.1:%s"\nprojects = ["bench"]\n' "$PORT" > "$WORK/repo/.helix.toml"
export HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/config XDG_CACHE_HOME=$WORK/home/cache \
    XDG_DATA_HOME=$WORK/home/data
CACHE=$XDG_CACHE_HOME/helix/127.0.0.1_$PORT/bench
mkdir -p "$CACHE"
"$HELIX" build "$KB" --no-git --project bench -o "$CACHE/index.hix" >/dev/null
# Three held-out notes, as bodies to store.
i=0
for f in "$CORPUS"/elixir/{append-to-a-keyword-list,pattern-matching-in-anonymous-functions,string-interpolation-with-just-about-anything}.md; do
    cp "$f" "$WORK/note$i.md"
    i=$((i + 1))
done
cd "$WORK/repo"
STORE='--topic bench --title "Held-out note {n}" --file '"$WORK"'/note{n}.md'
args=(-N -w 3 -r "$RUNS" -L n 0,1,2 --prepare "rm -rf $XDG_DATA_HOME/helix/pending $XDG_DATA_HOME/helix/servers"
    --export-markdown "$WORK/result.md" --style none
    "$HELIX store $STORE" "$HELIX store --force $STORE")
if [ -n "$BASELINE" ]; then
    args+=("$BASELINE store $STORE")
fi
hyperfine "${args[@]}" > /dev/null
# Commands named by what they are: check (the default), force (no check), baseline.
sed -e "s|\`$HELIX store --force [^\`]*note\([0-9]\)\.md\`|force, note \1|" \
    -e "s|\`$HELIX store [^\`]*note\([0-9]\)\.md\`|check, note \1|" \
    -e "s|\`${BASELINE:-/nonexistent} store [^\`]*note\([0-9]\)\.md\`|baseline, note \1|" \
    "$WORK/result.md"
if [ -n "${INSTR:-}" ]; then
    printf '\n| store | note 0 | note 1 | note 2 |\n|---|---:|---:|---:|\n'
    for kind in check force baseline; do
        case $kind in
            check) bin=$HELIX; extra=() ;;
            force) bin=$HELIX; extra=(--force) ;;
            baseline) [ -n "$BASELINE" ] || continue; bin=$BASELINE; extra=() ;;
        esac
        row="| $kind |"
        for n in 0 1 2; do
            rm -rf "$XDG_DATA_HOME/helix/pending" "$XDG_DATA_HOME/helix/servers"
            ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" store "${extra[@]}" \
                --topic bench --title "Held-out note $n" --file "$WORK/note$n.md" 2>&1 >/dev/null \
                | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
            row="$row $ir |"
        done
        echo "$row"
    done
fi
