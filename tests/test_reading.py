"""Reading a pass's files on two threads or in worker processes (``index/reading.py``) gives
what one thread gives, in the plan's order, also when a worker dies; a pass cancelled while
reading writes nothing and leaves no thread or process behind; each thread parses with a parser
of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

import pytest

from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import cjk, reading, readworker
from code_evidence.index.chunk.languages import parser
from code_evidence.index.indexer import IndexCancelled
from code_evidence.index.reading import Reader
from code_evidence.index.readworker import ReadWorker
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


class Recorded(ReadWorker):
    """The real worker, recording the workers started and the batches sent; with ``kill_at``
    the first worker is killed (SIGKILL, as the out-of-memory killer does) before that batch."""

    started: ClassVar[list[Recorded]] = []
    batches: ClassVar[list[int]] = []  # the batches' sizes, in the order sent
    kill_at: ClassVar[int | None] = None

    def __init__(self, setup: tuple[object, ...]) -> None:
        super().__init__(setup)
        Recorded.started.append(self)

    def send(self, obj: object) -> None:
        if isinstance(obj, list):
            Recorded.batches.append(len(obj))
            if len(Recorded.batches) == Recorded.kill_at:
                first = Recorded.started[0]
                os.kill(first.pid, signal.SIGKILL)
                first.proc.wait()
        super().send(obj)


@pytest.fixture
def processes(monkeypatch: pytest.MonkeyPatch) -> type[Recorded]:
    """Every read_all of more than a few files reads in two worker processes."""
    monkeypatch.setattr(reading, "PROCESSES_FROM", reading.THREADED_FROM)
    monkeypatch.setattr(reading, "BATCH", 4)
    monkeypatch.setattr(reading, "reading_processes", lambda: 2)
    monkeypatch.setattr(reading, "ReadWorker", Recorded)
    monkeypatch.setattr(Recorded, "started", [])
    monkeypatch.setattr(Recorded, "batches", [])
    monkeypatch.setattr(Recorded, "kill_at", None)
    return Recorded


def _alive(workers: list[Recorded]) -> list[int]:
    return [w.pid for w in workers if w.proc.poll() is None]


def test_worker_processes_give_the_one_thread_results_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes: type[Recorded]
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
    assert len(processes.started) == 2 and sum(processes.batches) == N_FILES
    assert in_processes == one_thread
    assert in_processes[2].chunks[0].symbol == "from_the_editor"
    chinese = next(r for r in in_processes[3:] if r.entry.path.startswith("pkg/zh_"))
    words = chinese.terms[0][0].split()
    assert "配置文件" in words and "置文" not in words  # jieba's words, not bigrams
    assert not _alive(processes.started)


def test_a_worker_that_dies_costs_speed_not_the_pass(
    tmp_path: Path, processes: type[Recorded]
) -> None:
    ws = tmp_path / "ws"
    entries = _workspace(ws)
    reader = Reader(ws, {}, {}, False, _cfg().index)
    one_thread = [reader.read(e) for e in entries]
    processes.kill_at = 5  # four batches were sent, one answered: the fifth goes to the dead
    assert list(reader.read_all(entries)) == one_thread
    assert len(processes.batches) == 5  # nothing sent after the death
    assert not _alive(processes.started)


def test_a_pass_cancelled_while_reading_in_processes_writes_nothing(
    tmp_path: Path, processes: type[Recorded]
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
        assert len(processes.started) == 2 and not _alive(processes.started)
        assert eng.index().files_changed == N_FILES - len(range(3, N_FILES, 7))


def test_a_worker_leaves_ctrl_c_to_its_parent(tmp_path: Path) -> None:
    """Ctrl-C in a terminal reaches the whole process group; the parent decides what it means,
    so a worker neither dies nor prints a traceback on it."""
    ws = tmp_path / "ws"
    entries = _workspace(ws)
    reader = Reader(ws, {}, {}, False, _cfg().index)
    worker = ReadWorker((ws, {}, {}, False, _cfg().index, cjk.SEGMENTER))
    try:
        worker.send(entries[:2])
        assert worker.receive() == [reader.read(e) for e in entries[:2]]  # it is serving
        os.kill(worker.pid, signal.SIGINT)
        worker.send(entries[2:4])
        assert worker.receive() == [reader.read(e) for e in entries[2:4]]
    finally:
        worker.close()
    assert worker.proc.returncode == 0


UNGUARDED_SCRIPT = """
from pathlib import Path
from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import reading

with open("RUNS", "a") as f:  # top level, no __main__ guard: a worker must not run it again
    f.write("run\\n")
reading.PROCESSES_FROM = reading.THREADED_FROM
with Engine(Path.cwd(), INDEX, config=Config().changed(stages={"vectors": False})) as eng:
    eng.index()
    print(sorted({r.language for r in eng.find(FindRequest("handler request")).results}))
"""


def test_workers_run_neither_the_main_script_nor_the_workspace_modules(tmp_path: Path) -> None:
    """A script without a __main__ guard, run from inside the workspace, indexes it: the
    workers neither run the script again nor import a module the workspace plants where the
    script's folder is first on sys.path (``multiprocessing``'s spawn would do both)."""
    ws = tmp_path / "ws"
    _workspace(ws)
    planted = "open('PLANTED', 'w').write('imported')\nraise SystemExit(3)\n"
    (ws / "tree_sitter_python.py").write_text(planted)  # imported first when parsing Python
    script = ws / "index_me.py"
    script.write_text(UNGUARDED_SCRIPT.replace("INDEX", repr(str(tmp_path / "idx"))))
    env = {**os.environ, "PYTHONPATH": str(readworker.PACKAGE_ROOT)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ws, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "reading worker failed" not in done.stderr  # the workers did the reading
    assert (ws / "RUNS").read_text() == "run\n"
    assert not (ws / "PLANTED").exists()
    assert "python" in done.stdout


def test_each_thread_parses_with_its_own_parser() -> None:
    mine = parser("python")
    assert parser("python") is mine
    theirs: list[object] = []
    t = threading.Thread(target=lambda: theirs.append(parser("python")))
    t.start()
    t.join()
    assert theirs and theirs[0] is not mine
