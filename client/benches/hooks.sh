#!/usr/bin/env bash
# Hook latency bench: spawns the real release `helix hook prompt` and `helix hook ambient`
# hundreds of times next to a minimal Rust program (read stdin, open a file, print a line:
# the fork+exec floor), interleaved in one run, at 1k, 10k and 100k entries: the til
# corpus once (cut to size at 1k), then generated filler notes, each in a topic of the
# corpus (as often as the topic holds words) with words drawn at that topic's frequencies:
# posting lists grow as in a real knowledge base (a common git word in the git notes, not
# in every note), and the real notes stay unique (copies of a note would tie with it, and
# the relevance gate would rightly say nothing). Every run is a fresh Claude Code
# session, so the hooks inject (and record what they injected) each time. Prints p50/p99
# per case and the ratio to the floor.
#
# Usage: client/benches/hooks.sh            (ITER=400 SIZES="1000 10000 100000" by default)
#        ITER=200 SIZES="10000" client/benches/hooks.sh
#        SKIP_BUILD=1 HELIX=/path/to/helix client/benches/hooks.sh   (bench a given binary)
#        BASELINE=/path/to/old/helix ...   (also time that binary, on its own cache, same run)
#        MODE=server ...   (the project follows a server, as most users' do, instead of a
#                           local knowledge directory; the cache is where `helix sync` puts it)
#        AGENTS="codex copilot gemini cursor" (the default) ...   the prompt and file-read
#                           cases again in each agent's input form, through `--agent NAME`
#                           (`prompt:codex`…), beside Claude Code's (AGENTS= for none)
#
# `prompt-dup` sends one input over and over in one session: helix answers a duplicate call
# (same event, same input, within seconds) with nothing, and this times that silent path.
set -euo pipefail

ITER=${ITER:-400}
AGENTS=${AGENTS-codex copilot gemini cursor}
MODE=${MODE:-local}
WARMUP=${WARMUP:-20}
SIZES=${SIZES:-"1000 10000 100000"}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/corpora/til}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}

[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }
HELIX=${HELIX:-$CARGO_TARGET_DIR/release/helix}
if [ -z "${SKIP_BUILD:-}" ]; then
    echo "building release helix..." >&2
    cargo build --release -p helix-client-net --bin helix --quiet
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-hook-bench.XXXXXX")
# The baseline's duplicate-call claims go to a runtime directory of their own, on tmpfs like
# the candidate's (XDG_RUNTIME_DIR, else /dev/shm): on disk each claim's mkdir and create
# cost it most of a millisecond the candidate does not pay.
RUNTIME=$(mktemp -d "${XDG_RUNTIME_DIR:-/dev/shm}/helix-hook-bench.XXXXXX" 2>/dev/null \
    || mktemp -d "$WORK/run.XXXXXX")
trap 'rm -rf "$WORK" "$RUNTIME"' EXIT

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

# The driver: spawns each case in turn (interleaved), stdin from a file, stdout read to EOF.
# `@RUN@` in a stdin file becomes the run's number (a fresh session id per run); the file
# is written before the clock starts.
cat > "$WORK/driver.rs" <<'RS'
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let iters: usize = a[1].parse().expect("iterations");
    let warmup: usize = a[2].parse().expect("warmup");
    let spec = std::fs::read_to_string(&a[3]).expect("spec file");
    // name \t stdin file \t env (K=V,K=V or -) \t program \t args...
    let cases: Vec<Vec<&str>> = spec.lines().filter(|l| !l.is_empty()).map(|l| l.split('\t').collect()).collect();
    let templates: Vec<String> = cases.iter().map(|c| std::fs::read_to_string(c[1]).expect("stdin file")).collect();
    let mut times: Vec<Vec<u64>> = vec![Vec::with_capacity(iters); cases.len()];
    let mut out_len = vec![0usize; cases.len()];
    for i in 0..warmup + iters {
        for (ci, c) in cases.iter().enumerate() {
            let path = format!("{}.run", c[1]);
            std::fs::write(&path, templates[ci].replace("@RUN@", &i.to_string())).expect("stdin");
            let stdin = std::fs::File::open(&path).expect("stdin file");
            let mut cmd = Command::new(c[3]);
            if c[2] != "-" {
                for kv in c[2].split(',') {
                    let (k, v) = kv.split_once('=').expect("K=V");
                    cmd.env(k, v);
                }
            }
            let t = Instant::now();
            let mut child = cmd.args(&c[4..]).stdin(stdin)
                .stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn");
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

# A knowledge directory of exactly $1 entries: the corpus's notes (cut to $1 if it has
# more), then filler notes generated from its commonest words (see the header).
make_corpus() {
    python3 - "$CORPUS" "$1" "$2" <<'PY'
import collections, os, random, re, sys
corpus, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
notes = sorted((t, f) for t in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, t))
               for f in os.listdir(os.path.join(corpus, t)) if f.endswith(".md"))
topic_words = collections.defaultdict(collections.Counter)
for t, f in notes[:n - 1]:
    src = os.path.join(corpus, t, f)
    text = open(src, encoding="utf-8").read()
    topic_words[t].update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+", text))
    os.makedirs(os.path.join(out, t), exist_ok=True)
    with open(os.path.join(out, t, f), "w", encoding="utf-8") as g:
        g.write(text)
# One note about a source file, for the ambient case (layer "about this file", and the
# impact warning for a symbol it names).
os.makedirs(os.path.join(out, "bench"), exist_ok=True)
with open(os.path.join(out, "bench", "ledger-rounding.md"), "w", encoding="utf-8") as g:
    g.write("---\ntitle: Ledger totals round half to even\nsources: [db/ledger.rs]\n---\n\n"
            "`round_half_even_cents` keeps monthly totals equal to the bank's; do not replace "
            "it with a plain round.\n")
topics = sorted(topic_words)
sizes = [sum(topic_words[t].values()) for t in topics]
pools = {t: (list(topic_words[t]), list(topic_words[t].values())) for t in topics}
rng = random.Random(13)
for i in range(max(0, n - min(n - 1, len(notes)) - 1)):
    # Topics as often as they hold words; words as often as the topic uses them.
    t = rng.choices(topics, sizes)[0]
    vocab, weights = pools[t]
    d = os.path.join(out, t, "filler")
    os.makedirs(d, exist_ok=True)
    title = " ".join(rng.choices(vocab, weights, k=5)).capitalize()
    body = " ".join(rng.choices(vocab, weights, k=rng.randint(40, 220)))
    with open(os.path.join(d, f"f{i:06d}.md"), "w", encoding="utf-8") as g:
        g.write(f"# {title}\n\n{body}\n")
PY
}

