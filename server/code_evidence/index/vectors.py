"""The vector channel's index: USearch HNSW over chunk ids, cosine similarity.

The file is derived data: every vector it holds is also in the embedding cache, so a damaged
file is never an error, only a rebuild (``rebuilt``) that the caller refills from the cache.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
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


class VectorIndex:
    """USearch HNSW (cosine) keyed by int chunk ids; persisted next to the other index files.

    Vectors are stored as float16: half the memory, and far finer than the int8 model's noise.
    """

    def __init__(self, path: Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = dim
        self.rebuilt = False
        self._lock = threading.RLock()
        self._index = self._new()
        if self.path.exists():
            try:
                self._index = self._load()
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

    @locked
    def remove(self, keys: Sequence[int]) -> None:
        ids = self._keys(keys)
        if ids.size:
            self._index.remove(ids)

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
        """Atomic: a crash leaves either the old file or the new one, never half of one."""
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
        with contextlib.suppress(OSError):  # make the rename itself durable
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
