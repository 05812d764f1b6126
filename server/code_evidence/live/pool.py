"""Requests that never block each other: a small worker pool with lanes, for any host.

A long-lived host answers many kinds of request against one engine: a hover or a code lens
fires on every mouse rest and must answer in milliseconds; a palette find may take a few
hundred; a ``deep`` find (an agent's, or ``--as-of``, which indexes a past commit first) has no
time limit at all. One read thread would serialise them, so a deep find blocks every hover
behind it. As ruff's server does, requests are sorted by what they are:

- **latency** (hover, lenses, status, outlines): its own workers, which nothing else may use,
  so a latency-sensitive request never queues behind a find;
- **background** (finds): the other workers, interactive finds before deep ones, in arrival
  order within a priority.

Each engine read takes its own snapshot (a read transaction on its thread's own SQLite
connection, the configuration of the moment, see ``Engine``), so requests on different workers
share no mutable state and an index pass committing meanwhile is never seen half-way.

Separate workers are not enough on a machine with few cores: a deep find's cross-encoder would
still take the CPU a hover needs. So a deep find pauses between two cross-encoder pairs while
the latency lane has work (:meth:`RequestPool.yield_to_latency`, bounded so hovers cannot
starve it).

A queued request that is cancelled never starts (``Future.cancel``). A running find stops at
the engine's next check of the cancel event its host passed (between cross-encoder pairs);
work that cannot stop half-way finishes, and its answer is dropped.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

LATENCY_WORKERS = 2
BACKGROUND_WORKERS = 2
YIELD_MAX_S = 2.0  # the longest a deep find waits for latency-sensitive work, per pause


class Priority(IntEnum):
    """Lower runs first. ``LATENCY`` has workers of its own; the others share the rest."""

    LATENCY = 0  # hover, code lenses, status: what an editor shows while the user moves
    INTERACTIVE = 1  # a palette find: a person is waiting for it
    DEEP = 2  # deep finds, --as-of: an agent or a script, with no time limit


@dataclass(order=True)
class _Job:
    priority: int
    seq: int
    fn: Callable[[], Any] = field(compare=False)
    future: Future[Any] = field(compare=False)


@dataclass(frozen=True, slots=True)
class PoolLoad:
    """What the pool is doing now, for status payloads and benchmarks."""

    running: int
    queued: int


class _Lane:
    """Workers taking jobs from one priority queue."""

    def __init__(self, name: str, workers: int, pool: RequestPool) -> None:
        self.jobs: list[_Job] = []
        self.cond = threading.Condition()
        self.running = 0
        self.pool = pool
        self.threads = [
            threading.Thread(target=self._work, name=f"ce-{name}-{i}", daemon=True)
            for i in range(workers)
        ]
        for t in self.threads:
            t.start()

    def put(self, job: _Job) -> None:
        with self.cond:
            self.jobs.append(job)
            self.jobs.sort()
            self.cond.notify_all()  # workers and yield_to_latency wait on the same condition

    def _work(self) -> None:
        while True:
            with self.cond:
                while not self.jobs and not self.pool.closed:
                    self.cond.wait()
                if not self.jobs:
                    return
                job = self.jobs.pop(0)
                self.running += 1
            try:
                if job.future.set_running_or_notify_cancel():
                    try:
                        job.future.set_result(job.fn())
                    except BaseException as exc:
                        job.future.set_exception(exc)
            finally:
                with self.cond:
                    self.running -= 1
                    self.cond.notify_all()  # wakes yield_to_latency (and idle workers)

    def stop(self) -> None:
        with self.cond:
            for job in self.jobs:
                job.future.cancel()
            self.jobs.clear()
            self.cond.notify_all()


class RequestPool:
    """``submit`` a job with a :class:`Priority`; get a ``concurrent.futures.Future`` (await
    it with ``asyncio.wrap_future``: cancelling the awaiting task cancels a queued job)."""

    def __init__(
        self,
        name: str = "requests",
        latency_workers: int = LATENCY_WORKERS,
        background_workers: int = BACKGROUND_WORKERS,
    ) -> None:
        self.closed = False
        self._seq = itertools.count()
        self._latency = _Lane(f"{name}-latency", latency_workers, self)
        self._background = _Lane(f"{name}-background", background_workers, self)

    def submit(self, priority: Priority, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        if self.closed:
            future.cancel()
            return future
        lane = self._latency if priority == Priority.LATENCY else self._background
        lane.put(_Job(int(priority), next(self._seq), lambda: fn(*args), future))
        return future

    def run(self, priority: Priority, fn: Callable[..., T], *args: Any) -> T:
        """``submit`` and wait for the answer (from a thread that may block)."""
        return self.submit(priority, fn, *args).result()

    def yield_to_latency(self, timeout: float = YIELD_MAX_S) -> None:
        """Called by background work at its pause points (a deep find, between its stages and
        between cross-encoder pairs): return once the latency lane is idle, or after
        ``timeout`` (a steady stream of hovers must not starve a find). On a machine with few
        cores this is what keeps a hover's latency while a deep find runs: not competing for
        the CPU."""
        lane = self._latency
        deadline = time.monotonic() + timeout
        with lane.cond:
            while (lane.running or lane.jobs) and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                lane.cond.wait(left)

    def load(self) -> PoolLoad:
        lanes = (self._latency, self._background)
        running = queued = 0
        for lane in lanes:
            with lane.cond:
                running += lane.running
                queued += len(lane.jobs)
        return PoolLoad(running, queued)

    def close(self, wait: bool = True) -> None:
        """Cancel what is queued; with ``wait``, let running jobs finish (bounded)."""
        self.closed = True
        for lane in (self._latency, self._background):
            lane.stop()
        if wait:
            for lane in (self._latency, self._background):
                for t in lane.threads:
                    t.join(timeout=30)
