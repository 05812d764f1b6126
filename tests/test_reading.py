"""Reading a pass's files on two threads (``index/reading.py``) gives what one thread gives, in
the plan's order; a pass cancelled while reading writes nothing; each thread parses with a
parser of its own."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import reading
from code_evidence.index.chunk.languages import parser
from code_evidence.index.indexer import IndexCancelled
from code_evidence.index.reading import Reader
from code_evidence.index.scan import FileEntry

N_FILES = 3 * reading.THREADED_FROM


def _cfg() -> Config:
    return Config().changed(stages={"vectors": False})


def _workspace(root: Path) -> list[FileEntry]:
    root.mkdir()
    entries = []
    for i in range(N_FILES):
        if i % 7 == 3:
            name, data = f"blob_{i}.dat", b"\0binary" * 10  # skipped: binary
        elif i % 5 == 1:
            name, data = f"notes_{i}.md", f"# Notes {i}\n\ntext {i}\n".encode()
        else:
            body = "".join(
                f"def handler_{i}_{j}(request):\n    return render_{j}(request, {i})\n\n\n"
                for j in range(1 + i % 4)
            )
            name, data = f"pkg/mod_{i}.py", f'"""Module {i}."""\n\n\n{body}'.encode()
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entries.append(FileEntry(name, len(data), path.stat().st_mtime_ns))
    return entries


def test_threaded_reading_gives_the_one_thread_results_in_order(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    entries = _workspace(ws)
    cfg = _cfg().index
    overlays = {entries[2].path: "def from_the_editor():\n    return 1\n"}
    known = {entries[4].path: "0" * 64}  # a stored hash that differs: read again
    reader = Reader(ws, overlays, known, False, cfg)
    one_thread = [reader.read(e) for e in entries]
    threaded = list(reader.read_all(entries))
    assert [r.entry.path for r in threaded] == [e.path for e in entries]
    assert threaded == one_thread
    assert {r.skip for r in threaded} == {None, "binary"}
    assert threaded[2].chunks[0].symbol == "from_the_editor"
    # The content the store holds already (same hash) is not chunked again: a touch.
    same = Reader(ws, {}, {entries[0].path: one_thread[0].row.content_hash}, False, cfg)
    assert same.read(entries[0]).row is None
    assert (
        Reader(ws, {}, {entries[0].path: one_thread[0].row.content_hash}, True, cfg)
        .read(entries[0])
        .chunks
        == one_thread[0].chunks
    )


def test_a_pass_cancelled_while_reading_writes_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    idx = tmp_path / "idx"
    cancel = threading.Event()

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "read" and done == reading.THREADED_FROM:
            cancel.set()  # files are being read ahead on the threads meanwhile

    with Engine(ws, idx, config=_cfg()) as eng:
        with pytest.raises(IndexCancelled):
            eng.index(progress=progress, cancel=cancel)
        status = eng.status()
        assert (status.files, status.chunks) == (0, 0)
        assert not [t for t in threading.enumerate() if t.name.startswith("code-evidence-read")]
        report = eng.index()
        assert report.files_changed == N_FILES - len(range(3, N_FILES, 7))
        assert report.skipped == {"binary": len(range(3, N_FILES, 7))}


def test_each_thread_parses_with_its_own_parser() -> None:
    mine = parser("python")
    assert parser("python") is mine
    theirs: list[object] = []
    t = threading.Thread(target=lambda: theirs.append(parser("python")))
    t.start()
    t.join()
    assert theirs and theirs[0] is not mine
