"""Cross-checks of the three index parts: the chunk ids in SQLite (the truth), the documents
in Tantivy and the keys in USearch.

Used by the crash tests and ``bench/stress.py`` after killing an indexer: a reopened engine
must either agree with itself or have noticed and rebuilt. Lexical must match the store
exactly (it is rebuilt on open when it does not); vectors may lag behind the store (chunks
without a vector yet are answered by BM25 and filled by the next pass) but must never hold a
key the store does not, since that would cite a chunk that no longer exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from .lexical import LexicalIndex
from .store import Store
from .vectors import VectorIndex


@dataclass(frozen=True, slots=True)
class IndexCheck:
    chunks: int
    lexical_docs: int
    vectors: int
    lexical_extra: tuple[int, ...]  # in Tantivy, not in the store
    lexical_missing: tuple[int, ...]  # in the store, not in Tantivy
    lexical_duplicates: int  # documents sharing an id
    vector_extra: tuple[int, ...]  # in USearch, not in the store
    vector_missing: int  # chunks without a vector (allowed: the next pass fills them)
    lexical_unreadable: str | None = None  # a damaged segment: reading its documents failed

    @property
    def consistent(self) -> bool:
        """Safe to answer from: nothing stale, nothing missing from BM25."""
        return (
            not (self.lexical_extra or self.lexical_missing or self.lexical_duplicates)
            and not self.vector_extra
            and self.lexical_unreadable is None
        )

    @property
    def complete(self) -> bool:
        """Consistent and every chunk has a vector (after a finished pass with vectors on)."""
        return self.consistent and self.vector_missing == 0


def lexical_ids(lexical: LexicalIndex) -> list[int]:
    """Every document id in the Tantivy index (with repeats, to catch duplicates)."""
    searcher = lexical.index.searcher()
    n = int(searcher.num_docs)
    if n == 0:
        return []
    hits = searcher.search(tantivy.Query.all_query(), limit=n).hits
    return [int(searcher.doc(addr)["id"][0]) for _score, addr in hits]


def check_index(store: Store, lexical: LexicalIndex, vectors: VectorIndex | None) -> IndexCheck:
    ids = {sc_id for (sc_id,) in store.db.execute("SELECT id FROM chunks")}
    unreadable = None
    try:
        lex = lexical_ids(lexical)
    except (ValueError, OSError) as exc:
        lex, unreadable = [], str(exc)
    lex_set = set(lex)
    keys = set() if vectors is None else {int(k) for k in vectors.keys()}  # noqa: SIM118
    return IndexCheck(
        chunks=len(ids),
        lexical_docs=len(lex),
        vectors=len(keys),
        lexical_extra=tuple(sorted(lex_set - ids)),
        lexical_missing=tuple(sorted(ids - lex_set)),
        lexical_duplicates=len(lex) - len(lex_set),
        vector_extra=tuple(sorted(keys - ids)),
        vector_missing=len(ids - keys) if vectors is not None else 0,
        lexical_unreadable=unreadable,
    )
