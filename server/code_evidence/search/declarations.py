"""C and C++ declarations vouch for their definitions.

A C or C++ function is usually declared in a header, where its documentation lives, and
defined in a source file with a body and no comment. The body is the primary evidence (that
is what a change edits), so a prototype ranks below it (``features.py`` demotes kind
``declaration``); but the words that match a question are often only in the header. So before
the features stage a prototype's fused score is carried over to the definitions with the same
qualified symbol (fetched from the store when recall missed them): the header's documentation
counts for the body, and the second-stage scorers read that comment with the body
(``Candidate.doc``). Not when the question asks about declarations: then the prototype itself
is the answer.
"""

from __future__ import annotations

from ..index.store import Store
from .candidate import Candidate

DECLARATION_KIND = "declaration"
_BODY_KINDS = frozenset({"function", "method"})


def leading_comment(text: str) -> str:
    """The comment lines a declaration chunk starts with (its attached documentation)."""
    out: list[str] = []
    in_block = False
    for line in text.splitlines():
        s = line.strip()
        if in_block or s.startswith(("/*", "//")):
            out.append(line)
            in_block = (in_block or s.startswith("/*")) and "*/" not in s
        elif s:
            break
    return "\n".join(out)


def credit_definitions(cands: list[Candidate], store: Store) -> list[Candidate]:
    """``cands`` with each prototype's fused score given to the definitions of its symbol
    that score lower (tagged ``declared-in-header``), and those definitions added when
    absent; sorted by fused score again."""
    decls = [c for c in cands if c.stored.chunk.kind == DECLARATION_KIND]
    if not decls:
        return cands
    best: dict[str, float] = {}
    docs: dict[str, str] = {}
    for d in decls:
        sym = d.stored.chunk.symbol
        best[sym] = max(best.get(sym, 0.0), d.fused)
        docs[sym] = docs.get(sym) or leading_comment(d.stored.chunk.text)
    by_id = {c.id: c for c in cands}
    out = list(cands)
    for sc in store.chunks_named({d.stored.name for d in decls}):
        chunk = sc.chunk
        if chunk.kind not in _BODY_KINDS or chunk.symbol not in best or chunk.is_test:
            continue
        cand = by_id.get(sc.id)
        if cand is None:
            cand = by_id[sc.id] = Candidate(stored=sc)
            out.append(cand)
        cand.doc = cand.doc or docs[chunk.symbol]
        if best[chunk.symbol] > cand.fused:
            cand.fused = best[chunk.symbol]
            cand.tag("declared-in-header")
    out.sort(key=lambda c: -c.fused)
    return out
