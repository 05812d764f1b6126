"""A pass writes the store and the BM25 documents as it reads, in one transaction: a
lexical-only pass never holds the whole workspace's chunks (its memory stays flat as the
workspace grows, issue 24), and a pass cancelled or failing half-way leaves the store and
the lexical index as they were."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index.indexer import IndexCancelled
from code_evidence.index.lexical import LexDoc, LexicalIndex
from code_evidence.index.store import Store

FILES = 40
FUNCS = 3  # chunks per file


def _cfg() -> Config:
    return Config().changed(stages={"vectors": False})


def _workspace(root: Path) -> None:
    (root / "pkg").mkdir(parents=True)
    for i in range(FILES):
        body = "".join(
            f"def handler_{i}_{j}(request):\n    return render_{j}(request, {i})\n\n\n"
            for j in range(FUNCS)
        )
        (root / "pkg" / f"mod_{i}.py").write_text(body)


def test_bm25_documents_go_to_the_writer_as_files_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _workspace(tmp_path / "ws")
    batches: list[int] = []
    real_add = LexicalIndex.add

    def add(self: LexicalIndex, docs: Any) -> None:
        batches.append(len(docs))
        real_add(self, docs)

    monkeypatch.setattr(LexicalIndex, "add", add)
    with Engine(tmp_path / "ws", tmp_path / "idx", config=_cfg()) as eng:
        report = eng.index()
        assert report.chunks_added == sum(batches) == len(eng.parts.lexical)
        assert len(batches) == FILES and max(batches) == FUNCS  # file by file
        hits = eng.find(FindRequest(query="handler_17_2"), refresh=False).results
        assert hits and hits[0].path == "pkg/mod_17.py"


def test_a_pass_cancelled_while_writing_leaves_store_and_bm25_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    with Engine(ws, tmp_path / "idx", config=_cfg()) as eng:
        eng.index()
        before = (eng.status().chunks, len(eng.parts.lexical))
        for i in range(FILES):  # every file changes: the pass writes as it reads them
            (ws / "pkg" / f"mod_{i}.py").write_text(f"def renamed_{i}():\n    return {i}\n")
        cancel = threading.Event()

        def progress(stage: str, done: int, total: int) -> None:
            if stage == "read" and done == FILES // 2:
                cancel.set()

        with pytest.raises(IndexCancelled):
            eng.index(progress=progress, cancel=cancel)
        assert (eng.status().chunks, len(eng.parts.lexical)) == before
        hits = eng.find(FindRequest(query="renamed_3"), refresh=False).results
        assert all(h.symbol != "renamed_3" for h in hits)
        eng.index()
        assert (eng.status().chunks, len(eng.parts.lexical)) == (FILES, FILES)


def test_an_error_while_writing_rolls_back_the_bm25_documents_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    _workspace(ws)
    real = Store.replace_file
    calls = [0]

    def failing(self: Store, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == FILES - 1:
            raise OSError("disk full")
        return real(self, *args, **kwargs)

    with Engine(ws, tmp_path / "idx", config=_cfg()) as eng:
        monkeypatch.setattr(Store, "replace_file", failing)
        with pytest.raises(OSError, match="disk full"):
            eng.index()
        assert (eng.status().chunks, len(eng.parts.lexical)) == (0, 0)
        monkeypatch.setattr(Store, "replace_file", real)
        eng.index()
        assert (eng.status().chunks, len(eng.parts.lexical)) == (FILES * FUNCS, FILES * FUNCS)


def test_a_new_file_has_no_stored_chunks_to_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold index reads no chunk rows back (every file is new); a changed file's rows are
    read, so its unchanged chunks keep their ids (and vectors, and BM25 documents)."""
    ws = tmp_path / "ws"
    _workspace(ws)
    reads: list[str] = []
    real = Store.chunks_of

    def chunks_of(self: Store, path: str) -> Any:
        reads.append(path)
        return real(self, path)

    monkeypatch.setattr(Store, "chunks_of", chunks_of)
    with Engine(ws, tmp_path / "idx", config=_cfg()) as eng:
        eng.index()
        assert reads == []  # distinct names, no packages: the relink reads none either
        ids = {sc.chunk.symbol: sc.id for sc in eng.parts.store.chunks_of("pkg/mod_5.py")}
        reads.clear()
        path = ws / "pkg" / "mod_5.py"
        path.write_text(path.read_text() + "\n\ndef added():\n    return 1\n")
        eng.index(paths=["pkg/mod_5.py"])
        assert reads.count("pkg/mod_5.py") >= 1
        after = {sc.chunk.symbol: sc.id for sc in eng.parts.store.chunks_of("pkg/mod_5.py")}
        assert all(after[s] == i for s, i in ids.items())  # unchanged chunks kept their rows
        assert "added" in after and after["added"] not in ids.values()


def test_a_question_between_the_store_commit_and_the_bm25_commit_waits_for_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass commits the store, then BM25. A question asked in between saw the new store and
    the old BM25: the old chunks' hits were dropped (the store no longer holds them) and the
    new ones not found, so the changed file vanished from the answer. It now waits until both
    hold the change (or asks before either does)."""
    ws = tmp_path / "ws"
    _workspace(ws)
    in_window, release = threading.Event(), threading.Event()
    real_commit = LexicalIndex.commit

    def slow_commit(self: LexicalIndex) -> None:
        if not in_window.is_set():
            in_window.set()
            assert release.wait(10)
        real_commit(self)

    with Engine(ws, tmp_path / "idx", config=_cfg()) as eng:
        eng.index()
        path = ws / "pkg" / "mod_7.py"
        path.write_text(path.read_text() + "\ndef recompute_loyalty_points(cart):\n    return 0\n")
        monkeypatch.setattr(LexicalIndex, "commit", slow_commit)
        passing = threading.Thread(target=lambda: eng.index(paths=["pkg/mod_7.py"]))
        passing.start()
        answers: list[Any] = []
        asking = threading.Thread(
            target=lambda: answers.append(
                eng.find(FindRequest("recompute_loyalty_points", limit=3), refresh=False)
            )
        )
        try:
            assert in_window.wait(10)  # the store holds the new chunk; BM25 does not yet
            asking.start()
            asking.join(0.5)
            assert asking.is_alive()  # waiting for the pass's BM25 commit, not answering
        finally:
            release.set()
            passing.join(10)
        asking.join(10)
        top = answers[0].results[0]
        assert (top.path, top.symbol) == ("pkg/mod_7.py", "recompute_loyalty_points")


def test_a_reader_in_another_process_sees_the_writers_last_bm25_commit(tmp_path: Path) -> None:
    """Read-only (another process holds the writer), a request read BM25 as Tantivy's own
    reload had last seen it, about half a second behind the writer's commit, while the store
    showed the new pass at once. A view now reads the last commit."""
    folder = tmp_path / "lexical"
    writer = LexicalIndex(folder)
    writer.add([LexDoc(i, f"m{i}.py", f"f{i}", f"def f{i}(): return {i}") for i in range(50)])
    writer.commit()
    reader = LexicalIndex(folder, read_only=True)
    assert len(reader.view()) == 50
    writer.add([LexDoc(500, "new.py", "recompute_points", "def recompute_points(): pass")])
    writer.delete([3])
    writer.commit()
    view = reader.view()  # right after the commit, with no wait
    assert len(view) == 50 and view.doc_freq("recompute_points") == 1
