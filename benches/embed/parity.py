#!/usr/bin/env python3
"""helix-embed against a reference forward pass on a real model.

    parity.py MODEL_DIR [--onnx MODEL.onnx] [--corpus VECTORS.f32] [--max-tokens 256]

The reference is BERT written out in numpy, in float64: Hugging Face's BertModel in eval
mode (embeddings, post-LayerNorm encoder layers, exact GELU), sentence-transformers' mean
pooling over the attention mask and its Normalize, on token ids from the Hugging Face
`tokenizers` package (the tokenizer sentence-transformers itself uses). It embeds the
texts below with both and prints each cosine (the bar: ≥ 0.999), and the sanity pair.

--onnx also runs the original ONNX export with onnxruntime (a third implementation, the
one torch.onnx traced) and compares it with the numpy reference.

--corpus compares the vectors `embed_bench --vectors FILE` wrote for a whole corpus (with
the texts it wrote beside them, FILE.texts.json) against the reference (all of them: 16
minutes for corpora/til; `--sample 10` takes every tenth).

Needs numpy, safetensors, tokenizers (scipy for a fast erf; onnxruntime for --onnx). Runs the Rust side with
`cargo run --release -p helix-embed --example embed_texts`.
"""

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]

TEXTS = [
    "How do I delete a git branch?",
    "remove a branch in git",
    "bake a chocolate cake",
    "undo the last commit but keep the changes",
    "git reset --soft HEAD~1 keeps your changes staged",
    "cargo build is slow on CI: cache the target directory between runs",
    "Docker container cannot reach a service on the host (use host.docker.internal)",
    "Postgres picks a sequential scan instead of the index; run ANALYZE",
    "kubectl rollout restart deployment/web",
    "Café, naïve, résumé — accents and non-ASCII text",
    "CachedEntry::from_bytes returns FormatError when the checksum does not match",
    "日本語のテキストと English mixed",
    "",
    "a " * 400,  # past max_tokens: the cut
]


try:
    from scipy.special import erf
except ImportError:
    def erf(x):
        # numpy has no erf: math.erf elementwise (exact to double precision, and slow).
        return np.vectorize(math.erf, otypes=[np.float64])(x)


class Reference:
    def __init__(self, model_dir, max_tokens):
        model_dir = Path(model_dir)
        self.cfg = json.loads((model_dir / "config.json").read_text())
        raw = load_file(str(model_dir / "model.safetensors"))
        anchor = "embeddings.word_embeddings.weight"
        prefix = min((k[: -len(anchor)] for k in raw if k.endswith(anchor)), key=len)
        self.w = {k[len(prefix):]: v.astype(np.float64) for k, v in raw.items() if k.startswith(prefix)}
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=min(max_tokens, self.cfg["max_position_embeddings"]))

    def ids(self, text):
        return self.tok.encode(text).ids

    def ln(self, x, p):
        w = self.w
        g = w.get(f"{p}.weight", w.get(f"{p}.gamma"))
        b = w.get(f"{p}.bias", w.get(f"{p}.beta"))
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.cfg["layer_norm_eps"]) * g + b

    def lin(self, x, p):
        return x @ self.w[f"{p}.weight"].T + self.w[f"{p}.bias"]

    def hidden(self, ids):
        w, c = self.w, self.cfg
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self.ln(x, "embeddings.LayerNorm")
        heads = c["num_attention_heads"]
        d = c["hidden_size"] // heads
        for l in range(c["num_hidden_layers"]):
            p = f"encoder.layer.{l}"
            q, k, v = (self.lin(x, f"{p}.attention.self.{s}").reshape(n, heads, d).transpose(1, 0, 2)
                       for s in ("query", "key", "value"))
            s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * d)
            a = self.ln(self.lin(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            u = self.lin(a, f"{p}.intermediate.dense")
            if c.get("hidden_act", "gelu") == "gelu":
                u = 0.5 * u * (1 + erf(u / math.sqrt(2)))
            else:
                u = 0.5 * u * (1 + np.tanh(math.sqrt(2 / math.pi) * (u + 0.044715 * u ** 3)))
            x = self.ln(self.lin(u, f"{p}.output.dense") + a, f"{p}.output.LayerNorm")
        return x

    def embed(self, text):
        v = self.hidden(self.ids(text)).mean(0)
        return v / max(np.linalg.norm(v), 1e-12)


def rust_vectors(model_dir, texts, max_tokens):
    cmd = ["cargo", "run", "--quiet", "--release", "-p", "helix-embed", "--example", "embed_texts",
           "--", str(Path(model_dir).resolve()), "--max-tokens", str(max_tokens)]
    stdin = "".join(json.dumps(t) + "\n" for t in texts)
    run = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if run.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode})")
    out = run.stdout
    return [np.array(json.loads(line)) for line in out.splitlines()]