# Where BINARY keeps the cache of the repository's project (`helix status --json`; the
# layout is helix's business, e.g. local caches carry a hash of the knowledge directory),
# or FALLBACK for a binary too old to say.
cache_dir_of() {
    local dir
    dir=$(cd "$repo" && "$1" status --json 2>/dev/null | python3 -c \
        'import json,sys; print(json.load(sys.stdin)["projects"][0]["cache_dir"])' 2>/dev/null) \
        || dir=
    echo "${dir:-$2}"
}

printf '| entries | case | p50 µs | p99 µs | p50 / floor | p99 / floor | output bytes |\n'
printf '|---:|---|---:|---:|---:|---:|---:|\n'
for n in $SIZES; do
    repo=$WORK/repo-$n
    mkdir -p "$repo/db"
    make_corpus "$n" "$repo/knowledge"
    if [ "$MODE" = server ]; then
        # Following a server (nothing listens there: hooks never call it), the cache where
        # `helix sync` would put it; the hooks also look for the pending overlay.
        printf 'server = "http://127.0.0.1:9"\nprojects = ["bench"]\n' > "$repo/.helix.toml"
    else
        printf 'local = "knowledge"\nproject = "bench"\n' > "$repo/.helix.toml"
    fi
    export HOME=$WORK/home-$n XDG_CACHE_HOME=$WORK/home-$n/cache XDG_DATA_HOME=$WORK/home-$n/data \
        XDG_CONFIG_HOME=$WORK/home-$n/config HELIX_SYNC_MAX_AGE=0
    index=$(cache_dir_of "$HELIX" "$XDG_CACHE_HOME/helix/local/bench")/index.hix
    "$HELIX" build "$repo/knowledge" --no-git --project bench -o "$index" 2> "$WORK/build-$n.log" \
        || { cat "$WORK/build-$n.log" >&2; exit 1; }
    built=$(grep -o 'wrote .*' "$WORK/build-$n.log" | head -1)
    echo "size $n: $built" >&2
    base_env=-
    if [ -n "${BASELINE:-}" ]; then
        base_cache=$WORK/home-$n/base-cache
        base_index=$(XDG_CACHE_HOME=$base_cache cache_dir_of "$BASELINE" \
            "$base_cache/helix/local/bench")/index.hix
        XDG_CACHE_HOME=$base_cache "$BASELINE" build "$repo/knowledge" --no-git --project bench \
            -o "$base_index" 2> /dev/null
        # Its own duplicate-call claims too: a baseline that has them would otherwise take
        # each run as a repeat of the candidate's (same session id, same stdin) and be silent.
        base_env="XDG_CACHE_HOME=$base_cache,XDG_RUNTIME_DIR=$RUNTIME/base-$n"
    fi

    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"how do I rebase my git branch onto another base without losing local commits?"}' \
        "$repo" > "$WORK/prompt-$n.json"
    # A long problem description: more candidate words than the prompt hook keeps, so the
    # search runs with its full term budget.
    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"The staging deploy keeps failing after I rebased my feature branch onto main: git push is rejected as non-fast-forward, and I worry that force pushing will clobber commits a teammate pushed to the same remote branch this morning. What is the safe way to update the remote branch?"}' \
        "$repo" > "$WORK/prompt-long-$n.json"
    # One input over and over in one session: from the second call on a duplicate, which
    # helix answers with nothing (the duplicate-call claim, hook/once.rs).
    printf '{"session_id":"bench-dup","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"how do I rebase my git branch onto another base without losing local commits?"}' \
        "$repo" > "$WORK/prompt-dup-$n.json"
    # An edit of a file an entry lists as a source, removing a symbol it names: the
    # sources lookup, the symbol and file-name searches and the coupled topics.
    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/db/ledger.rs","old_string":"let t = round_half_even_cents(total);","new_string":"let t = total.round();"}}' \
        "$repo" "$repo" > "$WORK/ambient-$n.json"
    # A read of a file nothing is about, four folders deep: every searching layer runs and
    # finds nothing (its whole name, its project path, its folder), the common case.
    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"%s/src/billing/invoices/ledger/totals.rs"}}' \
        "$repo" "$repo" > "$WORK/ambient-read-$n.json"
    # A read of a file an entry lists as a source: the "about this file" layer injects.
    printf '{"session_id":"bench-src-@RUN@","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"%s/db/ledger.rs"}}' \
        "$repo" "$repo" > "$WORK/ambient-src-$n.json"
    # The prompt and the two reads in each agent's own form (its adapter's input), and the
    # hook each agent runs for them; each case a session of its own, so that it answers as
    # Claude Code's case does instead of finding its entries already shown.
    python3 - "$WORK" "$n" "$repo" $AGENTS <<'PY'
