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

Usage: python3 benches/cisi.py [--helix BIN] [--baseline BIN] [--k 1000] [--json] [--collection DIR]
Needs: pip install bm25s numpy (and PyStemmer for row e).
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_COLLECTION = os.path.join(ROOT, "..", "shared", "corpora", "cisi")
MAX_QUERY_TERMS = 32  # index-format/src/search.rs


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


def helix_run(helix, docs, queries, judged, k, keep):
    work = tempfile.mkdtemp(prefix="helix-cisi-")
    try:
        kdir = os.path.join(work, "knowledge", "cisi")
        os.makedirs(kdir)
        for did, title, body in docs:
            with open(os.path.join(kdir, f"d{did:04d}.md"), "w", encoding="utf-8") as f:
                # A JSON string is a valid YAML double-quoted scalar.
                f.write(f"---\ntitle: {json.dumps(title or f'CISI document {did}')}\n---\n\n{body}\n")
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
            ids = [int(re.search(r"d(\d+)\.md$", h["id"]).group(1)) for h in json.loads(r.stdout)["hits"]]
            run[q] = ids
            capped += len(ids) == k
        return run, b.stderr.strip().splitlines()[-1], capped
    finally:
        if keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


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
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--helix", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "helix"))
    ap.add_argument("--baseline", help="a second helix binary measured in the same run (the last release)")
    ap.add_argument("--collection", default=DEFAULT_COLLECTION)
    ap.add_argument("--k", type=int, default=1000, help="results per query (default 1000)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temp knowledge directory")
    a = ap.parse_args()
    if not os.path.isfile(a.helix):
        die(f"no helix binary at {a.helix} (use --helix)")
    try:
        import bm25s  # noqa: F401
    except ImportError:
        die("needs bm25s: pip install bm25s numpy")

    docs, queries, rel, judged = load(os.path.abspath(a.collection))
    if len(docs) != 1460 or len(judged) != 76:
        print(f"note: {len(docs)} documents, {len(judged)} judged queries (CISI has 1,460 and 76)", file=sys.stderr)
    hrun, built, capped = helix_run(os.path.abspath(a.helix), docs, queries, judged, a.k, a.keep)
    rows = [("helix search (AND-then-OR, its tokenizer)", evaluate(hrun, rel, judged))]
    if a.baseline:
        brun, _, _ = helix_run(os.path.abspath(a.baseline), docs, queries, judged, a.k, a.keep)
        rows.append(("helix search, baseline binary", evaluate(brun, rel, judged)))
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
        json.dump({"helix": os.path.abspath(a.helix), "k": a.k, "build": built,
                   "rows": [{"system": n, **m} for n, m in rows]}, sys.stdout, indent=1)
        print()
        return
    print(f"CISI: {len(docs)} documents, {len(judged)} judged queries, {sum(len(rel[q]) for q in judged)} judgements; "
          f"top {a.k} per query; helix {os.path.abspath(a.helix)}")
    print(f"helix build: {built}")
    print(f"queries with more than {MAX_QUERY_TERMS} distinct terms (helix uses the first {MAX_QUERY_TERMS}): {long_q}; "
          f"queries where helix returned the full {a.k}: {capped}")
    print()
    print("| system | MAP | nDCG@10 | P@10 | R@100 |")
    print("|---|---:|---:|---:|---:|")
    for name, m in rows:
        print(f"| {name} | {m['MAP']:.4f} | {m['nDCG@10']:.4f} | {m['P@10']:.4f} | {m['R@100']:.4f} |")
    h = rows[0][1]
    print()
    refs_from = 2 if a.baseline else 1
    if a.baseline:
        b = rows[1][1]
        print(f"helix / baseline: MAP {h['MAP'] / b['MAP']:.3f}x, nDCG@10 {h['nDCG@10'] / b['nDCG@10']:.3f}x")
    for name, m in rows[refs_from:refs_from + 2]:
        print(f"helix / {name}: MAP {h['MAP'] / m['MAP']:.3f}x, nDCG@10 {h['nDCG@10'] / m['nDCG@10']:.3f}x "
              f"(target: not below 1.0x, aim 1.05x nDCG@10)")


if __name__ == "__main__":
    main()
