"""Recover trainable weights from the shipped int8 cross-encoder, to continue training from it.

The fp16 checkpoint of a training run is not kept (``out/`` is not in the repository); the
shipped ``model.onnx`` is. Its graph is the one ``export.py`` makes: onnxruntime's fused BERT
(``QEmbedLayerNormalization``, ``QAttention`` with one QKV matrix, ``MatMulInteger``) with
per-channel int8 weights. Each weight is dequantised (``(q - zero point) * scale``) and put back
under its ``BertForSequenceClassification`` name; the fused QKV matrix is split into query, key
and value. The int8 rounding stays in the weights (the file correlates 0.996 with its fp32
model), which further training then smooths.

Writes ``config.json`` and ``model.safetensors`` to ``--out`` (what ``train.py --base`` reads),
after checking that the recovered model scores pairs as the shipped file does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from safetensors.torch import save_file

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from export import TARGET  # noqa: E402
from train import base_dir, build_model  # noqa: E402

MIN_CORRELATION = 0.98  # int8 activations alone cost the file ~0.005 against its fp32 model


def dequantised(inits: dict[str, np.ndarray], name: str) -> np.ndarray:
    """``name``'s float values: the initialiser itself, or its int8/uint8 form rescaled."""
    if name in inits:
        return inits[name].astype(np.float32)
    q = inits[f"{name}_quantized"].astype(np.float32)
    scale = inits[f"{name}_scale"].astype(np.float32)
    zero = inits[f"{name}_zero_point"].astype(np.float32)
    return (q - zero) * scale


def state_dict(model_path: Path, layers: int) -> dict[str, torch.Tensor]:
    """The BERT state dict (``bert.*``, ``classifier.*``) held by the fused int8 graph."""
    graph = onnx.load(str(model_path)).graph
    inits = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    weight_of = {  # a MatMulInteger node's name -> its weight's name
        n.name: n.input[1].removesuffix("_quantized")
        for n in graph.node
        if n.op_type == "MatMulInteger"
    }
    out: dict[str, np.ndarray] = {}
    for part in ("word", "position", "token_type"):
        name = f"bert.embeddings.{part}_embeddings.weight"
        out[name] = dequantised(inits, name)
    for p in ("weight", "bias"):
        out[f"bert.embeddings.LayerNorm.{p}"] = dequantised(inits, f"bert.embeddings.LayerNorm.{p}")
    for i in range(layers):
        pre = f"bert.encoder.layer.{i}"
        qkv = dequantised(inits, f"Attention_{i}_qkv_weight")  # [in, 3 * out]
        bias = inits[f"Attention_{i}_qkv_bias"]
        for j, part in enumerate(np.split(qkv, 3, axis=1)):
            name = ("query", "key", "value")[j]
            out[f"{pre}.attention.self.{name}.weight"] = part.T
            out[f"{pre}.attention.self.{name}.bias"] = np.split(bias, 3)[j]
        node = f"/bert/encoder/layer.{i}"
        for dense, onnx_name in (
            ("attention.output.dense", f"{node}/attention/output/dense/MatMul_quant"),
            ("intermediate.dense", f"{node}/intermediate/dense/MatMul_quant"),
            ("output.dense", f"{node}/output/dense/MatMul_quant"),
        ):
            out[f"{pre}.{dense}.weight"] = dequantised(inits, weight_of[onnx_name]).T
            out[f"{pre}.{dense}.bias"] = inits[f"{pre}.{dense}.bias"]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            for p in ("weight", "bias"):
                out[f"{pre}.{ln}.{p}"] = inits[f"{pre}.{ln}.{p}"]
    for head in ("bert.pooler.dense", "classifier"):
        out[f"{head}.weight"] = dequantised(inits, f"{head}.weight_Transposed").T
        out[f"{head}.bias"] = inits[f"{head}.bias"]
    return {k: torch.from_numpy(np.array(v, dtype=np.float32, order="C")) for k, v in out.items()}


def check(model_dir: Path, model_path: Path) -> float:
    """Pearson correlation of the recovered model's logits with the shipped file's, on pairs
    of the package's own code (any text will do: this checks the weight mapping)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from export import TOKENIZER

    sys.path.insert(0, str(HERE.parent / "server"))
    from code_evidence.models.passage import pad_pairs, pair_ids

    tok = Tokenizer.from_file(str(TOKENIZER))
    src = (HERE / "train.py").read_text().split("\n\n")
    queries = ["load the weights of a model", "evaluate mean reciprocal rank", "save a checkpoint"]
    pairs = [
        pair_ids(101, 102, tok.encode(q, add_special_tokens=False).ids,
                 tok.encode(p, add_special_tokens=False).ids)
        for q in queries for p in src[:16]
    ]  # fmt: skip
    feed = pad_pairs(pairs)
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    want = sess.run(["logits"], feed)[0].reshape(-1)
    model = build_model(model_dir / "config.json", model_dir / "model.safetensors", "eager")
    model.eval()
    with torch.no_grad():
        got = model(**{k: torch.from_numpy(v) for k, v in feed.items()}).logits.view(-1).numpy()
    return float(np.corrcoef(want, got)[0, 1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, default=TARGET)
    ap.add_argument("--out", type=Path, default=HERE / "out" / "shipped")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(base_dir() / "config.json", args.out / "config.json")
    layers = int(json.loads((args.out / "config.json").read_text())["num_hidden_layers"])
    save_file(state_dict(args.model, layers), str(args.out / "model.safetensors"))
    r = check(args.out, args.model)
    print(f"recovered {args.model} -> {args.out}: correlation with the int8 file {r:.4f}")
    if r < MIN_CORRELATION:
        raise SystemExit(f"recovered weights do not reproduce the shipped model ({r:.4f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
