"""The answer cache: a repeated question is answered from memory until anything it depends on
changes.

The key is everything an answer depends on: the index version (the store's generation, which
moves with every committed change, the commit and branch, how many vectors are in), the request,
the open file's content, the configuration and the ranking code's version. So a cached answer
can never outlive the code it cites, and a ranking change never serves an answer of the old one.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from ..api import FindRequest, FindResult, StageTiming
from ..config import Config
from ..index.store import Store
from ..models.crossencoder import ScoreCache

ANSWER_CACHE_SIZE = 256
# Bump when ranking code changes what an answer is, so no cached answer survives it.
RANKING_VERSION = "2026.12.04-7"

Key = tuple[object, ...]


def answer_key(
    reader: Store, vectors: int, req: FindRequest, open_file: str | None, cfg: Config
) -> Key:
    open_hash = None
    if open_file is not None:
        row = reader.file_row(open_file)
        open_hash = row.content_hash if row else None
    return (
        reader.get_meta("generation"),
        reader.get_meta("commit"),
        reader.get_meta("branch"),
        vectors,
        req.query,
        req.intent,
        open_file,
        open_hash,
        req.line,
        req.limit,
        req.budget_tokens,
        req.depth,
        repr(cfg),
        RANKING_VERSION,
    )


class AnswerCache:
    """The newest ``size`` answers, least recently used out first. Requests on several threads
    share it (``live/pool.py``), hence the lock."""

    def __init__(self, size: int = ANSWER_CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[Key, FindResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> FindResult | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: Key, result: FindResult) -> None:
        with self._lock:
            self._items[key] = result
            self._items.move_to_end(key)
            if len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class Answers:
    """What a long-lived host keeps between questions: the newest answers, and the
    cross-encoder's logits per (question, chunk), which outlive the answers (a new index
    generation drops every answer, not the score of an unchanged chunk for the same question)."""

    def __init__(self) -> None:
        self.cache = AnswerCache()
        self.scores = ScoreCache()

    def answer(
        self,
        key: Key,
        compute: Callable[[], FindResult],
        keep: Callable[[FindResult], bool],
        timings: dict[str, StageTiming],
        notes: list[str],
    ) -> FindResult:
        """The cached answer for ``key`` (with this request's timings and notes), else
        ``compute()``'s, kept when ``keep`` says it may be served again."""
        t0 = time.perf_counter()
        cached = self.cache.get(key)
        if cached is not None:
            timings["cache"] = StageTiming(1, (time.perf_counter() - t0) * 1000)
            return dataclasses.replace(cached, trace=timings, notes=notes)
        result = compute()
        if keep(result):
            self.cache.put(key, result)
        return result

    def forget(self) -> None:
        """Drop answers and scores (benchmarks time each configuration from cold)."""
        self.cache.clear()
        self.scores = ScoreCache()


def drop_deleted(result: FindResult, exists: Callable[[str], bool]) -> FindResult:
    """A file deleted since the last pass must vanish from answers at once, not after the
    next pass."""
    kept = [r for r in result.results if exists(r.path)]
    if len(kept) != len(result.results):
        gone = len(result.results) - len(kept)
        result.notes.append(f"{gone} result(s) dropped: deleted since the last index pass")
        result.results = kept
    return result
