"""One workspace folder behind the language server: its engine, its watcher, its index thread.

Index passes run on one worker thread per folder, so the event loop never waits for them;
requests read the last committed index meanwhile (the engine allows that) and say so through
``index_state``. Everything that wants the index updated (watcher batches, editor buffers,
settings, the reindex command) asks for a pass; requests that arrive while one runs are
merged into the next. The session talks to the editor only through a :class:`Reporter`, so it
knows nothing about JSON-RPC.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..api import Evidence, FindRequest, FindResult, IndexReport, Related, Status
from ..engine import Engine
from ..index.indexer import IndexCancelled
from ..live import watch
from ..live.watch import Batch, Debouncer, FolderWatcher, IgnoreFilter
from . import protocol

log = logging.getLogger(__name__)
T = TypeVar("T")

LARGE_READ = 200  # files: a pass reading at least this many shows progress
LARGE_EMBED = 512  # chunks: a pass embedding at least this many shows progress
_STAGE_SPAN = {"read": (0, 45), "lexical": (45, 50), "embed": (50, 99)}


class ProgressHandle(Protocol):
    def report(self, percentage: int, message: str) -> None: ...

    def end(self, message: str) -> None: ...


class Reporter(Protocol):
    """How a session reaches the editor; every method may be called from any thread."""

    def status(self, payload: dict[str, Any]) -> None: ...

    def progress(self, title: str, cancel: threading.Event) -> ProgressHandle | None: ...

    def index_changed(self) -> None: ...


@dataclass(frozen=True, slots=True)
class _Base:
    """The workspace configuration before editor settings: what "auto" and "unset" go back to."""

    budget_tokens: int
    rerank: bool
    exclude: tuple[str, ...]


@dataclass(slots=True)
class _Want:
    """What the next pass must do."""

    progress: bool = False
    reason: str = ""
    head: bool = False
    forced: bool = False  # something besides editor buffers asked: scan even if they match


class FolderSession:
    def __init__(
        self,
        root: Path,
        reporter: Reporter,
        index_dir: Path | None = None,
        quiet_s: float = watch.QUIET_S,
        max_wait_s: float = watch.MAX_WAIT_S,
        trust_other_owner: bool = False,
    ) -> None:
        self.engine = Engine(root, index_dir, trust_other_owner=trust_other_owner)
        self.engine.preload_models()
        self.root = self.engine.workspace
        self.reporter = reporter
        cfg = self.engine.config
        self._base = _Base(cfg.context.budget_tokens, cfg.stages.rerank, tuple(cfg.index.exclude))
        self.default_limit: int | None = None
        # Every engine read (find, lookups, status, meta) runs on this one thread: the engine's
        # sqlite reader connection and its answer cache are shared, unlocked state.
        self._local = threading.local()
        self._reads = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="ce-read", initializer=self._mark_reader
        )
        self._buffers: dict[str, str] = {}
        self._buffers_dirty: set[str] = set()
        self._overlaid: dict[str, str] = {}
        # Buffer edits are numbered; a pass records up to which one it indexed.
        self._buffer_seq = 0
        self._synced_seq = 0
        self._indexed_seq = 0
        self._cond = threading.Condition()
        self._requested = 0
        self._completed = 0
        self._running = 0  # generation of the pass in progress, 0 when idle
        self._want = _Want()
        self._busy = False
        self._stopping = False
        self.last_report: IndexReport | None = None
        self._last_payload: dict[str, Any] | None = None
        self._head = self.indexed_head()
        self._ignore = IgnoreFilter(self.root, self.engine.git)
        self._cancel: threading.Event | None = None  # set while a pass runs: close() cancels it
        self._debouncer = Debouncer(self._on_batch, quiet_s, max_wait_s)
        self.watcher = FolderWatcher(
            self.root, self._debouncer, self.engine.git, skip=[self.engine.index_dir]
        )
        self._worker = threading.Thread(target=self._run, name="ce-index", daemon=True)

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        """Start watching and run the first pass (with progress: it may take minutes)."""
        if not self.engine.read_only:
            self.watcher.start()
        self._worker.start()
        self.request_pass("initial index", progress=True)

    def close(self) -> None:
        """Stop watching, cancel a running pass (what it committed stays) and release the
        index: an editor closing must not wait for an hour of embedding."""
        with self._cond:
            self._stopping = True
            if self._cancel is not None:
                self._cancel.set()
            self._cond.notify_all()
        self.watcher.stop()
        self._debouncer.close()
        if self._worker.is_alive():
            self._worker.join(timeout=30)
        self._reads.shutdown(wait=True, cancel_futures=True)
        self.engine.close()

    @property
    def generation(self) -> int:
        """Completed passes: a cache key for anything derived from the index."""
        return self._completed

    def index_state(self) -> str:
        return "indexing" if self._busy else self.engine.state

    # -- editor buffers and settings --------------------------------------------------
    def set_buffer(self, rel: str, text: str | None) -> None:
        """An open document's text (None: closed). Indexed at the next (debounced) pass, and
        only when it differs from the disk copy."""
        with self._cond:
            if text is None:
                self._buffers.pop(rel, None)
            else:
                self._buffers[rel] = text
            self._buffers_dirty.add(rel)
            self._buffer_seq += 1
        self._debouncer.add(buffers=True)

    def buffer(self, rel: str) -> str | None:
        return self._buffers.get(rel)

    def wait_for_buffers(self, timeout: float) -> bool:
        """Wait until every buffer edit made so far is indexed (or ``timeout`` passes)."""
        with self._cond:
            seq = self._buffer_seq
            if self._indexed_seq >= seq:
                return True
        self.request_pass("editor buffers changed", buffers_only=True)
        return self._wait(lambda: self._indexed_seq >= seq, timeout)

    def apply_settings(self, s: protocol.Settings) -> None:
        cfg = self.engine.config
        exclude = (*self._base.exclude, *s.exclude)
        self.engine.configure(
            cfg.changed(
                context={"budget_tokens": s.budget_tokens or self._base.budget_tokens},
                stages={"rerank": self._base.rerank if s.rerank == "auto" else s.rerank == "on"},
                index={"exclude": exclude},
            )
        )
        self.default_limit = s.limit
        if exclude != tuple(cfg.index.exclude):
            self.request_pass("exclude setting changed")

    # -- passes ----------------------------------------------------------------
    def request_pass(
        self, reason: str, progress: bool = False, head: bool = False, buffers_only: bool = False
    ) -> int:
        """Ask for a pass; returns the generation that will include this request.
        ``buffers_only``: skip the pass when no editor buffer differs from what is indexed."""
        with self._cond:
            # A pass already running may have read the tree before this change: only a pass
            # that starts after now includes it.
            self._requested = max(self._requested, max(self._running, self._completed) + 1)
            self._want.progress |= progress
            self._want.head |= head
            self._want.forced |= not buffers_only
            if not self._want.reason or progress:
                self._want.reason = reason
            self._cond.notify_all()
            return self._requested

    def wait_for(self, generation: int, timeout: float) -> bool:
        return self._wait(lambda: self._completed >= generation, timeout)

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Block on the session's condition until ``done()`` holds (checked under its lock),
        the session stops, or ``timeout`` seconds pass; returns ``done()``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done() and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return done()

    def _on_batch(self, batch: Batch) -> None:
        paths = self._ignore.relevant(batch.paths) if batch.paths else []
        log.debug(
            "batch: %d events, %d paths (%d relevant), head=%s, buffers=%s",
            batch.events,
            len(batch.paths),
            len(paths),
            batch.head,
            batch.buffers,
        )
        if batch.head:
            self.request_pass("git HEAD changed", head=True)
        elif paths:
            self.request_pass(f"{len(paths)} file(s) changed on disk")
        elif batch.buffers and self._buffers_dirty:
            self.request_pass("editor buffers changed", buffers_only=True)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._requested <= self._completed and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                target = self._requested
                want, self._want = self._want, _Want()
                self._busy = True
                self._running = target
            try:
                self._pass(want)
            except Exception as exc:  # never let the worker die: report and wait for more
                log.exception("index pass failed")
                self._send(self._payload("error", f"indexing failed: {exc}"))
            finally:
                with self._cond:
                    self._busy = False
                    self._running = 0
                    self._cancel = None
                    self._indexed_seq = max(self._indexed_seq, self._synced_seq)
                    self._completed = max(self._completed, target)
                    self._cond.notify_all()

    def _sync_overlays(self) -> bool:
        """Hand changed editor buffers to the engine; True when an overlay changed."""
        with self._cond:
            dirty, self._buffers_dirty = self._buffers_dirty, set()
            buffers = {rel: self._buffers.get(rel) for rel in dirty}
            self._synced_seq = self._buffer_seq
            open_files = list(self._buffers)
        self.engine.set_focus(open_files)  # their neighbourhood gets its vectors first
        changed = False
        for rel, text in buffers.items():
            if text is not None:
                text = _normalise(text)
            want = None if text is None or text == _read_disk(self.root / rel) else text
            if self._overlaid.get(rel) == want:
                continue
            try:
                self.engine.set_overlay(rel, want)
            except Exception as exc:  # a path the engine refuses: skip that buffer
                log.warning("buffer %s not indexed: %s", rel, exc)
                continue
            if want is None:
                self._overlaid.pop(rel, None)
            else:
                self._overlaid[rel] = want
            changed = True
        return changed

    def _pass(self, want: _Want) -> None:
        log.debug("pass: %s (forced=%s, head=%s)", want.reason, want.forced, want.head)
        overlays_changed = self._sync_overlays()
        if not want.forced and not overlays_changed:
            return  # opened or saved a buffer identical to the disk copy: nothing to index
        if self.engine.read_only:
            msg = "another process holds the index writer lock: answering from its index"
            self._send(self._payload(self.engine.state, msg))
            return
        before = self._last_payload or self._payload("indexing", want.reason)
        self._send({**before, "state": "indexing", "message": want.reason})
        cancel = threading.Event()
        with self._cond:
            if self._stopping:
                return
            self._cancel = cancel
        tracker = _ProgressTracker(self.reporter, cancel, want.progress, self.root.name)
        try:
            report = self.engine.index(tracker, cancel)
        except IndexCancelled:
            tracker.end("cancelled")
            msg = "indexing cancelled; the index keeps what it had (codeEvidence.reindex resumes)"
            self._send(self._payload(self.engine.state, msg))
            return
        except Exception:
            tracker.end("failed")
            raise
        self.last_report = report
        log.debug("pass done: %s", report)
        status = self.read_status()
        head = self.indexed_head()
        msg = _describe(report, want.reason)
        if head != self._head and self._head != (None, None):
            msg = f"HEAD moved to {_where(*head)} (was {_where(*self._head)}): {msg}"
        self._head = head
        tracker.end(msg)
        self._send(self._payload(self.engine.state, msg, status))
        if report.files_changed or report.files_removed or report.embedded or report.chunks_added:
            self.reporter.index_changed()

    # -- status ----------------------------------------------------------------
    def _payload(self, state: str, message: str, status: Any = None) -> dict[str, Any]:
        if status is None:
            status = self.read_status()
        return protocol.status_payload(
            self.root,
            state,
            message,
            status,
            self.last_report,
            self.engine.config.stages.vectors,
        )

    def status_payload(self) -> dict[str, Any]:
        msg = (self._last_payload or {}).get("message") or ""
        if self.watcher.error:
            msg = f"{msg}; {self.watcher.error}" if msg else self.watcher.error
        return self._payload(self.index_state(), msg)

    def _send(self, payload: dict[str, Any]) -> None:
        if self.watcher.error and self.watcher.error not in payload["message"]:
            payload = {**payload, "message": f"{payload['message']}; {self.watcher.error}"}
        if payload == self._last_payload:
            return
        self._last_payload = payload
        self.reporter.status(payload)

    # -- reads -------------------------------------------------------------------
    def _mark_reader(self) -> None:
        self._local.reader = True

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn`` on the read thread (await it with ``asyncio.wrap_future``)."""
        return self._reads.submit(fn, *args)

    def _on_reader(self, fn: Callable[..., T], *args: Any) -> T:
        if getattr(self._local, "reader", False):
            return fn(*args)
        return self._reads.submit(fn, *args).result()

    def exists(self, rel: str) -> bool:
        return rel in self._buffers or (self.root / rel).is_file()

    def find(self, req: FindRequest) -> FindResult:
        """The engine's answer from the committed index (files deleted since the last pass
        are already left out by the engine)."""
        return self._on_reader(self.engine.find, req, False)

    def related(self, rel: str, line: int, name: str | None = None) -> Related:
        """What hover and code lenses show at ``rel:line`` (see ``Engine.related``)."""
        return self._on_reader(self.engine.related, rel, line, name)

    def find_as_of(self, req: FindRequest, ref: str) -> FindResult:
        """An answer from the code at ``ref`` (a snapshot indexed in the cache; the working
        tree and this folder's index are not touched)."""
        return self._on_reader(self.engine.find_as_of, req, ref)

    def read_status(self) -> Status:
        return self._on_reader(self.engine.status)

    def indexed_head(self) -> tuple[str | None, str | None]:
        """(commit, branch) the index was last brought to."""
        return self._on_reader(self.engine.indexed_head)

    def outline(self, rel: str) -> list[Evidence]:
        return self._on_reader(self.engine.outline, rel)


