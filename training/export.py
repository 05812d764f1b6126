"""Export the trained cross-encoder to the int8 ONNX file the package ships.

Eager attention (the fused SDPA kernels do not export to a graph onnxruntime can fuse), then
onnxruntime's BERT optimizer fuses attention, LayerNorm and GELU, then dynamic int8
quantisation with per-channel weights and reduced range. Per-tensor int8 (the default)
damages this small model badly, so it is not used. The int8 model is checked against fp32 on
the validation groups before it is written: its scores must correlate and rank alike.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.transformers.optimizer import optimize_model

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from shipped import quantize_int8  # noqa: E402
from train import Groups, base_dir, build_model  # noqa: E402

TARGET = HERE.parent / "server" / "code_evidence" / "models" / "reranker" / "model.onnx"
TOKENIZER = HERE.parent / "server" / "code_evidence" / "models" / "minilm" / "tokenizer.json"
MAX_MB = 25


def scores(session: ort.InferenceSession, batch: dict[str, torch.Tensor]) -> np.ndarray:
    feed = {k: v.numpy() for k, v in batch.items()}
    return session.run(None, feed)[0].reshape(-1)


def bi_encoder_mrr(data: Groups, groups: np.ndarray) -> float:
    """The same groups ranked by the stock embedder's cosine: the bar a reranker must clear."""
    sys.path.insert(0, str(HERE.parent / "server"))
    from tokenizers import Tokenizer

    from code_evidence.models.embedder import Embedder

    tok = Tokenizer.from_file(str(TOKENIZER))
    emb = Embedder()
    ranks = []
    for g in groups:
        q = emb.embed_query(tok.decode(data.query(int(g)).tolist()))
        texts = [tok.decode(data.passage(int(p)).tolist()) for p in data.rows[g, 2:]]
        sims = emb.embed(texts) @ q
        ranks.append(1 + int((sims[1:] > sims[0]).sum()))
    return float(np.mean(1 / np.array(ranks)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", type=Path, default=HERE / "out" / "reranker.safetensors")
    ap.add_argument("--data", type=Path, default=HERE / "data" / "pairs.npz")
    ap.add_argument("--out", type=Path, default=TARGET)
    ap.add_argument("--check-groups", type=int, default=300)
    ap.add_argument(
        "--previous",
        type=Path,
        default=None,
        help="an earlier int8 model to score on the same groups, for comparison",
    )
    args = ap.parse_args(argv)

    model = build_model(base_dir() / "config.json", args.weights, "eager").eval()
    work = Path(tempfile.mkdtemp())
    fp32, fused, int8 = work / "fp32.onnx", work / "fused.onnx", work / "int8.onnx"
    ids = torch.tensor([[101, 2054, 102, 13366, 1042, 102]])
    example = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    dyn = {0: "batch", 1: "sequence"}
    torch.onnx.export(
        model,
        example,
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "token_type_ids": dyn},
        opset_version=17,
        dynamo=False,
    )
    opt = optimize_model(str(fp32), model_type="bert", num_heads=12, hidden_size=384)
    opt.save_model_to_file(str(fused))
    fusions = {k: v for k, v in opt.get_fused_operator_statistics().items() if v}
    print(f"fused: {fusions}", file=sys.stderr)
    quantize_int8(fused, int8)

    data = Groups(args.data)
    val = data.split(True)
    other = data.other[val]
    # The first held-out Python groups (the set earlier exports checked) and a third as many
    # of the other languages.
    val = np.concatenate([val[~other][: args.check_groups], val[other][: args.check_groups // 3]])
    other = data.other[val]
    so = ort.SessionOptions()
    sessions = {
        "fp32": ort.InferenceSession(str(fp32), so, providers=["CPUExecutionProvider"]),
        "int8": ort.InferenceSession(str(int8), so, providers=["CPUExecutionProvider"]),
    }
    if args.previous is not None and args.previous.is_file():
        sessions["previous_int8"] = ort.InferenceSession(
            str(args.previous), so, providers=["CPUExecutionProvider"]
        )
    k = data.rows.shape[1] - 2
    got: dict[str, list[np.ndarray]] = {name: [] for name in sessions}
    for s in range(0, len(val), 16):
        batch = data.batch(val[s : s + 16], torch.device("cpu"))
        for name, sess in sessions.items():
            got[name].append(scores(sess, batch).reshape(-1, k))
    mats = {name: np.concatenate(parts) for name, parts in got.items()}
    fa, fb = mats["fp32"], mats["int8"]
    corr = float(np.corrcoef(fa.ravel(), fb.ravel())[0, 1])
    same_top = float((fa.argmax(1) == fb.argmax(1)).mean())
    mrr: dict[str, float] = {}
    for name, m in mats.items():
        rr = 1 / (1 + (m[:, 1:] > m[:, :1]).sum(1))
        mrr[name] = float(rr.mean())
        if other.any():
            mrr[f"{name}_python"] = float(rr[~other].mean())
            mrr[f"{name}_other"] = float(rr[other].mean())
    mrr["stock_bi_encoder"] = bi_encoder_mrr(data, val)
    size_mb = int8.stat().st_size / 2**20
    report = {
        "int8_mb": round(size_mb, 1),
        "pearson_fp32_int8": round(corr, 4),
        "same_top1": round(same_top, 4),
        "val_mrr": {k2: round(v, 4) for k2, v in mrr.items()},
        "check_groups": len(val),
    }
    print(json.dumps(report, indent=1))
    if size_mb > MAX_MB or corr < 0.97:
        raise SystemExit(f"int8 model rejected: {report}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(int8, args.out)
    (args.out.parent / "export.json").write_text(json.dumps(report, indent=1) + "\n")
    shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
