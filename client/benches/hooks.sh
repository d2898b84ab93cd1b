#!/usr/bin/env bash
# Hook latency bench: spawns the real release `helix hook prompt` and `helix hook ambient`
# hundreds of times next to a minimal Rust program (read stdin, open a file, print a line:
# the fork+exec floor), interleaved in one run, at 1k, 10k and 100k entries of the til
# corpus (replicated under new paths). Prints p50/p99 per case and the ratio to the floor.
#
# Every call gets a new `prompt_id`/`tool_use_id` (stdin is piped, `{n}` in it replaced by a
# counter), as in a session: a repeated identical input would be a duplicate, which helix
# answers with nothing. `prompt-dup` sends one input over and over: that silent path.
#
# Usage: client/benches/hooks.sh            (ITER=400 SIZES="1000 10000 100000" by default)
#        ITER=200 SIZES="10000" client/benches/hooks.sh
#        SKIP_BUILD=1 HELIX=/path/to/helix client/benches/hooks.sh   (bench a given binary)
#        HELIX_BASE=/path/to/old/helix client/benches/hooks.sh  (also bench a baseline binary,
#                                        interleaved in the same run: `prompt@base`, …)
set -euo pipefail

ITER=${ITER:-400}
WARMUP=${WARMUP:-20}
SIZES=${SIZES:-"1000 10000 100000"}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/../shared/corpora/til}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}

[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }
HELIX=${HELIX:-$CARGO_TARGET_DIR/release/helix}
if [ -z "${SKIP_BUILD:-}" ]; then
    echo "building release helix..." >&2
    cargo build --release -p helix-client --quiet
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-hook-bench.XXXXXX")
# Duplicate-call claims go to a runtime directory in memory, as on a desktop session
# (XDG_RUNTIME_DIR); a private one here, removed afterwards.
RUN=$WORK/run
[ -d /dev/shm ] && RUN=$(mktemp -d /dev/shm/helix-hook-bench-run.XXXXXX)
export XDG_RUNTIME_DIR=$RUN
trap 'rm -rf "$WORK" "$RUN"' EXIT

# The floor: what any hook binary must do at least.
cat > "$WORK/floor.rs" <<'RS'
use std::io::{Read, Write};
fn main() {
    let mut input = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut input);
    let path = std::env::args().nth(1).unwrap_or_default();
    let f = std::fs::File::open(&path).map(|f| f.metadata().map(|m| m.len()).unwrap_or(0));
    let _ = writeln!(std::io::stdout(), "{{\"read\":{},\"file\":{}}}", input.len(), f.unwrap_or(0));
}
RS

# The same program entered at a C main, skipping std's start-up as `helix` does: shows
# how much of helix's lead over the floor comes from that alone.
cat > "$WORK/floor-lean.rs" <<'RS'
#![no_main]
use std::io::{Read, Write};
#[unsafe(no_mangle)]
extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    let mut input = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut input);
    let path = std::env::args().nth(1).unwrap_or_default();
    let f = std::fs::File::open(&path).map(|f| f.metadata().map(|m| m.len()).unwrap_or(0));
    let _ = writeln!(std::io::stdout(), "{{\"read\":{},\"file\":{}}}", input.len(), f.unwrap_or(0));
    0
}
RS

# The driver: spawns each case in turn (interleaved), stdin piped from a file with `{n}`
# replaced by the call's number, stdout read to EOF.
cat > "$WORK/driver.rs" <<'RS'
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let iters: usize = a[1].parse().expect("iterations");
    let warmup: usize = a[2].parse().expect("warmup");
    let spec = std::fs::read_to_string(&a[3]).expect("spec file");
    // name \t stdin file \t program \t args...
    let cases: Vec<Vec<&str>> = spec.lines().filter(|l| !l.is_empty()).map(|l| l.split('\t').collect()).collect();
    let mut times: Vec<Vec<u64>> = vec![Vec::with_capacity(iters); cases.len()];
    let mut out_len = vec![0usize; cases.len()];
    for i in 0..warmup + iters {
        for (ci, c) in cases.iter().enumerate() {
            let input = std::fs::read_to_string(c[1]).expect("stdin file").replace("{n}", &i.to_string());
            let t = Instant::now();
            let mut child = Command::new(c[2]).args(&c[3..]).stdin(Stdio::piped())
                .stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn");
            let mut stdin = child.stdin.take().expect("stdin");
            let _ = stdin.write_all(input.as_bytes());
            drop(stdin);
            let mut out = Vec::new();
            child.stdout.take().expect("stdout").read_to_end(&mut out).expect("read");
            let st = child.wait().expect("wait");
            let ns = t.elapsed().as_nanos() as u64;
            assert!(st.success(), "{} exited {st}", c[0]);
            if i >= warmup { times[ci].push(ns); }
            out_len[ci] = out.len();
        }
    }
    for (ci, c) in cases.iter().enumerate() {
        let v = &mut times[ci];
        v.sort_unstable();
        let p = |q: usize| v[((v.len() * q) / 100).min(v.len() - 1)] as f64 / 1000.0;
        println!("{}\t{:.0}\t{:.0}\t{}", c[0], p(50), p(99), out_len[ci]);
    }
}
RS
rustc -O -o "$WORK/floor" "$WORK/floor.rs"
rustc -O -o "$WORK/floor-lean" "$WORK/floor-lean.rs"
rustc -O -o "$WORK/driver" "$WORK/driver.rs"

