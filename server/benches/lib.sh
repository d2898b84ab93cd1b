# Shared by the server benches (sourced, not run): a replicated upstream and a server on
# loopback. Needs: git, GNU tar, curl.

# bench_corpus CORPUS DEST ENTRIES: ENTRIES notes from CORPUS's topic folders, in sorted
# order, under DEST as TOPIC-r0/…, TOPIC-r1/…, and so on until ENTRIES are there (the last
# round cut short). ENTRIES=all copies CORPUS's notes once at their own paths. One tar per
# round rather than a cp per note: 100k notes take seconds, not minutes.
bench_corpus() {
  local corpus=$1 dest=$2 entries=$3 list total n=0 round=0 take
  list=$(mktemp)
  (cd "$corpus" && find . -mindepth 2 -name '*.md' | sed 's|^\./||' | sort) > "$list"
  total=$(wc -l < "$list")
  if [ "$total" -eq 0 ]; then echo "no notes in $corpus" >&2; rm -f "$list"; return 1; fi
  mkdir -p "$dest"
  if [ "$entries" = all ]; then
    tar -C "$corpus" -cf - -T "$list" | tar -C "$dest" -xf -
  else
    while [ "$n" -lt "$entries" ]; do
      take=$((entries - n < total ? entries - n : total))
      head -n "$take" "$list" \
        | tar -C "$corpus" -cf - --transform "s|^\([^/]*\)/|\1-r${round}/|" -T - \
        | tar -C "$dest" -xf -
      n=$((n + take))
      round=$((round + 1))
    done
  fi
  rm -f "$list"
}

# bench_upstream CORPUS ENTRIES SRC UP: a work tree SRC holding bench_corpus's notes in one
# commit, pushed to a new bare repository UP (branch main). Sets MD_BYTES (du -sb of SRC
# before the commit) and exports a git identity (bench@example.com) for later commits.
bench_upstream() {
  local corpus=$1 entries=$2 src=$3 up=$4
  export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
  export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
  git init -q --bare -b main "$up"
  git init -q -b main "$src"
  bench_corpus "$corpus" "$src" "$entries"
  MD_BYTES=$(du -sb "$src" | cut -f1)
  (cd "$src" && git add -A && git commit -q -m "bench corpus" && git push -q "$up" main)
}

# bench_start BIN CONFIG DIR: the server on 127.0.0.1:0 with data in DIR/data, stdout in
# DIR/stdout and its log in DIR/server.log. Sets SERVER_PID and URL.
bench_start() {
  local bin=$1 config=$2 dir=$3
  "$bin" --config "$config" --data-dir "$dir/data" --listen 127.0.0.1:0 \
    > "$dir/stdout" 2> "$dir/server.log" &
  SERVER_PID=$!
  for _ in $(seq 1 200); do grep -q listening "$dir/stdout" 2>/dev/null && break; sleep 0.05; done
  URL=$(sed -n 's/^listening on //p' "$dir/stdout")
}

# bench_stop: stops the server bench_start started, if any.
bench_stop() {
  if [ -n "${SERVER_PID:-}" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}

# bench_post_lua FILE: a wrk script for POST /v1/projects/P/entries that stores a new note
# on every request ("Stored note T-N" in topic bench-writes; T the wrk thread, after the
# script's first argument if given, so that runs after the first store new notes too).
bench_post_lua() {
  cat > "$1" <<'EOF'
local counter = 0
local run = ""
local threads = {}
function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end
function init(args)
  run = args[1] or ""
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
request = function()
  counter = counter + 1
  local body = string.format('{"topic":"bench-writes","title":"Stored note %s%s-%d","body":"Learned thing number %s%s-%d the hard way."}', run, tid, counter, run, tid, counter)
  return wrk.format(nil, nil, nil, body)
end
EOF
}
