#!/usr/bin/env python3
"""Ranking quality on a standard judged collection: CISI (1,460 abstracts, 76 judged queries)
read as a knowledge repository. MAP, nDCG@10, P@10 and recall@100 of `helix search`, next to
bm25s (Lucene BM25, k1 = 1.2, b = 0.75) on exactly the same text, in one invocation.

How the collection becomes a knowledge repository: one entry per document,
`cisi/d<id>.md` (a single topic folder), front matter `title:` from `.T`, body from `.W`
(authors `.A` and cross-references `.X` are left out, as in the usual CISI runs). The
title goes in front matter, not as a `# ` heading, so it is indexed once (helix indexes the
title field and the body; a heading would repeat it). Compiled with `helix build --no-git`:
no dates, so no recency boost; `helix search` applies no per-topic cap, so one topic is fair.
Queries are `.W` of CISI.QRY, passed whole to `helix search --index FILE --json -n K`.

References, all over title + "\\n" + body:
  (a) bm25s lucene, `\\w+` lowercase tokens, no stop words;
  (b) bm25s lucene, a Python imitation of helix's tokenizer (as in benches/ranking.py); bm25s
      scores a query term once per occurrence in the query (query term frequency);
  (c) as (b), each query term once, as helix does;
  (d) as (c), cut to the first 32 distinct terms (helix's MAX_QUERY_TERMS): helix's query
      handling, so (d) and helix should be close, and (b) -> (c) -> (d) shows what each
      difference costs;
  (e) bm25s lucene with English stop words and the Snowball stemmer (only when PyStemmer is
      installed): what stemming is worth on this collection.

With --baseline BIN, a second helix binary (the last release) is measured in the same run.

With --model DIR (a sentence-embedding model directory, e.g. target/models/all-MiniLM-L6-v2),
semantic search is measured too, through the real server (--server BIN, default
target/release/helix-server): the same entries are committed to a git repository and pushed
to a bare upstream, and two servers serve it on 127.0.0.1 (anonymous loopback), one plain and
one with `[semantic] model = DIR` (its default max_tokens and body_chars), which embeds every
entry when it compiles the commit; the script polls `GET /v1/projects/cisi/status` until the
artifact is served (embedding 1,460 abstracts takes minutes on a small machine). Every query
then goes through `GET /v1/projects/cisi/search?q=…&limit=N` of each server: the plain one
answers lexically (this must match `helix search`, and the script counts the queries where it
does not), the semantic one fuses the lexical hits with the entries nearest to the query's
embedding by reciprocal rank (k = 60; docs/http-api.md). The API answers at most 100 hits
(server/src/http/read.rs, MAX_LIMIT), so those rows are over the top min(--k, 100): recall@100
is whole, their MAP is MAP over the first 100 (the table then also shows `helix search` cut to
the same 100, to compare like with like). The API has no vector-only ranking, so there is no
pure-vector row. Server processes and temp directories are removed on exit, Ctrl-C included.

Usage: python3 benches/cisi.py [--helix BIN] [--baseline BIN] [--model DIR [--server BIN]]
                               [--k 1000] [--json] [--keep] [--collection DIR]
Needs: pip install bm25s numpy (and PyStemmer for row e); with --model also git.
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_COLLECTION = os.path.join(ROOT, "..", "shared", "corpora", "cisi")
MAX_QUERY_TERMS = 32  # index-format/src/search.rs
API_MAX_LIMIT = 100  # server/src/http/read.rs, MAX_LIMIT
PROJECT = "cisi"
COMPILE_TIMEOUT_SECS = 4 * 3600


def die(msg):
    print(f"cisi.py: {msg}", file=sys.stderr)
    sys.exit(2)


def smart_records(path):
    """SMART layout: `.I id` starts a record, `.X` (one letter) lines start fields."""
    recs, cur, field = [], None, None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^\.([A-Z])(?:\s+(.*))?$", line.rstrip("\n"))
            if m and m.group(1) == "I":
                cur = {"id": int(m.group(2).strip())}
                recs.append(cur)
                field = None
            elif m:
                field = m.group(1)
                cur.setdefault(field, [])
                if m.group(2) and m.group(2).strip():
                    cur[field].append(m.group(2).strip())
            elif cur is not None and field is not None:
                cur[field].append(line.rstrip("\n"))
    return recs


def text(rec, field):
    return " ".join(" ".join(rec.get(field, [])).split())


def load(collection):
    docs = [(r["id"], text(r, "T"), text(r, "W")) for r in smart_records(os.path.join(collection, "CISI.ALL"))]
    queries = {r["id"]: text(r, "W") or text(r, "T") for r in smart_records(os.path.join(collection, "CISI.QRY"))}
    rel = {}
    with open(os.path.join(collection, "CISI.REL")) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2:
                rel.setdefault(int(p[0]), set()).add(int(p[1]))
    judged = sorted(q for q in rel if q in queries)
    return docs, queries, rel, judged


# ---------------------------------------------------------------- tokenizers (kept in step with benches/ranking.py)

STOP = set("""a about an and are as at be been but by can d did do does from had has have how i in
into is it its ll m me my of on or our re s so t than that the their them then there these they
this those to too us ve was we were what when where which who why will with would you your""".split())


def simple_tokens(s):
    return re.findall(r"\w+", s.lower())


def helix_like_tokens(s):
    """An approximation of helix's tokenizer (index-format/src/tokenize.rs): identifier runs
    split on _ - . : and camelCase, whole identifier kept, stop words dropped."""
    out = []
    for run in re.findall(r"[^\W_]+(?:[_\-.:]+[^\W_]+)*", s):
        parts = []
        for seg in re.split(r"[_\-.:]+", run):
            parts += [p.lower() for p in re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W_a-zA-Z]+", seg) if p]
        if len(parts) == 1:
            if parts[0] not in STOP and len(parts[0]) <= 64:
                out.append(parts[0])
        elif parts:
            out.append("".join(parts))
            out += [p for p in parts if p not in STOP]
    return out


def first_distinct(tokens, n):
    out = []
    for t in tokens:
        if t not in out:
            out.append(t)
        if len(out) == n:
            break
    return out


# ---------------------------------------------------------------- measures (binary relevance)


def average_precision(ranked, relevant):
    hits, total = 0, 0.0
    for i, d in enumerate(ranked, 1):
        if d in relevant:
            hits += 1
            total += hits / i
    return total / len(relevant) if relevant else 0.0


def ndcg(ranked, relevant, k=10):
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def evaluate(run, rel, judged):
    """run: {qid: [doc ids, best first]} -> mean measures over the judged queries."""
    n = len(judged)
    return {
        "MAP": sum(average_precision(run.get(q, []), rel[q]) for q in judged) / n,
        "nDCG@10": sum(ndcg(run.get(q, []), rel[q]) for q in judged) / n,
        "P@10": sum(len(set(run.get(q, [])[:10]) & rel[q]) / 10 for q in judged) / n,
        "R@100": sum(len(set(run.get(q, [])[:100]) & rel[q]) / len(rel[q]) for q in judged) / n,
    }


# ---------------------------------------------------------------- systems


def write_knowledge(root, docs):
    """The collection as a knowledge repository under ROOT: one topic folder, `cisi/`."""
    kdir = os.path.join(root, "cisi")
    os.makedirs(kdir)
    for did, title, body in docs:
        with open(os.path.join(kdir, f"d{did:04d}.md"), "w", encoding="utf-8") as f:
            # A JSON string is a valid YAML double-quoted scalar.
            f.write(f"---\ntitle: {json.dumps(title or f'CISI document {did}')}\n---\n\n{body}\n")


def doc_id(entry_id):
    return int(re.search(r"d(\d+)\.md$", entry_id).group(1))


def helix_run(helix, docs, queries, judged, k, keep):
    work = tempfile.mkdtemp(prefix="helix-cisi-")
    try:
        write_knowledge(os.path.join(work, "knowledge"), docs)
        index = os.path.join(work, "cisi.hix")
        env = dict(os.environ, HOME=work, XDG_CACHE_HOME=os.path.join(work, "cache"),
                   XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_DATA_HOME=os.path.join(work, "data"))
        b = subprocess.run([helix, "build", os.path.join(work, "knowledge"), "--no-git", "--project", "cisi", "-o", index],
                           capture_output=True, text=True, env=env, cwd=work)
        m = re.search(r"(\d+) entries, (\d+) invalid", b.stderr)
        if b.returncode != 0 or not m or int(m.group(1)) != len(docs) or int(m.group(2)) != 0:
            die(f"helix build did not index all {len(docs)} documents:\n{b.stderr[-2000:]}")
        run, capped = {}, 0
        for q in judged:
            r = subprocess.run([helix, "search", "--index", index, "--json", "-n", str(k), "--", queries[q]],
                               capture_output=True, text=True, env=env, cwd=work)
            if r.returncode != 0:
                die(f"helix search failed for query {q}: {r.stderr[-500:]}")
            ids = [doc_id(h["id"]) for h in json.loads(r.stdout)["hits"]]
            run[q] = ids
            capped += len(ids) == k
        return run, b.stderr.strip().splitlines()[-1], capped
    finally:
        if keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


# ---------------------------------------------------------------- helix-server (semantic search)


def _die_with_parent():
    """In the server's child process: have it killed when this script dies, even by SIGKILL
    (a SIGTERM would let it finish the compile under way first)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG (Linux)
    except Exception:
        pass