class _ProgressTracker:
    """The engine's progress callback as ``$/progress``: begun eagerly for an initial or
    requested pass, lazily once a pass turns out large; percentages only rise."""

    def __init__(self, reporter: Reporter, cancel: threading.Event, eager: bool, name: str) -> None:
        self.reporter = reporter
        self.cancel = cancel
        self.title = f"Code Evidence: indexing {name}"
        self.handle: ProgressHandle | None = None
        self.started = False
        self.pct = 0
        self._last = 0.0
        if eager:
            self._begin()

    def _begin(self) -> None:
        self.started = True
        self.handle = self.reporter.progress(self.title, self.cancel)

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.started and (
            (stage == "read" and total >= LARGE_READ) or (stage == "embed" and total >= LARGE_EMBED)
        ):
            self._begin()
        if self.handle is None:
            return
        lo, hi = _STAGE_SPAN.get(stage, (0, 99))
        pct = lo + (hi - lo) * done // max(total, 1)
        now = time.monotonic()
        if pct <= self.pct or (now - self._last < 0.2 and done < total):
            return
        self.pct, self._last = pct, now
        noun = {"read": "files read", "lexical": "text index", "embed": "chunks embedded"}
        self.handle.report(pct, f"{noun.get(stage, stage)}: {done}/{total}")

    def end(self, message: str) -> None:
        if self.handle is not None:
            self.handle.end(message)
            self.handle = None


def _describe(report: IndexReport, reason: str) -> str:
    if report.cancelled:
        return f"stopped early: {report.embedded} chunks embedded; the rest waits"
    if not (report.files_changed or report.files_removed or report.chunks_added):
        return f"{reason}: up to date" if reason else "up to date"
    return (
        f"{report.files_changed} file(s) changed, {report.files_removed} removed; "
        f"{report.chunks_added} chunk(s) added, {report.embedded} embedded "
        f"({report.vectors_from_cache} from cache) in {report.ms / 1000:.1f}s"
    )


def _where(commit: str | None, branch: str | None) -> str:
    return f"{branch or 'detached'}@{(commit or 'no commit')[:10]}"


def _read_disk(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return _normalise(data.decode("utf-8", "replace"))


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
