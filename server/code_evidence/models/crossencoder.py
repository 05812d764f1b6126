"""The code-tuned cross-encoder: reads the question and a chunk together and scores the pair.

The model is trained by ``training/`` and ships in the package (``models/reranker``). It is the
most expensive stage, so it runs under a budget: ``interactive`` requests (palette, hover)
score only as many pairs as the time left affords, measured per pair as the process goes;
``deep`` requests (CLI ``--deep``, agents) score the whole head. Scores are cached per
(question, chunk content), so a repeated or refined question pays only for new chunks. Any
failure (missing model, onnxruntime error) leaves the feature scorer in charge; the engine
reports it in the notes and never fails the request.
"""

from __future__ import annotations

import atexit
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from ..index.terms import code_terms
from ..search.candidate import Candidate
from ..search.query import STOPWORDS, QueryAnalysis
from .embedder import TOKENIZER_PATH, clean_text, physical_cores
from .passage import PASSAGE_TOKENS, QUERY_TOKENS, pad_pairs, pair_ids, passage_text

MODEL_PATH = Path(__file__).resolve().parent / "reranker" / "model.onnx"
_CHARS_PER_TOKEN = 3  # code tokenises densely; a window of this many chars fills the passage
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class CrossEncoder:
    """The onnxruntime session and tokenizer; created once per process (see :func:`shared`)."""

    def __init__(self, model_path: Path = MODEL_PATH, threads: int = 0) -> None:
        import onnxruntime as ort

        if not model_path.is_file():
            raise FileNotFoundError(f"cross-encoder model not found: {model_path}")
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads or physical_cores()
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        providers = ["CPUExecutionProvider"]
        if "CUDAExecutionProvider" in ort.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        self.session: Any = ort.InferenceSession(
            str(model_path), sess_options=opts, providers=providers
        )
        self.tok = Tokenizer.from_file(str(TOKENIZER_PATH))
        self.tok.no_padding()
        self.tok.no_truncation()
        self.cls = self.tok.token_to_id("[CLS]")
        self.sep = self.tok.token_to_id("[SEP]")
        self.lock = threading.Lock()  # one run at a time: the session already uses every core
        self.ms_per_pair = 15.0  # first guess; replaced by what this machine measures

    def scores(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One logit per passage: higher means the passage answers the query better."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        q = self.tok.encode(clean_text(query), add_special_tokens=False).ids
        encs = self.tok.encode_batch([clean_text(p) for p in passages], add_special_tokens=False)
        feed = pad_pairs([pair_ids(self.cls, self.sep, q, e.ids) for e in encs])
        t0 = time.perf_counter()
        with self.lock:
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


def window(text: str, terms: set[str], max_chars: int) -> str:
    """The part of a long chunk the model reads: its first line (the signature) and the lines
    around the one that matches most query terms. Short chunks are read whole."""
    if len(text) <= max_chars:
        return text
    lines = text.splitlines()
    best, best_hits = 0, 0
    for i, line in enumerate(lines):
        hits = len(terms & set(code_terms(line))) if terms else 0
        if hits > best_hits:
            best, best_hits = i, hits
    if best_hits == 0 or best <= 2:
        return text[:max_chars]
    out = [lines[0]]
    used = len(lines[0]) + 1
    for line in lines[max(1, best - 2) :]:
        if used + len(line) + 1 > max_chars:
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


# First words of change requests (commit-message style): "Fix ...", "Add ...", "Don't ...".
_CHANGE_VERB_TEXT = """
    fix fixes fixed add adds added remove removes removed deprecate deprecated improve
    hide ensure correct mark support allow rename drop bump revert refactor use avoid handle
    don't update change move replace rewrite clean cleanup simplify pass make let stop skip
    prevent release merge restore re-add enable disable document docs type typing test tests
"""
_CHANGE_VERBS = frozenset(_CHANGE_VERB_TEXT.split())
_DESCRIPTION_MAX_WORDS = 30  # a longer question is a commit body or a pasted log


def reads_as_description(qa: QueryAnalysis) -> bool:
    """The model was trained on questions that describe what code does (docstring sentences,
    names). On dev-set change requests and errors it hurts (README, "Rerank"): a pasted
    traceback or error line, a change verb first, or a long message skips it. So does a
    question that names code (an identifier, a path, quoted text): exact-name evidence
    (BM25, symbol boosts) answers it, and the model could only dilute that."""
    words = qa.raw.split()
    if not words or qa.frames or qa.messages or len(words) > _DESCRIPTION_MAX_WORDS:
        return False
    if qa.identifiers or qa.paths or qa.quoted:
        return False
    return words[0].lower().strip(":,.!") not in _CHANGE_VERBS


def content_key(c: Candidate) -> str:
    """The chunk's content hash: the same code at another path or commit reuses its score."""
    return c.stored.chunk.hash


class CrossEncoderReranker:
    """Scores the head of the fused list with the cross-encoder and blends the logit with the
    first-stage score: ``score * exp(blend * (logit - best logit))``. Blending, not replacing,
    keeps a strong structural signal (the open file's import, an exact name) from being thrown
    away by a model that reads only text."""

    name = "cross-encoder"

    def __init__(
        self,
        model: CrossEncoder,
        cache: ScoreCache,
        max_pairs: int,
        blend: float,
    ) -> None:
        self.model = model
        self.cache = cache
        self.max_pairs = max_pairs
        self.blend = blend

    def wanted(self, head: int) -> int:
        return min(head, self.max_pairs)

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        """Pairs are run one at a time, in rank order: the deadline is checked between them
        (a pair is not started when the time left is under what a pair costs here), and a
        pair's score never depends on which others shared its batch (int8 activations are
        scaled per batch), so cached and fresh scores agree. Scored pairs are always a prefix
        of the head: a gap would mix scored and unscored candidates."""
        head = cands[: self.max_pairs]
        terms = {t for t in qa.terms if t not in STOPWORDS} | {
            t.lower() for name in qa.identifiers for t in _IDENT.findall(name)
        }
        max_chars = PASSAGE_TOKENS * _CHARS_PER_TOKEN
        query = " ".join(qa.raw.split()[:QUERY_TOKENS])
        done = 0
        for c in head:
            key = (qa.raw, content_key(c))
            logit = self.cache.get(key)
            if logit is None:
                left_ms = (deadline - time.perf_counter()) * 1000
                if left_ms < self.model.ms_per_pair:
                    break
                ch = c.stored.chunk
                text = passage_text(ch.path, ch.symbol, window(ch.text, terms, max_chars))
                logit = float(self.model.scores(query, [text])[0])
                self.cache.put(key, logit)
            c.cross = logit
            done += 1
        return done

    def combine(self, scored: list[Candidate]) -> None:
        if not scored:
            return
        # A soft penalty (a test when tests were not asked for, docs, the open file itself) is a
        # decision about the kind of file, which the model does not see: a penalised chunk's
        # logit counts at most as high as the best unpenalised one's, so the model reorders
        # within each kind and the penalty still decides between them.
        plain = [c.cross for c in scored if c.cross is not None and c.factor >= 1.0]
        cap = max(plain) if plain else math.inf
        effective = {
            c.id: (c.cross if c.factor >= 1.0 else min(c.cross, cap))
            for c in scored
            if c.cross is not None
        }
        if not effective:
            return
        best = max(effective.values())
        for c in scored:
            logit = effective.get(c.id)
            if logit is not None:
                c.score *= math.exp(self.blend * (logit - best))
                if logit == best:
                    c.tag("cross-encoder-top")
