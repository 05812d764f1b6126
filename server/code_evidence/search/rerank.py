"""Second-stage scoring of the fused candidates, under a latency budget.

Three scorers sit behind one ``Reranker`` interface: the code-tuned cross-encoder
(``crossencoder.py``), the stock bi-encoder's cosine (kept as a measured alternative), and the
``FeatureReranker``, which scores how much of the question a chunk covers: fused ranks reward
chunks that match *some* query terms strongly, coverage rewards those that match *all* of them.
Each blends its score into the first-stage score rather than replacing it. A reranker that runs
out of time or raises leaves the remaining candidates in fused order; the request never fails
because of this stage.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

from ..index.terms import code_terms
from ..models.embedder import Embedder, EmbeddingCache
from .candidate import Candidate
from .query import STOPWORDS, QueryAnalysis


class Reranker(Protocol):
    name: str

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        """Set ``c.rerank`` on candidates in order until ``deadline`` (perf_counter seconds);
        return how many were scored."""
        ...

    def wanted(self, head: int) -> int:
        """How many of a head of this size it means to score (fewer is a budget cut)."""
        ...

    def combine(self, scored: list[Candidate]) -> None:
        """Fold its score into ``c.score`` for the scored prefix."""
        ...


class FeatureReranker:
    name = "features"

    def wanted(self, head: int) -> int:
        return head

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        wanted = {t for t in qa.terms if t not in STOPWORDS}
        if not wanted:
            return 0
        done = 0
        for c in cands:
            if time.perf_counter() > deadline:
                break
            ch = c.stored.chunk
            body = set(code_terms(ch.text))
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


class BiEncoderReranker:
    """Cosine of the stock MiniLM embeddings of the question and each chunk, read from the
    embedding cache (no model run per chunk). Measured against the cross-encoder on the dev set
    (README); not the default."""

    name = "bi-encoder"

    def wanted(self, head: int) -> int:
        return head

    def __init__(self, embedder: Embedder, cache: EmbeddingCache, blend: float) -> None:
        self.embedder = embedder
        self.cache = cache
        self.blend = blend

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        keys = [c.stored.emb_key for c in cands if c.stored.emb_key]
        vecs = self.cache.get_many(keys)
        q = self.embedder.embed_query(qa.raw)
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
    left. ``budget_ms`` None: no deadline (deep requests). Returns (ordered, how many the last
    reranker scored, notes on what degraded)."""
    for c in cands:
        c.score = base_score(c)
    cands.sort(key=lambda c: -c.score)
    notes: list[str] = []
    scored = 0
    deadline = math.inf if budget_ms is None else time.perf_counter() + budget_ms / 1000
    for reranker in rerankers:
        head = cands[:top_n]
        if not head:
            break
        wanted = reranker.wanted(len(head))
        try:
            scored = reranker.score(qa, head, deadline)
        except Exception as exc:  # the stage is an enhancement: keep the order so far
            notes.append(f"{reranker.name} rerank failed ({exc}); order before it kept")
            scored = 0
            continue
        if scored < wanted:
            notes.append(f"{reranker.name} rerank budget reached after {scored} of {wanted}")
        reranker.combine(head[:scored])
        head[:scored] = sorted(head[:scored], key=lambda c: -c.score)
        cands[:top_n] = head
    return cands, scored, notes
