"""The code-tuned cross-encoder model: reads the question and a chunk together and scores the
pair. When it runs, on what and how its score is blended is the rerank stage's policy
(``search/rerank.py``).

The model is trained by ``training/`` and ships in the package (``models/reranker``). It is the
most expensive stage, so it runs under a budget: ``interactive`` requests (palette, hover)
score only as many pairs as the time left affords, measured per pair as the process goes;
``deep`` requests (CLI ``--deep``, agents) score the whole head. Scores are cached per
(question, chunk content), so a repeated or refined question pays only for new chunks. Any
failure (missing model, onnxruntime error) leaves the feature scorer in charge; the engine
reports it in the notes and never fails the request.

A pair is too small a run for onnxruntime to split across cores without its threads waiting
on each other, so the session runs each pair on one thread and up to ``workers`` pairs (one
per physical core) run at once (:meth:`CrossEncoder.submit`): 12 pairs take about half the
time of one-at-a-time runs on two threads, with the same logits (docs/performance.md).
"""

from __future__ import annotations

import atexit
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from . import onnx
from .embedder import TOKENIZER_PATH, clean_text
from .passage import pad_pairs, pair_ids

MODEL_PATH = Path(__file__).resolve().parent / "reranker" / "model.onnx"


class CrossEncoder:
    """The onnxruntime session and tokenizer; created once per process (see :func:`shared`)."""

    def __init__(self, model_path: Path = MODEL_PATH, threads: int = 0) -> None:
        """``threads``: runs at once (0: one per physical core), each on one onnxruntime
        thread; the session's ``run`` is safe to call from several threads."""
        if not model_path.is_file():
            raise FileNotFoundError(f"cross-encoder model not found: {model_path}")
        self.workers = threads or onnx.physical_cores()
        self.session: Any = onnx.session(model_path)
        self.tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        self.tok.no_padding()
        self.tok.no_truncation()
        self.cls = self.tok.token_to_id("[CLS]")
        self.sep = self.tok.token_to_id("[SEP]")
        # Every run holds a slot, whichever request it serves: two finds at once share the
        # cores instead of each assuming them all.
        self._slots = threading.BoundedSemaphore(self.workers)
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="cross-encoder")
        self.ms_per_pair = 15.0  # one pair's run; first guess, replaced by what is measured

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One logit per passage, in one run: higher means the passage answers the query
        better. Int8 activations are scaled per run, so a pair scores a little differently in
        another company; the rerank stage scores pairs alone (:meth:`submit`)."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        with self._slots:
            return self._run(query, passages)

    def submit(self, query: str, passage: str, go: Callable[[], bool]) -> Future[np.ndarray] | None:
        """Score one pair on the next free worker. Blocks while every worker is busy, then
        asks ``go`` (the caller's deadline and cancel checks, made when the pair could start
        rather than when it was queued); ``None`` when it says no."""
        self._slots.acquire()
        try:
            if not go():
                self._slots.release()
                return None
            future = self._pool.submit(self._run, query, [passage])
        except BaseException:
            self._slots.release()
            raise
        future.add_done_callback(lambda _: self._slots.release())
        return future

    def _run(self, query: str, passages: Sequence[str]) -> np.ndarray:
        q = self.tok.encode(clean_text(query), add_special_tokens=False).ids
        encs = self.tok.encode_batch([clean_text(p) for p in passages], add_special_tokens=False)
        feed = pad_pairs([pair_ids(self.cls, self.sep, q, e.ids) for e in encs])
        t0 = time.perf_counter()
        out = self.session.run(["logits"], feed)[0]
        per_pair = (time.perf_counter() - t0) * 1000 / len(passages)
        self.ms_per_pair = 0.7 * self.ms_per_pair + 0.3 * per_pair
        return np.asarray(out, dtype=np.float32).reshape(-1)


_shared: dict[tuple[Path, int], CrossEncoder] = {}
_shared_lock = threading.Lock()


def shared(model_path: Path = MODEL_PATH, threads: int = 0) -> CrossEncoder:
    """The process's session for this model: loading costs ~0.3 s and ~40 MB, once."""
    with _shared_lock:
        key = (model_path, threads)
        if key not in _shared:
            _shared[key] = CrossEncoder(model_path, threads)
        return _shared[key]


def preload(model_path: Path = MODEL_PATH, threads: int = 0) -> None:
    """Load the session and run one pair in the background, so the first question of a
    session does not pay ~0.3 s of loading inside its latency budget. Failures are left for
    the request to report."""

    def work() -> None:
        try:
            shared(model_path, threads).scores("warm up", ["def f():\n    pass"])
        except Exception:  # reported by the first request that needs the model
            return

    thread = threading.Thread(target=work, name="cross-encoder-preload", daemon=True)
    thread.start()
    _preloads.append(thread)


_preloads: list[threading.Thread] = []


@atexit.register
def _join_preloads() -> None:
    """A process that exits while onnxruntime is still building a session aborts in C++;
    the load takes well under a second, so wait for it."""
    for thread in _preloads:
        thread.join(timeout=10)


class ScoreCache:
    """LRU of logits keyed by (question, chunk content key)."""

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._data: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> float | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: tuple[str, str], value: float) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)
