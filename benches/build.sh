#!/usr/bin/env bash
# Build-time bench: how long the release binaries take from an empty target directory (the
# crates already downloaded), as a user installs them, for this checkout and for a baseline
# commit, in one run. Prints one line per command: seconds, and target sizes.
#
# Usage: benches/build.sh [BASELINE_REF]   (default 8f29b79, before the build work)
#
# The baseline installs as its README said: `cargo build --release -p helix-server`, then
# `cargo install --path client` and `--path client-net`; this checkout with `cargo xtask
# install`, and for comparison with the two `cargo install` runs its README names. Each
# runs in its own git worktree and target directory under a temp dir; nothing of the
# checkout's own target/ is touched. Takes about 25 minutes on two cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BASE=${1:-8f29b79}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-build-bench.XXXXXX")
trap 'git -C "$ROOT" worktree remove --force "$WORK/base" 2>/dev/null; git -C "$ROOT" worktree remove --force "$WORK/head" 2>/dev/null; rm -rf "$WORK"' EXIT
git -C "$ROOT" worktree add --detach -q "$WORK/base" "$BASE"
git -C "$ROOT" worktree add --detach -q "$WORK/head" HEAD
(cd "$WORK/base" && cargo fetch --locked -q) && (cd "$WORK/head" && cargo fetch --locked -q)
unset CARGO_TARGET_DIR

timed() {  # NAME DIR COMMAND...
    local name=$1 dir=$2; shift 2
    local s e
    s=$(date +%s.%N)
    (cd "$dir" && "$@") > "$WORK/$name.log" 2>&1 || { echo "$name failed:" >&2; tail -20 "$WORK/$name.log" >&2; exit 1; }
    e=$(date +%s.%N)
    printf '%-28s %7.1f s\n' "$name" "$(echo "$e - $s" | bc)"
}

echo "baseline $BASE, head $(git -C "$ROOT" rev-parse --short HEAD); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
timed base-server "$WORK/base" cargo build --release --locked -p helix-server
printf '%-28s %s\n' base-target "$(du -sh "$WORK/base/target" | cut -f1)"
timed base-client "$WORK/base" cargo install --locked --path client --root "$WORK/base-bin"
timed base-client-net "$WORK/base" cargo install --locked --path client-net --root "$WORK/base-bin"
timed head-xtask-install "$WORK/head" cargo xtask install --root "$WORK/head-bin"
printf '%-28s %s\n' head-target "$(du -sh "$WORK/head/target" | cut -f1)"
timed head-client-net "$WORK/head" cargo install --locked --path client-net --root "$WORK/head-bin2"
timed head-server "$WORK/head" cargo install --locked --path server --root "$WORK/head-bin2"
ls -l "$WORK/base-bin/bin" "$WORK/head-bin/bin"
