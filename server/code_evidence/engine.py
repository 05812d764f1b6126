"""The engine: one API (index, find, status) that the CLI, the language server and the
benchmarks all call. It owns the index folder of one workspace and the writer lock on it.

A request reads top to bottom: query analysis -> recall (bm25, vectors, structural) -> fusion ->
features and filters -> rerank -> assembly. Each stage is a module of the same name.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import numpy as np
import platformdirs
from filelock import FileLock, Timeout

from .api import (
    Chunk,
    ContextPack,
    Evidence,
    FindRequest,
    FindResult,
    IndexReport,
    StageTrace,
    Status,
)
from .config import Config, load_config, read_tuned
from .git import Git
from .index import snapshot as history
from .index.chunk import chunk_file, detect_language
from .index.imports import ImportResolver
from .index.lexical import LexDoc, LexicalIndex
from .index.scan import (
    FileEntry,
    LoadedText,
    SkipFile,
    load_text,
    resolve_workspace_path,
    scan_workspace,
)
from .index.store import FileRow, Store, StoreCorrupt, StoredChunk
from .index.vectors import VectorIndex
from .models import crossencoder
from .models.embedder import (
    Embedder,
    EmbeddingCache,
    embed_priority,
    embed_with_cache,
    embedding_key,
    embedding_text,
)
from .requestlog import TraceLog, mask_secrets
from .search import assemble, features, fuse, query, recall, rerank
from .search.candidate import Candidate

Progress = Callable[[str, int, int], None]  # (stage, done, total)
EMBED_BATCH = 256  # chunks per embed-and-cache step: bounds work lost to a crash
VECTOR_SAVE_S = 20.0  # seconds between vector index saves while embedding
ANSWER_CACHE_SIZE = 256
# Bump when ranking code changes what an answer is, so no cached answer survives it.
RANKING_VERSION = "2026.11.30-3"
# Request limits (README "Limits"): a pasted traceback may be long, so an over-long query is
# cut with a note; a result count or budget beyond these is a mistake, refused with a message.
MAX_QUERY_CHARS = 20_000
MAX_LIMIT = 200
MAX_BUDGET_TOKENS = 100_000
# Words in a Tantivy read error that mean damaged files rather than a bad query.
_DAMAGE_MARKERS = ("io error", "corrupt", "checksum", "decompress", "offset", "eof")


class EngineError(Exception):
    """A problem with the user's input or environment, with a message meant for them."""


class IndexCancelled(Exception):
    """An index pass was cancelled before it wrote anything."""


def cache_root() -> Path:
    env = os.environ.get("CODE_EVIDENCE_CACHE_DIR")
    return Path(env) if env else Path(platformdirs.user_cache_dir("code-evidence"))


def default_index_dir(workspace: Path) -> Path:
    resolved = workspace.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return cache_root() / f"{resolved.name or 'root'}-{digest}"


@lru_cache(maxsize=1)
def shared_embedder() -> Embedder:
    """One model per process: loading it is the slowest part of a cold start."""
    return Embedder()


@dataclass(frozen=True, slots=True)
class _Plan:
    """What an index pass must do, from comparing the scan with the store."""

    to_read: list[FileEntry]
    removed: list[str]
    known: dict[str, FileRow]  # the indexed files, as read for the comparison


