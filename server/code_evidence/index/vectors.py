"""The vector channel's index: USearch HNSW over chunk ids, cosine similarity.

The file is derived data: every vector it holds is also in the embedding cache, so a damaged
file is never an error, only a rebuild (``rebuilt``) that the caller refills from the cache.

Writing the whole file costs its size (about 0.8 KB a vector: 40 MB on Django, 350 MB at
450,000 chunks), so a save that changed a few vectors appends them to a journal beside it
(``<file>.log``) instead, and the file is rewritten only when the journal has grown to a share
of it. Opening replays the journal over the file; the journal names the file it continues (its
size and time), so a journal left beside a newer file (a crash between the two writes) or a
file deleted for a rebuild is ignored, and a torn last record is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

# Load order matters: when usearch's extension is loaded before the tokenizers library,
# importing onnxruntime afterwards crashes the process (segmentation fault, seen with usearch
# 2.26 and onnxruntime 1.32). Loading tokenizers first is enough, and cheap.
import tokenizers  # noqa: F401
from usearch.index import Index, MetricKind

from ..paths import PRIVATE_FILE_MODE, create_private_file
from .locks import locked

log = logging.getLogger(__name__)

# Below this many vectors a brute-force scan is both exact and about as fast as the graph
# (10k x 384 float16 is a few milliseconds), and it cannot miss a neighbour.
EXACT_SEARCH_MAX = 10_000
JOURNAL_SUFFIX = ".log"
_MAGIC = b"CEVJ1\n"
_HEAD = struct.Struct("<6sQQ")  # magic, size and mtime_ns of the file the journal continues
_RECORD = struct.Struct("<cI")  # b"A" (add: keys, float16 vectors) or b"R" (remove: keys), n
# The file is rewritten once the journal outgrows this share of it (or this many bytes).
JOURNAL_SHARE = 0.1
JOURNAL_MIN_BYTES = 4_000_000


class VectorIndex:
    """USearch HNSW (cosine) keyed by int chunk ids; persisted next to the other index files.

    Vectors are stored as float16: half the memory, and far finer than the int8 model's noise.
    """

    def __init__(self, path: Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self.rebuilt = False
        self.journal = self.path.with_name(self.path.name + JOURNAL_SUFFIX)
        self._lock = threading.RLock()
        self._index = self._new()
        self._pending: list[bytes] = []  # journal records not yet written
        # (file size, mtime, journal size) as this object last read or wrote them: a save
        # appends only while the disk still holds exactly that (no other writer, no rebuild).
        self._on_disk: tuple[int, int, int] | None = None
        self.full_saves = 0  # times the whole file was written (what a save should avoid)
        if self.path.exists():
            try:
                self._index = self._load()
                self._on_disk = self._replay()
            except (OSError, RuntimeError, ValueError) as exc:
                log.warning("vector index %s unreadable (%s); starting empty", self.path, exc)
                self._index = self._new()
                self.rebuilt = True

    def _new(self) -> Index:
        return Index(ndim=self.dim, metric="cos", dtype="f16")

    def _load(self) -> Index:
        meta = Index.metadata(str(self.path))
        if not meta or meta.get("dimensions") != self.dim:
            raise ValueError(f"dimensions {meta and meta.get('dimensions')}, expected {self.dim}")
        if meta.get("kind_metric") != MetricKind.Cos:
            raise ValueError(f"metric {meta.get('kind_metric')}, expected cosine")
        index = self._new()
        index.load(str(self.path))
        if index.ndim != self.dim:
            raise ValueError(f"loaded dimensions {index.ndim}, expected {self.dim}")
        return index

    def _keys(self, keys: Sequence[int]) -> np.ndarray:
        arr = np.asarray(keys, dtype=np.int64).reshape(-1)
        if arr.size and arr.min() < 0:
            raise ValueError("vector index keys must be non-negative chunk ids")
        return arr.astype(np.uint64)

    @locked
    def add(self, keys: Sequence[int], vectors: np.ndarray) -> None:
        """Add or replace. Within one call a repeated key keeps its last vector."""
        ids = self._keys(keys)
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim == 1:
            vecs = vecs.reshape(1, -1)
        if vecs.shape != (ids.size, self.dim):
            raise ValueError(f"vectors of shape {vecs.shape} for {ids.size} keys, dim {self.dim}")
        if ids.size == 0:
            return
        # Last occurrence of each key: unique over the reversed array finds them.
        _, last_rev = np.unique(ids[::-1], return_index=True)
        keep = np.sort(ids.size - 1 - last_rev)
        ids, vecs = ids[keep], vecs[keep]
        # usearch refuses duplicate keys (multi=False); replacing means remove then add.
        present = np.asarray(self._index.contains(ids), dtype=bool).reshape(-1)
        if present.any():
            self._index.remove(ids[present])
        self._index.add(ids, np.ascontiguousarray(vecs))
        self._pending.append(_record(b"A", ids, vecs.astype(np.float16)))

    @locked
    def remove(self, keys: Sequence[int]) -> None:
        ids = self._keys(keys)
        if ids.size:
            self._index.remove(ids)
            self._pending.append(_record(b"R", ids, None))

    @locked
    def search(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(key, cosine similarity), best first; at most ``k`` and at most ``len(self)``."""
        size = len(self._index)
        if size == 0 or k <= 0:
            return []
        vec = np.asarray(query, dtype=np.float32).reshape(-1)
        if vec.shape != (self.dim,):
            raise ValueError(f"query of shape {vec.shape}, expected ({self.dim},)")
        matches = self._index.search(vec, min(k, size), exact=size <= EXACT_SEARCH_MAX)
        return [
            (int(key), 1.0 - float(dist))
            for key, dist in zip(matches.keys, matches.distances, strict=True)
        ]

    @locked
    def keys(self) -> np.ndarray:
        """Every key present, to reconcile the index with the chunk store."""
        return np.asarray(self._index.keys, dtype=np.int64)

    @locked
    def __len__(self) -> int:
        return len(self._index)

    @locked
    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int | np.integer) or isinstance(key, bool) or key < 0:
            return False
        return bool(self._index.contains(int(key)))

    @locked
    def save(self) -> None:
        """Make every change durable: appended to the journal while it stays small, else the
        whole file rewritten (atomically: a crash leaves the old file or the new one)."""
        if not self._pending and self.path.exists():
            return
        size = sum(map(len, self._pending))
        now = self._disk_state()
        small = now is not None and now[2] + size <= max(JOURNAL_MIN_BYTES, JOURNAL_SHARE * now[0])
        if small and now == self._on_disk:
            self._append(b"".join(self._pending))
            self._pending.clear()
            self._on_disk = self._disk_state()
            return
        self._save_whole()

    def _append(self, data: bytes) -> None:
        with self.journal.open("ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    def _disk_state(self) -> tuple[int, int, int] | None:
        """The file's size and time and its journal's size, when the journal continues it."""
        if not self._journal_ok():
            return None
        try:
            st, used = self.path.stat(), self.journal.stat().st_size
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns, used

    def _save_whole(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        try:
            create_private_file(tmp)  # usearch keeps the mode of a file it overwrites
            self._index.save(str(tmp))
            os.chmod(tmp, PRIVATE_FILE_MODE)
            with tmp.open("rb+") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
        self.full_saves += 1
        self._pending.clear()
        # A fresh journal names the new file; until it is written, the old one names the old
        # file and is ignored (the new file holds everything it had).
        st = self.path.stat()
        fresh = self.journal.with_name(f"{self.journal.name}.tmp-{os.getpid()}")
        create_private_file(fresh)
        with fresh.open("wb") as fh:
            fh.write(_HEAD.pack(_MAGIC, st.st_size, st.st_mtime_ns))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(fresh, self.journal)
        self._on_disk = self._disk_state()
        with contextlib.suppress(OSError):  # make the rename itself durable
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)

    def _journal_ok(self) -> bool:
        """Whether the journal continues the file as it is on disk."""
        try:
            with self.journal.open("rb") as fh:
                head = fh.read(_HEAD.size)
            st = self.path.stat()
        except OSError:
            return False
        return len(head) == _HEAD.size and _HEAD.unpack(head) == (
            _MAGIC,
            st.st_size,
            st.st_mtime_ns,
        )

    def _replay(self) -> tuple[int, int, int] | None:
        """Apply the journal's records to the loaded file, up to the first torn one; the
        disk state read (None when the journal must not be appended to: none, stale, torn)."""
        state = self._disk_state()
        if state is None:
            return None
        data = self.journal.read_bytes()
        pos = _HEAD.size
        while pos + _RECORD.size + 4 <= len(data):
            op, n = _RECORD.unpack_from(data, pos)
            body = _RECORD.size + 8 * n + (2 * n * self.dim if op == b"A" else 0)
            end = pos + body
            if end + 4 > len(data) or struct.unpack_from("<I", data, end)[0] != zlib.crc32(
                data[pos:end]
            ):
                break
            ids = np.frombuffer(data, dtype=np.uint64, count=n, offset=pos + _RECORD.size)
            if op == b"A":
                at = pos + _RECORD.size + 8 * n
                vecs = np.frombuffer(data, dtype=np.float16, count=n * self.dim, offset=at)
                present = np.asarray(self._index.contains(ids), dtype=bool).reshape(-1)
                if present.any():
                    self._index.remove(ids[present])
                self._index.add(ids, vecs.reshape(n, self.dim).astype(np.float32))
            elif op == b"R":
                self._index.remove(ids)
            pos = end + 4
        whole = pos == len(data) and len(data) == state[2]
        return state if whole else None


def _record(op: bytes, ids: np.ndarray, vecs: np.ndarray | None) -> bytes:
    """One journal record: op, count, keys, float16 vectors for an add, then its CRC-32."""
    body = _RECORD.pack(op, ids.size) + ids.astype("<u8").tobytes()
    if vecs is not None:
        body += np.ascontiguousarray(vecs, dtype="<f2").tobytes()
    return body + struct.pack("<I", zlib.crc32(body))
