#!/usr/bin/env python3
"""A BERT sentence-transformers model exported to ONNX, back to the Hugging Face layout.

    onnx_to_safetensors.py MODEL.onnx OUT_DIR --tokenizer tokenizer.json [--max-seq-length N]

torch.onnx keeps the embeddings, biases and LayerNorm parameters under their module names
(`model.0.auto_model.embeddings.word_embeddings.weight`, …) but stores each Linear's weight
transposed under an anonymous name (`onnx::MatMul_470`, in × out). Each such weight is
named here after the bias the graph adds to its product (`….query.bias` gives
`….query.weight`) and transposed back to PyTorch's out × in. The configuration comes from
the graph: hidden and intermediate sizes and the vocabulary from the tensors' shapes, the
layer count from their names, the head width from the attention's 1/√d scale, the
LayerNorm epsilon from its attribute, GELU from the Erf nodes. The ONNX file carries no
tokenizer: `--tokenizer` names the one to copy (for MiniLM models, BERT's uncased
WordPiece vocabulary, the same as all-MiniLM-L6-v2's).

Writes OUT_DIR/{config.json, model.safetensors, tokenizer.json, sentence_bert_config.json}.
Needs numpy, onnx and safetensors.
"""

import argparse
import json
import math
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from safetensors.numpy import save_file


def constants(graph):
    """Every constant value in the graph by output name: initializers and Constant nodes."""
    out = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    out[n.output[0]] = numpy_helper.to_array(a.t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("onnx")
    ap.add_argument("out")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--max-seq-length", type=int, default=128)
    args = ap.parse_args()

    model = onnx.load(args.onnx)
    g = model.graph
    consts = constants(g)
    inits = {t.name for t in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    # The named tensors, without the pipeline's prefix.
    anchor = "embeddings.word_embeddings.weight"
    prefixes = [n[: -len(anchor)] for n in inits if n.endswith(anchor)]
    if len(prefixes) != 1:
        sys.exit(f"expected one {anchor}, found {len(prefixes)}")
    prefix = prefixes[0]
    tensors = {}
    for name in inits:
        if name.startswith(prefix) and not name.startswith("onnx::"):
            tensors[name[len(prefix):]] = consts[name]

    # Anonymous MatMul weights: named after the bias added to their product.
    for n in g.node:
        if n.op_type != "MatMul" or n.input[1] not in inits or n.input[1] in tensors:
            continue
        w = consts[n.input[1]]
        adds = [c for c in consumers.get(n.output[0], []) if c.op_type == "Add"]
        biases = [i for a in adds for i in a.input if i in inits and i.endswith(".bias")]
        if len(biases) != 1:
            sys.exit(f"cannot name MatMul weight {n.input[1]} (biases after it: {biases})")
        name = biases[0][len(prefix):].removesuffix(".bias") + ".weight"
        tensors[name] = np.ascontiguousarray(w.T)

    vocab, hidden = tensors["embeddings.word_embeddings.weight"].shape
    layers = 1 + max(int(m.group(1)) for k in tensors if (m := re.match(r"encoder\.layer\.(\d+)\.", k)))
    intermediate = tensors["encoder.layer.0.intermediate.dense.weight"].shape[0]
    positions = tensors["embeddings.position_embeddings.weight"].shape[0]
    type_vocab = tensors["embeddings.token_type_embeddings.weight"].shape[0]
    for l in range(layers):
        for part in ["attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense", "intermediate.dense", "output.dense"]:
            if f"encoder.layer.{l}.{part}.weight" not in tensors:
                sys.exit(f"no weight for encoder.layer.{l}.{part}")

    # Head width: the attention scores are divided by √d.
    scales = set()
    for n in g.node:
        if n.op_type == "Div" and "attention/self" in n.name and n.input[1] in consts:
            scales.add(float(consts[n.input[1]]))
    if len(scales) != 1:
        sys.exit(f"cannot find the attention scale (found {scales})")
    head_dim = round(scales.pop() ** 2)
    if head_dim <= 0 or hidden % head_dim:
        sys.exit(f"head width {head_dim} does not divide hidden size {hidden}")
    eps = {round(a.f, 20) for n in g.node if n.op_type == "LayerNormalization"
           for a in n.attribute if a.name == "epsilon"}
    eps = float(np.float32(eps.pop())) if len(eps) == 1 else 1e-12
    ops = {n.op_type for n in g.node}
    if "Erf" in ops:
        act = "gelu"
    elif "Tanh" in ops:
        act = "gelu_new"
    else:
        sys.exit("cannot tell the activation (no Erf or Tanh node)")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": act,
        "hidden_size": int(hidden),
        "intermediate_size": int(intermediate),
        "num_attention_heads": int(hidden // head_dim),
        "num_hidden_layers": int(layers),
        "max_position_embeddings": int(positions),
        "type_vocab_size": int(type_vocab),
        "vocab_size": int(vocab),
        "layer_norm_eps": 1e-12 if math.isclose(eps, 1e-12, rel_tol=1e-6) else eps,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sorted(tensors.items())},
               str(out / "model.safetensors"))
    shutil.copyfile(args.tokenizer, out / "tokenizer.json")
    (out / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": args.max_seq_length, "do_lower_case": False}) + "\n")
    print(f"{len(tensors)} tensors, {layers} layers, hidden {hidden}, "
          f"{hidden // head_dim} heads, intermediate {intermediate}, {act}", file=sys.stderr)


if __name__ == "__main__":
    main()
