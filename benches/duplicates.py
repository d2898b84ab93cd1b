#!/usr/bin/env python3
"""Precision and recall of helix's near-duplicate check on labelled pairs of the til corpus.

Usage: benches/duplicates.py [CORPUS]   (default: ../shared/corpora/til beside the checkout)

benches/duplicates/pairs.jsonl holds pairs of til notes judged by hand: `duplicate` (the
same question in the same tool, answered again or with a trivial variant: a second note a
team would rather have had as an edit of the first) or `related` (same area, a different
question, or the same question in another language or tool). The pairs were drawn from
those scoring at least 0.3 with an earlier version of the similarity, so the related ones
are the hard cases (`"sample": "hard: scored >= 0.3"`), plus 45 pairs of notes of one topic
drawn at random (seed 14, each read: none a duplicate), the everyday case of a new note in a
busy topic. A duplicate scoring below 0.3 would be missing from the set.
This script scores every pair with the Rust implementation (`index-format/examples/
duplicates.rs`, the same code as `helix store` and `helix check`) and prints precision and
recall at each threshold around the chosen one (`similar::DUPLICATE_THRESHOLD`).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "corpora", "til")
pairs = os.path.join(HERE, "duplicates", "pairs.jsonl")
out = subprocess.run(
    ["cargo", "run", "-q", "--release", "-p", "helix-index-format", "--example", "duplicates", "--",
     corpus, "score", pairs],
    cwd=ROOT, check=True, capture_output=True, text=True).stdout
rows = [json.loads(l) for l in out.splitlines() if l.strip()]
dups = sum(r["label"] == "duplicate" for r in rows)
print(f"{len(rows)} pairs: {dups} duplicate, {len(rows) - dups} related")


def table(rows, what):
    dups = sum(r["label"] == "duplicate" for r in rows)
    print(f"{what}: {len(rows)} pairs, {dups} duplicate")
    print("  threshold  precision  recall  F1     flagged")
    for t in [x / 100 for x in range(30, 71, 5)]:
        flagged = [r for r in rows if r["score"] >= t]
        tp = sum(r["label"] == "duplicate" for r in flagged)
        p = tp / len(flagged) if flagged else 1.0
        rc = tp / dups if dups else 0.0
        f1 = 2 * p * rc / (p + rc) if p + rc else 0.0
        print(f"    {t:.2f}      {p:.3f}     {rc:.3f}  {f1:.3f}  {len(flagged)}")


table(rows, "all pairs")
table([r for r in rows if r["sample"].startswith("hard")], "hard pairs only")
if "-v" in sys.argv:
    for r in sorted(rows, key=lambda r: -r["score"]):
        print(f"{r['score']:.3f} {r['label']:9} {r['titles'][0]} || {r['titles'][1]}")
