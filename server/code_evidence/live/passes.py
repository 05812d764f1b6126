"""Live indexing of one workspace folder: the pass scheduler, owned by no shell.

A long-lived host (the language server today, the MCP server next) keeps an index fresh while
the user works: the watcher's batches, editor buffers, settings and explicit requests all ask
for an index pass, and one worker thread runs them one at a time, so the host's own threads
never wait for one. Requests that arrive while a pass runs are merged into the next; a request
is numbered (its *generation*) so a caller can wait until a pass that includes it is done.

The scheduler knows nothing of JSON-RPC or of any host's wire format. It reports through a
:class:`PassReporter`: a neutral :class:`PassStatus` at each turn of a pass (the host builds
its own notification from it, with whatever counts it wants to read), a progress handle for a
long pass, and a signal that the index changed (so derived views can refresh).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from ..api import IndexReport
from ..config import CONFIG_FILE
from ..engine import Engine
from ..index.indexer import IndexCancelled
from ..index.load import normalise_newlines
from ..paths import WATCH_PROBE
from .watch import (
    EVENT_LATENCY_S,
    MAX_WAIT_S,
    QUIET_S,
    Batch,
    Clock,
    Debouncer,
    FolderWatcher,
    IgnoreFilter,
)

log = logging.getLogger(__name__)

LARGE_READ = 200  # files: a pass reading at least this many shows progress
LARGE_EMBED = 512  # chunks: a pass embedding at least this many shows progress
_STAGE_SPAN = {"read": (0, 45), "lexical": (45, 50), "embed": (50, 99)}
_STAGE_NOUN = {"read": "files read", "lexical": "text index", "embed": "chunks embedded"}

Head = tuple[str | None, str | None]  # (commit, branch) the index was brought to
# What happened: a pass began; it finished; it was cancelled; it failed; or it could not run
# because another process holds the index writer lock.
PassEvent = Literal["started", "done", "cancelled", "failed", "read-only"]


@dataclass(frozen=True, slots=True)
class PassStatus:
    """One turn of the scheduler, for the host to show."""

    event: PassEvent
    state: str  # "indexing", "partial", "ready" (Engine.state) or "error" (the pass failed)
    message: str  # one line for the user: why the pass ran and what it did
    last_pass: IndexReport | None  # the last pass that completed, if any
    watch_error: str | None  # file watching is unavailable, and why
    # False after a pass over the watcher's paths: the host should not list the workspace to
    # count pending files either (the watcher reported every change; the pass took them all).
    scanned: bool = True


class ProgressHandle(Protocol):
    """One long pass's progress, as the host shows it; percentages only rise."""

    def report(self, percentage: int, message: str) -> None: ...

    def end(self, message: str) -> None: ...


class PassReporter(Protocol):
    """How the scheduler reaches its host; every method is called from the worker thread."""

    def status(self, status: PassStatus) -> None: ...

    def progress(self, title: str, cancel: threading.Event) -> ProgressHandle | None:
        """Begin showing a pass's progress; setting ``cancel`` stops the pass. ``None``: the
        host shows none."""
        ...

    def index_changed(self) -> None: ...


@dataclass(slots=True)
class _Want:
    """What the next pass must do."""

    progress: bool = False
    reason: str = ""
    head: bool = False
    forced: bool = False  # something besides editor buffers asked: scan even if they match
    full: bool = False  # scan the whole workspace; otherwise look only at ``paths``
    paths: set[str] = field(default_factory=set)  # files the watcher saw change


