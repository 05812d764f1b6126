"""Second-stage scoring of the fused candidates, under a latency budget.

Three scorers sit behind one ``Reranker`` interface: the code-tuned cross-encoder (the model is
``models/crossencoder.py``; when it runs, on which pairs and how its score is blended is
decided here), the stock bi-encoder's cosine (kept as a measured alternative), and the
``FeatureReranker``, which scores how much of the question a chunk covers: fused ranks reward
chunks that match *some* query terms strongly, coverage rewards those that match *all* of them.
Each blends its score into the first-stage score rather than replacing it. A reranker that runs
out of time or raises leaves the remaining candidates in fused order; the request never fails
because of this stage.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from concurrent.futures import Future
from typing import Any, Protocol

from ..api import RequestControl
from ..index.terms import code_terms
from ..models.crossencoder import CrossEncoder, ScoreCache
from ..models.embed_cache import EmbeddingCache
from ..models.embedder import Embedder
from ..models.passage import PASSAGE_TOKENS, QUERY_TOKENS, passage_text
from .candidate import Candidate
from .query import STOPWORDS, QueryAnalysis
from .templates import trusted


class Reranker(Protocol):
    name: str
    # Whether the request's time budget may cut it short. Only the cross-encoder (a model run
    # per pair) may be cut: the cheap scorers always run whole, so an answer's quality does not
    # depend on how busy the machine is.
    cut_by_deadline: bool

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        """Set ``c.rerank`` on candidates in order until ``deadline`` (perf_counter seconds);
        return how many were scored."""
        ...

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        """How many of a head of this size it means to score (fewer is a budget cut; none:
        the question gives it nothing to read, and it sits out)."""
        ...

    def combine(self, scored: list[Candidate]) -> None:
        """Fold its score into ``c.score`` for the scored prefix."""
        ...


class FeatureReranker:
    name = "features"
    cut_by_deadline = False

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return head if _content_terms(qa) else 0

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        wanted = _content_terms(qa)
        if not wanted:
            return 0
        done = 0
        for c in cands:
            if time.perf_counter() > deadline:
                break
            ch = c.stored.chunk
            body = set(code_terms(f"{c.doc}\n{ch.text}" if c.doc else ch.text))
            sym = set(code_terms(ch.symbol))
            coverage = len(wanted & body) / len(wanted)
            sym_coverage = len(wanted & sym) / len(wanted)
            c.rerank = 0.5 * coverage + 0.5 * sym_coverage
            done += 1
        return done

    def combine(self, scored: list[Candidate]) -> None:
        for c in scored:
            if c.rerank is not None:
                c.score = c.score * (1.0 + c.rerank)
                if c.rerank >= 0.5:
                    c.tag("covers-query")


def _content_terms(qa: QueryAnalysis) -> set[str]:
    """The question's words a chunk can cover ("what else must change" has none)."""
    return {t for t in qa.terms if t not in STOPWORDS}


class BiEncoderReranker:
    """Cosine of the stock MiniLM embeddings of the question and each chunk, read from the
    embedding cache (no model run per chunk). Measured against the cross-encoder on the dev set
    (README); not the default."""

    name = "bi-encoder"
    cut_by_deadline = False

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return head

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, blend: float) -> None:
        self.embedder = embedder
        self.cache = cache
        self.blend = blend

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        keys = [c.stored.emb_key for c in cands if c.stored.emb_key]
        vecs = self.cache.get_many(keys)
        q = self.embedder.embed_query(qa.model_text)
        for c in cands:
            v = vecs.get(c.stored.emb_key or "")
            c.cross = float(v @ q) if v is not None else None
        return len(cands)

    def combine(self, scored: list[Candidate]) -> None:
        sims = [c.cross for c in scored if c.cross is not None]
        if not sims:
            return
        best = max(sims)
        for c in scored:
            if c.cross is not None:
                c.score *= math.exp(self.blend * (c.cross - best))


def base_score(c: Candidate) -> float:
    return (c.fused + c.boost) * c.factor


def rerank(
    cands: list[Candidate],
    qa: QueryAnalysis,
    rerankers: list[Reranker],
    top_n: int,
    budget_ms: int | None,
) -> tuple[list[Candidate], int, list[str]]:
    """Order candidates by their final score, each reranker refining the order the one before
    left. ``budget_ms`` None: no deadline (deep requests); it binds only the rerankers that
    may be cut (``cut_by_deadline``: the cross-encoder). Returns (ordered, how many the last
    reranker scored, notes on what degraded)."""
    for c in cands:
        c.score = base_score(c)
        c.below = 1.0
    cands.sort(key=lambda c: -c.score)
    notes: list[str] = []
    scored = 0
    deadline = math.inf if budget_ms is None else time.perf_counter() + budget_ms / 1000
    for reranker in rerankers:
        head = cands[:top_n]
        if not head:
            break
        wanted = reranker.wanted(qa, len(head))
        if not wanted:
            continue
        try:
            scored = reranker.score(qa, head, deadline if reranker.cut_by_deadline else math.inf)
        except Exception as exc:  # the stage is an enhancement: keep the order so far
            notes.append(f"{reranker.name} rerank failed ({exc}); order before it kept")
            scored = 0
            continue
        if scored < wanted:
            notes.append(f"{reranker.name} rerank budget reached after {scored} of {wanted}")
        reranker.combine(head[:scored])
        head[:scored] = sorted(head[:scored], key=lambda c: -c.score)
        cands[:top_n] = head
        below_the_scored(cands, scored)
    return cands, scored, notes


