"""Reading a pass's files on two threads or in worker processes (``index/reading.py``) gives
what one thread gives, in the plan's order, also when a worker dies; a pass cancelled while
reading writes nothing and leaves no thread or process behind; each thread parses with a parser
of its own."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import ClassVar

import pytest

from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import cjk, reading
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
        elif i % 11 == 2:  # cut into words by the segmenter in use (a module setting)
            name = f"pkg/zh_{i}.py"
            data = f"def load_{i}():\n    # 读取配置文件并解析请求上下文\n    return {i}\n".encode()
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


class CountingPool(ProcessPoolExecutor):
    """The real process pool, counting what it is sent and killing one worker (SIGKILL, as
    the kernel's out-of-memory killer does) at the ``kill_at``-th batch when asked."""

    made: ClassVar[list[CountingPool]] = []
    kill_at: ClassVar[int | None] = None

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.batches = 0
        CountingPool.made.append(self)

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def,override]
        self.batches += 1
        if self.batches == CountingPool.kill_at:
            os.kill(next(iter(self._processes)), signal.SIGKILL)  # started by the first submit
            while not self._broken:  # the pool's own thread notices the death
                time.sleep(0.01)
        return super().submit(fn, *args, **kwargs)


@pytest.fixture
def processes(monkeypatch: pytest.MonkeyPatch) -> type[CountingPool]:
    """Every read_all of more than a few files reads in two worker processes."""
    monkeypatch.setattr(reading, "PROCESSES_FROM", reading.THREADED_FROM)
    monkeypatch.setattr(reading, "BATCH", 4)
    monkeypatch.setattr(reading, "reading_processes", lambda: 2)
    monkeypatch.setattr(reading, "ProcessPoolExecutor", CountingPool)
    monkeypatch.setattr(CountingPool, "made", [])
    monkeypatch.setattr(CountingPool, "kill_at", None)
    return CountingPool


def test_worker_processes_give_the_one_thread_results_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: type[CountingPool]
) -> None:
    ws = tmp_path / "ws"
    entries = _workspace(ws)
    # The segmenter is a module setting of this process: the workers must cut Chinese alike.
    monkeypatch.setattr(cjk, "SEGMENTER", "jieba")
    cfg = _cfg().index
    overlays = {entries[2].path: "def from_the_editor():\n    return 1\n"}
    reader = Reader(ws, overlays, {entries[4].path: "0" * 64}, False, cfg)
    one_thread = [reader.read(e) for e in entries]
    in_processes = list(reader.read_all(entries))
    assert [pool.batches for pool in processes.made] == [-(-N_FILES // 4)]
    assert in_processes == one_thread
    assert in_processes[2].chunks[0].symbol == "from_the_editor"
    chinese = next(r for r in in_processes[3:] if r.entry.path.startswith("pkg/zh_"))
    words = chinese.terms[0][0].split()
    assert "配置文件" in words and "置文" not in words  # jieba's words, not bigrams
    assert not multiprocessing.active_children()


def test_a_worker_that_dies_costs_speed_not_the_pass(
    tmp_path: Path, processes: type[CountingPool]
) -> None:
    ws = tmp_path / "ws"
    entries = _workspace(ws)
    reader = Reader(ws, {}, {}, False, _cfg().index)
    one_thread = [reader.read(e) for e in entries]
    processes.kill_at = 5  # after four batches were sent: some read, the rest not
    assert list(reader.read_all(entries)) == one_thread
    assert [pool.batches for pool in processes.made] == [5]  # nothing sent after the death
    assert not multiprocessing.active_children()


def test_a_pass_cancelled_while_reading_in_processes_writes_nothing(
    tmp_path: Path, processes: type[CountingPool]
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    cancel = threading.Event()

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "read" and done == 6:
            cancel.set()

    with Engine(ws, tmp_path / "idx", config=_cfg()) as eng:
        with pytest.raises(IndexCancelled):
            eng.index(progress=progress, cancel=cancel)
        assert (eng.status().files, eng.status().chunks) == (0, 0)
        assert not multiprocessing.active_children()
        assert len(processes.made) == 1
        assert eng.index().files_changed == N_FILES - len(range(3, N_FILES, 7))


def test_each_thread_parses_with_its_own_parser() -> None:
    mine = parser("python")
    assert parser("python") is mine
    theirs: list[object] = []
    t = threading.Thread(target=lambda: theirs.append(parser("python")))
    t.start()
    t.join()
    assert theirs and theirs[0] is not mine
