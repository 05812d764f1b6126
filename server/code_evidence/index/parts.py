"""The three parts of one index folder, opened together and kept in agreement.

The SQLite store is the truth; the Tantivy lexical index and the USearch vector index are
derived from it. Every store update raises ``derived_dirty`` and the pass clears it only after
both derived parts are committed, so a crash at any point is noticed here, on the next open,
and the derived parts are rebuilt from the store (vectors from the content-addressed embedding
cache) instead of serving a half state. :func:`check_index` is the same agreement, checked from
outside: the crash tests and ``bench/stress.py`` use it after killing an indexer.

Lexical must match the store exactly (it is rebuilt on open when it does not); vectors may lag
behind the store (chunks without a vector yet are answered by BM25 and filled by the next pass)
but must never hold a key the store does not, since that would cite a chunk that no longer
exists.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tantivy

from ..filekinds import wants_vector
from ..models.embed_cache import EmbeddingCache, embedding_key, embedding_text
from .cjk import analysis_version
from .lexical import LexDoc, LexicalIndex, LexicalView
from .store import Store, StoreCorrupt, StoredChunk, StoreOutdated, StoreUnwritable
from .vectors import VectorIndex

DIM = 384
# Words in a Tantivy read error that mean damaged files rather than a bad query.
_DAMAGE_MARKERS = ("io error", "corrupt", "checksum", "decompress", "offset", "eof")


class PartsUnavailable(Exception):
    """The index cannot be opened as asked (read-only and not built yet, or unreadable)."""


def lexdoc(sc: StoredChunk, terms: tuple[str, str] | None = None) -> LexDoc:
    return LexDoc(sc.id, sc.chunk.path, sc.chunk.symbol, sc.chunk.text, terms)


class Readers:
    """One read-only connection to the store per thread.

    Requests run on several threads at once (``live/pool.py``) while the index pass writes on
    its own. An SQLite connection shared between threads serialises them and mixes their
    transactions; one per thread lets each request hold its own snapshot
    (:meth:`Store.snapshot`) and read in parallel with the others and with the writer (WAL).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[Store] = []
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> Store:
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            with self._lock:
                if self._closed:
                    raise PartsUnavailable("the index is closed")
                store = Store(self.path, read_only=True)
                self._all.append(store)
            self._local.store = store
        return store

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for store in self._all:
                store.close()
            self._all.clear()


