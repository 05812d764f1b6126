"""The index folder on disk: created (or repaired) private to the user, its writer lock taken,
and what a failed write there means.

One process writes an index folder; any number read it. Who writes is decided here, once, by a
file lock taken without waiting: a second editor window, a CLI run beside the language server,
answer from what the writer committed instead of queueing behind it. A file system that takes
no writes (full, read-only, not ours) is not an error either: the index answers as it was last
committed, and says so.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ..api import EngineError
from ..paths import cache_root, private_cache_root, private_index_dir


class IndexWriteError(EngineError):
    """The index folder cannot take writes (a full disk, a read-only file system): the
    index keeps what it last committed, and answers can still come from it."""


# What a failed write says when the file system, not the code, is the problem.
_NO_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EACCES}
_NO_WRITE_WORDS = ("disk is full", "readonly database", "no space left", "read-only file system")
# What SQLite, Tantivy and USearch raise when a write fails (their own types or these).
WRITE_FAILURES = (OSError, sqlite3.OperationalError, ValueError, RuntimeError)


def cannot_write(exc: BaseException) -> bool:
    """True when ``exc`` says the file system takes no writes, rather than a bug."""
    if isinstance(exc, OSError) and exc.errno in _NO_WRITE_ERRNOS:
        return True
    return any(w in str(exc).lower() for w in _NO_WRITE_WORDS)


class IndexFolder:
    """One index folder, opened: ``read_only`` when another process holds the writer lock
    (``locked_by_other``) or the file system takes no writes (then ``notes`` says why)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notes: list[str] = []
        self.locked_by_other = False
        try:
            if path.is_relative_to(cache_root()):
                private_cache_root()
            private_index_dir(path)  # (and repairs what an older version wrote)
        except OSError as exc:
            raise EngineError(f"cannot create index folder {path}: {exc}") from exc
        self._lock = FileLock(str(path / "writer.lock"), mode=0o600)
        self.read_only = self._take_lock()

    def _take_lock(self) -> bool:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            self.locked_by_other = True
            return True
        except OSError as exc:
            self.notes.append(
                f"the index folder {self.path} takes no writes ({exc.strerror or exc}): "
                "answering from the index as it is, without refreshing it"
            )
            return True
        private_index_dir(self.path)  # the lock file, created with the umask's mode
        return False

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Turn a write the file system refuses into :class:`IndexWriteError`, which tells the
        user what to do; any other failure is a bug and propagates as it is."""
        try:
            yield
        except WRITE_FAILURES as exc:
            if not cannot_write(exc):
                raise
            raise IndexWriteError(
                f"cannot write the index in {self.path} ({exc}); free some space or "
                "put the index elsewhere (--index-dir, CODE_EVIDENCE_CACHE_DIR)"
            ) from exc

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()
