"""The multilingual scorer: for a question that holds Chinese, the cosine between the question
as asked and each head candidate's first lines, in the multilingual encoder's space
(``models/multilingual.py``: USE, Chinese and English aligned), blended into the ranking.

Why: the shipped models read English only. When the question and the code's text are both
Chinese they step aside (``search/crosslingual.py``) and the answer is ranked by words; on
English code they read the glossary's English rendering. USE reads the question as asked, in
either language, against the code's signature and first lines (a docstring's first sentence,
a comment), so a Chinese question meets the English names and the Chinese comments alike.
It reorders the head only (no recall of its own: no index change), blended like the other
model scorers (``score * exp(blend * (cosine - best cosine))``), so an exact name or a strong
structural signal is not thrown away. Which questions and how strongly: measured in
``docs/quality.md`` ("Multilingual models"). A question without Chinese never reaches it.
"""

from __future__ import annotations

import math

from ..index import cjk
from ..models import multilingual
from .candidate import Candidate
from .query import QueryAnalysis

# What the encoder reads of a candidate: its first lines (signature, docstring's first
# sentence), at most this many characters. A sentence encoder averages what it reads: more
# of the chunk drowns the summary in code (measured: eight lines ranked below the head's own
# order on both sets documented in Chinese, a chunk's first 300 characters on tushare).
LINES = 5
MAX_CHARS = 300
# How far the cosine moves a candidate: score * exp(BLEND * (cosine - best)).
BLEND = 1.0
# Candidates of the head it reads (the rerank head is 50; vectors are cached by text).
HEAD = 50


def applies(qa: QueryAnalysis) -> bool:
    """Only questions that hold Chinese: an English question is ranked exactly as before."""
    return cjk.has_han(qa.raw)


def candidate_text(c: Candidate) -> str:
    """The candidate's first lines as the encoder reads them (documentation found elsewhere,
    a C/C++ prototype's comment, first)."""
    text = f"{c.doc}\n{c.stored.chunk.text}" if c.doc else c.stored.chunk.text
    return "\n".join(text.splitlines()[:LINES])[:MAX_CHARS]


class MultilingualReranker:
    """A ``rerank.Reranker``: cheap enough to run whole (never cut by the clock)."""

    name = "multilingual"
    cut_by_deadline = False

    def __init__(self, model: multilingual.Multilingual, blend: float = BLEND) -> None:
        self.model = model
        self.blend = blend
        self.cosines: dict[int, float] = {}  # candidate id -> cosine, for combine

    def wanted(self, qa: QueryAnalysis, head: int) -> int:
        return min(head, HEAD)

    def score(self, qa: QueryAnalysis, cands: list[Candidate], deadline: float) -> int:
        head = cands[:HEAD]
        vecs = self.model.encode([qa.raw, *(candidate_text(c) for c in head)])
        sims = vecs[1:] @ vecs[0]
        self.cosines = {c.id: float(s) for c, s in zip(head, sims, strict=True)}
        return len(head)

    def combine(self, scored: list[Candidate]) -> None:
        sims = [self.cosines[c.id] for c in scored if c.id in self.cosines]
        if not sims:
            return
        best = max(sims)
        for c in scored:
            cos = self.cosines.get(c.id)
            if cos is not None:
                c.score *= math.exp(self.blend * (cos - best))


def rerankers(qa: QueryAnalysis, enabled: bool, notes: list[str]) -> list[MultilingualReranker]:
    """The scorer for this question, or none: not for a question without Chinese, not when
    the rerank stage is off, and not when the encoder cannot load (a note says so; the other
    scorers still rank)."""
    if not enabled or not applies(qa):
        return []
    try:
        model = multilingual.shared()
    except Exception as exc:  # the package missing or its weights unreadable
        notes.append(f"multilingual encoder unavailable ({exc}); ranked without it")
        return []
    return [MultilingualReranker(model)]