def onnx_vectors(path, ref, texts):
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    out = []
    for t in texts:
        ids = np.array([ref.ids(t)], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        # The sentence embedding is the output of shape (1, hidden).
        outs = [o for o in sess.run(None, feed) if o.shape == (1, ref.cfg["hidden_size"])]
        v = outs[0][0].astype(np.float64)
        out.append(v / np.linalg.norm(v))
    return out


def cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("--onnx")
    ap.add_argument("--corpus")
    ap.add_argument("--sample", type=int, default=0,
                    help="with --corpus: every n-th text only (the reference takes about 0.5 s a text)")
    ap.add_argument("--max-tokens", type=int, default=256)
    args = ap.parse_args()

    ref = Reference(args.model_dir, args.max_tokens)
    want = [ref.embed(t) for t in TEXTS]
    got = rust_vectors(args.model_dir, TEXTS, args.max_tokens)
    worst = 1.0
    print(f"{'cosine':>10}  {'1 - cosine':>10}  {'max |diff|':>10}  tokens  text")
    for t, w, g in zip(TEXTS, want, got):
        c = cos(w, g)
        worst = min(worst, c)
        print(f"{c:10.7f}  {1 - c:10.1e}  {np.abs(w - g).max():10.2e}  {len(ref.ids(t)):6d}  {t[:50]!r}")
    print(f"helix-embed vs numpy reference: {len(TEXTS)} texts, worst cosine 1 - {1 - worst:.1e}")
    print(f"sanity (reference): cos(delete a git branch, remove a branch in git) = {cos(want[0], want[1]):.4f}, "
          f"(…, bake a chocolate cake) = {cos(want[0], want[2]):.4f}")
    print(f"sanity (helix-embed): {cos(got[0], got[1]):.4f}, {cos(got[0], got[2]):.4f}")
    ok = worst >= 0.999

    if args.onnx:
        o = onnx_vectors(args.onnx, ref, TEXTS)
        w_onnx = min(cos(a, b) for a, b in zip(o, want))
        w_rust = min(cos(a, b) for a, b in zip(o, got))
        print(f"onnxruntime on the original export: worst cosine vs numpy 1 - {1 - w_onnx:.1e}, "
              f"vs helix-embed 1 - {1 - w_rust:.1e}")
        ok = ok and min(w_onnx, w_rust) >= 0.999

    if args.corpus:
        texts = json.loads(Path(args.corpus + ".texts.json").read_text())
        vecs = np.fromfile(args.corpus, dtype="<f4").reshape(len(texts), -1).astype(np.float64)
        step = max(args.sample, 1)
        cs = np.array([cos(ref.embed(t), v) for t, v in zip(texts[::step], vecs[::step])])
        print(f"corpus: {len(cs)} of {len(texts)} texts, worst cosine 1 - {1 - cs.min():.1e}, "
              f"mean 1 - {1 - cs.mean():.1e}, below 0.999: {(cs < 0.999).sum()}")
        ok = ok and cs.min() >= 0.999

    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
