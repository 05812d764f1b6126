"""Writing a pass's files as they are read: into the store's open transaction and the lexical
index's uncommitted documents, one file at a time.

A pass used to hold every chunk it read until one store transaction at the end, so a cold
index peaked at about 2 KB a chunk (1.1 GB at 450,000 chunks, issue 24). Written as it comes,
a file's chunks are dropped once its rows and BM25 documents are made: memory no longer grows
with the workspace (unless vectors are on: the pass embeds the chunks it added, so it keeps
them). Chunk ids come from the store in the plan's order, as before, so the index is the same.

Nothing is visible before the end: the store commits once, the lexical index after it (see
``parts.py`` for ``derived_dirty``), and a pass that fails or is cancelled rolls both back
(:meth:`LexicalIndex.rollback`), leaving the index as it was.
"""

from __future__ import annotations

from collections.abc import Container

from ..api import Chunk
from ..filekinds import wants_vector
from ..models.embed_cache import embedding_key
from .parts import IndexParts, lexdoc
from .reading import ReadResult
from .store import StoredChunk


class PassWriter:
    """The store and lexical writes of one pass, inside the caller's store transaction."""

    def __init__(
        self,
        parts: IndexParts,
        model_id: str | None,
        commit: str | None,
        stamp: str,
        keep_added: bool,
        known: Container[str],
    ) -> None:
        """``known``: the files the store held before the pass; a file not among them has no
        chunks to keep, so its rows are not read (a cold index reads none)."""
        self.parts = parts
        self.known = known
        self.model_id = model_id
        self.commit = commit
        self.stamp = stamp
        self.keep_added = keep_added
        self.removed: list[str] = []  # files gone from the index
        self.written: list[str] = []  # files whose rows were rewritten
        self.removed_ids: list[int] = []  # chunk ids gone (BM25 documents and vectors to drop)
        self.added: list[StoredChunk] = []  # chunks added, when kept (vectors on)
        self.added_count = 0
        self.vectorless = 0  # change in the chunks that get no vector (wants_vector)

    def remove(self, path: str) -> None:
        ids = self.parts.store.remove_file(path)
        self.removed.append(path)
        self.removed_ids.extend(ids)
        self.vectorless -= 0 if wants_vector(path) else len(ids)

    def replace(self, read: ReadResult) -> None:
        """One file's new row and chunks: unchanged chunk texts keep their rows (and so their
        vectors and BM25 documents), new ones are inserted and their documents added."""
        store, row, model_id = self.parts.store, read.row, self.model_id
        assert row is not None
        old = store.chunks_of(row.path) if row.path in self.known else []
        existing = {sc.chunk.hash: sc for sc in old}
        keep: list[tuple[int, Chunk]] = []
        new: list[tuple[Chunk, str | None]] = []
        new_terms: list[tuple[str, str]] = []
        for ch, terms in zip(read.chunks, read.terms, strict=True):
            old_sc = existing.pop(ch.hash, None)
            if old_sc is not None:  # same text; lines above it may have come or gone
                keep.append((old_sc.id, ch))
            else:
                new.append((ch, embedding_key(ch, model_id) if model_id else None))
                new_terms.append(terms)
        gone, ids = store.replace_file(
            row, keep, new, read.encoding_errors, self.commit, self.stamp
        )
        self.written.append(row.path)
        self.removed_ids.extend(gone)
        self.vectorless += 0 if wants_vector(row.path) else len(ids) - len(gone)
        added = [StoredChunk(cid, ch, key) for cid, (ch, key) in zip(ids, new, strict=True)]
        self.parts.lexical.add([lexdoc(sc, t) for sc, t in zip(added, new_terms, strict=True)])
        self.added_count += len(added)
        if self.keep_added:
            self.added.extend(added)
