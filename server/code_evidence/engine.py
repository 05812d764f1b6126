"""The engine: one API (index, find, related, status, lookups) over one workspace, which the
CLI, the language server and the benchmarks all call.

It owns the workspace's index folder and the writer lock on it, and delegates: opening and
repair to ``index/parts.py``, the index pass to ``index/indexer.py``, the answer to
``search/pipeline.py``. What it adds is what a long-lived host needs around them: request
limits, an answer cache keyed by everything an answer depends on, editor buffers and focus,
and an immutable configuration swapped in whole.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .api import (
    MAX_PASTE_CHARS,
    MAX_QUERY_CHARS,
    ChangedWith,
    EngineError,
    Evidence,
    FindRequest,
    FindResult,
    IndexReport,
    Related,
    RequestControl,
    StageTiming,
    Status,
    check_line,
    checked,
)
from .config import (
    CONFIG_FILE,
    Config,
    ConfigError,
    describe_tuned,
    load_config,
    load_config_or_defaults,
    read_tuned,
)
from .git import Git
from .index import snapshot
from .index.editor import EditorState
from .index.folder import IndexFolder, IndexWriteError
from .index.indexer import Indexer, Progress
from .index.lexical import LexicalView
from .index.parts import IndexParts, PartsUnavailable
from .index.plan import vector_target
from .index.status import Holder, read_status
from .index.store import Store
from .models import crossencoder
from .models.embed_cache import EmbeddingCache
from .models.embedder import Embedder, shared_embedder
from .paths import cache_root, changed_paths, default_index_dir, resolve_workspace_path
from .requestlog import RequestLog
from .search import pipeline
from .search.answers import Answers, answer_key, drop_deleted
from .search.lookups import Lookups
from .search.pipeline import SearchIndex
from .search.query import read_paste

if TYPE_CHECKING:
    from .models.cluster import EmbeddingPool


class Engine:
    def __init__(
        self,
        workspace: Path | str,
        index_dir: Path | str | None = None,
        config: Config | None = None,
        embedder: Embedder | None = None,
        trust_other_owner: bool = False,
        use_git: bool = True,
        bad_config: str = "raise",
    ) -> None:
        """``trust_other_owner``: the user's opt-in to run git in a repository another user
        owns (never read from the repository). ``use_git=False``: a folder this project wrote
        (a snapshot, a replay), indexed as a plain folder. ``bad_config="defaults"``: a
        ``.code-evidence.toml`` that does not hold is ignored whole (``config_error`` says
        why) instead of raising :class:`ConfigError` (a long-running host must keep
        serving)."""
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
        self.config_error: str | None = None
        if config is None and bad_config == "defaults":
            config, self.config_error = load_config_or_defaults(self.workspace, self.tuned)
        self.config = config or load_config(self.workspace, self.tuned.get("ranking"))
        self.notes: list[str] = [self.git.refusal] if self.git.refusal else []
        if self.config_error:
            self.notes.append(self.config_error)
        self.folder = IndexFolder(self.index_dir)
        self.notes.extend(self.folder.notes)
        self._embedder = embedder
        self._cache: EmbeddingCache | None = None
        # One index pass at a time; requests do not take this lock: they read the last
        # committed state through their own connection while a pass runs.
        self._index_lock = threading.Lock()
        self._indexing = False
        self.editor = EditorState(self.workspace)
        self._answers = Answers()
        self.requests = RequestLog(self.index_dir / "requests.jsonl")
        try:
            self.parts = IndexParts(
                self.index_dir,
                self.folder.read_only,
                lambda: self.cache,
                lambda: self.embedder.model_id,
            )
        except PartsUnavailable as exc:
            raise EngineError(str(exc)) from exc
        self.notes.extend(self.parts.notes)
        self.read_only = self.folder.read_only or self.parts.read_only
        self._indexer = Indexer(self.workspace, self.git, self.parts)
        self._lookups = Lookups(lambda: self.parts.reader, self.editor.exists)

    @property
    def locked_by_other(self) -> bool:
        """Another process holds the index's writer lock: this one only reads."""
        return self.folder.locked_by_other

    # -- resources -------------------------------------------------------------------------
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

    @property
    def reader(self) -> Store:
        """This thread's reading connection to the store (what requests read while a pass
        writes; see ``IndexParts.reader``)."""
        return self.parts.reader

    def snapshot(self) -> AbstractContextManager[Store]:
        """Reads inside the block see one committed index state (see ``Store.snapshot``):
        every engine read takes one, so a request on any thread is never half before and half
        after a pass. Nested blocks share the outermost."""
        return self.parts.reader.snapshot()

    def close(self) -> None:
        with self._index_lock:
            if self._cache is not None:
                self._cache.close()
            self.parts.close()
            self.folder.release()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- configuration and editor state -----------------------------------------------------
    def configure(self, config: Config) -> None:
        """Swap in a new configuration (immutable: a request already running keeps its own)."""
        self.config = config

    def reload_config(self) -> str | None:
        """``.code-evidence.toml`` changed: apply it. One that does not hold changes nothing
        (the last good settings stay); the returned reason is also a note on every answer
        until the file is fixed, so an agent that never sees a log learns it too."""
        if self.config_error:
            self.notes.remove(self.config_error)
            self.config_error = None
        try:
            config = load_config(self.workspace, self.tuned.get("ranking"))
        except ConfigError as exc:
            self.config_error = (
                f"{CONFIG_FILE} not applied: {exc}; the last good settings stay in use until "
                "it is fixed"
            )
            self.notes.append(self.config_error)
            return self.config_error
        self.configure(config)
        return None

    @contextmanager
    def with_config(self, config: Config) -> Iterator[Engine]:
        """Run under ``config`` for the duration of the block, then the previous one again."""
        previous, self.config = self.config, config
        try:
            yield self
        finally:
            self.config = previous

    def set_overlay(self, path: str, text: str | None) -> None:
        """Search ``text`` instead of the disk copy of ``path`` (an editor's unsaved buffer);
        ``None`` goes back to the disk copy. Takes effect at the next index pass."""
        self.editor.set_overlay(self._relative(path), text)

    def set_focus(self, paths: Iterable[str]) -> None:
        """The files open in the editor (``index/editor.py``)."""
        self.editor.set_focus(paths)

    def _relative(self, path: str) -> str:
        try:
            return resolve_workspace_path(self.workspace, path)
        except ValueError as exc:
            raise EngineError(str(exc)) from exc

    # -- indexing ---------------------------------------------------------------------------
    @property
    def state(self) -> str:
        """``indexing`` while a pass runs; ``partial`` while chunks still lack vectors (answers
        come from BM25 and structure for those); ``ready`` otherwise."""
        return self._state(len(self.parts.vectors))

    def _state(self, vectors: int) -> str:
        """:attr:`state` for ``vectors`` vectors in: a status reports the state of the same
        count it shows (a pass can add vectors between two reads of the count)."""
        if self._indexing:
            return "indexing"
        if self.config.stages.vectors and vectors < vector_target(self.reader):
            return "partial"
        return "ready"

    def index(
        self,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        pool: EmbeddingPool | None = None,
        paths: Iterable[str] | None = None,
    ) -> IndexReport:
        """Bring the index up to date with the working tree (and editor overlays): only changed
        files are read, only new chunk texts are embedded. ``cancel`` stops the pass early:
        before the store is written nothing changes; during embedding, what was embedded
        stays and the rest waits for the next pass. ``pool``: Ray actors embed instead of this
        process (``index --cluster``, docs/cluster.md). ``paths``: the workspace-relative files
        known to have changed (a watcher's events): only they are looked at, unless the pass
        finds it must scan everything (HEAD moved, ignore rules changed, a folder moved)."""
        with self._index_lock, self.folder.writing():
            self._indexing = True
            try:
                only = None if paths is None else changed_paths(self.workspace, paths)
                job = self.editor.pass_input(self.config, only)
                return self._indexer.run(
                    job, lambda: self.embedder, lambda: self.cache, progress, cancel, pool
                )
            finally:
                self._indexing = False

    def embedding_texts(self) -> list[str]:
        """What ``cache export`` ships (``IndexParts.embedding_texts``)."""
        with self.snapshot():
            return self.parts.embedding_texts()

    def refresh(self, progress: Progress | None = None) -> tuple[IndexReport | None, list[str]]:
        """An index pass before answering, when this process may write; a note instead of an
        error when the file system takes no writes (the committed index still answers)."""
        if self.read_only:
            return None, []
        try:
            return self.index(progress), []
        except IndexWriteError as exc:
            return None, [f"{exc}; answering from the index as it was last committed"]

    def status(self, scan: bool = True) -> Status:
        """Where the index stands (``index/status.py``); ``scan`` False skips listing the
        workspace (after a pass over the files the watcher saw change)."""
        with self.snapshot() as reader:
            vectors = len(self.parts.vectors)
            holder = Holder(
                self.workspace,
                self.index_dir,
                vectors,
                self.locked_by_other,
                self._state(vectors),
                describe_tuned(self.tuned),
            )
            return read_status(holder, reader, self.git, self.config, scan)

    def indexed_head(self) -> tuple[str | None, str | None]:
        """(commit, branch) the index was last brought to."""
        with self.snapshot() as reader:
            return reader.get_meta("commit"), reader.get_meta("branch")

    # -- lookups for editor features (hover, code lens) ---------------------------------------
    def outline(self, path: str) -> list[Evidence]:
        """The chunks of one file in line order: where lenses go."""
        with self.snapshot():
            return self._lookups.outline(path)

    def symbol_at(self, path: str, line: int) -> Evidence | None:
        with self.snapshot():
            return self._lookups.symbol_at(path, line)

    def changed_with(self, path: str) -> list[ChangedWith]:
        """The files the git history changed together with ``path``, strongest first (the
        file lens; ``related_code``'s ``changed_with``)."""
        with self.snapshot():
            return self._lookups.changed_with(self._relative(path))

    def definitions(self, name: str, limit: int = 5) -> list[Evidence]:
        with self.snapshot():
            return self._lookups.definitions(name, limit)

    def callers(self, name: str, limit: int = 10) -> list[Evidence]:
        with self.snapshot():
            return self._lookups.callers(name, limit)

    def caller_counts(self, names: list[str]) -> dict[str, int]:
        with self.snapshot() as reader:
            return reader.caller_counts(names)

    def related(
        self, path: str, line: int, name: str | None = None, extra: bool = False
    ) -> Related:
        """What hover and code lenses show at ``path:line`` (1-based), with ``extra`` the
        callees and tests too: see :meth:`search.lookups.Lookups.related`."""
        check_line(line)
        rel = self._relative(path)
        with self.snapshot():
            return self._lookups.related(
                rel, line, name, lambda req: self.find(req, refresh=False), extra
            )

    # -- find -------------------------------------------------------------------------------
    def find(
        self, req: FindRequest, refresh: bool = True, control: RequestControl | None = None
    ) -> FindResult:
        """The answer to ``req``: with ``refresh``, the index is brought up to date first;
        ``control`` is how a host steers it while it runs (``api.RequestControl``: cancelled,
        it raises :class:`~.api.RequestCancelled`)."""
        read: list[str] = []
        if isinstance(req.query, str) and len(req.query) > MAX_QUERY_CHARS:
            # A log or a tracker's report too long to keep whole: read it before the cut, so
            # what is cut is the failure's text and not a prefix, a record or the report's start.
            text, read = read_paste(req.query[-MAX_PASTE_CHARS:])
            req = dataclasses.replace(req, query=text)
        req, cut = checked(req)
        notes = [*self.notes, *read, *cut]
        open_file = self._relative(req.open_file) if req.open_file else None
        timings: dict[str, StageTiming] = {}
        if self._indexing:
            notes.append("an index pass is running: answering from what is committed")
        if refresh and not self.read_only:
            t0 = time.perf_counter()
            report, more = self.refresh()
            notes.extend(more)
            changed = report.files_changed + report.files_removed if report else 0
            timings["refresh"] = StageTiming(changed, (time.perf_counter() - t0) * 1000)
        with self.parts.consistent() as lexical:
            result = self._answer(req, open_file, timings, notes, control, lexical)
        # Callers may edit what they get (drop results, add notes); the cache keeps its own.
        return drop_deleted(
            dataclasses.replace(result, results=list(result.results), notes=list(notes)),
            self.editor.exists,
        )

    def _answer(
        self,
        req: FindRequest,
        open_file: str | None,
        timings: dict[str, StageTiming],
        notes: list[str],
        control: RequestControl | None,
        lexical: LexicalView,
    ) -> FindResult:
        """From the answer cache, else from the pipeline (inside the caller's snapshot, BM25
        read through ``lexical``, the view that goes with it)."""
        cfg = self.config
        key = answer_key(self.reader, len(self.parts.vectors), req, open_file, cfg)

        def compute() -> FindResult:
            index = self._search_index(cfg, lexical)
            result = pipeline.answer(req, open_file, cfg, index, timings, notes, control)
            if not self.read_only:
                self.requests.record(result, open_file, req.line)
            return result

        def keep(result: FindResult) -> bool:  # mid-pass or degraded: never keep them
            damaged = self.parts.repair_lexical_if_damaged(result.notes, self._index_lock)
            return not self._indexing and not damaged

        return self._answers.answer(key, compute, keep, timings, notes)

    def _search_index(self, cfg: Config, lexical: LexicalView) -> SearchIndex:
        vectors_on = cfg.stages.vectors
        return SearchIndex(
            workspace=str(self.workspace),
            reader=self.reader,
            lexical=lexical,
            vectors=self.parts.vectors if vectors_on else None,
            embedder=self.embedder,
            cache=self.cache if vectors_on else None,
            scores=self._answers.scores,
            read_only=self.read_only,
        )

    def find_as_of(self, req: FindRequest, ref: str) -> FindResult:
        """Answer from the code as it was at ``ref``: a snapshot of that commit indexed in the
        cache (never the user's working tree), its chunks embedded through the shared cache."""
        try:
            sha, tree = snapshot.snapshot(self.git, ref, cache_root())
        except snapshot.SnapshotError as exc:
            raise EngineError(str(exc)) from exc
        with Engine(
            tree, tree.parent / "index", config=self.config, embedder=self._embedder, use_git=False
        ) as past:
            result = past.find(req)
        result.workspace = str(self.workspace)
        result.commit, result.branch = sha, None
        result.notes = [f"answered as of {ref} ({sha[:12]}), not the working tree", *result.notes]
        return result

    def forget_answers(self) -> None:
        """Drop cached answers and cross-encoder scores (benchmarks time each configuration
        from cold)."""
        self._answers.forget()

    def preload_models(self) -> None:
        """For long-running hosts (the language server): load the cross-encoder now, in the
        background, instead of inside the first question's latency budget."""
        if self.config.stages.rerank and self.config.ranking.reranker == "cross-encoder":
            crossencoder.preload(crossencoder.MODEL_PATH, self.config.ranking.rerank_threads)
