"""The request pool (live/pool.py): latency-sensitive work never waits behind finds, finds run
interactive before deep, a cancelled queued request never starts; and the engine's reads on
several threads at once each see one committed state."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError
from pathlib import Path

import pytest

from code_evidence.api import FindRequest, RequestControl
from code_evidence.engine import Engine
from code_evidence.live.pool import Priority, RequestPool

WAIT_S = 30


def blocker(started: threading.Event, release: threading.Event) -> str:
    started.set()
    assert release.wait(WAIT_S)
    return "released"


def test_latency_work_is_served_while_every_background_worker_is_busy() -> None:
    pool = RequestPool("t", latency_workers=1, background_workers=2)
    release = threading.Event()
    try:
        busy = []
        for _ in range(2):
            started = threading.Event()
            busy.append(pool.submit(Priority.DEEP, blocker, started, release))
            assert started.wait(WAIT_S)
        queued = pool.submit(Priority.DEEP, lambda: "deep")
        # Both background workers are held by deep finds, one more deep find waits: a status
        # read is answered anyway.
        assert pool.submit(Priority.LATENCY, lambda: "status").result(WAIT_S) == "status"
        assert not queued.done()
        assert pool.load().running == 2 and pool.load().queued == 1
    finally:
        release.set()
    assert [f.result(WAIT_S) for f in busy] == ["released", "released"]
    assert queued.result(WAIT_S) == "deep"
    pool.close()


def test_interactive_finds_go_before_deep_ones_and_cancelled_ones_never_run() -> None:
    pool = RequestPool("t", latency_workers=1, background_workers=1)
    started, release = threading.Event(), threading.Event()
    order: list[str] = []
    try:
        first = pool.submit(Priority.DEEP, blocker, started, release)
        assert started.wait(WAIT_S)
        deep = pool.submit(Priority.DEEP, order.append, "deep")
        dropped = pool.submit(Priority.INTERACTIVE, order.append, "cancelled")
        interactive = pool.submit(Priority.INTERACTIVE, order.append, "interactive")
        assert dropped.cancel()
    finally:
        release.set()
    first.result(WAIT_S)
    deep.result(WAIT_S)
    interactive.result(WAIT_S)
    with pytest.raises(CancelledError):
        dropped.result(WAIT_S)
    assert order == ["interactive", "deep"]
    pool.close()


def test_errors_reach_the_caller_and_the_worker_goes_on() -> None:
    pool = RequestPool("t", latency_workers=1, background_workers=1)

    def boom() -> None:
        raise ValueError("bad request")

    with pytest.raises(ValueError, match="bad request"):
        pool.run(Priority.LATENCY, boom)
    assert pool.run(Priority.LATENCY, lambda: 2) == 2
    pool.close()
    assert pool.submit(Priority.LATENCY, lambda: 3).cancelled()


def test_engine_reads_in_parallel_each_on_its_own_snapshot(project: Path, tmp_path: Path) -> None:
    """Finds and lookups on several threads while a pass commits a change: each answer is
    whole (before or after the change), nothing fails, and each thread has its own connection."""
    with Engine(project, tmp_path / "idx") as engine:
        engine.index()
        pool = RequestPool("t", latency_workers=2, background_workers=2)
        errors: list[BaseException] = []
        readers = set()

        def read(i: int) -> None:
            try:
                readers.add(id(engine.reader))
                engine.find(FindRequest(f"discount voucher {i}", limit=3), refresh=False)
                engine.related("src/shop/cart.py", 20)
                engine.status()
            except BaseException as exc:
                errors.append(exc)

        futures = [
            pool.submit(Priority.LATENCY if i % 2 else Priority.DEEP, read, i) for i in range(12)
        ]
        cart = project / "src/shop/cart.py"
        cart.write_text(cart.read_text() + "\n\ndef loyalty_points(cart):\n    return 1\n")
        engine.index()
        for f in futures:
            f.result(WAIT_S)
        pool.close()
        assert errors == []
        assert len(readers) >= 2
        with engine.snapshot() as reader:
            assert reader.chunks_named(["loyalty_points"])


def test_a_find_pauses_between_its_stages_not_only_between_pairs(
    project: Path, tmp_path: Path
) -> None:
    """The host's pause runs before recall, fusion, features and assembly too: two threads of
    Python share one interpreter lock, so a deep find that paused only inside the
    cross-encoder slowed every hover that came during its other stages."""
    (project / ".code-evidence.toml").write_text("[stages]\nvectors = false\nrerank = false\n")
    with Engine(project, tmp_path / "idx") as engine:
        engine.index()
        calls: list[int] = []
        control = RequestControl(pause=lambda: calls.append(1))
        engine.find(FindRequest("discount voucher", limit=3), refresh=False, control=control)
        assert len(calls) == 4
