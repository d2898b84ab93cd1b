#!/usr/bin/env python3
"""Ranking comparison: helix BM25 against bm25s (Lucene variant) and rank_bm25 (Okapi) on the
same corpus and 50 queries taken from entry titles. Reports top-10 overlap and top-1 agreement.

Usage: python3 benches/ranking.py [CORPUS_DIR]   (default corpora/til)
Needs: pip install bm25s rank_bm25 numpy; builds the `rank` example of helix-index-format.
"""
import json, os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "corpora", "til"))

import bm25s
from rank_bm25 import BM25Okapi

docs = []  # (id, title, text)
for topic in sorted(os.listdir(corpus)):
    d = os.path.join(corpus, topic)
    if not os.path.isdir(d) or topic.startswith("."):
        continue
    for name in sorted(os.listdir(d)):
        if not name.endswith(".md"):
            continue
        text = open(os.path.join(d, name), encoding="utf-8", errors="replace").read()
        m = re.search(r"^# (.+)$", text, re.M)
        title = m.group(1).strip() if m else name[:-3]
        docs.append((f"{topic}/{name}", title, text))

# 50 queries from titles, spread over the corpus; lowercased and de-punctuated as typed.
step = max(1, len(docs) // 50)
queries = [docs[i][1] for i in range(0, len(docs), step)][:50]

def simple_tokens(s):
    return re.findall(r"\w+", s.lower())

STOP = set("""a about an and are as at be been but by can d did do does from had has have how i in
into is it its ll m me my of on or our re s so t than that the their them then there these they
this those to too us ve was we were what when where which who why will with would you your""".split())

def helix_like_tokens(s):
    """An approximation of helix's tokenizer (index-format/src/tokenize.rs) in Python:
    identifier runs split on _ - . : and camelCase, whole identifier kept, stop words dropped."""
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

ids = [d[0] for d in docs]
corpus_tokens = [simple_tokens(d[2]) for d in docs]  # the body already holds the title heading
helix_tok_corpus = [helix_like_tokens(d[1] + "\n" + d[2]) for d in docs]
lucene_ht = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
lucene_ht.index(helix_tok_corpus, show_progress=False)

def top_lucene_helix_tokens(q):
    res, scores = lucene_ht.retrieve([helix_like_tokens(q)], k=10, show_progress=False)
    return [ids[i] for i, s in zip(res[0], scores[0]) if s > 0]

lucene = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
lucene.index(corpus_tokens, show_progress=False)
okapi = BM25Okapi(corpus_tokens, k1=1.2, b=0.75)

def top_lucene(q):
    res, scores = lucene.retrieve([simple_tokens(q)], k=10, show_progress=False)
    return [ids[i] for i, s in zip(res[0], scores[0]) if s > 0]

def top_okapi(q):
    scores = okapi.get_scores(simple_tokens(q))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], i))[:10]
    return [ids[i] for i in order if scores[i] > 0]

subprocess.run(["cargo", "build", "-q", "--release", "-p", "helix-index-format", "--example", "rank"], cwd=root, check=True)
exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target")), "release", "examples", "rank")
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    f.write("\n".join(queries) + "\n")
out = subprocess.run([exe, corpus, f.name], capture_output=True, text=True, check=True).stdout
helix = [json.loads(l) for l in out.splitlines()]

def overlap(a, b):
    return len(set(a) & set(b)) / 10

rows = []
for name, ref in [("bm25s (lucene)", top_lucene), ("rank_bm25 (okapi)", top_okapi),
                  ("bm25s (lucene) with helix-like tokens", top_lucene_helix_tokens)]:
    for mode in ["or", "and"]:
        ov = [overlap(h[mode], ref(h["query"])) for h in helix]
        t1 = [bool(h[mode]) and bool(ref(h["query"])) and h[mode][0] == ref(h["query"])[0] for h in helix]
        # Where does the entry the query was taken from land? (a known-item sanity check)
        rows.append((name, mode, sum(ov) / len(ov), sum(t1) / len(t1)))

def known_item(rank_fn):
    hits = 0
    for q in queries:
        src = next(d[0] for d in docs if d[1] == q)
        hits += src in rank_fn(q)[:1]
    return hits / len(queries)

print(f"corpus: {corpus} ({len(docs)} docs), {len(queries)} title queries")
print("| reference | helix mode | mean top-10 overlap | top-1 agreement |")
print("|---|---|---|---|")
for name, mode, ov, t1 in rows:
    print(f"| {name} | {mode} | {ov:.2f} | {t1:.2f} |")
print()
print("known-item success@1 (the entry whose title is the query ranks first):")
print(f"  helix AND-then-OR: {known_item(lambda q: next(h['and'] for h in helix if h['query'] == q)):.2f}")
print(f"  helix OR:          {known_item(lambda q: next(h['or'] for h in helix if h['query'] == q)):.2f}")
print(f"  bm25s lucene:      {known_item(top_lucene):.2f}")
print(f"  rank_bm25 okapi:   {known_item(top_okapi):.2f}")