def below_the_scored(cands: list[Candidate], scored: int) -> None:
    """Scale the candidates after the scored prefix so that none outscores the prefix's last.

    A reranker reorders only what it scored, and the cross-encoder's blend can only lower a
    score: a chunk it judged weak could keep less than the unscored ones ranked below it, so
    an answer's scores would not follow its order, and whatever reads the scores would undo
    the ranking (the context pack kept the unscored tail and dropped the scored chunks above
    it as under the best's 40 %; ``separation`` read a tenth result scoring above the
    second). One factor for the whole tail keeps its own ratios; the order is unchanged.
    (Scores are never negative: fusion is positive, boosts add, penalties are in [0, 1].)"""
    if not 0 < scored < len(cands):
        return
    last, rest = cands[scored - 1].score, cands[scored].score
    if rest <= last:
        return
    factor = last / rest
    for c in cands[scored:]:
        c.score *= factor
        c.below *= factor


# --------------------------------------------------------------------------- cross-encoder

_CHARS_PER_TOKEN = 3  # code tokenises densely; a window of this many chars fills the passage
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    words = qa.model_text.split()
    if not words or qa.frames or qa.messages or len(words) > _DESCRIPTION_MAX_WORDS:
        return False
    if qa.identifiers or qa.paths or qa.quoted:
        return False
    return words[0].lower().strip(":,.!") not in _CHANGE_VERBS


def content_key(c: Candidate) -> str:
    """The chunk's content hash (and its documentation from elsewhere): the same code at
    another path or commit reuses its score."""
    if c.doc:
        return f"{c.stored.chunk.hash}+{hashlib.sha256(c.doc.encode()).hexdigest()}"
    return c.stored.chunk.hash


class CrossEncoderReranker:
    """Scores the head of the fused list with the cross-encoder and blends the logit with the
    first-stage score: ``score * exp(blend * (logit - best logit))``. Blending, not replacing,
    keeps a strong structural signal (the open file's import, an exact name) from being thrown
    away by a model that reads only text."""

    name = "cross-encoder"
    cut_by_deadline = True

    def __init__(
        self,
        model: CrossEncoder,
        cache: ScoreCache,
        max_pairs: int,
        blend: float,
        control: RequestControl | None = None,
    ) -> None:
        """``control``: the host's cancel and pause (see ``api.RequestControl``), checked
        before each pair."""
        self.model = model
        self.cache = cache
        self.control = control
        self.max_pairs = max_pairs
        self.blend = blend

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return min(head, self.max_pairs)

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        """Pairs start in rank order, each alone in its run, as many at once as the model has
        workers: the deadline is checked when a worker is free (a pair is not started when
        the time left is under what a pair costs here), and a pair's score never depends on
        which others shared its run (int8 activations are scaled per run), so cached and
        fresh scores agree. Every started pair finishes, so scored pairs are always a prefix
        of the head: a gap would mix scored and unscored candidates."""
        head = cands[: self.max_pairs]
        terms = {t for t in qa.terms if t not in STOPWORDS} | {
            t.lower() for name in qa.identifiers for t in _IDENT.findall(name)
        }
        max_chars = PASSAGE_TOKENS * _CHARS_PER_TOKEN
        query = " ".join(qa.model_text.split()[:QUERY_TOKENS])

        def go() -> bool:
            if self.control is not None:
                if self.control.pause is not None:
                    self.control.pause()
                if self.control.cancel.is_set():
                    return False
            return (deadline - time.perf_counter()) * 1000 >= self.model.ms_per_pair

        started: list[tuple[Candidate, tuple[str, str], Future[Any] | float]] = []
        for c in head:
            key = (qa.raw, content_key(c))
            logit = self.cache.get(key)
            if logit is not None:
                started.append((c, key, logit))
                continue
            ch = c.stored.chunk
            code = f"{c.doc}\n{ch.text}" if c.doc else ch.text
            text = passage_text(ch.path, ch.symbol, window(code, terms, max_chars))
            future = self.model.submit(query, text, go)
            if future is None:
                break
            started.append((c, key, future))
        for c, key, run in started:
            if isinstance(run, Future):
                logit = float(run.result()[0])
                self.cache.put(key, logit)
            else:
                logit = run
            c.cross = logit
        return len(started)

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
                # An exact match of most of a pasted message is not the model's to overrule.
                if not trusted(c.template_coverage):
                    c.score *= math.exp(self.blend * (logit - best))
                if logit == best:
                    c.tag("cross-encoder-top")
