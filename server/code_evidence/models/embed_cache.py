"""The per-user embedding cache, and what a chunk's vector is keyed by.

Vectors are content addressed (model id + the embedded text, which carries path and symbol), so
an unchanged chunk is embedded once per user, whatever workspace, branch or clone it appears in.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

from ..api import Chunk
from ..filekinds import is_doc_path
from ..paths import cache_root, create_private_file, private_cache_root, private_dir
from .embedder import DIM, Embedder, normalise

log = logging.getLogger(__name__)

CACHE_FILE = "embeddings.sqlite"
# embed_with_cache embeds (and stores) misses in blocks this size, so an interrupted index
# pass keeps what it already paid for.
_CACHE_BLOCK = 256


# What the model reads of a documentation chunk (issue 24): every vector of Django within 10
# minutes on 2 cores leaves room for about 3.6M tokens, and docs were 11 % of Django's. A
# documentation window is asked about by its topic, which its first lines carry; the dev set
# does not move with the cut. Tests (46 % of the tokens) stay whole: cut to their first line
# they rose above the code they test for descriptive questions (docstring MRR@10 0.831 ->
# 0.819), see docs/performance.md. Bump filekinds.VECTOR_POLICY with these.
DOC_HEAD_LINES = 8


def embedding_text(chunk: Chunk) -> str:
    """Path and symbol go in with the code: they carry much of what a chunk is about. Of a
    documentation chunk only the first eight lines."""
    text = chunk.text
    if not chunk.is_test and is_doc_path(chunk.path):
        text = _head(text, DOC_HEAD_LINES)
    return f"{chunk.path}\n{chunk.symbol}\n{text}"


def _head(text: str, lines: int) -> str:
    cut = -1
    for _ in range(lines):
        cut = text.find("\n", cut + 1)
        if cut == -1:
            return text
    return text[:cut]


def embedding_key(chunk: Chunk, model_id: str) -> str:
    return text_key(embedding_text(chunk), model_id)


def text_key(text: str, model_id: str) -> str:
    """The cache key of an embedded text: it binds the vector to the model and the exact text
    (an imported cache file is checked against it, see ``embed_transfer``)."""
    digest = hashlib.sha256()
    digest.update(model_id.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def to_stored(vector: np.ndarray) -> np.ndarray:
    """What the cache keeps (float16: half the disk, far below the model's own int8 noise),
    widened and renormalised. Fresh and cached vectors both go through this, so an index pass
    gives the same vectors whether or not the cache was warm."""
    half = np.asarray(vector, dtype=np.float32).reshape(-1).astype(np.float16)
    return normalise(half.astype(np.float32)[None, :])[0]


class EmbeddingCache:
    """Global, content-addressed, one per user, shared by every workspace.

    SQLite in WAL mode: several processes (editor server, CLI) read and write it at once.
    Vectors are stored as float16 (768 bytes each). A corrupt file is moved aside to
    ``<name>.corrupt`` and recreated: it only holds derived data, so losing it costs
    recomputation, never correctness. If the cache cannot be opened at all (unwritable
    directory, locked past the timeout), the cache lives in memory for this process."""

    _SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vec BLOB NOT NULL)"
    _IN_CHUNK = 500  # keys per SELECT ... IN (...), well under SQLite's variable limit

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else cache_root() / CACHE_FILE
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._conn = self._open()

    # -- connection management ---------------------------------------------------------------

    def _connect(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, timeout=30.0, isolation_level=None, check_same_thread=False)
        try:
            if target != ":memory:":
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(self._SCHEMA + " WITHOUT ROWID")
            conn.execute("SELECT key, vec FROM vectors LIMIT 1").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _memory(self, exc: Exception) -> sqlite3.Connection:
        log.warning("embedding cache %s unusable (%s); caching in memory", self.path, exc)
        self._inode = None
        return self._connect(":memory:")

    def _open(self, discard: bool = False) -> sqlite3.Connection:
        """Connect, moving a corrupt file aside first. ``discard``: the file we had open was
        found corrupt mid-use; move it aside unless another process already replaced it."""
        try:
            if self.path.parent == cache_root():
                private_cache_root()
            else:
                private_dir(self.path.parent, repair=False)
            lock = FileLock(str(self.path) + ".lock", timeout=30, mode=0o600)
            with lock:
                create_private_file(self.path)  # before SQLite: -wal and -shm take its mode
                if discard and self._inode is not None and self._inode == _inode(self.path):
                    self._move_aside()
                try:
                    conn = self._connect(str(self.path))
                except sqlite3.OperationalError:
                    raise
                except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
                    log.warning("embedding cache %s is corrupt (%s); recreating it", self.path, exc)
                    self._move_aside()
                    conn = self._connect(str(self.path))
                self._inode = _inode(self.path)
                return conn
        except (OSError, sqlite3.Error, Timeout) as exc:
            return self._memory(exc)

    def _move_aside(self) -> None:
        for suffix in ("-wal", "-shm"):  # journal files of a corrupt database are worthless
            with contextlib.suppress(FileNotFoundError):
                self.path.with_name(self.path.name + suffix).unlink()
        with contextlib.suppress(FileNotFoundError):
            os.replace(self.path, self.path.with_name(self.path.name + ".corrupt"))

    def _recover(self, exc: Exception) -> None:
        log.warning("embedding cache %s is corrupt (%s); recreating it", self.path, exc)
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = self._open(discard=True)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("embedding cache is closed")
        return self._conn

    # -- public API ----------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors for the keys present; absent and damaged rows are simply missing."""
        unique = list(dict.fromkeys(keys))
        rows: list[tuple[str, bytes]] = []
        with self._lock:
            conn = self._connection()
            try:
                for start in range(0, len(unique), self._IN_CHUNK):
                    part = unique[start : start + self._IN_CHUNK]
                    marks = ",".join("?" * len(part))
                    rows += conn.execute(
                        f"SELECT key, vec FROM vectors WHERE key IN ({marks})", part
                    ).fetchall()
            except sqlite3.OperationalError as exc:
                log.warning("embedding cache read failed (%s); treating as misses", exc)
                return {}
            except sqlite3.DatabaseError as exc:
                self._recover(exc)
                return {}
        good = [(k, b) for k, b in rows if isinstance(b, bytes) and len(b) == DIM * 2]
        if not good:
            return {}
        matrix = np.frombuffer(b"".join(b for _, b in good), dtype=np.float16)
        matrix = normalise(matrix.reshape(len(good), DIM).astype(np.float32))
        return {key: matrix[i] for i, (key, _) in enumerate(good)}

    def put_many(self, items: Mapping[str, np.ndarray]) -> None:
        """One transaction. A write that fails (disk full, busy past the timeout) only loses
        the caching; it never fails the caller."""
        rows = []
        for key, vec in items.items():
            arr = np.asarray(vec, dtype=np.float32).reshape(-1)
            if arr.shape != (DIM,):
                raise ValueError(f"vector for {key!r} has shape {arr.shape}, expected ({DIM},)")
            rows.append((key, arr.astype(np.float16).tobytes()))
        if not rows:
            return
        with self._lock:
            for attempt in range(2):
                conn = self._connection()
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        conn.executemany(
                            "INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)", rows
                        )
                        conn.execute("COMMIT")
                    except BaseException:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                        raise
                    return
                except sqlite3.OperationalError as exc:
                    log.warning("embedding cache write failed (%s); vectors not cached", exc)
                    return
                except sqlite3.DatabaseError as exc:
                    if attempt:
                        return
                    self._recover(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def embed_with_cache(
    embedder: Embedder,
    cache: EmbeddingCache,
    texts_by_key: Mapping[str, str],
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, np.ndarray], int]:
    """Vectors for every key, embedding only the cache misses. Returns the vectors and how many
    were computed. ``progress(done, total)`` counts computed texts against the misses."""
    vectors = cache.get_many(list(texts_by_key))
    misses = [key for key in texts_by_key if key not in vectors]
    # Neighbouring lengths in one block: each block's batches then pad little.
    misses.sort(key=lambda key: len(texts_by_key[key]))
    total = len(misses)
    done = 0
    for start in range(0, total, _CACHE_BLOCK):
        block = misses[start : start + _CACHE_BLOCK]
        fresh = embedder.embed([texts_by_key[key] for key in block])
        stored = {key: to_stored(vec) for key, vec in zip(block, fresh, strict=True)}
        cache.put_many(stored)
        vectors.update(stored)
        done += len(block)
        if progress is not None:
            progress(done, total)
    return vectors, total
