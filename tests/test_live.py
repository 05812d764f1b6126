"""The pass scheduler (live/passes.py) on its own, as any host would use it: a real engine on
a real repository, and a reporter that records what it is told instead of speaking LSP."""

from __future__ import annotations

import threading
from pathlib import Path

from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.live.passes import PassScheduler, PassStatus

WAIT_S = 120.0


class Recorder:
    """A ``PassReporter`` that keeps everything, and is its own progress handle."""

    def __init__(self) -> None:
        self.statuses: list[PassStatus] = []
        self.titles: list[str] = []
        self.reports: list[tuple[int, str]] = []
        self.ended: list[str] = []
        self.changed = 0

    def status(self, status: PassStatus) -> None:
        self.statuses.append(status)

    def progress(self, title: str, cancel: threading.Event) -> Recorder:
        self.titles.append(title)
        return self

    def report(self, percentage: int, message: str) -> None:
        self.reports.append((percentage, message))

    def end(self, message: str) -> None:
        self.ended.append(message)

    def index_changed(self) -> None:
        self.changed += 1


def test_passes_report_through_the_neutral_interface(project: Path, tmp_path: Path) -> None:
    rec = Recorder()
    with Engine(project, tmp_path / "idx") as engine:
        passes = PassScheduler(engine, rec)
        passes.start()
        try:
            assert passes.wait_for(1, WAIT_S)
            assert passes.generation >= 1
            first, done = rec.statuses[0], rec.statuses[-1]
            assert (first.event, first.state, first.message) == (
                "started",
                "indexing",
                "initial index",
            )
            assert first.last_pass is None
            assert done.event == "done" and done.state in ("ready", "partial")
            assert done.last_pass is not None and done.last_pass.files_changed >= 7
            assert done.watch_error is None
            assert rec.titles == [f"Code Evidence: indexing {engine.workspace.name}"]
            assert rec.ended == [done.message]
            assert rec.changed == 1

            # An unsaved editor buffer is what gets searched, once its pass is done.
            rel = "src/shop/pricing.py"
            text = (project / rel).read_text() + "\n\ndef gift_wrap_fee(box: str) -> float:\n"
            passes.set_buffer(rel, text + "    return 2.5\n")
            assert passes.wait_for_buffers(WAIT_S)
            answer = engine.find(FindRequest("gift_wrap_fee"), refresh=False)
            assert answer.results[0].symbol == "gift_wrap_fee"
            assert rec.statuses[-1].event == "done" and rec.changed == 2
        finally:
            passes.close()


def test_a_second_writer_is_told_it_reads_another_index(project: Path, tmp_path: Path) -> None:
    with Engine(project, tmp_path / "idx") as owner, Engine(project, tmp_path / "idx") as other:
        assert not owner.read_only and other.read_only
        rec = Recorder()
        passes = PassScheduler(other, rec)
        passes.start()
        try:
            assert passes.wait_for(1, WAIT_S)
        finally:
            passes.close()
        assert [s.event for s in rec.statuses] == ["read-only"]
        assert "another process holds the index writer lock" in rec.statuses[0].message
        assert rec.titles == [] and rec.changed == 0
