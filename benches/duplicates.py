#!/usr/bin/env python3
"""Precision and recall of helix's near-duplicate check on labelled pairs of the til corpus.

Usage: benches/duplicates.py [CORPUS] [-v]   (default: corpora/til)
       benches/duplicates.py sample [CORPUS] (re-draw the unlabelled pairs; see below)

The labelled set, benches/duplicates/pairs.jsonl: 277 pairs of til notes, each judged by
reading both notes against one definition. `duplicate`: a team would rather have had the
second note as an edit of the first -- the same question, in the same tool or context,
answered again or with a trivial variant (one file or a directory; a second way to do it).
`related`: anything else, including the same question in another tool or language (bash
and zsh, Postgres and Rails) and the neighbouring question in one tool (keys / values,
check / set, kill all / kill current). Each line carries both titles, a one-line `why` for
each duplicate, the `sample` it came from, its plain token Jaccard and its `part`.

How the pairs were drawn (seed 14), so that the set does not depend on the measure under
test:
- 110 new pairs from bands of a cheap independent similarity, the Jaccard of the sets of
  lower-case alphanumeric tokens of the whole files: 30 from pairs at >= 0.30 (97 in the
  corpus), 20 from 0.25-0.30 (739), 20 from 0.20-0.25 (11,550), 10 from 0.15-0.20 and 5
  below 0.15 (random pairs), plus 25 random pairs of notes of one topic folder.
- the 167 pairs of the first set (122 drawn from pairs scoring >= 0.3 with the first
  similarity, 45 random same-topic pairs), re-read against the definition above: 10 moved
  from duplicate to related (`"was": "duplicate"`: the same question in another tool).
The 110 new pairs hold 7 duplicates: duplicates are rare, so most of the duplicates (and the
recall figure) still come from the first set's pairs; precision is measured against both.
`part` splits the set by a hash of the pair (tune: 153 pairs, 27 duplicates; held-out: 124
pairs, 31 duplicates). The measure and threshold were chosen on `tune`; report `held-out`.

This script scores every pair with the Rust implementation (`index-format/examples/
duplicates.rs`, the same code as `helix store` and `helix check`) and prints, per part, the
precision and recall of the current similarity at thresholds around `DUPLICATE_THRESHOLD`,
beside the first similarity (0.45 title cosine + 0.55 body cosine, + 0.25 sources, threshold
0.40), recomputed from the same run's parts.
"""
import hashlib
import itertools
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PAIRS = os.path.join(HERE, "duplicates", "pairs.jsonl")
args = [a for a in sys.argv[1:] if not a.startswith("-")]
SAMPLE = bool(args) and args[0] == "sample"
if SAMPLE:
    args = args[1:]
corpus = args[0] if args else os.path.join(ROOT, "corpora", "til")


def sample():
    """Print the pairs the labelled set's new part was drawn from (unlabelled, one per line)."""
    notes = {}
    for d in sorted(os.listdir(corpus)):
        if os.path.isdir(os.path.join(corpus, d)):
            for f in sorted(os.listdir(os.path.join(corpus, d))):
                if f.endswith(".md"):
                    with open(os.path.join(corpus, d, f), encoding="utf-8") as fh:
                        notes[f"{d}/{f}"] = frozenset(re.findall(r"[a-z0-9]+", fh.read().lower()))
    ids = sorted(notes)
    jac = lambda a, b: len(notes[a] & notes[b]) / len(notes[a] | notes[b])
    high = [(jac(a, b), a, b) for a, b in itertools.combinations(ids, 2)]
    high = [x for x in high if x[0] >= 0.2]
    rng = random.Random(14)
    seen = set()
    with open(PAIRS) as fh:
        first = [json.loads(l) for l in fh if l.strip()]
    seen = {tuple(sorted((r["a"], r["b"]))) for r in first if r["sample"].startswith("first set")}
    out = []

    def add(a, b, what):
        k = tuple(sorted((a, b)))
        if k in seen:
            return False
        seen.add(k)
        out.append({"a": k[0], "b": k[1], "sample": what, "jaccard": round(jac(*k), 3)})
        return True

    for lo, hi, n in [(0.30, 1.01, 30), (0.25, 0.30, 20), (0.20, 0.25, 20)]:
        band = [(a, b) for j, a, b in high if lo <= j < hi]
        rng.shuffle(band)
        k = 0
        for a, b in band:
            if k == n:
                break
            k += add(a, b, f"jaccard {lo:.2f}-{hi:.2f}")
    for lo, hi, n, topic in [(0.15, 0.20, 10, False), (0.0, 0.15, 5, False), (0.0, 1.01, 25, True)]:
        k = 0
        while k < n:
            a, b = rng.sample(ids, 2)
            if topic and a.split("/")[0] != b.split("/")[0]:
                continue
            if lo <= jac(a, b) < hi:
                k += add(a, b, "same topic random" if topic else f"jaccard {lo:.2f}-{hi:.2f}")
    for r in out:
        h = int(hashlib.sha1((r["a"] + "|" + r["b"]).encode()).hexdigest(), 16)
        r["part"] = "held-out" if h % 2 else "tune"
        print(json.dumps(r))


if SAMPLE:
    sample()
    sys.exit(0)

out = subprocess.run(
    ["cargo", "run", "-q", "--release", "-p", "helix-index-format", "--example", "duplicates", "--",
     corpus, "score", PAIRS],
    cwd=ROOT, check=True, capture_output=True, text=True).stdout
rows = [json.loads(l) for l in out.splitlines() if l.strip()]
for r in rows:
    s = r["sources"]
    r["first"] = (0.45 * r["title"] + 0.55 * r["body"] + (0.25 * s if s is not None else 0)) / (
        1.25 if s is not None else 1.0)
dups = sum(r["label"] == "duplicate" for r in rows)
print(f"{len(rows)} pairs: {dups} duplicate, {len(rows) - dups} related")


def auc(rows, key):
    pos = [r[key] for r in rows if r["label"] == "duplicate"]
    neg = [r[key] for r in rows if r["label"] != "duplicate"]
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def table(rows, what):
    dups = sum(r["label"] == "duplicate" for r in rows)
    print(f"\n{what}: {len(rows)} pairs, {dups} duplicate; "
          f"AUC first {auc(rows, 'first'):.3f}, current {auc(rows, 'score'):.3f}")
    print("  measure  threshold  precision  recall  flagged")
    for key, ts in [("first", [0.40, 0.50, 0.60]), ("score", [0.40, 0.44, 0.46, 0.48, 0.50, 0.55])]:
        for t in ts:
            flagged = [r for r in rows if r[key] >= t]
            tp = sum(r["label"] == "duplicate" for r in flagged)
            p = tp / len(flagged) if flagged else 1.0
            print(f"  {key:7}    {t:.2f}      {p:.3f}     {tp / dups:.3f}  {len(flagged)}")


for part in ["tune", "held-out"]:
    table([r for r in rows if r["part"] == part], part)
table(rows, "all pairs")
if "-v" in sys.argv:
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(f"{r['score']:.3f} {r['label']:9} {r['part']:8} {r['titles'][0]} || {r['titles'][1]}")
