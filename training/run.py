"""The whole pipeline in one command, with the settings the shipped cross-encoder was made with:
mine the allowlisted sources, recover the weights of the model shipped before (``recover.py``),
continue training it on the mixed data, export int8, and put the model and its records in the
package. ``make model`` runs this in its own environment (the ``[train]`` extra).

The shipped model has two stages: the first (Python only, from all-MiniLM-L6-v2, 483 steps) is
``--from-base`` with ``--minutes 48 --epochs 0.27 --lr 5e-5 --other-share 0``; the second
(the default) continues from it with half of each batch drawn from C, C++, PHP and Ruby.
Training settings are recorded in ``models/reranker/train.json`` by the run that made the file.
On a GPU raise ``--minutes``/``--steps``: the same seed gives the same data order.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import export  # noqa: E402
import mine  # noqa: E402
import recover  # noqa: E402
import train  # noqa: E402

SHIPPED = HERE.parent / "server" / "code_evidence" / "models" / "reranker"
# The first-stage model (Python only), as committed before the second stage replaced it.
FIRST_STAGE_COMMIT = "ab799d0de0d9aede141b86e064f79229e15a6d6a"
FIRST_STAGE_SHA256 = "877e1e170c0d53f89caef6ec559af271389288571fe65f7774fc3fc9dad21fda"


def first_stage(dest: Path) -> Path:
    """The first-stage model file from this repository's history, checked by its sha256."""
    rel = "server/code_evidence/models/reranker/model.onnx"
    data = subprocess.run(
        ["git", "-C", str(HERE.parent), "show", f"{FIRST_STAGE_COMMIT}:{rel}"],
        check=True,
        capture_output=True,
    ).stdout
    if hashlib.sha256(data).hexdigest() != FIRST_STAGE_SHA256:
        raise SystemExit(f"{rel} at {FIRST_STAGE_COMMIT} is not the pinned first stage")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", default="STEP2_MINUTES", help="training wall-clock cap")
    ap.add_argument("--epochs", default="1")
    ap.add_argument("--steps", default="STEP2_STEPS", help="0: from --epochs")
    ap.add_argument("--lr", default="2e-5")
    ap.add_argument("--other-share", default="0.5", help="non-Python share of each batch")
    ap.add_argument(
        "--from-base", action="store_true", help="start from all-MiniLM-L6-v2 (the first stage)"
    )
    ap.add_argument("--skip-mine", action="store_true", help="reuse data/pairs.npz")
    args = ap.parse_args(argv)
    if not args.skip_mine:
        mine.main([])
    start: list[str] = []
    if not args.from_base:
        first = first_stage(HERE / "out" / "first-stage.onnx")
        recover.main(["--model", str(first), "--out", str(HERE / "out" / "first-stage")])
        start = ["--base", str(HERE / "out" / "first-stage")]
    train.main(
        [
            *start,
            "--epochs", args.epochs,
            "--steps", args.steps,
            "--minutes", args.minutes,
            "--negatives", "3",
            "--batch-groups", "16",
            "--lr", args.lr,
            "--other-share", args.other_share,
            "--log-every", "10",
            "--val-limit", "400",
        ]
    )  # fmt: skip
    export.main([] if args.from_base else ["--previous", str(HERE / "out" / "first-stage.onnx")])
    for name, src in (
        ("train.json", HERE / "out" / "train.json"),
        ("data_manifest.json", HERE / "data" / "manifest.json"),
    ):
        shutil.copyfile(src, SHIPPED / name)
    print(f"wrote {SHIPPED}; update MODEL_CARD.md with the numbers in its JSON files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
