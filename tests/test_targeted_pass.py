"""Passes over the files the watcher saw change (issue 24): a save is indexed by statting that
file, never by listing the workspace or running ``git status``; and what only a full scan can
decide (HEAD moved, ignore rules, a folder) still gets one.

The work is counted, not timed: a spy on the full scan, on ``git status`` and on the import
relinking records every call a pass makes."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.git import Git
from code_evidence.index import indexer
from code_evidence.live.passes import PassScheduler
from support.project import git
from test_live import WAIT_S, Recorder


class Work:
    """Counts the costly steps a pass can take."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.scans = 0
        self.statuses = 0
        self.relinks = 0
        real_scan, real_state = indexer.scan_workspace, Git.state
        real_relink = indexer.Indexer._relink_imports

        def scan(*args: Any, **kwargs: Any) -> Any:
            self.scans += 1
            return real_scan(*args, **kwargs)

        def state(git_: Git) -> Any:
            self.statuses += 1
            return real_state(git_)

        def relink(ix: indexer.Indexer, cfg: Any, change: Any) -> Any:
            self.relinks += 1
            return real_relink(ix, cfg, change)

        monkeypatch.setattr(indexer, "scan_workspace", scan)
        monkeypatch.setattr(Git, "state", state)
        monkeypatch.setattr(indexer.Indexer, "_relink_imports", relink)

    def reset(self) -> None:
        self.scans = self.statuses = self.relinks = 0


@pytest.fixture
def engine(project: Path, tmp_path: Path) -> Iterator[Engine]:
    (project / ".code-evidence.toml").write_text("[stages]\nvectors = false\n")
    with Engine(project, tmp_path / "idx") as eng:
        eng.index()
        yield eng


def found(engine: Engine, name: str) -> bool:
    res = engine.find(FindRequest(name, limit=3), refresh=False)
    return any(r.symbol == name for r in res.results)


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_a_saved_file_is_indexed_without_a_scan(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Work(monkeypatch)
    rel = "src/shop/pricing.py"
    append(
        engine.workspace / rel, "\n\ndef loyalty_discount(points: int) -> float:\n    return 0\n"
    )
    report = engine.index(paths=[rel])
    assert (work.scans, work.statuses) == (0, 0)
    assert (report.files_changed, report.files_removed) == (1, 0)
    assert report.files_seen == engine.reader.counts()[0]
    assert found(engine, "loyalty_discount")

    # The same file, unchanged since: nothing read, nothing written, nothing relinked.
    relinks = work.relinks
    report = engine.index(paths=[rel])
    assert (report.files_changed, report.chunks_added, work.scans) == (0, 0, 0)
    assert work.relinks == relinks


def test_new_deleted_and_secret_files_follow_the_full_scans_rules(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = Work(monkeypatch)
    root = engine.workspace
    (root / "src/shop/gifts").mkdir()
    (root / "src/shop/gifts/wrap.py").write_text(
        "def gift_wrap_colour() -> str:\n    return 'red'\n"
    )
    (root / "src/shop/credentials.json").write_text('{"token": "abc"}\n')
    (root / "src/shop/storage.py").unlink()
    engine.index(
        paths=["src/shop/gifts/wrap.py", "src/shop/credentials.json", "src/shop/storage.py"]
    )
    assert work.scans == 0
    assert found(engine, "gift_wrap_colour")
    assert engine.reader.file_row("src/shop/storage.py") is None
    assert engine.reader.file_row("src/shop/credentials.json") is None  # a secret: never indexed

    # What the targeted pass left is what a full scan finds.
    targeted = set(engine.reader.paths())
    report = engine.index()
    assert work.scans == 1
    assert (report.files_changed, report.files_removed) == (0, 0)
    assert set(engine.reader.paths()) == targeted


@pytest.mark.parametrize("change", ["gitignore", "folder", "deleted-folder", "head"])
def test_what_only_a_full_scan_decides_gets_one(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    root = engine.workspace
    if change == "gitignore":
        (root / "src/shop/scratch.py").write_text("def scratch_total() -> int:\n    return 3\n")
        engine.index()
        assert found(engine, "scratch_total")
        path = ".gitignore"
        append(root / path, "\nsrc/shop/scratch.py\n")
    elif change == "folder":
        path = "src/shop/extra"
        (root / path).mkdir()
        (root / path / "fees.py").write_text("def handling_fee() -> int:\n    return 1\n")
    elif change == "deleted-folder":
        path = "src/shop"
        shutil.rmtree(root / path)
    else:
        path = "src/shop/pricing.py"
        git(root, "checkout", "-q", "feature")
    work = Work(monkeypatch)
    engine.index(paths=[path])
    assert work.scans == 1
    if change == "gitignore":
        assert engine.reader.file_row("src/shop/scratch.py") is None
    elif change == "folder":
        assert found(engine, "handling_fee")
    elif change == "deleted-folder":
        assert not [p for p in engine.reader.paths() if p.startswith("src/shop/")]
    else:
        assert engine.indexed_head()[1] == "feature" and found(engine, "shipping_cost")


def test_the_watchers_event_makes_a_save_queryable_without_a_scan(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder()
    passes = PassScheduler(engine, rec)
    passes.start()
    try:
        assert passes.wait_for(1, WAIT_S)
        work = Work(monkeypatch)
        target = engine.workspace / "src/shop/pricing.py"
        append(target, "\n\ndef birthday_voucher(age: int) -> int:\n    return age\n")
        passes.watcher.classify(str(target))  # what watchdog's handler calls for the write
        assert passes.settle(WAIT_S)
        assert found(engine, "birthday_voucher")
        assert (work.scans, work.statuses) == (0, 0)

        # HEAD moving is not a file event: the pass it asks for scans everything.
        passes.request_pass("git HEAD changed", head=True)
        assert passes.settle(WAIT_S)
        assert work.scans == 1
    finally:
        passes.close()


def test_a_save_is_searchable_before_the_relink_and_a_lost_relink_is_redone(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relinking reads many files' chunks, so it runs after the lexical index holds the
    change; the answers given meanwhile are keyed under a generation the relink moves on."""
    seen: list[tuple[bool, str | None]] = []
    real_relink = indexer.Indexer._relink_imports

    def relink(ix: indexer.Indexer, cfg: Any, change: Any) -> Any:
        seen.append((found(engine, "loyalty_discount"), engine.reader.get_meta("generation")))
        return real_relink(ix, cfg, change)

    monkeypatch.setattr(indexer.Indexer, "_relink_imports", relink)
    rel = "src/shop/pricing.py"
    append(
        engine.workspace / rel, "\n\ndef loyalty_discount(points: int) -> float:\n    return 0\n"
    )
    engine.index(paths=[rel])
    ((searchable, generation),) = seen
    assert searchable
    assert int(engine.reader.get_meta("generation") or 0) == int(generation or 0) + 1
    assert engine.reader.get_meta("resolution") == indexer.RESOLUTION_VERSION

    # A pass killed after the text and before the links leaves the resolution unset: the next
    # pass relinks though no file changed.
    engine.parts.store.set_meta_now({"resolution": ""})
    engine.index(paths=[rel])
    assert len(seen) == 2
    assert engine.reader.get_meta("resolution") == indexer.RESOLUTION_VERSION
