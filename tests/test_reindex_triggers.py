"""What decided a skip or a chunking is what undoes it (issue 14, Medium and Low).

A file skipped as unreadable comes back when a ``chmod`` makes it readable (only its mode
changes, not its size or mtime); files skipped under one configuration come back under one
that admits them (``include_generated``); a configuration that cuts files differently
(``window_lines``, ``max_chunk_lines``), or a new chunker, re-chunks them. And an editor
buffer is held to the limits a file on disk is held to.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import plan
from code_evidence.index.chunk import CHUNKER_VERSION
from support import ROOT
from support.privileges import require_modes_enforced


def _cfg(**index: object) -> Config:
    return Config().changed(stages={"vectors": False}, index=index)


def _index_cli(prefix: list[str], ws: Path, idx: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    cli = [sys.executable, "-m", "code_evidence.cli", "index", "--workspace", str(ws)]
    done = subprocess.run(
        [*prefix, *cli, "--index-dir", str(idx), "--json", "--quiet"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_file_made_readable_by_chmod_is_indexed(tmp_path: Path) -> None:
    prefix = require_modes_enforced()  # as root, file modes hold only without CAP_DAC_*
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    (ws / "open.py").write_text("def always_there():\n    return 1\n")
    locked = ws / "locked.py"
    locked.write_text("def behind_a_lock():\n    return 2\n")
    locked.chmod(0)
    idx = tmp_path / "idx"
    first = _index_cli(prefix, ws, idx)
    assert first["skipped"] == {"unreadable": 1}
    locked.chmod(0o644)  # the same size and mtime: only the mode changed
    second = _index_cli(prefix, ws, idx)
    assert second["files_changed"] == 1 and second["skipped"] == {}
    with Engine(ws, idx, config=_cfg()) as eng:
        assert [e.symbol for e in eng.outline("locked.py")] == ["behind_a_lock"]


def test_files_skipped_as_generated_come_back_with_include_generated(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("def main():\n    return bundle_entry()\n")
    bundle = "function bundle_entry(){return 1}" + ";var a=1" * 600 + "\n"
    (ws / "vendor.bundle.js").write_text(bundle)
    idx = tmp_path / "idx"
    with Engine(ws, idx, config=_cfg()) as eng:
        assert eng.index().skipped == {"minified": 1}
        assert eng.outline("vendor.bundle.js") == []
    with Engine(ws, idx, config=_cfg(include_generated=True)) as eng:
        report = eng.index()
        assert report.skipped == {}
        assert eng.outline("vendor.bundle.js")
        assert eng.status().pending == 0
    with Engine(ws, idx, config=_cfg()) as eng:  # and back
        assert eng.status().pending == 2
        assert eng.index().skipped == {"minified": 1}
        assert eng.outline("vendor.bundle.js") == []


def test_a_change_to_how_files_are_cut_rechunks_them(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"note line {i}\n" for i in range(1, 121)))
    body = "".join(f"    total += {i}\n" for i in range(80))
    (ws / "long.py").write_text(f"def long_function():\n    total = 0\n{body}    return total\n")
    idx = tmp_path / "idx"

    def spans(eng: Engine, path: str) -> list[int]:
        return [e.end - e.start + 1 for e in eng.outline(path)]

    with Engine(ws, idx, config=_cfg()) as eng:
        eng.index()
        assert max(spans(eng, "notes.txt")) == 60
        assert len(spans(eng, "long.py")) == 1
    with Engine(ws, idx, config=_cfg(window_lines=20, window_overlap=0, max_chunk_lines=30)) as eng:
        assert eng.status().pending == 2
        report = eng.index()
        assert report.files_changed == 2
        assert max(spans(eng, "notes.txt")) == 20
        assert max(spans(eng, "long.py")) <= 30 and len(spans(eng, "long.py")) >= 3
        assert eng.status().pending == 0


def test_an_editor_buffer_over_max_file_bytes_is_not_indexed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small.py").write_text("def small():\n    return 1\n")
    cfg = _cfg(max_file_bytes=5_000)
    with Engine(ws, tmp_path / "idx", config=cfg) as eng:
        eng.index()
        assert [e.symbol for e in eng.outline("small.py")] == ["small"]
        huge = "".join(f"def generated_{i}():\n    return {i}\n\n" for i in range(2_000))
        eng.set_overlay("small.py", huge)
        report = eng.index()
        assert report.skipped.get("too-large") == 1
        assert eng.outline("small.py") == []  # neither the buffer nor a stale disk copy
        assert eng.reader.counts()[1] == 0
        eng.set_overlay("small.py", None)  # closed: the disk copy again
        eng.index()
        assert [e.symbol for e in eng.outline("small.py")] == ["small"]


def test_a_new_chunker_version_rechunks_an_existing_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index cut by an older chunker is cut again (its files unchanged), so a change to where
    chunks begin and end reaches the indexes people already have."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "reply.js").write_text("Reply.prototype.send = function (p) {\n  return p\n}\n")
    (ws / "app.py").write_text("def main():\n    return 1\n")
    idx = tmp_path / "idx"
    with Engine(ws, idx, config=_cfg()) as eng:
        eng.index()
        assert eng.status().pending == 0
    monkeypatch.setattr(plan, "CHUNKER_VERSION", CHUNKER_VERSION + "-next")
    with Engine(ws, idx, config=_cfg()) as eng:
        assert eng.status().pending == 2
        assert eng.index().files_changed == 2
        assert [e.symbol for e in eng.outline("reply.js")] == ["Reply.send"]
        assert eng.status().pending == 0
