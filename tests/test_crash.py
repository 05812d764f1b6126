"""Crash safety: SIGKILL a real ``code-evidence index`` and reopen (issue 8).

The short version of ``bench/stress.py``: a few kills at spread-out delays, with vectors off
(a workspace big enough that the kills land in chunking, SQLite and Tantivy work) and on
(kills land in embedding and USearch saves). Where a kill lands varies from run to run; what
is asserted holds wherever it lands: a reopened index is consistent (SQLite ids == Tantivy ids,
USearch keys a subset) or says it rebuilt, one more pass makes it complete, nothing is lost, and
``find`` answers.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from bench.crash import (
    RunResult,
    check_after_kill,
    make_workspace,
    one_run,
    run_indexer,
    timed_full_run,
)
from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index.parts import check_index
from code_evidence.index.store import Store


def _assert_recovered(r: RunResult) -> None:
    assert r.consistent_on_open, r
    assert r.complete_after_pass, r
    assert r.lost == 0, r
    assert r.find_ok, r


@pytest.mark.parametrize(
    ("point", "wipe", "rebuilds"),
    [
        ("chunk:40", True, False),
        ("sqlite:60", True, False),
        ("store-commit:2", True, True),
        ("tantivy:1", False, True),
        ("tantivy-after:1", False, True),
        # No usearch points: with vectors off a pass never rewrites the vector file (it does
        # only when a vector went); the test with vectors below kills there.
    ],
)
def test_kill_at_each_point_without_vectors(
    tmp_path: Path, point: str, wipe: bool, rebuilds: bool
) -> None:
    ws, idx, cache = tmp_path / "ws", tmp_path / "idx", tmp_path / "cache"
    make_workspace(ws, 150, vectors=False)
    run_indexer(ws, idx, cache, None)
    r = one_run(
        1, ws, idx, cache, 0.0, vectors=False, wipe=wipe, rnd=random.Random(1), crash_at=point
    )
    assert r.killed, r
    _assert_recovered(r)
    # Killed after the store committed and before the derived indexes caught up: the reopened
    # engine noticed (derived_dirty) and rebuilt instead of answering from a half state.
    assert r.repaired == rebuilds, r


def test_kill_at_each_point_with_vectors(tmp_path: Path) -> None:
    ws, idx = tmp_path / "ws", tmp_path / "idx"
    cache = Path(os.environ["CODE_EVIDENCE_CACHE_DIR"])  # the session's: fixtures embed once
    make_workspace(ws, 12, vectors=True)
    run_indexer(ws, idx, cache, None)
    rnd = random.Random(9)
    # A small save appends to the journal (a torn append is one kill); the whole file is
    # written when there is none yet (a wiped index), killed before its replace.
    points = [("embed:1", False), ("usearch:2", False), ("journal:1", False)]
    points.append(("usearch-replace:1", True))
    for i, (point, wipe) in enumerate(points):
        r = one_run(i + 1, ws, idx, cache, 0.0, vectors=True, wipe=wipe, rnd=rnd, crash_at=point)
        assert r.killed, r
        _assert_recovered(r)


def test_timed_kills_of_a_large_first_build(tmp_path: Path) -> None:
    ws, idx, cache = tmp_path / "ws", tmp_path / "idx", tmp_path / "cache"
    make_workspace(ws, 1200, vectors=False)
    full = timed_full_run(ws, idx, cache)
    rnd = random.Random(8)
    for i, frac in enumerate([0.6, 0.9]):
        _assert_recovered(one_run(i, ws, idx, cache, full * frac, False, wipe=True, rnd=rnd))


def test_crashed_pass_that_emptied_the_store_empties_the_derived_indexes(
    tmp_path: Path,
) -> None:
    """The state a kill leaves after a pass that removed every file committed the store (and
    raised ``derived_dirty``) but not Tantivy: the reopened engine must not keep stale docs."""
    ws, idx = tmp_path / "ws", tmp_path / "idx"
    make_workspace(ws, 5, vectors=False)
    cfg = Config()
    cfg = cfg.changed(stages={"vectors": False})
    with Engine(ws, idx, config=cfg) as eng:
        eng.index()
        assert len(eng.parts.lexical) > 0
    store = Store(idx / "store.sqlite")
    with store.transaction():
        for path in store.paths():
            store.remove_file(path)
        store.set_meta({"derived_dirty": "1"})
    store.close()
    with Engine(ws, idx, config=cfg) as eng:
        check = check_index(eng.parts.store, eng.parts.lexical, None)
        assert check.chunks == 0 and check.consistent, check
        assert any("rebuilt" in n for n in eng.notes)


def test_truncated_index_files_are_rebuilt(tmp_path: Path) -> None:
    """Each index file cut short on purpose: the next open repairs it and answers."""
    ws, idx = tmp_path / "ws", tmp_path / "idx"
    make_workspace(ws, 20, vectors=True)
    cache = Path(os.environ["CODE_EVIDENCE_CACHE_DIR"])
    timed_full_run(ws, idx, cache)
    targets = [idx / "vectors.usearch", *sorted((idx / "lexical").glob("*.idx"))[:1]]
    targets.append(idx / "store.sqlite")
    for target in targets:
        data = target.read_bytes()
        target.write_bytes(data[: len(data) // 3])
        on_open, after, lost, find_ok, _notes = check_after_kill(ws, idx, vectors=True)
        assert on_open.consistent, (target.name, on_open)
        assert after.complete and lost == 0 and find_ok, (target.name, after, lost)
    with Engine(ws, idx) as eng:
        assert eng.find(FindRequest("revision", limit=3), refresh=False).results


def test_damaged_tantivy_doc_store_is_rebuilt_at_the_first_failed_read(tmp_path: Path) -> None:
    """Noise inside a Tantivy doc store opens fine and fails only when documents are read:
    the first answer degrades with a note, the engine rebuilds, the next answer is whole."""
    ws, idx = tmp_path / "ws", tmp_path / "idx"
    make_workspace(ws, 30, vectors=False)
    cfg = Config()
    cfg = cfg.changed(stages={"vectors": False})
    with Engine(ws, idx, config=cfg) as eng:
        eng.index()
    rnd = random.Random(3)
    for store_file in sorted((idx / "lexical").glob("*.store")):
        data = bytearray(store_file.read_bytes())
        for i in range(len(data) // 10, len(data) * 9 // 10):
            data[i] = rnd.randrange(256)
        store_file.write_bytes(bytes(data))
    with Engine(ws, idx, config=cfg) as eng:
        assert check_index(eng.parts.store, eng.parts.lexical, None).lexical_unreadable is not None
        first = eng.find(FindRequest("module 7 revision", limit=5), refresh=False)
        second = eng.find(FindRequest("module 7 revision", limit=5), refresh=False)
        assert any("bm25 channel failed" in n for n in first.notes), first.notes
        assert not any("channel failed" in n for n in second.notes), second.notes
        assert "bm25" in second.results[0].reasons
        check = check_index(eng.parts.store, eng.parts.lexical, None)
        assert check.consistent, check