class IndexParts:
    """Store (writer connection), readers (one connection per thread that requests use while
    a pass writes), lexical and vector indexes of one index folder.

    ``cache`` gives the embedding cache when vectors must be rebuilt (it is opened only then);
    ``model_id`` names the embedding model chunk keys are made for.
    """

    def __init__(
        self,
        index_dir: Path,
        read_only: bool,
        cache: Callable[[], EmbeddingCache],
        model_id: Callable[[], str],
    ) -> None:
        self.index_dir = index_dir
        self.read_only = read_only
        self._cache = cache
        self._model_id = model_id
        self.notes: list[str] = []
        db_path = index_dir / "store.sqlite"
        if read_only and not db_path.exists():
            raise PartsUnavailable(
                f"another process is building the first index in {index_dir}; try again "
                "when it has finished"
            )
        try:
            self.store = Store(db_path, read_only=read_only)
        except StoreUnwritable as exc:
            # A full or read-only disk: the index is intact and answers as it is; deleting it
            # as if it were corrupt would lose it for nothing.
            self.read_only = read_only = True
            self.notes.append(
                f"the index folder {index_dir} takes no writes ({exc.__cause__ or exc}): "
                "answering from the index as it is, without refreshing it"
            )
            try:
                self.store = Store(db_path, read_only=True)
            except StoreCorrupt as inner:
                raise PartsUnavailable(f"the index is unreadable ({inner})") from inner
        except StoreCorrupt as exc:
            if read_only:
                raise PartsUnavailable(
                    f"the index is unreadable ({exc}); the writer will rebuild it"
                ) from exc
            if isinstance(exc, StoreOutdated):
                self.notes.append(f"the index was rebuilt from scratch: {exc}")
            else:
                self.notes.append(f"index store was unusable ({exc}); rebuilt from scratch")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db_path}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(index_dir / "lexical", ignore_errors=True)
            (index_dir / "vectors.usearch").unlink(missing_ok=True)
            self.store = Store(db_path)
        self.lexical = LexicalIndex(index_dir / "lexical", read_only=read_only)
        self.vectors = VectorIndex(index_dir / "vectors.usearch", dim=DIM)
        self._readers = Readers(db_path)
        # Held by an index pass from its store commit until BM25 holds the same change, and by
        # a request while it opens its snapshot and its BM25 view (``consistent``).
        self.publishing = threading.Lock()
        if read_only:
            if not self.notes:  # (else the note says why it is read-only)
                self.notes.append(
                    "another process holds the writer lock: answering from the index as it is"
                )
            return
        self._repair_on_open()

    def _repair_on_open(self) -> None:
        _, chunks = self.store.counts()
        dirty = self.store.get_meta("derived_dirty") == "1"
        # ``or len(...)``: a crashed pass that emptied the store must still empty the others.
        lexical_docs = len(self.lexical)
        # Terms made by another word analysis (an older version, another Chinese segmenter)
        # would silently miss the question's terms: such a lexical index is rebuilt.
        analysis = analysis_version()
        outdated = self.store.get_meta("lexical_analysis") != analysis
        stale = dirty or self.lexical.rebuilt or lexical_docs != chunks or outdated
        if (chunks or lexical_docs) and stale:
            self.rebuild_lexical()
            if outdated:
                self.store.set_meta_now({"lexical_analysis": analysis})
        # (An empty index gets its analysis recorded by the pass that fills it, in the commit
        # that clears derived_dirty: no extra store commit.)
        if (chunks or len(self.vectors)) and (dirty or self.vectors.rebuilt):
            self.rebuild_vectors()
        if dirty:
            self.store.set_meta_now({"derived_dirty": "0"})

    def rebuild_lexical(self) -> None:
        self.notes.append("lexical index was stale or damaged; rebuilt from the store")
        self.lexical.clear()
        batch: list[LexDoc] = []
        for sc in self.store.all_chunks():
            batch.append(lexdoc(sc))
            if len(batch) >= 2000:
                self.lexical.add(batch)
                batch = []
        self.lexical.add(batch)
        self.lexical.commit()

    def repair_lexical_if_damaged(self, notes: list[str], index_lock: threading.Lock) -> bool:
        """A Tantivy segment can open fine and fail only when read (a damaged doc store):
        rebuild it from the store at the first failed read instead of degrading forever.
        Skipped while an index pass holds ``index_lock`` (the next answer retries). True when
        the answer that produced ``notes`` was degraded by a failed read."""
        failed = [n for n in notes if n.startswith("bm25 channel failed")]
        if not failed or not any(m in failed[0].lower() for m in _DAMAGE_MARKERS):
            return bool(failed)
        if self.read_only or not index_lock.acquire(blocking=False):
            return True
        try:
            shutil.rmtree(self.index_dir / "lexical", ignore_errors=True)
            self.lexical = LexicalIndex(self.index_dir / "lexical")
            self.rebuild_lexical()
        finally:
            index_lock.release()
        return True

    def rebuild_vectors(self) -> None:
        """Vectors come back from the content-addressed cache; only misses need the model,
        and those are filled by the next index pass."""
        self.notes.append("vector index was stale or damaged; rebuilt from the embedding cache")
        (self.index_dir / "vectors.usearch").unlink(missing_ok=True)
        self.vectors = VectorIndex(self.index_dir / "vectors.usearch", dim=DIM)
        self.add_cached_vectors(
            [sc for sc in self.store.all_chunks() if wants_vector(sc.chunk.path)]
        )
        self.vectors.save()

    def keyed(self, chunks: list[StoredChunk]) -> list[StoredChunk]:
        """Chunks stored while vectors were switched off have no embedding key; they get one
        now, or switching vectors on would leave the index partial for good."""
        model_id = self._model_id()
        fresh = [(sc.id, embedding_key(sc.chunk, model_id)) for sc in chunks if not sc.emb_key]
        if not fresh:
            return chunks
        self.store.set_emb_keys(fresh)
        keys = dict(fresh)
        return [
            dataclasses.replace(sc, emb_key=keys[sc.id]) if sc.id in keys else sc for sc in chunks
        ]

    def redecide_vectors(self, model_id: str | None) -> None:
        """Under a new vector policy (``filekinds.VECTOR_POLICY``): chunks it refuses lose
        their vector, and chunks whose embedded text it changed (``embedding_text``) get the
        new key and lose the old text's vector; the pass embeds them again. Without a model
        (vectors off) such keys are cleared and :meth:`keyed` remakes them when vectors are on."""
        drop: list[int] = []
        keys: list[tuple[int, str | None]] = []
        for sc in self.store.all_chunks():
            if not wants_vector(sc.chunk.path):
                drop.append(sc.id)
                continue
            key = embedding_key(sc.chunk, model_id) if model_id else None
            if sc.emb_key and key != sc.emb_key:
                keys.append((sc.id, key))
                drop.append(sc.id)
        if keys:
            self.store.set_emb_keys(keys)  # type: ignore[arg-type]
        gone = [i for i in drop if i in self.vectors]
        if gone:
            self.vectors.remove(gone)
            self.vectors.save()

    def add_cached_vectors(self, chunks: list[StoredChunk]) -> list[StoredChunk]:
        """Add what the cache has; return the chunks it did not have."""
        keyed = [sc for sc in chunks if sc.emb_key]
        found = self._cache().get_many([sc.emb_key for sc in keyed if sc.emb_key])
        ids, vecs, missing = [], [], []
        for sc in keyed:
            v = found.get(sc.emb_key or "")
            if v is None:
                missing.append(sc)
            else:
                ids.append(sc.id)
                vecs.append(v)
        if ids:
            self.vectors.add(ids, np.stack(vecs))
        return missing

    def embedding_texts(self) -> list[str]:
        """The embedded text of every chunk that gets a vector, once each (what ``cache
        export`` ships: the cache keys follow from them and the model id). Catalogs and data
        stay BM25 only (``filekinds.wants_vector``)."""
        chunks = self.reader.all_chunks()
        return list(
            dict.fromkeys(embedding_text(sc.chunk) for sc in chunks if wants_vector(sc.chunk.path))
        )

    @property
    def reader(self) -> Store:
        """This thread's read-only connection (made on first use, closed with the parts)."""
        return self._readers.get()

    @contextmanager
    def consistent(self) -> Iterator[LexicalView]:
        """A snapshot of this thread's store connection (``Store.snapshot``, for the block)
        and a BM25 view (``LexicalIndex.view``) that show the same index pass: opened while
        no pass is between its store commit and its BM25 commit (``publishing``). Without it
        an answer between the two lost the changed file: BM25 hits the store no longer holds
        are dropped, and the store's new chunks are not in BM25 yet (12-20 ms a pass)."""
        with ExitStack() as stack:
            with self.publishing:
                stack.enter_context(self.reader.snapshot())
                view = self.lexical.view()
            yield view

    def close(self) -> None:
        self._readers.close()
        self.store.close()
        self.lexical.close()


# --------------------------------------------------------------------------- agreement


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
    ids = set(store.chunk_ids())
    # Chunks the policy leaves to BM25 are not missing a vector.
    embedded = {sc.id for sc in store.all_chunks() if wants_vector(sc.chunk.path)}
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
        vector_missing=len(embedded - keys) if vectors is not None else 0,
        lexical_unreadable=unreadable,
    )