class Server:
    """One helix-server on 127.0.0.1:0 serving project `cisi` from UPSTREAM, in DIR (config,
    data, stdout, log). `[semantic] model = MODEL` when MODEL is given."""

    def __init__(self, binary, directory, upstream, model=None):
        self.dir = directory
        self.log = os.path.join(directory, "server.log")
        self.proc = None
        self.url = None
        os.makedirs(directory)
        config = os.path.join(directory, "server.toml")
        with open(config, "w", encoding="utf-8") as f:
            # TOML: top-level keys first, then tables; a JSON string is a TOML basic string.
            f.write("anonymous_loopback = true\n\n")
            if model:
                f.write(f"[semantic]\nmodel = {json.dumps(model)}\n\n")
            f.write(f"[[projects]]\nname = {json.dumps(PROJECT)}\nupstream = {json.dumps(upstream)}\n"
                    "poll_interval_secs = 3600\n")
        env = dict(os.environ, RUST_LOG="info", NO_COLOR="1")
        stdout = os.path.join(directory, "stdout")
        with open(stdout, "w") as out, open(self.log, "w") as err:
            self.proc = subprocess.Popen(
                [binary, "--config", config, "--data-dir", os.path.join(directory, "data"),
                 "--listen", "127.0.0.1:0"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=directory,
                preexec_fn=_die_with_parent)
        try:  # not yet in the caller's list of servers to stop
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with open(stdout, encoding="utf-8", errors="replace") as f:
                    m = re.search(r"^listening on (http://\S+)", f.read(), re.M)
                if m:
                    self.url = m.group(1)
                    return
                self.check_alive()
                time.sleep(0.05)
            die(f"helix-server did not start listening within 60 s:\n{self.log_tail()}")
        except BaseException:
            self.stop()
            raise

    def log_tail(self, n=3000):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def check_alive(self):
        if self.proc.poll() is not None:
            die(f"helix-server exited ({self.proc.returncode}):\n{self.log_tail()}")

    def get(self, path, params=None):
        url = self.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            body = e.read().decode("utf-8", "replace")
            try:
                return e.code, json.loads(body)
            except ValueError:
                return e.code, {"error": body}

    def wait_served(self, what):
        """Polls the project's status until it serves an artifact; returns the status."""
        start = last_note = time.monotonic()
        while True:
            self.check_alive()
            code, st = self.get(f"/v1/projects/{PROJECT}/status")
            if code == 200 and st.get("commit"):
                return st
            err = (st.get("last_fetch") or {}).get("error") if code == 200 else None
            if err:
                die(f"helix-server could not fetch the upstream: {err}")
            now = time.monotonic()
            if now - start > COMPILE_TIMEOUT_SECS:
                die(f"{what}: no artifact after {COMPILE_TIMEOUT_SECS} s:\n{self.log_tail()}")
            if now - last_note >= 60:
                print(f"cisi.py: {what}: compiling, {now - start:.0f} s so far", file=sys.stderr)
                last_note = now
            time.sleep(1 if now - start < 10 else 3)

    def compile_figures(self):
        """The fields of the log's `compiled new artifact` line (seconds, embed_ms, ...)."""
        with open(self.log, encoding="utf-8", errors="replace") as f:
            lines = [re.sub(r"\x1b\[[0-9;]*m", "", l) for l in f if "compiled new artifact" in l]
        return dict(re.findall(r"(\w+)=(\S+)", lines[0])) if lines else {}

    def search(self, q, limit):
        code, body = self.get(f"/v1/projects/{PROJECT}/search", {"q": q, "limit": limit})
        if code != 200:
            die(f"search API answered {code} for {q[:60]!r}: {body}")
        return body

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)  # a compile under way is not waited for
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def git(args, cwd, env):
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        die(f"git {' '.join(args)} failed: {r.stderr[-1000:]}")


