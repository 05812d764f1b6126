"""Opening the store's SQLite file, and what a failure to open it means.

Three different things can stop the store from opening, and they call for three answers: a
damaged file (:class:`StoreCorrupt`: deleted and rebuilt from the workspace), a file of another
schema (:class:`StoreOutdated`: rebuilt, with a note saying why), and a file system that takes
no writes, a full disk or a read-only mount (:class:`StoreUnwritable`: the file is intact, so
it is read as it is, never deleted).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ..paths import create_private_file

# What SQLite says when the file system, not the file, is the problem.
_NO_WRITE = ("disk i/o error", "disk is full", "unable to open database", "readonly database")


class StoreCorrupt(RuntimeError):
    """The database file is not a usable index; the caller deletes and rebuilds it."""


class StoreOutdated(StoreCorrupt):
    """An index built under another schema (another version of Code Evidence): rebuilt."""

    def __init__(self, found: str, wanted: str) -> None:
        super().__init__(
            f"it was built by another version of Code Evidence (index schema {found}, this "
            f"version uses {wanted})"
        )


class StoreUnwritable(RuntimeError):
    """The file system under the store takes no writes (full, read-only): the store is intact
    and can still be read, so it must not be deleted as if it were corrupt."""


def _no_write(exc: BaseException) -> bool:
    return isinstance(exc, OSError) or any(w in str(exc).lower() for w in _NO_WRITE)


def connect_writer(path: Path, ddl: str) -> sqlite3.Connection:
    """The writing connection, the schema created. The file is created 0600 before SQLite
    opens it: its -wal and -shm files take its mode."""
    try:
        create_private_file(path)
        db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(ddl)
        return db
    except (OSError, sqlite3.OperationalError) as exc:
        if _no_write(exc):
            raise StoreUnwritable(f"{path}: {exc}") from exc
        raise


def connect_reader(path: Path) -> sqlite3.Connection:
    """A reading connection. A WAL database needs its -shm file even to be read; where the
    file system cannot create it (full, read-only), the file is opened as immutable: nothing
    can write it there either."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, check_same_thread=False)
    try:
        db.execute("SELECT count(*) FROM meta").fetchone()
        return db
    except sqlite3.OperationalError as exc:
        db.close()
        if not _no_write(exc):
            raise
    return sqlite3.connect(
        f"file:{path}?mode=ro&immutable=1", uri=True, timeout=30, check_same_thread=False
    )
