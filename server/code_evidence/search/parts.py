"""Which parts of a file come first when the English-only models stepped aside.

On code documented in Chinese a Chinese question is ranked by words (``pipeline.answer``: the
embedder and the cross-encoder would read Chinese, so they are not asked). The words choose
the files well, but inside a file they favour the functions whose Chinese docstrings share
the question's words; a function documented elsewhere or not at all speaks only through its
English names, and its file's result slots go to documented neighbours. The glossary's
English rendering of the question reaches those names: its cosine with each chunk's stored
vector (the embedding cache; no model run per chunk) orders a file's other parts. Each file
keeps the first part the words gave it, and every file keeps its place: the rendering, which
ranked files worse than the words on this code (``docs/quality.md``, "Code documented in
Chinese"), only chooses which of a chosen file's parts follow its first.
"""

from __future__ import annotations

from ..models.embed_cache import EmbeddingCache
from ..models.embedder import Embedder
from .candidate import Candidate


def cosines(
    cands: list[Candidate], rendering: str, embedder: Embedder, cache: EmbeddingCache
) -> dict[int, float]:
    """Each candidate's cosine with the rendering, read from the stored chunk vectors; a
    chunk not embedded yet (or never: ``filekinds.wants_vector``) has none."""
    keys = [c.stored.emb_key for c in cands if c.stored.emb_key]
    if not keys:
        return {}
    vectors = cache.get_many(keys)
    if not vectors:
        return {}
    query = embedder.embed_query(rendering)
    out: dict[int, float] = {}
    for c in cands:
        v = vectors.get(c.stored.emb_key or "")
        if v is not None:
            out[c.id] = float(v @ query)
    return out


def order_parts(cands: list[Candidate], cosine: dict[int, float]) -> list[Candidate]:
    """The same candidates, each file's parts after its first reordered by ``cosine`` among
    the places they held. A file's first part, and every part with no cosine, stays where it
    was; so does the order in which files first appear. A moved part takes the score of the
    place it takes, so the list stays in score order (as ``assemble.members_first`` does)."""
    places: dict[str, list[int]] = {}
    for i, c in enumerate(cands):
        places.setdefault(c.stored.chunk.path, []).append(i)
    out = list(cands)
    for found in places.values():
        movable = [i for i in found[1:] if cands[i].id in cosine]
        if len(movable) < 2:
            continue
        scores = [cands[i].score for i in movable]
        ordered = sorted((cands[i] for i in movable), key=lambda c: -cosine[c.id])
        for i, c, score in zip(movable, ordered, scores, strict=True):
            if c is not cands[i]:
                c.tag("rendering-order")
            c.score = score
            out[i] = c
    for c in cands:
        if c.id in cosine:
            c.rendering_cosine = cosine[c.id]
    return out
