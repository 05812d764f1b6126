"""Run ``code-evidence`` and SIGKILL itself at a chosen point: deterministic crash injection
for the crash tests, without hooks in the engine.

``CE_CRASH_AT=point:n`` kills the process at the ``n``-th time (1-based) it reaches ``point``:

- ``chunk``: while chunking a file (before the store is written)
- ``sqlite``: inside the store transaction, after writing a file's rows (uncommitted)
- ``store-commit``: right after the store transaction committed (derived indexes behind)
- ``tantivy``: during a Tantivy commit (a timer fires while ``commit`` runs)
- ``tantivy-after``: right after a Tantivy commit, before the vectors are saved
- ``usearch``: during a USearch save (a timer fires while the file is written)
- ``usearch-replace``: after the temporary USearch file is written, before it replaces the old
- ``journal``: halfway through appending a save's vectors to the journal (a torn record)
- ``embed``: while embedding a batch of chunks

  python bench/crash_hook.py index --workspace WS --index-dir IDX --quiet

Started by ``crash.py`` (for bench/stress.py and tests/test_crash.py) as a script, by path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import common  # noqa: F401  # puts this checkout's server/ first on sys.path

POINTS = (
    "chunk",
    "sqlite",
    "store-commit",
    "tantivy",
    "tantivy-after",
    "usearch",
    "usearch-replace",
    "journal",
    "embed",
)
TIMER_S = 0.002


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _counter(n: int) -> Callable[[], bool]:
    seen = [0]

    def hit() -> bool:
        seen[0] += 1
        return seen[0] == n

    return hit


def install(point: str, n: int) -> None:
    from code_evidence.index import indexer, lexical, reading, store, vectors

    hit = _counter(n)

    def wrap(owner: Any, name: str, before: bool = True, during: bool = False) -> None:
        orig = getattr(owner, name)

        def patched(*args: Any, **kwargs: Any) -> Any:
            if hit():
                if during:
                    threading.Timer(TIMER_S, die).start()
                elif before:
                    die()
                else:
                    out = orig(*args, **kwargs)
                    die()
                    return out
            return orig(*args, **kwargs)

        setattr(owner, name, patched)

    if point == "chunk":
        wrap(reading, "chunk_file")  # the pass reads files there (index/reading.py)
    elif point == "sqlite":
        wrap(store.Store, "replace_file", before=False)
    elif point == "store-commit":
        orig_tx = store.Store.transaction

        @contextlib.contextmanager
        def tx(self: store.Store) -> Iterator[None]:
            with orig_tx(self):
                yield
            if hit():
                die()

        store.Store.transaction = tx  # type: ignore[method-assign]
    elif point == "tantivy":
        wrap(lexical.LexicalIndex, "commit", during=True)
    elif point == "tantivy-after":
        wrap(lexical.LexicalIndex, "commit", before=False)
    elif point == "usearch":
        wrap(vectors.VectorIndex, "save", during=True)
    elif point == "usearch-replace":
        orig_replace = os.replace

        def replace(src: Any, dst: Any) -> None:
            if str(dst).endswith(".usearch") and hit():
                die()
            orig_replace(src, dst)

        vectors.os.replace = replace  # type: ignore[attr-defined]
    elif point == "journal":
        orig_append = vectors.VectorIndex._append

        def append(self: vectors.VectorIndex, data: bytes) -> None:
            if hit():
                orig_append(self, data[: len(data) // 2])
                die()
            orig_append(self, data)

        vectors.VectorIndex._append = append  # type: ignore[method-assign]
    elif point == "embed":
        wrap(indexer, "embed_with_cache")
    else:
        raise SystemExit(f"unknown crash point {point!r}; one of {', '.join(POINTS)}")


if __name__ == "__main__":
    spec = os.environ.get("CE_CRASH_AT")
    if spec:
        point, _, count = spec.partition(":")
        install(point, int(count or 1))
    from code_evidence.cli import main

    sys.exit(main(sys.argv[1:]))
