"""A full disk or a read-only file system under the index (issue 14, Low).

``find`` must still answer from the committed index, with a note saying it could not be
refreshed, instead of exiting 1 with a traceback; ``index`` says what to fix (exit 2). Run on a
small tmpfs (and the same mount made read-only), which needs root and mount rights: skipped,
saying why, where the machine does not allow it (``RLIMIT_FSIZE`` would give EFBIG, not the
ENOSPC of a full disk).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import ROOT
from support.project import write_project


def _mount(target: Path, *options: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["mount", *options, str(target)], capture_output=True, timeout=60)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = _mount(disk, "-t", "tmpfs", "-o", "size=2m", "tmpfs")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=60)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    return subprocess.run(
        [sys.executable, "-m", "code_evidence.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _fill(disk: Path) -> None:
    """Write until the file system says it is full."""
    for name, size in (("filler", 65536), ("filler2", 512)):  # then what big blocks left
        with open(disk / name, "wb", buffering=0) as fh:
            try:
                while fh.write(b"\0" * size):
                    pass
            except OSError:
                pass


def test_find_answers_from_the_committed_index_on_a_full_then_read_only_disk(
    small_disk: Path, tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_project(ws)
    (ws / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    idx = small_disk / "idx"
    built = _cli("index", "--workspace", str(ws), "--index-dir", str(idx), "--quiet")
    assert built.returncode == 0, built.stderr
    # A change the next find must write before answering: the disk has no room for it.
    (ws / "src/shop/refunds.py").write_text(
        "def refund_order(order_id: str) -> None:\n    return None\n" * 40
    )
    _fill(small_disk)
    ask = ["find", "cart total", "--workspace", str(ws), "--index-dir", str(idx), "--json"]
    full = _cli(*ask, "--quiet")
    assert full.returncode == 0, full.stderr
    answer = json.loads(full.stdout)
    assert answer["results"] and answer["results"][0]["path"] == "src/shop/cart.py"
    assert any("takes no writes" in n or "cannot write the index" in n for n in answer["notes"])
    assert "Traceback" not in full.stderr
    refused = _cli("index", "--workspace", str(ws), "--index-dir", str(idx), "--quiet")
    assert refused.returncode == 2 and "takes no writes" in refused.stderr, refused.stderr
    assert "free some space" in refused.stderr and "Traceback" not in refused.stderr

    done = _mount(small_disk, "-o", "remount,ro")
    if done.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {done.stderr.decode(errors='replace')}")
    ro = _cli(*ask, "--quiet")
    assert ro.returncode == 0, ro.stderr
    answer = json.loads(ro.stdout)
    assert answer["results"] and answer["results"][0]["path"] == "src/shop/cart.py"
    assert answer["index_mode"] == "read-only"
    assert "takes no writes" in ro.stderr or any("takes no writes" in n for n in answer["notes"])
    assert "Traceback" not in ro.stderr