class PassScheduler:
    """Index passes for one folder: its watcher, its editor buffers and its worker thread."""

    def __init__(
        self,
        engine: Engine,
        reporter: PassReporter,
        indexed_head: Callable[[], Head] | None = None,
        quiet_s: float = QUIET_S,
        max_wait_s: float = MAX_WAIT_S,
        clock: Clock | None = None,
        on_config_change: Callable[[], None] | None = None,
    ) -> None:
        """``indexed_head``: how the host reads ``Engine.indexed_head`` (on its read thread,
        if it keeps one); ``clock``: the debouncer's (see ``watch.Clock``);
        ``on_config_change``: called (on the watcher's thread) when the folder's
        ``.code-evidence.toml`` was written, created or deleted."""
        self._on_config_change = on_config_change
        self.engine = engine
        self.root = engine.workspace
        self.reporter = reporter
        self._read_head = indexed_head or engine.indexed_head
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
        # Passes whose text part (store, BM25, structure) is committed: a pass still embedding
        # already answers from it.
        self._searchable = 0
        self.progress_pct: int | None = None  # the running pass's progress, when it shows any
        self._running = 0  # generation of the pass in progress, 0 when idle
        self._want = _Want()
        self._busy = False
        self._stopping = False
        self.last_report: IndexReport | None = None
        self._head = self._read_head()
        self._ignore = IgnoreFilter(self.root, engine.git)
        self._cancel: threading.Event | None = None  # set while a pass runs: close() cancels it
        self._debouncer = Debouncer(self._on_batch, quiet_s, max_wait_s, clock)
        self.watcher = FolderWatcher(
            self.root,
            self._debouncer,
            engine.git,
            skip=[engine.index_dir],
            probe_dir=engine.index_dir / WATCH_PROBE,
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
        """Stop watching and cancel a running pass (what it committed stays): a host closing
        must not wait for an hour of embedding. The engine stays open: it is the host's."""
        with self._cond:
            self._stopping = True
            if self._cancel is not None:
                self._cancel.set()
            self._cond.notify_all()
        self.watcher.stop()
        self._debouncer.close()
        if self._worker.is_alive():
            self._worker.join(timeout=30)

    @property
    def generation(self) -> int:
        """Completed passes: a cache key for anything derived from the index."""
        return self._completed

    @property
    def watch_error(self) -> str | None:
        """Why file watching is unavailable (then only saves and requests trigger passes)."""
        return self.watcher.error

    def index_state(self) -> str:
        return "indexing" if self._busy else self.engine.state

    # -- editor buffers ----------------------------------------------------------
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

    # -- passes ----------------------------------------------------------------
    def request_pass(
        self,
        reason: str,
        progress: bool = False,
        head: bool = False,
        buffers_only: bool = False,
        paths: Iterable[str] | None = None,
    ) -> int:
        """Ask for a pass; returns the generation that will include this request.
        ``buffers_only``: skip the pass when no editor buffer differs from what is indexed.
        ``paths``: only these workspace-relative files changed (the pass stats them instead
        of scanning the workspace); otherwise the pass scans everything."""
        with self._cond:
            if paths is not None:
                self._want.paths.update(paths)
            elif not buffers_only:
                self._want.full = True
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

    def settle(self, timeout: float) -> bool:
        """Wait until every change seen so far is searchable: changes the watcher is still
        debouncing are handed over now, and a pass that includes them must have committed its
        text part (files, BM25, structure; embedding may go on). ``timeout`` bounds the wait;
        True when nothing is left to wait for. A host that answers questions about code an
        agent just edited calls this first; an editor waits for its own buffers instead.
        While the folder is watched it first gives a write made just before the question
        time to reach the watcher (``FolderWatcher.fence``, else ``EVENT_LATENCY_S``): the
        agent's edit and its question race, and the question used to win often enough to
        answer from the file as it was."""
        deadline = time.monotonic() + timeout
        if self.watcher.watching and not self.watcher.fence():
            time.sleep(EVENT_LATENCY_S)
        batch = self._debouncer.take(max(deadline - time.monotonic(), 0.0))
        if batch is not None:
            self._on_batch(batch)
        with self._cond:
            target = self._requested if self._requested > self._searchable else 0
        if not target:
            return True
        return self._wait(lambda: self._searchable >= target, deadline - time.monotonic())

    def _wait(self, done: Callable[[], bool], timeout: float) -> bool:
        """Block on the scheduler's condition until ``done()`` holds (checked under its lock),
        the scheduler stops, or ``timeout`` seconds pass; returns ``done()``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done() and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return done()

    def _on_batch(self, batch: Batch) -> None:
        if self._on_config_change is not None and str(self.root / CONFIG_FILE) in batch.paths:
            self._on_config_change()  # it requests the pass the new settings need
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
            self.request_pass(f"{len(paths)} file(s) changed on disk", paths=paths)
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
                self.progress_pct = None
            try:
                self._pass(want, target)
            except Exception as exc:  # never let the worker die: report and wait for more
                log.exception("index pass failed")
                self._report("failed", "error", f"indexing failed: {exc}")
            finally:
                with self._cond:
                    self._busy = False
                    self._running = 0
                    self._cancel = None
                    self._indexed_seq = max(self._indexed_seq, self._synced_seq)
                    self._completed = max(self._completed, target)
                    self._searchable = max(self._searchable, target)
                    self.progress_pct = None
                    self._cond.notify_all()

    def _sync_overlays(self) -> set[str]:
        """Hand changed editor buffers to the engine; returns the paths whose overlay changed."""
        with self._cond:
            dirty, self._buffers_dirty = self._buffers_dirty, set()
            buffers = {rel: self._buffers.get(rel) for rel in dirty}
            self._synced_seq = self._buffer_seq
            open_files = list(self._buffers)
        self.engine.set_focus(open_files)  # their neighbourhood gets its vectors first
        changed: set[str] = set()
        for rel, text in buffers.items():
            if text is not None:
                text = normalise_newlines(text)
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
            changed.add(rel)
        return changed

    def _searchable_now(self, generation: int) -> None:
        """The running pass committed its text part (what is left is embedding)."""
        with self._cond:
            self._searchable = max(self._searchable, generation)
            self._cond.notify_all()

    def _progress(self, pct: int) -> None:
        self.progress_pct = pct

    def _pass(self, want: _Want, generation: int) -> None:
        log.debug("pass: %s (forced=%s, head=%s)", want.reason, want.forced, want.head)
        overlays_changed = self._sync_overlays()
        if not want.forced and not overlays_changed:
            return  # opened or saved a buffer identical to the disk copy: nothing to index
        if self.engine.read_only:
            msg = "another process holds the index writer lock: answering from its index"
            self._report("read-only", self.engine.state, msg)
            return
        self._report("started", "indexing", want.reason)
        cancel = threading.Event()
        with self._cond:
            if self._stopping:
                return
            self._cancel = cancel
        tracker = _ProgressTracker(
            self.reporter,
            cancel,
            want.progress,
            self.root.name,
            on_searchable=lambda: self._searchable_now(generation),
            on_progress=self._progress,
        )
        try:
            # The watcher's paths and the changed buffers are all that moved, unless something
            # asked for a full scan (start, HEAD, settings, a save without a watcher).
            paths = None if want.full else want.paths | overlays_changed
            report = self.engine.index(tracker, cancel, paths=paths)
        except IndexCancelled:
            tracker.end("cancelled")
            msg = "indexing cancelled; the index keeps what it had (codeEvidence.reindex resumes)"
            self._report("cancelled", self.engine.state, msg)
            return
        except Exception:
            tracker.end("failed")
            raise
        self.last_report = report
        log.debug("pass done: %s", report)
        head = self._read_head()
        msg = _describe(report, want.reason)
        if head != self._head and self._head != (None, None):
            msg = f"HEAD moved to {_where(*head)} (was {_where(*self._head)}): {msg}"
        self._head = head
        tracker.end(msg)
        self._report("done", self.engine.state, msg, scanned=paths is None)
        if report.files_changed or report.files_removed or report.embedded or report.chunks_added:
            self.reporter.index_changed()

    def _report(self, event: PassEvent, state: str, message: str, scanned: bool = True) -> None:
        status = PassStatus(event, state, message, self.last_report, self.watch_error, scanned)
        self.reporter.status(status)


class _ProgressTracker:
    """The engine's progress callback as a host's progress handle: begun eagerly for an
    initial or requested pass, lazily once a pass turns out large; percentages only rise."""

    def __init__(
        self,
        reporter: PassReporter,
        cancel: threading.Event,
        eager: bool,
        name: str,
        on_searchable: Callable[[], None] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> None:
        """``on_searchable``: called once, when the text part is committed (BM25 done, or
        embedding begun); ``on_progress``: every percentage, shown or not."""
        self.on_searchable = on_searchable
        self.on_progress = on_progress
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
        text_done = stage == "embed" or (stage == "lexical" and done >= total)
        if text_done and self.on_searchable is not None:
            self.on_searchable()
            self.on_searchable = None
        if self.on_progress is not None:
            lo, hi = _STAGE_SPAN.get(stage, (0, 99))
            self.on_progress(lo + (hi - lo) * done // max(total, 1))
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
        self.handle.report(pct, f"{_STAGE_NOUN.get(stage, stage)}: {done}/{total}")

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
    return normalise_newlines(data.decode("utf-8", "replace"))