class Engine:
    def __init__(
        self,
        workspace: Path | str,
        index_dir: Path | str | None = None,
        config: Config | None = None,
        embedder: Embedder | None = None,
        trust_other_owner: bool = False,
        use_git: bool = True,
    ) -> None:
        """``trust_other_owner``: the user's opt-in to run git in a repository another user
        owns (never read from the repository). ``use_git=False``: a folder this project wrote
        (a snapshot, a replay), indexed as a plain folder."""
        ws = Path(workspace).expanduser()
        if not ws.exists():
            raise EngineError(f"workspace not found: {ws}")
        if not ws.is_dir():
            raise EngineError(f"workspace is not a folder: {ws}")
        self.workspace = ws.resolve()
        self.git = Git(self.workspace, trust_other_owner, enabled=use_git)
        self.index_dir = (
            Path(index_dir).expanduser().resolve()
            if index_dir
            else default_index_dir(self.workspace)
        )
        self.tuned = read_tuned(self.index_dir) if config is None else {}
        self.config = (
            config if config is not None else load_config(self.workspace, self.tuned.get("ranking"))
        )
        try:
            self.index_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EngineError(f"cannot create index folder {self.index_dir}: {exc}") from exc
        self._lock = FileLock(str(self.index_dir / "writer.lock"))
        try:
            self._lock.acquire(timeout=0)
            self.read_only = False
        except Timeout:
            self.read_only = True
        self._embedder = embedder
        self._cache: EmbeddingCache | None = None
        # One index pass at a time; requests do not take this lock: they read the last
        # committed state through their own connection while a pass runs.
        self._index_lock = threading.Lock()
        self._indexing = False
        self._overlays: dict[str, str] = {}
        self._focus: frozenset[str] = frozenset()
        self._answers: OrderedDict[tuple[object, ...], FindResult] = OrderedDict()
        self._scores = crossencoder.ScoreCache()  # cross-encoder logits per (question, chunk)
        self.requests = TraceLog(self.index_dir / "requests.jsonl")
        self.notes: list[str] = []
        if self.git.refusal:
            self.notes.append(self.git.refusal)
        self._open_indexes()

    # -- opening and repair -------------------------------------------------
    def _open_indexes(self) -> None:
        db_path = self.index_dir / "store.sqlite"
        if self.read_only and not db_path.exists():
            raise EngineError(
                f"another process is building the first index in {self.index_dir}; try again "
                "when it has finished"
            )
        try:
            self.store = Store(db_path, read_only=self.read_only)
        except StoreCorrupt as exc:
            if self.read_only:
                raise EngineError(
                    f"the index is unreadable ({exc}); the writer will rebuild it"
                ) from exc
            self.notes.append(f"index store was unusable ({exc}); rebuilt from scratch")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db_path}{suffix}").unlink(missing_ok=True)
            shutil.rmtree(self.index_dir / "lexical", ignore_errors=True)
            (self.index_dir / "vectors.usearch").unlink(missing_ok=True)
            self.store = Store(db_path)
        self.lexical = LexicalIndex(self.index_dir / "lexical", read_only=self.read_only)
        self.vectors = VectorIndex(self.index_dir / "vectors.usearch", dim=384)
        self.reader = self.store if self.read_only else Store(db_path, read_only=True)
        if self.read_only:
            self.notes.append(
                "another process holds the writer lock: answering from the index as it is"
            )
            return
        _, chunks = self.store.counts()
        dirty = self.store.get_meta("derived_dirty") == "1"
        # ``or len(...)``: a crashed pass that emptied the store must still empty the others.
        lexical_docs = len(self.lexical)
        if (chunks or lexical_docs) and (dirty or self.lexical.rebuilt or lexical_docs != chunks):
            self._rebuild_lexical()
        if (chunks or len(self.vectors)) and (dirty or self.vectors.rebuilt):
            self._rebuild_vectors()
        if dirty:
            self.store.set_meta_now({"derived_dirty": "0"})

    def _rebuild_lexical(self) -> None:
        self.notes.append("lexical index was stale or damaged; rebuilt from the store")
        self.lexical.clear()
        batch: list[LexDoc] = []
        for sc in self.store.all_chunks():
            batch.append(_lexdoc(sc))
            if len(batch) >= 2000:
                self.lexical.add(batch)
                batch = []
        self.lexical.add(batch)
        self.lexical.commit()

    def _repair_lexical_if_damaged(self, notes: list[str]) -> bool:
        """A Tantivy segment can open fine and fail only when read (a damaged doc store):
        rebuild it from the store at the first failed read instead of degrading forever.
        Skipped while an index pass runs (the next answer retries)."""
        failed = [n for n in notes if n.startswith("bm25 channel failed")]
        if not failed or not any(m in failed[0].lower() for m in _DAMAGE_MARKERS):
            return bool(failed)
        if self.read_only or not self._index_lock.acquire(blocking=False):
            return True
        try:
            shutil.rmtree(self.index_dir / "lexical", ignore_errors=True)
            self.lexical = LexicalIndex(self.index_dir / "lexical")
            self._rebuild_lexical()
        finally:
            self._index_lock.release()
        return True

    def _rebuild_vectors(self) -> None:
        """Vectors come back from the content-addressed cache; only misses need the model,
        and those are filled by the next index pass."""
        self.notes.append("vector index was stale or damaged; rebuilt from the embedding cache")
        (self.index_dir / "vectors.usearch").unlink(missing_ok=True)
        self.vectors = VectorIndex(self.index_dir / "vectors.usearch", dim=384)
        self._add_cached_vectors(list(self.store.all_chunks()))
        self.vectors.save()

    def _keyed(self, chunks: list[StoredChunk]) -> list[StoredChunk]:
        """Chunks stored while vectors were switched off have no embedding key; they get one
        now, or switching vectors on would leave the index partial for good."""
        model_id = self.embedder.model_id
        fresh = [(sc.id, embedding_key(sc.chunk, model_id)) for sc in chunks if not sc.emb_key]
        if not fresh:
            return chunks
        self.store.set_emb_keys(fresh)
        keys = dict(fresh)
        return [
            dataclasses.replace(sc, emb_key=keys[sc.id]) if sc.id in keys else sc for sc in chunks
        ]

    def _add_cached_vectors(self, chunks: list[StoredChunk]) -> list[StoredChunk]:
        """Add what the cache has; return the chunks it did not have."""
        keyed = [sc for sc in chunks if sc.emb_key]
        found = self.cache.get_many([sc.emb_key for sc in keyed if sc.emb_key])
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

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = shared_embedder()
        return self._embedder

    @property
    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            self._cache = EmbeddingCache(cache_root() / "embeddings.sqlite")
        return self._cache

    def close(self) -> None:
        with self._index_lock:
            if self._cache is not None:
                self._cache.close()
            if self.reader is not self.store:
                self.reader.close()
            self.store.close()
            if not self.read_only:
                self._lock.release()

    @property
    def state(self) -> str:
        """``indexing`` while a pass runs; ``partial`` while chunks still lack vectors (answers
        come from BM25 and structure for those); ``ready`` otherwise."""
        if self._indexing:
            return "indexing"
        if self.config.stages.vectors and len(self.vectors) < self.reader.counts()[1]:
            return "partial"
        return "ready"

    def set_overlay(self, path: str, text: str | None) -> None:
        """Search ``text`` instead of the disk copy of ``path`` (an editor's unsaved buffer);
        ``None`` goes back to the disk copy. Takes effect at the next index pass."""
        try:
            rel = resolve_workspace_path(self.workspace, path)
        except ValueError as exc:
            raise EngineError(str(exc)) from exc
        if text is None:
            self._overlays.pop(rel, None)
        else:
            self._overlays[rel] = text

    def set_focus(self, paths: Iterable[str]) -> None:
        """The files open in the editor: their neighbourhood is embedded first in a pass, so
        answers improve where the user is while the rest waits its turn."""
        self._focus = frozenset(paths)

    def _embed_order(self, chunks: list[StoredChunk]) -> list[StoredChunk]:
        """The open files and what they import or is imported by them first; then source code
        before other text, tests and bulk files (``embed_priority``); inside each, files changed
        in the last 90 days of history first; by length last, so batches pad little."""
        near: set[str] = set(self._focus)
        for path in self._focus:
            near.update(self.store.imports_of(path))
            near.update(self.store.importers_of(path))
        head_time = self.store.get_meta("history_head_time")
        recent: set[str] = set()
        if head_time is not None:
            since = int(head_time) - int(features.FRESH_HALF_LIFE_DAYS * 86400)
            times = self.store.commit_times({sc.chunk.path for sc in chunks})
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

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- indexing -----------------------------------------------------------
    def _plan(self, entries: list[FileEntry]) -> _Plan:
        """Compare the scan with what is indexed (or was read and skipped) by size and mtime.
        Reads the committed state, so status can call it while a pass runs."""
        known = self.reader.files()
        stats = {p: (row.size, row.mtime_ns) for p, row in known.items()}
        skipped = self.reader.skipped_stats()
        to_read = [
            e for e in entries if stats.get(e.path, skipped.get(e.path)) != (e.size, e.mtime_ns)
        ]
        present = {e.path for e in entries}
        removed = [p for p in [*known, *skipped] if p not in present]
        return _Plan(to_read, removed, known)

    def index(
        self, progress: Progress | None = None, cancel: threading.Event | None = None
    ) -> IndexReport:
        """Bring the index up to date with the working tree (and editor overlays): only changed
        files are read, only new chunk texts are embedded. ``cancel`` stops the pass early:
        before the store is written nothing changes; during embedding, what was embedded
        stays and the rest waits for the next pass."""
        with self._index_lock:
            self._indexing = True
            try:
                return self._index_pass(progress, cancel)
            finally:
                self._indexing = False

    def _index_pass(self, progress: Progress | None, cancel: threading.Event | None) -> IndexReport:
        t0 = time.perf_counter()
        scan = scan_workspace(self.workspace, self.config.index, self.git)
        if self.read_only:
            return IndexReport(
                files_seen=len(scan.files),
                files_changed=0,
                files_removed=0,
                files_skipped=sum(scan.skipped.values()),
                chunks_total=self.store.counts()[1],
                chunks_added=0,
                chunks_removed=0,
                embedded=0,
                vectors_from_cache=0,
                ms=(time.perf_counter() - t0) * 1000,
                skipped=dict(scan.skipped),
                read_only=True,
            )
        overlays = dict(self._overlays)
        entries = [
            FileEntry(e.path, *_overlay_stamp(overlays[e.path])) if e.path in overlays else e
            for e in scan.files
        ]
        plan = self._plan(entries)
        skipped = dict(scan.skipped)
        known = plan.known  # under the index lock the committed state is the store's state
        updates: list[tuple[FileEntry, FileRow, list[Chunk], bool]] = []
        touches: list[FileEntry] = []
        skips: list[tuple[FileEntry, str]] = []
        removed = list(plan.removed)
        for i, entry in enumerate(plan.to_read):
            if progress:
                progress("read", i + 1, len(plan.to_read))
            if cancel is not None and cancel.is_set():
                raise IndexCancelled("indexing cancelled before anything was written")
            try:
                if entry.path in overlays:
                    loaded = LoadedText(_normalise_newlines(overlays[entry.path]), False)
                else:
                    loaded = load_text(self.workspace, entry.path, self.config.index)
            except SkipFile as skip:
                skipped[skip.reason] = skipped.get(skip.reason, 0) + 1
                skips.append((entry, skip.reason))
                if entry.path in known:
                    removed.append(entry.path)
                continue
            content_hash = hashlib.sha256(loaded.text.encode("utf-8", "replace")).hexdigest()
            old = known.get(entry.path)
            if old is not None and old.content_hash == content_hash:
                touches.append(entry)
                continue
            chunks = chunk_file(entry.path, loaded.text, self.config.index)
            language = detect_language(entry.path)
            imports = chunks[0].imports if chunks else ()
            row = FileRow(entry.path, entry.size, entry.mtime_ns, content_hash, language, imports)
            updates.append((entry, row, chunks, loaded.encoding_errors))

        model_id = self.embedder.model_id if self.config.stages.vectors else None
        removed_ids: list[int] = []
        added: list[StoredChunk] = []
        graph_changed = bool(updates or removed)
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with self.store.transaction():
            self.store._set_meta({"derived_dirty": "1"})
            self.store.forget_skipped(
                [*removed, *(e.path for e in touches), *(u[0].path for u in updates)]
            )
            for entry, reason in skips:
                self.store.set_skipped(entry.path, entry.size, entry.mtime_ns, reason)
            for entry in touches:
                self.store.touch_file(entry.path, entry.size, entry.mtime_ns)
            for path in removed:
                removed_ids.extend(self.store.remove_file(path))
            for _entry, row, chunks, enc_err in updates:
                existing = {sc.chunk.hash: sc for sc in self.store.chunks_of(row.path)}
                keep: list[tuple[int, int, int]] = []
                new = []
                for ch in chunks:
                    old_sc = existing.pop(ch.hash, None)
                    if old_sc is not None:  # same text; lines above it may have come or gone
                        keep.append((old_sc.id, ch.start, ch.end))
                    else:
                        new.append((ch, embedding_key(ch, model_id) if model_id else None))
                gone, ids = self.store.replace_file(row, keep, new, enc_err, scan.git.commit, stamp)
                removed_ids.extend(gone)
                added.extend(
                    StoredChunk(cid, ch, key) for cid, (ch, key) in zip(ids, new, strict=True)
                )
            if graph_changed:
                self._relink_imports()
            self.store._set_meta(
                {
                    "commit": scan.git.commit,
                    "branch": scan.git.branch,
                    "dirty": None if scan.git.dirty is None else str(int(scan.git.dirty)),
                    "indexed_at": stamp,
                    "model": model_id,
                }
            )
        if removed_ids or added:
            if progress:
                progress("lexical", 0, 1)
            self.lexical.delete(removed_ids)
            self.lexical.add([_lexdoc(sc) for sc in added])
            self.lexical.commit()
            self.vectors.remove(removed_ids)
            self.vectors.save()
        # The generation (part of every cached answer's key) moves only now that the lexical
        # and vector indexes hold the change: an answer computed in between is keyed under the
        # old generation and can never be served for the new state.
        generation = int(self.store.get_meta("generation") or 0) + int(bool(updates or removed))
        self.store.set_meta_now({"derived_dirty": "0", "generation": str(generation)})

        if scan.git.commit and scan.git.commit != self.store.get_meta("history_head"):
            self._update_history(scan.git.commit)

        embedded, from_cache, cancelled = 0, 0, False
        if self.config.stages.vectors:
            embedded, from_cache, cancelled = self._fill_vectors(added, progress, cancel)
        chunks_total = self.store.counts()[1]
        return IndexReport(
            files_seen=len(scan.files),
            files_changed=len(updates),
            files_removed=len(removed),
            files_skipped=sum(skipped.values()),
            chunks_total=chunks_total,
            chunks_added=len(added),
            chunks_removed=len(removed_ids),
            embedded=embedded,
            vectors_from_cache=from_cache,
            ms=(time.perf_counter() - t0) * 1000,
            skipped=skipped,
            cancelled=cancelled,
        )

    def _update_history(self, head: str) -> None:
        """The newest commit touching each file, for the freshness feature: incremental when
        the new HEAD descends from the last one seen, a full walk otherwise (once per HEAD)."""
        previous = self.store.get_meta("history_head")
        since = previous if previous and history.is_ancestor(self.git, previous, head) else None
        commits = history.last_commits(self.git, head, since)
        head_time = history.commit_time(self.git, head)
        if commits is None or head_time is None:
            return
        with self.store.transaction():
            self.store.set_history(commits, replace=since is None)
            self.store._set_meta({"history_head": head, "history_head_time": str(head_time)})

    def _relink_imports(self) -> None:
        files = self.store.files()
        resolver = ImportResolver(set(files))
        edges = []
        for path, row in files.items():
            if row.language and row.imports:
                for dst in resolver.resolve(path, row.language, row.imports):
                    edges.append((path, dst))
        self.store.set_import_edges(edges)

    def _fill_vectors(
        self, added: list[StoredChunk], progress: Progress | None, cancel: threading.Event | None
    ) -> tuple[int, int, bool]:
        """Vectors for new chunks: the cache first, the model for the misses, saved in steps so
        an interrupted pass keeps what it computed. Also repairs chunks an earlier, interrupted
        pass left without a vector."""
        _, total = self.store.counts()
        todo = added
        if len(self.vectors) + len(added) < total or len(self.vectors) < total - len(added):
            todo = [sc for sc in self.store.all_chunks() if sc.id not in self.vectors]
        if not todo:
            return 0, 0, False
        todo = self._keyed(todo)
        # Where answers matter first (see _embed_order) while BM25 covers the rest. Chunks with
        # the same text share a key: one part embeds it once, a later part finds it in the cache.
        missing = self._embed_order(self._add_cached_vectors(todo))
        from_cache = len(todo) - len(missing)
        embedded = 0
        last_save = time.perf_counter()
        try:
            for i in range(0, len(missing), EMBED_BATCH):
                if cancel is not None and cancel.is_set():
                    return embedded, from_cache, True
                part = missing[i : i + EMBED_BATCH]
                texts = {sc.emb_key: embedding_text(sc.chunk) for sc in part if sc.emb_key}
                vecs, computed = embed_with_cache(self.embedder, self.cache, texts)
                embedded += computed
                stacked = np.stack([vecs[sc.emb_key or ""] for sc in part])
                self.vectors.add([sc.id for sc in part], stacked)
                # A save rewrites the whole file (tens of MB on a large repository): every few
                # seconds, not every part. A crash loses only vectors the embedding cache
                # holds, and the next pass puts them back from there.
                if time.perf_counter() - last_save >= VECTOR_SAVE_S:
                    self.vectors.save()
                    last_save = time.perf_counter()
                if progress:
                    progress("embed", min(i + EMBED_BATCH, len(missing)), len(missing))
        finally:
            if missing:
                self.vectors.save()
        return embedded, from_cache, False

    # -- status ---------------------------------------------------------------
    def status(self) -> Status:
        scan = scan_workspace(self.workspace, self.config.index, self.git)
        plan = self._plan(scan.files)
        files, chunks = self.reader.counts()
        size = sum(p.stat().st_size for p in self.index_dir.rglob("*") if p.is_file())
        return Status(
            workspace=str(self.workspace),
            index_dir=str(self.index_dir),
            commit=scan.git.commit,
            branch=scan.git.branch,
            dirty=scan.git.dirty,
            indexed_commit=self.reader.get_meta("commit"),
            indexed_at=self.reader.get_meta("indexed_at"),
            files=files,
            chunks=chunks,
            vectors=len(self.vectors),
            pending=len(plan.to_read) + len(plan.removed),
            index_bytes=size,
            model=self.reader.get_meta("model"),
            locked_by_other=self.read_only,
            state=self.state,
            ranking=self._ranking_source(),
        )

    def _ranking_source(self) -> str:
        if not self.tuned:
            return "defaults"
        settings = ", ".join(f"{k}={v}" for k, v in self.tuned["ranking"].items())
        before = self.tuned.get("before", {}).get("validation", {}).get("mrr")
        after = self.tuned.get("after", {}).get("validation", {}).get("mrr")
        gain = (
            f"; validation MRR@10 {before:.3f} -> {after:.3f}"
            if isinstance(before, float) and isinstance(after, float)
            else ""
        )
        return f"tuned {str(self.tuned.get('created', ''))[:10]}: {settings}{gain}"

    # -- lookups for editor features (hover, code lens) -------------------------
    def outline(self, path: str) -> list[Evidence]:
        """The chunks of one file in line order: where lenses go."""
        return [_stored_evidence(sc) for sc in self.reader.chunks_of(path)]

    def symbol_at(self, path: str, line: int) -> Evidence | None:
        sc = self.reader.chunk_at(path, line)
        return None if sc is None else _stored_evidence(sc)

    def definitions(self, name: str, limit: int = 5) -> list[Evidence]:
        """Chunks that define ``name`` (last component of their symbol), code before tests."""
        found = self.reader.chunks_named([name], limit=limit * 4)
        found.sort(key=lambda sc: (sc.chunk.is_test, sc.chunk.kind == "window", sc.chunk.path))
        return [_stored_evidence(sc, ["definition"]) for sc in found[:limit]]

    def callers(self, name: str, limit: int = 10) -> list[Evidence]:
        """Chunks that call ``name``, matched by bare name (no type resolution)."""
        ids = self.reader.callers_of(name, limit=limit * 4)
        chunks = self.reader.get_chunks(ids)
        ordered = sorted(chunks.values(), key=lambda sc: (sc.chunk.is_test, sc.chunk.path))
        return [_stored_evidence(sc, ["caller"]) for sc in ordered[:limit]]

    def caller_counts(self, names: list[str]) -> dict[str, int]:
        return self.reader.caller_counts(names)

    # -- find -----------------------------------------------------------------
    def find(self, req: FindRequest, refresh: bool = True) -> FindResult:
        if not req.query or not req.query.strip():
            raise EngineError("the query is empty: say what you are looking for")
        if req.limit < 1:
            raise EngineError("--limit must be at least 1")
        if req.limit > MAX_LIMIT:
            raise EngineError(f"--limit must be at most {MAX_LIMIT} (got {req.limit})")
        if req.budget_tokens is not None and not 0 <= req.budget_tokens <= MAX_BUDGET_TOKENS:
            raise EngineError(
                f"--budget must be between 0 (no context pack) and {MAX_BUDGET_TOKENS} tokens "
                f"(got {req.budget_tokens})"
            )
        limit_notes: list[str] = []
        if len(req.query) > MAX_QUERY_CHARS:
            limit_notes.append(
                f"the query was {len(req.query)} characters; only the first {MAX_QUERY_CHARS} "
                "were used"
            )
            req = dataclasses.replace(req, query=req.query[:MAX_QUERY_CHARS])
        open_file = None
        if req.open_file:
            try:
                open_file = resolve_workspace_path(self.workspace, req.open_file)
            except ValueError as exc:
                raise EngineError(str(exc)) from exc
        trace: dict[str, StageTrace] = {}
        notes = [*self.notes, *limit_notes]
        if self._indexing:
            notes.append("an index pass is running: answering from what is committed")
        if refresh and not self.read_only:
            t0 = time.perf_counter()
            report = self.index()
            trace["refresh"] = StageTrace(report.files_changed + report.files_removed, _ms(t0))
        t0 = time.perf_counter()
        key = self._answer_key(req, open_file)
        cached = self._answers.get(key)
        if cached is not None:
            self._answers.move_to_end(key)
            return dataclasses.replace(
                cached,
                results=list(cached.results),
                trace={**trace, "cache": StageTrace(1, _ms(t0))},
                notes=notes,
            )
        result = self._answer(req, open_file, trace, notes)
        if not self.read_only:
            self.requests.record(result, open_file, req.line)
        damaged = self._repair_lexical_if_damaged(result.notes)
        if not self._indexing and not damaged:  # mid-pass or degraded answers: never keep them
            self._answers[key] = result
        if len(self._answers) > ANSWER_CACHE_SIZE:
            self._answers.popitem(last=False)
        # Callers may edit what they get (drop results, add notes); the cache keeps its own.
        return dataclasses.replace(result, results=list(result.results), notes=list(notes))

    def find_as_of(self, req: FindRequest, ref: str) -> FindResult:
        """Answer from the code as it was at ``ref``: a snapshot of that commit indexed in the
        cache (never the user's working tree), its chunks embedded through the shared cache."""
        try:
            sha, tree = history.snapshot(self.git, ref, cache_root())
        except history.HistoryError as exc:
            raise EngineError(str(exc)) from exc
        with Engine(
            tree, tree.parent / "index", config=self.config, embedder=self._embedder, use_git=False
        ) as past:
            result = past.find(req)
        result.workspace = str(self.workspace)
        result.commit, result.branch = sha, None
        result.notes = [f"answered as of {ref} ({sha[:12]}), not the working tree", *result.notes]
        return result

    def _ages(self, paths: list[str]) -> dict[str, float]:
        """Days between HEAD and the newest commit touching each file (files git never saw,
        such as untracked ones, are left out)."""
        head_time = self.reader.get_meta("history_head_time")
        if head_time is None:
            return {}
        times = self.reader.commit_times(paths)
        return {p: max(0.0, (int(head_time) - t) / 86400) for p, t in times.items()}

    def _parent_scope(self, chunk: Chunk, max_lines: int) -> assemble.Scope | None:
        """The class around a method: every stored chunk of that class, lines in between
        kept blank (they were blank or comments between members)."""
        if chunk.kind != "method" or "." not in chunk.symbol:
            return None
        owner = chunk.symbol.rsplit(".", 1)[0]
        stored = self.reader.scope_members(chunk.path, owner, max_lines)
        if stored is None or len(stored) < 2:
            return None  # no class around it, or too big to go in whole
        members = [sc.chunk for sc in stored]
        start = min(m.start for m in members)
        end = max(m.end for m in members)
        lines = [""] * (end - start + 1)
        for m in members:
            for i, text in enumerate(m.text.split("\n")):
                lines[m.start - start + i] = text
        return start, end, owner, "\n".join(lines)

    def forget_answers(self) -> None:
        """Drop cached answers and cross-encoder scores (benchmarks time each configuration
        from cold)."""
        self._answers.clear()
        self._scores = crossencoder.ScoreCache()

    def preload_models(self) -> None:
        """For long-running hosts (the language server): load the cross-encoder now, in the
        background, instead of inside the first question's latency budget."""
        if self.config.stages.rerank and self.config.ranking.reranker == "cross-encoder":
            crossencoder.preload(crossencoder.MODEL_PATH, self.config.ranking.rerank_threads)

    def _rerankers(
        self, qa: query.QueryAnalysis, depth: str, notes: list[str]
    ) -> list[rerank.Reranker]:
        """The feature scorer, then the configured model scorer when the question is one it
        helps with. A model that cannot load leaves the feature scorer alone, with a note: the
        request still answers."""
        cfg = self.config
        if not cfg.stages.rerank:
            return []
        out: list[rerank.Reranker] = [rerank.FeatureReranker()]
        kind = cfg.ranking.reranker if depth != "quick" else "none"
        if (
            kind == "cross-encoder"
            and cfg.ranking.cross_encoder_for == "descriptions"
            and not crossencoder.reads_as_description(qa)
        ):
            kind = "none"
        if kind == "cross-encoder":
            try:
                model = crossencoder.shared(crossencoder.MODEL_PATH, cfg.ranking.rerank_threads)
            except Exception as exc:  # missing or unreadable model file, onnxruntime error
                notes.append(f"cross-encoder unavailable ({exc}); feature scorer only")
            else:
                deep = depth == "deep"
                pairs = cfg.ranking.rerank_pairs_deep if deep else cfg.ranking.rerank_pairs
                out.append(
                    crossencoder.CrossEncoderReranker(
                        model, self._scores, pairs, cfg.ranking.rerank_blend
                    )
                )
        elif kind == "bi-encoder" and cfg.stages.vectors:
            blend = cfg.ranking.rerank_blend
            out.append(rerank.BiEncoderReranker(self.embedder, self.cache, blend))
        return out

    def _answer_key(self, req: FindRequest, open_file: str | None) -> tuple[object, ...]:
        """Everything an answer depends on: the index version (generation of the store and
        how many vectors are in), the request, the open file's content, the configuration and
        the ranking code's version. Any index change moves the generation, so a cached answer
        can never outlive the code it cites."""
        open_hash = None
        if open_file is not None:
            row = self.reader.file_row(open_file)
            open_hash = row.content_hash if row else None
        return (
            self.reader.get_meta("generation"),
            self.reader.get_meta("commit"),
            self.reader.get_meta("branch"),
            len(self.vectors),
            req.query,
            req.intent,
            open_file,
            open_hash,
            req.line,
            req.limit,
            req.budget_tokens,
            req.depth,
            repr(self.config),
            RANKING_VERSION,
        )

    def _answer(
        self,
        req: FindRequest,
        open_file: str | None,
        trace: dict[str, StageTrace],
        notes: list[str],
    ) -> FindResult:
        cfg = self.config
        t0 = time.perf_counter()
        qa = query.analyze(req.query, req.intent)
        trace["query"] = StageTrace(len(qa.terms), _ms(t0))
        editor = recall.EditorState(open_file, req.line)
        t0 = time.perf_counter()
        rec = recall.recall(
            qa,
            editor,
            cfg,
            self.reader,
            self.lexical if cfg.stages.lexical else None,
            self.vectors if cfg.stages.vectors else None,
            self.embedder if cfg.stages.vectors else None,
            self.cache if cfg.stages.vectors else None,
        )
        notes.extend(rec.notes)
        for name, ranking in rec.channels.items():
            trace[f"recall.{name}"] = StageTrace(len(ranking), rec.ms.get(name, 0.0))
        t0 = time.perf_counter()
        weights = fuse.channel_weights(cfg.ranking)
        cands = fuse.fuse(rec.channels, self.reader, cfg.ranking.rrf_k, weights)
        trace["fuse"] = StageTrace(len(cands), _ms(t0))
        t0 = time.perf_counter()
        cands = features.apply_features(
            cands,
            qa,
            editor,
            rec.relations,
            cfg,
            use_boosts=cfg.stages.features,
            caller_counts=self.reader.caller_counts,
            ages=self._ages,
        )
        trace["features"] = StageTrace(len(cands), _ms(t0))
        t0 = time.perf_counter()
        rerankers = self._rerankers(qa, req.depth, notes)
        deep = req.depth == "deep"
        cands, scored, rerank_notes = rerank.rerank(
            cands,
            qa,
            rerankers,
            top_n=50,
            budget_ms=None if deep else cfg.ranking.rerank_budget_ms,
        )
        notes.extend(rerank_notes)
        trace["rerank"] = StageTrace(scored, _ms(t0))
        t0 = time.perf_counter()
        ranked = assemble.diversify(cands, cfg.ranking.per_file_results)
        max_fused = sum(weights.get(name, 1.0) for name in rec.channels) / (cfg.ranking.rrf_k + 1)
        verdict = assemble.judge(ranked, qa, max_fused, cfg.ranking.insufficient_below)
        # Ranking and the verdict saw the real text; what leaves the engine is masked.
        for c in ranked[: max(req.limit, 40)]:
            c.stored = dataclasses.replace(
                c.stored,
                chunk=dataclasses.replace(c.stored.chunk, text=mask_secrets(c.stored.chunk.text)),
            )
        budget = req.budget_tokens if req.budget_tokens is not None else cfg.context.budget_tokens
        # Budget 0: results only. Hover and lenses show locations and never read the pack.
        context = (
            assemble.assemble_context(
                ranked,
                budget,
                self.embedder.count_tokens,
                cfg.context.per_file_blocks,
                verdict,
                parent_of=_masked(self._parent_scope),
            )
            if budget > 0
            else ContextPack("", 0, 0)
        )
        results = [_evidence(c) for c in ranked[: req.limit]]
        trace["assemble"] = StageTrace(len(results), _ms(t0))
        git = self.reader.get_meta("commit"), self.reader.get_meta("branch")
        return FindResult(
            query=req.query,
            workspace=str(self.workspace),
            commit=git[0],
            branch=git[1],
            results=results,
            context=context,
            confidence=verdict.confidence,
            insufficient=verdict.insufficient,
            insufficient_reason=verdict.reason,
            trace=trace,
            intent=qa.intent,
            index_mode="read-only" if self.read_only else "read-write",
            notes=notes,
        )


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _lexdoc(sc: StoredChunk) -> LexDoc:
    return LexDoc(sc.id, sc.chunk.path, sc.chunk.symbol, sc.chunk.text)


