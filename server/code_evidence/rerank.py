"""Second-stage scoring of the fused candidates, under a latency budget.

``Reranker`` is the seam the ONNX cross-encoder will plug into. Until it ships, the
``FeatureReranker`` scores how much of the question a chunk covers: fused ranks reward chunks
that match *some* query terms strongly, coverage rewards those that match *all* of them. A
reranker that runs out of time or raises leaves the remaining candidates in fused order; the
request never fails because of this stage.
"""

from __future__ import annotations

import time
from typing import Protocol

from .candidate import Candidate
from .query import STOPWORDS, QueryAnalysis
from .tokens import code_terms


class Reranker(Protocol):
    name: str

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        """Set ``c.rerank`` on candidates in order until ``deadline`` (perf_counter seconds);
        return how many were scored."""
        ...


class FeatureReranker:
    name = "features"

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


def base_score(c: Candidate) -> float:
    return (c.fused + c.boost) * c.factor


def rerank(
    cands: list[Candidate],
    qa: QueryAnalysis,
    reranker: Reranker | None,
    top_n: int,
    budget_ms: int,
) -> tuple[list[Candidate], int, str | None]:
    """Order candidates by their final score. Returns (ordered, how many reranked, a note when
    the stage degraded)."""
    for c in cands:
        c.score = base_score(c)
    cands.sort(key=lambda c: -c.score)
    if reranker is None or not cands:
        return cands, 0, None
    head = cands[:top_n]
    note = None
    try:
        scored = reranker.score(qa, head, time.perf_counter() + budget_ms / 1000)
    except Exception as exc:  # the stage is an enhancement: fall back to the fused order
        return cands, 0, f"rerank failed ({exc}); fused order kept"
    if scored < len(head):
        note = f"rerank budget reached after {scored} of {len(head)} candidates"
    for c in head[:scored]:
        if c.rerank is not None:
            c.score = c.score * (1.0 + c.rerank)
            if c.rerank >= 0.5:
                c.tag("covers-query")
    head[:scored] = sorted(head[:scored], key=lambda c: -c.score)
    return head + cands[top_n:], scored, note