def server_runs(server_bin, model, docs, queries, judged, k, keep):
    """The collection served by a plain helix-server and by one with `[semantic] model`:
    each judged query through the search API of both. Returns (lexical run, fused run, facts)."""
    limit = min(k, API_MAX_LIMIT)
    work = tempfile.mkdtemp(prefix="helix-cisi-server-")
    servers = []
    try:
        env = dict(os.environ, HOME=work, GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
                   GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
        src, up = os.path.join(work, "src"), os.path.join(work, "up.git")
        git(["init", "-q", "--bare", "-b", "main", up], work, env)
        git(["init", "-q", "-b", "main", src], work, env)
        write_knowledge(src, docs)
        git(["add", "-A"], src, env)
        git(["commit", "-q", "-m", "CISI"], src, env)
        git(["push", "-q", up, "main"], src, env)

        # The semantic server first: it embeds every entry while the plain one is queried.
        sem = Server(server_bin, os.path.join(work, "semantic"), up, model)
        servers.append(sem)
        plain = Server(server_bin, os.path.join(work, "plain"), up)
        servers.append(plain)

        facts = {"limit": limit}
        st = plain.wait_served("plain server")
        if st["entries"] != len(docs) or st["diagnostics"]:
            die(f"plain server compiled {st['entries']} entries of {len(docs)}: {st['diagnostics'][:5]}")
        lexical = {}
        for q in judged:
            body = plain.search(queries[q], limit)
            if "semantic" in body:
                die("the plain server answered with a `semantic` field")
            lexical[q] = [doc_id(h["id"]) for h in body["hits"]]
        facts["plain_compile"] = plain.compile_figures()
        plain.stop()

        t0 = time.monotonic()
        st = sem.wait_served("semantic server")
        facts["semantic_wait_secs"] = round(time.monotonic() - t0, 1)
        if st["entries"] != len(docs) or st["diagnostics"]:
            die(f"semantic server compiled {st['entries']} entries of {len(docs)}: {st['diagnostics'][:5]}")
        facts["semantic_compile"] = sem.compile_figures()
        fused, not_semantic, vector_only, rank_mismatch = {}, 0, 0, 0
        for q in judged:
            body = sem.search(queries[q], limit)
            if body.get("semantic") is not True:
                not_semantic += 1
            fused[q] = [doc_id(h["id"]) for h in body["hits"]]
            for h in body["hits"]:
                r = h.get("lexical_rank")
                if r is None:
                    vector_only += 1
                elif r > len(lexical[q]) or lexical[q][r - 1] != doc_id(h["id"]):
                    rank_mismatch += 1  # the fused hit's lexical rank is not its rank on the plain server
        facts.update(not_semantic=not_semantic, vector_only_hits=vector_only,
                     fused_hits=sum(len(v) for v in fused.values()), lexical_rank_mismatch=rank_mismatch)
        return lexical, fused, facts
    finally:
        for s in servers:
            s.stop()
        if keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


def compare_runs(a, b, judged, n):
    """Queries whose first N hits are the same in A and B, in the same order; and the same set."""
    same_order = sum(1 for q in judged if a.get(q, [])[:n] == b.get(q, [])[:n])
    same_set = sum(1 for q in judged if set(a.get(q, [])[:n]) == set(b.get(q, [])[:n]))
    return same_order, same_set


def bm25s_run(docs, queries, judged, k, doc_tok, query_tok, stemmer=None):
    import bm25s
    ids = [d[0] for d in docs]
    corpus = [f"{t}\n{b}" for _, t, b in docs]
    r = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    if stemmer is None:
        r.index([doc_tok(x) for x in corpus], show_progress=False)
    else:
        r.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    run = {}
    for q in judged:
        if stemmer is None:
            qt = [query_tok(queries[q])]
        else:
            qt = bm25s.tokenize([queries[q]], stopwords="en", stemmer=stemmer, show_progress=False)
        res, scores = r.retrieve(qt, k=min(k, len(ids)), show_progress=False)
        run[q] = [ids[i] for i, s in zip(res[0], scores[0]) if s > 0]
    return run


def main():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--helix", default=os.path.join(target, "release", "helix"))
    ap.add_argument("--baseline", help="a second helix binary measured in the same run (the last release)")
    ap.add_argument("--model", help="a sentence-embedding model directory: also measure the server's "
                                    "search API, lexical and fused with this model's vectors")
    ap.add_argument("--server", default=os.path.join(target, "release", "helix-server"),
                    help="the helix-server binary for --model (default: the release build)")
    ap.add_argument("--collection", default=DEFAULT_COLLECTION)
    ap.add_argument("--k", type=int, default=1000, help="results per query (default 1000)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temp directories")
    a = ap.parse_args()
    if not os.path.isfile(a.helix):
        die(f"no helix binary at {a.helix} (use --helix)")
    if a.model:
        if not os.path.isfile(a.server):
            die(f"no helix-server binary at {a.server} (use --server)")
        if not os.path.isdir(a.model):
            die(f"no model directory at {a.model}")
        if shutil.which("git") is None:
            die("--model needs git")
    try:
        import bm25s  # noqa: F401
    except ImportError:
        die("needs bm25s: pip install bm25s numpy")
    # SIGTERM and SIGHUP unwind as Ctrl-C does, so servers and temp directories go too.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))

    docs, queries, rel, judged = load(os.path.abspath(a.collection))
    if len(docs) != 1460 or len(judged) != 76:
        print(f"note: {len(docs)} documents, {len(judged)} judged queries (CISI has 1,460 and 76)", file=sys.stderr)
    hrun, built, capped = helix_run(os.path.abspath(a.helix), docs, queries, judged, a.k, a.keep)
    rows = [("helix search (AND-then-OR, its tokenizer)", evaluate(hrun, rel, judged))]
    if a.baseline:
        brun, _, _ = helix_run(os.path.abspath(a.baseline), docs, queries, judged, a.k, a.keep)
        rows.append(("helix search, baseline binary", evaluate(brun, rel, judged)))
    server = None
    if a.model:
        model = os.path.abspath(a.model)
        mname = os.path.basename(model.rstrip("/"))
        lrun, frun, facts = server_runs(os.path.abspath(a.server), model, docs, queries, judged, a.k, a.keep)
        n = facts["limit"]
        star = "" if n >= a.k else " *"
        if n < a.k:
            cut = {q: hrun.get(q, [])[:n] for q in judged}
            rows.append((f"helix search, cut to its first {n}{star}", evaluate(cut, rel, judged)))
        rows.append((f"helix, lexical (server API){star}", evaluate(lrun, rel, judged)))
        rows.append((f"helix, fused with {mname} (RRF){star}", evaluate(frun, rel, judged)))
        same_order, same_set = compare_runs(lrun, hrun, judged, n)
        server = dict(facts, model=model, binary=os.path.abspath(a.server),
                      lexical_same_order=same_order, lexical_same_set=same_set)
    helix_rows = len(rows)
    refs = [
        ("bm25s lucene, \\w+ tokens (a)", bm25s_run(docs, queries, judged, a.k, simple_tokens, simple_tokens)),
        ("bm25s lucene, helix-like tokens (b)", bm25s_run(docs, queries, judged, a.k, helix_like_tokens, helix_like_tokens)),
        ("bm25s lucene, helix-like tokens, each query term once (c)",
         bm25s_run(docs, queries, judged, a.k, helix_like_tokens, lambda s: first_distinct(helix_like_tokens(s), 10**9))),
        (f"bm25s lucene, helix-like tokens, each query term once, first {MAX_QUERY_TERMS} terms (d)",
         bm25s_run(docs, queries, judged, a.k, helix_like_tokens, lambda s: first_distinct(helix_like_tokens(s), MAX_QUERY_TERMS))),
    ]
    try:
        import Stemmer
        refs.append(("bm25s lucene, English stop words + Snowball stemmer (e)",
                     bm25s_run(docs, queries, judged, a.k, None, None, Stemmer.Stemmer("english"))))
    except ImportError:
        pass
    rows += [(name, evaluate(run, rel, judged)) for name, run in refs]
    long_q = sum(1 for q in judged if len(set(helix_like_tokens(queries[q]))) > MAX_QUERY_TERMS)

    if a.json:
        json.dump({"helix": os.path.abspath(a.helix), "k": a.k, "build": built, "server": server,
                   "rows": [{"system": n, **m} for n, m in rows]}, sys.stdout, indent=1)
        print()
        return
    print(f"CISI: {len(docs)} documents, {len(judged)} judged queries, {sum(len(rel[q]) for q in judged)} judgements; "
          f"top {a.k} per query; helix {os.path.abspath(a.helix)}")
    print(f"helix build: {built}")
    print(f"queries with more than {MAX_QUERY_TERMS} distinct terms (helix uses the first {MAX_QUERY_TERMS}): {long_q}; "
          f"queries where helix returned the full {a.k}: {capped}")
    if server:
        n = server["limit"]
        pc, sc = server["plain_compile"], server["semantic_compile"]
        print(f"helix-server {server['binary']}; model {server['model']}")
        print(f"server compiles: plain {pc.get('seconds', '?')} s; with the model {sc.get('seconds', '?')} s "
              f"(embed_ms {sc.get('embed_ms', '?')}, embedded {sc.get('embedded', '?')}; "
              f"waited {server['semantic_wait_secs']} s)")
        print(f"search API, limit {n}: lexical answer equal to `helix search`'s first {n} in "
              f"{server['lexical_same_order']}/{len(judged)} queries (same set: {server['lexical_same_set']}); "
              f"fused answers not semantic: {server['not_semantic']}; fused hits found only by their vector: "
              f"{server['vector_only_hits']} of {server['fused_hits']}; fused hits whose lexical_rank is not "
              f"their rank on the plain server: {server['lexical_rank_mismatch']}")
    print()
    if server and server["limit"] < a.k:
        print(f"(* top {server['limit']} per query, the search API's most, not {a.k}: "
              f"R@100 is whole, MAP counts only the first {server['limit']})")
    print("| system | MAP | nDCG@10 | P@10 | R@100 |")
    print("|---|---:|---:|---:|---:|")
    for name, m in rows:
        print(f"| {name} | {m['MAP']:.4f} | {m['nDCG@10']:.4f} | {m['P@10']:.4f} | {m['R@100']:.4f} |")
    h = rows[0][1]
    print()
    if a.baseline:
        b = rows[1][1]
        print(f"helix / baseline: MAP {h['MAP'] / b['MAP']:.3f}x, nDCG@10 {h['nDCG@10'] / b['nDCG@10']:.3f}x")
    if server:
        lx, fu = rows[helix_rows - 2][1], rows[helix_rows - 1][1]
        print(f"fused / lexical (server API): MAP {fu['MAP'] / lx['MAP']:.3f}x, nDCG@10 {fu['nDCG@10'] / lx['nDCG@10']:.3f}x, "
              f"P@10 {fu['P@10'] / lx['P@10']:.3f}x, R@100 {fu['R@100'] / lx['R@100']:.3f}x")
    for name, m in rows[helix_rows:helix_rows + 2]:
        print(f"helix / {name}: MAP {h['MAP'] / m['MAP']:.3f}x, nDCG@10 {h['nDCG@10'] / m['nDCG@10']:.3f}x "
              f"(target: not below 1.0x, aim 1.05x nDCG@10)")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("cisi.py: interrupted", file=sys.stderr)
        sys.exit(130)