def _stored_evidence(sc: StoredChunk, reasons: list[str] | None = None) -> Evidence:
    ch = sc.chunk
    return Evidence(
        ch.path,
        ch.start,
        ch.end,
        ch.symbol,
        ch.kind,
        ch.language,
        0.0,
        reasons or [],
        mask_secrets(ch.text),
    )


def _masked(
    parent_of: Callable[[Chunk, int], assemble.Scope | None],
) -> Callable[[Chunk, int], assemble.Scope | None]:
    """The parent scope is read from the store, not from the masked candidates: mask it too."""

    def wrapped(chunk: Chunk, max_lines: int) -> assemble.Scope | None:
        scope = parent_of(chunk, max_lines)
        return None if scope is None else (*scope[:3], mask_secrets(scope[3]))

    return wrapped


def _overlay_stamp(text: str) -> tuple[int, int]:
    """A (size, mtime) pair for an editor buffer: a negative content-derived "mtime" can never
    equal a real one, so closing the buffer makes the disk copy look changed again."""
    digest = hashlib.sha256(text.encode("utf-8", "replace")).digest()
    return len(text), -(int.from_bytes(digest[:7], "big") + 1)


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _evidence(c: Candidate) -> Evidence:
    ch = c.stored.chunk
    scores = {f"{name}_rank": float(rank) for name, rank in c.ranks.items()}
    if "bm25" in c.channel_scores:
        scores["bm25"] = c.channel_scores["bm25"]
    if "vector" in c.channel_scores:
        scores["cosine"] = c.channel_scores["vector"]
    scores.update({"fused": c.fused, "boost": c.boost, "factor": c.factor})
    if c.rerank is not None:
        scores["rerank"] = c.rerank
    if c.cross is not None:
        scores["cross"] = c.cross
    return Evidence(
        path=ch.path,
        start=ch.start,
        end=ch.end,
        symbol=ch.symbol,
        kind=ch.kind,
        language=ch.language,
        score=c.score,
        reasons=list(c.reasons),
        text=ch.text,
        scores=scores,
    )
