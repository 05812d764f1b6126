"""The whole pipeline in one command, with the settings the shipped cross-encoder was made with:
mine the allowlisted sources, train, export int8, and put the model and its records in the
package. ``make model`` runs this in its own environment (the ``[train]`` extra).

Training settings are recorded in ``models/reranker/train.json`` by the run that made the file;
the defaults below are those settings. On a GPU raise ``--minutes``/``--epochs``: the same
seed gives the same data order.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import export  # noqa: E402
import mine  # noqa: E402
import train  # noqa: E402

SHIPPED = HERE.parent / "server" / "code_evidence" / "models" / "reranker"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", default="48", help="training wall-clock cap")
    ap.add_argument("--epochs", default="0.27")
    ap.add_argument("--skip-mine", action="store_true", help="reuse data/pairs.npz")
    args = ap.parse_args(argv)
    if not args.skip_mine:
        mine.main([])
    train.main(
        [
            "--epochs", args.epochs,
            "--minutes", args.minutes,
            "--negatives", "3",
            "--batch-groups", "16",
            "--lr", "5e-5",
            "--log-every", "10",
            "--val-limit", "400",
        ]
    )  # fmt: skip
    export.main([])
    for name, src in (
        ("train.json", HERE / "out" / "train.json"),
        ("data_manifest.json", HERE / "data" / "manifest.json"),
    ):
        shutil.copyfile(src, SHIPPED / name)
    print(f"wrote {SHIPPED}; update MODEL_CARD.md with the numbers in its JSON files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