# A knowledge directory of exactly $1 entries: whole copies of the corpus's topic folders
# under renamed paths (<topic>/c<k>/<slug>.md), then trimmed.
make_corpus() {
    local n=$1 dir=$2 per copies k t
    per=$(find "$CORPUS" -mindepth 2 -name '*.md' | wc -l)
    copies=$(( (n + per - 1) / per ))
    mkdir -p "$dir"
    for ((k = 0; k < copies; k++)); do
        for t in "$CORPUS"/*/; do
            t=$(basename "$t")
            mkdir -p "$dir/$t/c$k"
            cp "$CORPUS/$t"/*.md "$dir/$t/c$k/" 2>/dev/null || true
        done
    done
    find "$dir" -name '*.md' | sort | tail -n +$((n + 1)) | xargs -r rm -f
}

printf '| entries | case | p50 µs | p99 µs | p50 / floor | p99 / floor | output bytes |\n'
printf '|---:|---|---:|---:|---:|---:|---:|\n'
for n in $SIZES; do
    repo=$WORK/repo-$n
    mkdir -p "$repo/src/git"
    make_corpus "$n" "$repo/knowledge"
    printf 'local = "knowledge"\nproject = "bench"\n' > "$repo/.helix.toml"
    export HOME=$WORK/home-$n XDG_CACHE_HOME=$WORK/home-$n/cache XDG_DATA_HOME=$WORK/home-$n/data \
        XDG_CONFIG_HOME=$WORK/home-$n/config HELIX_SYNC_MAX_AGE=0
    index=$XDG_CACHE_HOME/helix/local/bench/index.hix
    "$HELIX" build "$repo/knowledge" --no-git --project bench -o "$index" 2> "$WORK/build-$n.log" \
        || { cat "$WORK/build-$n.log" >&2; exit 1; }
    built=$(grep -o 'wrote .*' "$WORK/build-$n.log" | head -1)
    echo "size $n: $built" >&2

    printf '{"session_id":"bench","cwd":"%s","prompt_id":"p{n}","hook_event_name":"UserPromptSubmit","prompt":"how do I rebase my git branch onto main without losing local commits?"}' \
        "$repo" > "$WORK/prompt-$n.json"
    printf '{"session_id":"bench","cwd":"%s","prompt_id":"p0","hook_event_name":"UserPromptSubmit","prompt":"how do I rebase my git branch onto main without losing local commits?"}' \
        "$repo" > "$WORK/prompt-dup-$n.json"
    printf '{"session_id":"bench","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_use_id":"t{n}","tool_input":{"file_path":"%s/src/git/rebase.rs","old_string":"let base = merge_base(&head, &onto)?;","new_string":"let base = onto.clone();"}}' \
        "$repo" "$repo" > "$WORK/ambient-$n.json"
    {
        printf 'floor\t%s\t%s\t%s\n' "$WORK/prompt-$n.json" "$WORK/floor" "$index"
        printf 'floor-lean\t%s\t%s\t%s\n' "$WORK/prompt-$n.json" "$WORK/floor-lean" "$index"
        # An unknown event: start-up, stdin read and exit only (no config, no index).
        printf 'startup\t%s\t%s\thook\tnoop\n' "$WORK/prompt-$n.json" "$HELIX"
        printf 'prompt\t%s\t%s\thook\tprompt\n' "$WORK/prompt-$n.json" "$HELIX"
        printf 'ambient\t%s\t%s\thook\tambient\n' "$WORK/ambient-$n.json" "$HELIX"
        printf 'prompt-dup\t%s\t%s\thook\tprompt\n' "$WORK/prompt-dup-$n.json" "$HELIX"
        if [ -n "${HELIX_BASE:-}" ]; then
            printf 'startup@base\t%s\t%s\thook\tnoop\n' "$WORK/prompt-$n.json" "$HELIX_BASE"
            printf 'prompt@base\t%s\t%s\thook\tprompt\n' "$WORK/prompt-$n.json" "$HELIX_BASE"
            printf 'ambient@base\t%s\t%s\thook\tambient\n' "$WORK/ambient-$n.json" "$HELIX_BASE"
        fi
    } > "$WORK/spec-$n.tsv"
    (cd "$repo" && "$WORK/driver" "$ITER" "$WARMUP" "$WORK/spec-$n.tsv") > "$WORK/result-$n.tsv"
    read -r _ f50 f99 _ < <(grep '^floor' "$WORK/result-$n.tsv")
    while IFS=$'\t' read -r name p50 p99 bytes; do
        awk -v n="$n" -v c="$name" -v a="$p50" -v b="$p99" -v f="$f50" -v g="$f99" -v o="$bytes" \
            'BEGIN { printf "| %d | %s | %d | %d | %.2f | %.2f | %d |\n", n, c, a, b, a / f, b / g, o }'
    done < "$WORK/result-$n.tsv"
done
echo "($ITER runs per case after $WARMUP warm-up runs; $(nproc) CPUs; $(uname -sr))" >&2
