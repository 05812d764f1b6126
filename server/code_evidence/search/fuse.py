"""Reciprocal-rank fusion of the recall channels.

RRF needs no score calibration between BM25, cosine and structure, which have nothing in
common but their order.
"""

from __future__ import annotations

from ..config import RankingConfig
from ..index.store import Store
from .candidate import Candidate
from .recall import Ranking


def channel_weights(cfg: RankingConfig) -> dict[str, float]:
    """Votes per channel (frames and the files a question names are not weighted: a frame, a
    file named, is a fact, not a guess)."""
    return {
        "bm25": cfg.bm25_weight,
        "vector": cfg.vector_weight,
        "structural": cfg.structural_weight,
        "cochange": cfg.cochange_weight,
        "frames": 1.0,
        "named": 1.0,
    }


def fuse(
    channels: dict[str, Ranking], store: Store, k: int, weights: dict[str, float]
) -> list[Candidate]:
    ranks: dict[int, dict[str, int]] = {}
    scores: dict[int, dict[str, float]] = {}
    fused: dict[int, float] = {}
    for name, ranking in channels.items():
        weight = weights.get(name, 1.0)
        for rank, (cid, score) in enumerate(ranking, 1):
            ranks.setdefault(cid, {})[name] = rank
            scores.setdefault(cid, {})[name] = score
            fused[cid] = fused.get(cid, 0.0) + weight / (k + rank)
    chunks = store.get_chunks(fused)
    # An id the store does not know means a derived index is ahead of it: never serve it.
    out = [
        Candidate(stored=chunks[cid], ranks=ranks[cid], channel_scores=scores[cid], fused=f)
        for cid, f in fused.items()
        if cid in chunks
    ]
    out.sort(key=lambda c: -c.fused)
    return out
