#!/usr/bin/env bash
# Records which functions the hooks run and writes them to client-net/hot-text.txt, from which
# client-net/build.rs packs them into one `.text.hot` section (see its module doc).
#
# Runs every hook event once under valgrind's lackey tool (it reports each block of code as
# it first runs), against an index of the til corpus, and maps the addresses to symbols of
# the release `helix`. Names are written in first-run order with crate hashes, `17h…` hashes
# and `.llvm.N` suffixes turned into wildcards. Re-run after changing the hook path; the
# last line says how much of the path the current binary already has in `.text.hot`.
#
# Needs: valgrind, python3, nm. Usage: client/benches/hot-text.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CORPUS=${CORPUS:-$ROOT/corpora/til}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
HELIX=$CARGO_TARGET_DIR/release/helix
OUT=$ROOT/client-net/hot-text.txt
for tool in valgrind python3 nm; do
    command -v "$tool" >/dev/null || { echo "hot-text: $tool not found" >&2; exit 1; }
done
[ -d "$CORPUS" ] || { echo "corpus not found: $CORPUS (set CORPUS=)" >&2; exit 1; }

echo "building release helix..." >&2
cargo build --release -p helix-client-net --bin helix --quiet

WORK=$(mktemp -d "${TMPDIR:-/tmp}/helix-hot-text.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
repo=$WORK/repo
mkdir -p "$repo/src/git" "$repo/app/models"
touch "$repo/.tmux.conf" "$repo/app/models/user.rb"
cp -r "$CORPUS" "$repo/knowledge"
export HOME=$WORK/home XDG_CACHE_HOME=$WORK/home/cache XDG_DATA_HOME=$WORK/home/data \
    XDG_CONFIG_HOME=$WORK/home/config HELIX_SYNC_MAX_AGE=0
# The events run twice: following a server, as most users do (the cache where `helix sync`
# puts it, the pending overlay looked for), then with a local knowledge directory.
configure() {
    if [ "$1" = server ]; then
        printf 'server = "http://127.0.0.1:9"\nprojects = ["profile"]\n' > "$repo/.helix.toml"
    else
        printf 'local = "knowledge"\nproject = "profile"\n' > "$repo/.helix.toml"
    fi
    # Where helix keeps this project's cache (local caches carry a hash of the knowledge dir).
    cache=$(cd "$repo" && "$HELIX" status --json | python3 -c \
        'import json,sys; print(json.load(sys.stdin)["projects"][0]["cache_dir"])')
    "$HELIX" build "$repo/knowledge" --no-git --project profile -o "$cache/index.hix" 2>/dev/null
}

# event, then the stdin JSON (without the common fields). The prompt comes first: its
# path is the one the speed target names. Each searching hook has an event that injects on
# til (a file named by its whole name, an edit removing a symbol notes name, EADDRINUSE)
# and one that does not, so that both paths are recorded.
common='"session_id":"profile","cwd":"'$repo'","permission_mode":"default"'
cat > "$WORK/events" <<EOF
prompt	{$common,"hook_event_name":"UserPromptSubmit","prompt":"how do I rebase my git branch onto main without losing local commits?"}
ambient	{$common,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"$repo/src/git/rebase.rs","old_string":"let base = merge_base(&head, &onto)?;","new_string":"let base = onto.clone();"}}
ambient	{$common,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"$repo/src/git/rebase.rs"}}
ambient	{$common,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"$repo/.tmux.conf"}}
ambient	{$common,"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"$repo/app/models/user.rb","old_string":"User.where(active: true).find_each do |u|","new_string":"User.where(active: true).each do |u|"}}
session-start	{$common,"hook_event_name":"SessionStart","source":"startup"}
error	{$common,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"cargo build"},"error":"Exit code 101\nerror: linking with \`cc\` failed: exit status: 1\n  = note: /usr/bin/ld: cannot find -lssl: No such file or directory"}
error	{$common,"hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"npm run dev"},"error":"Exit code 1\n> shop@1.4.0 dev\n> node server.js\n\nnode:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\nError: listen EADDRINUSE: address already in use :::3000\n    at Server.setupListenHandle [as _listen2] (node:net:1872:16)\nEmitted 'error' event on Server instance at:\n  code: 'EADDRINUSE',\n  port: 3000\n}\n\nNode.js v20.11.1"}
post-build	{$common,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"cargo build --release"},"tool_response":{"stdout":"ok"}}
stop	{$common,"hook_event_name":"Stop","stop_hook_active":false}
pre-compact	{$common,"hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}
session-start	{$common,"hook_event_name":"SessionStart","source":"compact"}
subagent-start	{$common,"hook_event_name":"SubagentStart","agent_id":"a1","agent_type":"Explore"}
approve-mcp	{$common,"hook_event_name":"PermissionRequest","tool_name":"mcp__helix__search","tool_input":{"query":"x"}}
EOF
i=0
for mode in server local; do
    configure "$mode"
    # A fresh session per mode: the second run would otherwise repeat nothing it injected.
    sed "s/\"session_id\":\"profile\"/\"session_id\":\"profile-$mode\"/" "$WORK/events" > "$WORK/events-$mode"
    while IFS=$'\t' read -r event input; do
        i=$((i + 1))
        printf '%s' "$input" > "$WORK/in-$i.json"
        (cd "$repo" && valgrind --tool=lackey --trace-superblocks=yes --log-file="$WORK/trace-$i.log" \
            "$HELIX" hook "$event" < "$WORK/in-$i.json" > "$WORK/out-$i.json")
        echo "  $mode $event: $(wc -c < "$WORK/out-$i.json") bytes of output" >&2
    done < "$WORK/events-$mode"
done

python3 - "$HELIX" "$OUT" "$WORK"/trace-*.log <<'PY'
import bisect, re, subprocess, sys

helix, out, traces = sys.argv[1], sys.argv[2], sys.argv[3:]
syms = []
for line in subprocess.run(["nm", "-S", "--defined-only", helix], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    p = line.split()
    if len(p) == 4 and p[2] in "tTwW":
        syms.append((int(p[0], 16), max(int(p[1], 16), 1), p[3]))
syms.sort()
starts = [s[0] for s in syms]
by_name = {s[2]: s for s in syms}
# Valgrind loads a position-independent executable at this base on x86-64.
BASE = 0x108000

def normalize(name):
    name = re.sub(r"\.llvm\.\d+$", "", name)
    name = re.sub(r"17h[0-9a-f]{16}E$", "17h", name)
    return re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", name)

order, seen, hot = [], set(), set()
for trace in sorted(traces, key=lambda t: int(re.search(r"trace-(\d+)", t).group(1))):
    blocks = [int(l[3:], 16) - BASE for l in open(trace) if l.startswith("SB ")]
    main = by_name.get("main")
    if main is None or main[0] not in blocks:
        sys.exit(f"hot-text: {trace} does not show `main` at the expected load base")
    for a in blocks:
        i = bisect.bisect_right(starts, a) - 1
        if i < 0 or a >= syms[i][0] + syms[i][1]:
            continue
        name = syms[i][2]
        hot.add(name)
        pattern = normalize(name)
        if pattern not in seen:
            seen.add(pattern)
            order.append(pattern)

with open(out, "w") as f:
    f.write("# The hook path's functions, in the order they first run; generated by\n"
            "# client/benches/hot-text.sh, read by client-net/build.rs. `*` stands for crate\n"
            "# and symbol hashes.\n")
    f.write("".join(p + "\n" for p in order))

# How much of the recorded path already sits in .text.hot in this binary.
sec = subprocess.run(["readelf", "-SW", helix], capture_output=True, text=True).stdout
m = re.search(r"\.text\.hot\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sec)
size = sum(by_name[n][1] for n in hot)
if m:
    lo, hi = int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16)
    inside = sum(by_name[n][1] for n in hot if lo <= by_name[n][0] < hi)
    print(f"hot-text: {len(order)} patterns ({size} bytes of code) written to {out}; "
          f"{inside * 100 // max(size, 1)}% of that code is in this binary's .text.hot "
          f"({hi - lo} bytes)", file=sys.stderr)
else:
    print(f"hot-text: {len(order)} patterns ({size} bytes of code) written to {out}; "
          "this binary has no .text.hot yet (rebuild)", file=sys.stderr)
PY