import json, sys
work, n, repo, agents = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
prompt = "how do I rebase my git branch onto another base without losing local commits?"
reads = {"ambient-read": f"{repo}/src/billing/invoices/ledger/totals.rs",
         "ambient-src": f"{repo}/db/ledger.rs"}
sid = "bench-@RUN@"  # replaced per case below
def inputs(agent):
    if agent == "codex":
        yield "prompt", "prompt", {"session_id": sid, "cwd": repo, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
        for case, f in reads.items():
            yield case, "ambient", {"session_id": sid, "cwd": repo, "hook_event_name": "PreToolUse",
                                    "tool_name": "Bash", "tool_input": {"command": f"sed -n '1,200p' {f}"}}
    elif agent == "copilot":
        yield "prompt", "prompt", {"sessionId": sid, "timestamp": 1, "cwd": repo, "prompt": prompt}
        for case, f in reads.items():
            yield case, "ambient", {"sessionId": sid, "timestamp": 1, "cwd": repo, "toolName": "view", "toolArgs": {"path": f}}
    elif agent == "gemini":
        yield "prompt", "prompt", {"session_id": sid, "cwd": repo, "hook_event_name": "BeforeAgent", "prompt": prompt}
        for case, f in reads.items():
            yield case, "post-tool", {"session_id": sid, "cwd": repo, "hook_event_name": "AfterTool",
                                      "tool_name": "read_file", "tool_input": {"file_path": f},
                                      "tool_response": {"llmContent": "fn totals() {}\n", "returnDisplay": ""}}
    elif agent == "cursor":
        yield "prompt", "prompt", {"conversation_id": sid, "workspace_roots": [repo], "hook_event_name": "beforeSubmitPrompt", "prompt": prompt}
        for case, f in reads.items():
            yield case, "ambient", {"conversation_id": sid, "workspace_roots": [repo], "hook_event_name": "preToolUse",
                                    "tool_name": "Read", "tool_input": {"file_path": f}, "cwd": repo}
    else:
        sys.exit(f"unknown agent {agent}")
with open(f"{work}/agents-{n}.tsv", "w") as spec:
    for agent in agents:
        for case, hook, doc in inputs(agent):
            sid = f"bench-{agent}-{case}-@RUN@"
            for key in ("session_id", "sessionId", "conversation_id"):
                if key in doc:
                    doc[key] = sid
            path = f"{work}/{case}-{agent}-{n}.json"
            with open(path, "w") as g:
                json.dump(doc, g)
            spec.write(f"{case}:{agent}\t{path}\t{hook}\t{agent}\n")
PY
    # A failed build's output: error lines picked, terms searched, the ten hits weighed, and
    # (as none quotes the output) the first 50 looked through for a quote.
    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"cargo build"},"error":"Exit code 101\\n   Compiling ledger v0.3.0 (%s)\\nerror[E0425]: cannot find function `round_half_even_cents` in this scope\\n  --> src/db/ledger.rs:41:17\\n   |\\n41 |         let t = round_half_even_cents(total);\\n   |                 ^^^^^^^^^^^^^^^^^^^^^ not found in this scope\\n\\nerror: could not compile `ledger` (lib) due to 1 previous error","is_interrupt":false}' \
        "$repo" "$repo" > "$WORK/error-$n.json"
    # A failed tool (psql): its tools and words read from the command, searched with the
    # output, the tool cue weighed for every hit.
    printf '{"session_id":"bench-@RUN@","cwd":"%s","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"psql -d ledger_dev --no-psqlrc -c \\"select round_half_even(total) from ledger\\""},"error":"Exit code 1\\nERROR:  function round_half_even(numeric) does not exist\\nLINE 1: select round_half_even(total) from ledger\\n               ^\\nHINT:  No function matches the given name and argument types. You might need to add explicit type casts.","is_interrupt":false}' \
        "$repo" > "$WORK/error-tool-$n.json"
    {
        printf 'floor\t%s\t-\t%s\t%s\n' "$WORK/prompt-$n.json" "$WORK/floor" "$index"
        printf 'floor-lean\t%s\t-\t%s\t%s\n' "$WORK/prompt-$n.json" "$WORK/floor-lean" "$index"
        # An unknown event: start-up, stdin read and exit only (no config, no index).
        printf 'startup\t%s\t-\t%s\thook\tnoop\n' "$WORK/prompt-$n.json" "$HELIX"
        printf 'prompt\t%s\t-\t%s\thook\tprompt\n' "$WORK/prompt-$n.json" "$HELIX"
        printf 'prompt-long\t%s\t-\t%s\thook\tprompt\n' "$WORK/prompt-long-$n.json" "$HELIX"
        printf 'ambient\t%s\t-\t%s\thook\tambient\n' "$WORK/ambient-$n.json" "$HELIX"
        printf 'ambient-read\t%s\t-\t%s\thook\tambient\n' "$WORK/ambient-read-$n.json" "$HELIX"
        printf 'ambient-src\t%s\t-\t%s\thook\tambient\n' "$WORK/ambient-src-$n.json" "$HELIX"
        while IFS=$'\t' read -r name file hook agent; do
            printf '%s\t%s\t-\t%s\thook\t%s\t--agent\t%s\n' "$name" "$file" "$HELIX" "$hook" "$agent"
        done < "$WORK/agents-$n.tsv"
        printf 'error\t%s\t-\t%s\thook\terror\n' "$WORK/error-$n.json" "$HELIX"
        printf 'error-tool\t%s\t-\t%s\thook\terror\n' "$WORK/error-tool-$n.json" "$HELIX"
        printf 'prompt-dup\t%s\t-\t%s\thook\tprompt\n' "$WORK/prompt-dup-$n.json" "$HELIX"
        if [ -n "${BASELINE:-}" ]; then
            printf 'baseline-prompt\t%s\t%s\t%s\thook\tprompt\n' "$WORK/prompt-$n.json" "$base_env" "$BASELINE"
            printf 'baseline-prompt-long\t%s\t%s\t%s\thook\tprompt\n' "$WORK/prompt-long-$n.json" "$base_env" "$BASELINE"
            printf 'baseline-ambient\t%s\t%s\t%s\thook\tambient\n' "$WORK/ambient-$n.json" "$base_env" "$BASELINE"
            printf 'baseline-ambient-read\t%s\t%s\t%s\thook\tambient\n' "$WORK/ambient-read-$n.json" "$base_env" "$BASELINE"
            printf 'baseline-error\t%s\t%s\t%s\thook\terror\n' "$WORK/error-$n.json" "$base_env" "$BASELINE"
            printf 'baseline-error-tool\t%s\t%s\t%s\thook\terror\n' "$WORK/error-tool-$n.json" "$base_env" "$BASELINE"
        fi
    } > "$WORK/spec-$n.tsv"
    # The artifacts just written go to disk now, not while the hooks are timed: a hook that
    # creates a file (a new session's state) would wait behind that writeback's journal.
    sync
    (cd "$repo" && "$WORK/driver" "$ITER" "$WARMUP" "$WORK/spec-$n.tsv") > "$WORK/result-$n.tsv"
    read -r _ f50 f99 _ < <(grep '^floor' "$WORK/result-$n.tsv")
    while IFS=$'\t' read -r name p50 p99 bytes; do
        awk -v n="$n" -v c="$name" -v a="$p50" -v b="$p99" -v f="$f50" -v g="$f99" -v o="$bytes" \
            'BEGIN { printf "| %d | %s | %d | %d | %.2f | %.2f | %d |\n", n, c, a, b, a / f, b / g, o }'
    done < "$WORK/result-$n.tsv"
done
echo "($MODE mode; $ITER runs per case after $WARMUP warm-up runs; $(nproc) CPUs; $(uname -sr))" >&2
