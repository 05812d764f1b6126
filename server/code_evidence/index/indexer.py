"""The index pass: bring the index of one workspace up to date with its working tree.

A pass compares the scan with the store by size and mtime (:func:`plan`), reads only the files
that changed (editor buffers stand in for their files), chunks them, and writes the store in
one transaction that raises ``derived_dirty``; then the lexical and vector indexes follow and
the flag is cleared (see ``parts.py``). Unchanged chunks keep their rows, so their vectors and
BM25 documents stay; only chunk texts no cache has seen are embedded, in priority order
(:func:`embed_priority`), and saved in steps so an interrupted pass keeps what it paid for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..api import Chunk, IndexReport
from ..config import Config
from ..filekinds import VECTOR_POLICY, is_bulk_path, is_doc_path, wants_vector
from ..git import Git
from ..models.embed_cache import EmbeddingCache, embed_with_cache, embedding_text
from ..models.embedder import Embedder
from . import freshness
from .cjk import analysis_version
from .parts import IndexParts
from .passwrite import PassWriter
from .plan import Plan, chunking_key, chunks_per_file, overlaid, plan, plan_paths, vector_target
from .reading import Reader
from .relink import RESOLUTION_VERSION, LinkChange, Linker, Relinked
from .scan import ScanResult, scan_paths, scan_workspace
from .store import FileRow, StoredChunk

if TYPE_CHECKING:
    from ..models.cluster import EmbeddingPool

Progress = Callable[[str, int, int], None]  # (stage, done, total)
EMBED_BATCH = 256  # chunks per embed-and-cache step: bounds work lost to a crash
VECTOR_SAVE_S = 20.0  # seconds between vector index saves while embedding
# Files changed within this many days of HEAD are embedded first within their priority.
RECENT_DAYS = 90.0

# Where a chunk's vector matters least comes last: a question about the code is answered first,
# and BM25 already covers every chunk while the rest is embedded.
PRIORITY_SOURCE, PRIORITY_OTHER, PRIORITY_TESTS, PRIORITY_BULK = 0, 1, 2, 3


def _imports(row: FileRow | None) -> tuple[str, ...] | None:
    return None if row is None else row.imports


class IndexCancelled(Exception):
    """An index pass was cancelled before it wrote anything."""


def embed_priority(chunk: Chunk) -> int:
    """Order of embedding in a pass: source code (0), other text such as templates and
    config (1), tests and docs (2), then translations, migrations, generated and vendored
    files (3). Lower comes first."""
    if chunk.is_generated or chunk.is_vendor or is_bulk_path(chunk.path):
        return PRIORITY_BULK
    if chunk.is_test or is_doc_path(chunk.path):
        return PRIORITY_TESTS
    if chunk.language == "text" or chunk.kind == "window":
        return PRIORITY_OTHER
    return PRIORITY_SOURCE


def merge_counts(*counts: dict[str, int]) -> dict[str, int]:
    """Per-reason counts added up."""
    out: dict[str, int] = {}
    for c in counts:
        for k, n in c.items():
            out[k] = out.get(k, 0) + n
    return out


@dataclass(slots=True)
class PassInput:
    """What one pass works from besides the workspace: the configuration, editor buffers
    (workspace-relative path -> text) and the files open in the editor (embedded first)."""

    config: Config
    overlays: dict[str, str]
    focus: frozenset[str]
    # Only these workspace-relative paths changed (a watcher's batch, edited buffers): the
    # pass stats them instead of listing the workspace. None: scan everything.
    paths: frozenset[str] | None = None


class Indexer:
    """Runs passes over one workspace into one :class:`IndexParts`; the caller holds the
    writer lock and allows one pass at a time."""

    def __init__(self, workspace: Path, git: Git, parts: IndexParts) -> None:
        self.workspace = workspace
        self.git = git
        self.parts = parts
        self._links = Linker()

    def run(
        self,
        job: PassInput,
        embedder: Callable[[], Embedder],
        cache: Callable[[], EmbeddingCache],
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        pool: EmbeddingPool | None = None,
    ) -> IndexReport:
        """``cancel`` stops the pass early: before the store is written nothing changes;
        during embedding, what was embedded stays and the rest waits for the next pass.
        ``embedder`` and ``cache`` are made only when vectors are on. ``pool``: the cache's
        misses are embedded by Ray actors (models/cluster.py) instead of this process."""
        t0 = time.perf_counter()
        parts, store, cfg = self.parts, self.parts.store, job.config
        key = chunking_key(cfg.index)
        if parts.read_only:
            scan = scan_workspace(self.workspace, cfg.index, self.git, dirty=False)
            files_indexed, chunks_total = store.counts()
            return IndexReport(
                files_seen=len(scan.files),
                files_changed=0,
                files_removed=0,
                files_skipped=sum(scan.skipped.values()),
                chunks_total=chunks_total,
                chunks_added=0,
                chunks_removed=0,
                embedded=0,
                vectors_from_cache=0,
                ms=(time.perf_counter() - t0) * 1000,
                skipped=dict(scan.skipped),
                read_only=True,
                files_indexed=files_indexed,
            )
        targeted = self._targeted(job, key) if job.paths is not None else None
        if targeted is not None:
            scan, work = targeted
        else:
            # No git status: only Engine.status shows whether the tree is dirty (and asks).
            scan = scan_workspace(self.workspace, cfg.index, self.git, dirty=False)
            work = plan(parts.reader, overlaid(scan.files, job.overlays), key)
        known = work.known  # under the index lock the committed state is the store's state
        hashes = {path: row.content_hash for path, row in known.items()}
        reader = Reader(self.workspace, job.overlays, hashes, work.rechunk, cfg.index)
        model_id = embedder().model_id if cfg.stages.vectors else None
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        # The links are current for the store before this pass: relink only what it moves.
        links_current = store.get_meta("resolution") == RESOLUTION_VERSION and not work.rechunk
        # Each file is written as it is read (passwrite.py): the chunks of the whole pass are
        # never held at once. A cancel or failure rolls the store and the lexical index back.
        out = PassWriter(
            parts, model_id, scan.git.commit, stamp, keep_added=cfg.stages.vectors, known=known
        )
        published = False  # holding parts.publishing (see IndexParts.consistent)
        try:
            with store.transaction():
                store.set_meta({"derived_dirty": "1"})
                store.forget_skipped([*work.removed, *(e.path for e in work.to_read)])
                for path in work.removed:
                    out.remove(path)
                with closing(reader.read_all(work.to_read)) as results:
                    for i, read in enumerate(results):
                        if progress:
                            progress("read", i + 1, len(work.to_read))
                        if cancel is not None and cancel.is_set():
                            raise IndexCancelled("indexing cancelled before anything was written")
                        entry = read.entry
                        if read.skip is not None:
                            store.set_skipped(
                                entry.path, entry.size, entry.mtime_ns, entry.mode, read.skip
                            )
                            if entry.path in known:
                                out.remove(entry.path)
                        elif read.row is None:  # same content: only the stat changed
                            store.touch_file(entry.path, entry.size, entry.mtime_ns)
                        else:
                            out.replace(read)
                graph_changed = bool(out.written or out.removed)
                if graph_changed:  # relinked below, once the change is searchable
                    store.set_meta({"resolution": ""})
                policy_changed = self._count_vectorless(out.vectorless)
                model_changed = self._embedding_model_changed(model_id)
                meta = {
                    "commit": scan.git.commit,
                    "branch": scan.git.branch,
                    "indexed_at": stamp,
                    "model": model_id,
                    "chunking": key,
                }
                store.set_meta(meta)
                # From the store's commit (the block's end) until BM25 holds the same change,
                # no request opens its snapshot: it would see one without the other.
                parts.publishing.acquire()
                published = True
        except BaseException:
            if published:
                parts.publishing.release()
            parts.lexical.rollback()  # the documents added for a store that was rolled back
            raise
        removed_ids, added = out.removed_ids, out.added
        changed = bool(removed_ids or out.added_count)
        try:
            if changed:
                if progress:
                    progress("lexical", 0, 1)
                parts.lexical.delete(removed_ids)
                parts.lexical.commit()
        finally:
            parts.publishing.release()
        if changed:
            # A save rewrites the whole vector file: only when a vector actually went.
            gone = [i for i in removed_ids if i in parts.vectors]
            if gone:
                parts.vectors.remove(gone)
                parts.vectors.save()
            if progress:
                progress("lexical", 1, 1)
        # The generation (part of every cached answer's key) moves only now that the lexical
        # and vector indexes hold the change: an answer computed in between is keyed under the
        # old generation and can never be served for the new state.
        generation = int(store.get_meta("generation") or 0) + int(graph_changed)
        store.set_meta_now(
            {
                "derived_dirty": "0",
                "generation": str(generation),
                "lexical_analysis": analysis_version(),  # what the lexical terms were made by
            }
        )

        # Links read many files: a save is searchable before them (a kill in between leaves
        # "resolution" unset and the next pass relinks).
        if store.get_meta("resolution") != RESOLUTION_VERSION:
            change = None
            if links_current and graph_changed:
                written = {path: _imports(known.get(path)) for path in out.written}
                change = LinkChange(written, frozenset(out.removed))
            with store.transaction():
                self._relink_imports(cfg, change)
                store.set_meta({"generation": str(generation + 1)})  # answers saw old links

        head = scan.git.commit
        read_at = {store.get_meta("history_head"), store.get_meta("cochange_head")}
        if head and read_at != {head}:
            freshness.update_history(self.git, store, head)

        # A new index has nothing to re-decide; a new model re-keys every chunk even before any
        # vector exists (an old key would find the old model's vector in the shared cache).
        if (policy_changed and len(parts.vectors)) or model_changed:
            parts.redecide_vectors(model_id)
        embedded, from_cache, cancelled = 0, 0, False
        if cfg.stages.vectors:
            embedded, from_cache, cancelled = self._fill_vectors(
                added, job.focus, embedder(), cache(), progress, cancel, pool
            )
        # Skips this pass made are in the store now, with those of unchanged files not re-read.
        skipped = merge_counts(scan.skipped, store.skipped_reasons())
        files_indexed, chunks_total = store.counts()
        return IndexReport(
            files_seen=files_indexed if targeted is not None else len(scan.files),
            files_changed=len(out.written),
            files_removed=len(out.removed),
            files_skipped=sum(skipped.values()),
            chunks_total=chunks_total,
            chunks_added=out.added_count,
            chunks_removed=len(removed_ids),
            embedded=embedded,
            vectors_from_cache=from_cache,
            ms=(time.perf_counter() - t0) * 1000,
            skipped=skipped,
            cancelled=cancelled,
            files_indexed=files_indexed,
        )

    def _targeted(self, job: PassInput, key: str) -> tuple[ScanResult, Plan] | None:
        """The scan and plan of a pass over ``job.paths`` alone (the watcher's events and the
        editor buffers that changed), never listing the workspace; None when a full pass is
        due: HEAD moved, the rules changed, or a path is not a plain file (see
        :func:`scan_paths` and :func:`plan_paths`)."""
        paths = set(job.paths or ())
        scan = scan_paths(self.workspace, job.config.index, self.git, paths)
        if scan is None or scan.git.commit != self.parts.store.get_meta("commit"):
            return None
        work = plan_paths(self.parts.reader, overlaid(scan.files, job.overlays), paths, key)
        return None if work is None else (scan, work)

    def _count_vectorless(self, delta: int) -> bool:
        """Keep the number of chunks that get no vector (the ``bm25_only`` meta), within the
        pass's transaction: by ``delta`` under the same policy, by a count per file when the
        policy (``filekinds.VECTOR_POLICY``) is new to this index. True in that case."""
        store = self.parts.store
        changed = store.get_meta("vector_policy") != VECTOR_POLICY
        if changed:
            per_file = chunks_per_file(store)
            count = sum(n for path, n in per_file.items() if not wants_vector(path))
        else:
            count = int(store.get_meta("bm25_only") or 0) + delta
        store.set_meta({"bm25_only": str(count), "vector_policy": VECTOR_POLICY})
        return changed

    def _embedding_model_changed(self, model_id: str | None) -> bool:
        """Whether the chunks' keys and vectors were made by another embedding model than
        ``model_id`` (a new model file ships with the package): their vectors live in another
        space than the questions'. Within the pass's transaction; a pass with vectors off
        (``model_id`` None) leaves the record alone, so the check happens when they are on."""
        if model_id is None:
            return False
        store = self.parts.store
        # "embedding_model" is written only with vectors on; an index made before it existed
        # has its model under "model".
        before = store.get_meta("embedding_model") or store.get_meta("model")
        store.set_meta({"embedding_model": model_id})
        return before is not None and before != model_id

    def _relink_imports(self, cfg: Config, change: LinkChange | None) -> Relinked:
        """Import edges, same-package edges and the build-output finding (``relink.py``):
        for what ``change`` moved, or for every file when None."""
        return self._links.relink(self.parts.store, self.workspace, cfg, change)

    def _embed_order(self, chunks: list[StoredChunk], focus: frozenset[str]) -> list[StoredChunk]:
        """The open files and what they import or is imported by them first; then source code
        before other text, tests and bulk files (``embed_priority``); inside each, files changed
        in the last 90 days of history first; by length last, so batches pad little."""
        store = self.parts.store
        near: set[str] = set(focus)
        for path in focus:
            near.update(store.imports_of(path))
            near.update(store.importers_of(path))
        head_time = store.get_meta("history_head_time")
        recent: set[str] = set()
        if head_time is not None:
            since = int(head_time) - int(RECENT_DAYS * 86400)
            times = store.commit_times({sc.chunk.path for sc in chunks})
            recent = {p for p, t in times.items() if t >= since}
        return sorted(
            chunks,
            key=lambda sc: (
                sc.chunk.path not in near,
                embed_priority(sc.chunk),
                sc.chunk.path not in recent,
                len(sc.chunk.text),
            ),
        )

    def _fill_vectors(
        self,
        added: list[StoredChunk],
        focus: frozenset[str],
        embedder: Embedder,
        cache: EmbeddingCache,
        progress: Progress | None,
        cancel: threading.Event | None,
        pool: EmbeddingPool | None = None,
    ) -> tuple[int, int, bool]:
        """Vectors for new chunks: the cache first, the model for the misses, saved in steps so
        an interrupted pass keeps what it computed. Also repairs chunks an earlier, interrupted
        pass left without a vector."""
        parts = self.parts
        vectors = parts.vectors
        # Only chunks the policy gives a vector (filekinds.wants_vector); BM25 has them all.
        todo = [sc for sc in added if wants_vector(sc.chunk.path)]
        if len(vectors) + len(todo) < vector_target(parts.store):
            todo = [
                sc
                for sc in parts.store.all_chunks()
                if sc.id not in vectors and wants_vector(sc.chunk.path)
            ]
        if not todo:
            return 0, 0, False
        todo = parts.keyed(todo)
        # Where answers matter first (see _embed_order) while BM25 covers the rest. Chunks with
        # the same text share a key: one part embeds it once, a later part finds it in the cache.
        missing = self._embed_order(parts.add_cached_vectors(todo), focus)
        from_cache = len(todo) - len(missing)
        if pool is not None:
            done, cancelled = self._fill_from_pool(missing, pool, cache, progress, cancel)
            return done, from_cache, cancelled
        embedded = 0
        last_save = time.perf_counter()
        try:
            for i in range(0, len(missing), EMBED_BATCH):
                if cancel is not None and cancel.is_set():
                    return embedded, from_cache, True
                part = missing[i : i + EMBED_BATCH]
                texts = {sc.emb_key: embedding_text(sc.chunk) for sc in part if sc.emb_key}
                vecs, computed = embed_with_cache(embedder, cache, texts)
                embedded += computed
                stacked = np.stack([vecs[sc.emb_key or ""] for sc in part])
                vectors.add([sc.id for sc in part], stacked)
                # A save rewrites the whole file (tens of MB on a large repository): every few
                # seconds, not every part. A crash loses only vectors the embedding cache
                # holds, and the next pass puts them back from there.
                if time.perf_counter() - last_save >= VECTOR_SAVE_S:
                    vectors.save()
                    last_save = time.perf_counter()
                if progress:
                    progress("embed", min(i + EMBED_BATCH, len(missing)), len(missing))
        finally:
            if missing or from_cache:  # vectors from the cache are kept too (a journal append)
                vectors.save()
        return embedded, from_cache, False

    def _fill_from_pool(
        self,
        missing: list[StoredChunk],
        pool: EmbeddingPool,
        cache: EmbeddingCache,
        progress: Progress | None,
        cancel: threading.Event | None,
    ) -> tuple[int, bool]:
        """The cache's misses through the cluster: each distinct text sent once, in the
        priority order of ``missing``; each finished part (already in the cache) goes into
        the vector index as it arrives. Returns the texts embedded and whether cancelled."""
        chunks_of: dict[str, list[StoredChunk]] = {}
        texts: dict[str, str] = {}
        for sc in missing:
            if sc.emb_key:
                chunks_of.setdefault(sc.emb_key, []).append(sc)
                texts.setdefault(sc.emb_key, embedding_text(sc.chunk))
        vectors, embedded = self.parts.vectors, 0
        last_save = time.perf_counter()
        stream = pool.embed_stream(cache, texts)
        try:
            for stored in stream:
                ids = [sc.id for key in stored for sc in chunks_of[key]]
                vectors.add(ids, np.stack([v for key, v in stored.items() for _ in chunks_of[key]]))
                embedded += len(stored)
                if time.perf_counter() - last_save >= VECTOR_SAVE_S:
                    vectors.save()
                    last_save = time.perf_counter()
                if progress:
                    progress("embed", embedded, len(texts))
                if cancel is not None and cancel.is_set():
                    return embedded, embedded < len(texts)
        finally:
            stream.close()  # cancels the parts in flight
            if missing:
                vectors.save()
        return embedded, False
