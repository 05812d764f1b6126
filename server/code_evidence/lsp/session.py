"""One workspace folder behind the language server: its engine, its request pool, its passes.

What is generic about keeping a folder's index fresh (the watcher, editor buffers, the pass
worker) lives in ``live/passes.py``, and the pool requests run on in ``live/pool.py``; this
module adds what the language server needs around them. Engine reads run on the folder's
:class:`RequestPool`, so the event loop never waits for one and a deep find never holds up a
hover: each read takes its own snapshot of the index on its worker's own connection. Editor
settings become an engine configuration. And the scheduler's neutral :class:`PassStatus`
becomes the ``codeEvidence/status`` payload (``protocol.status_payload``), sent only when it
changed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..api import (
    ChangedWith,
    Evidence,
    FindRequest,
    FindResult,
    IndexReport,
    Related,
    RequestControl,
    Status,
)
from ..config import CONFIG_FILE
from ..engine import Engine
from ..live import watch
from ..live.passes import Head, PassScheduler, PassStatus, ProgressHandle
from ..live.pool import Priority, RequestPool
from . import protocol

T = TypeVar("T")


class Reporter(Protocol):
    """How a session reaches the editor; every method may be called from any thread."""

    def status(self, payload: dict[str, Any]) -> None: ...

    def progress(self, title: str, cancel: threading.Event) -> ProgressHandle | None: ...

    def index_changed(self) -> None: ...

    def error(self, message: str) -> None: ...


@dataclass(frozen=True, slots=True)
class _Base:
    """The workspace configuration before editor settings: what "auto" and "unset" go back to."""

    budget_tokens: int
    rerank: bool
    exclude: tuple[str, ...]


class FolderSession:
    """One open workspace folder: the engine, the pool its reads run on, the folder's
    :class:`PassScheduler`, and the last status sent to the editor."""

    def __init__(
        self,
        root: Path,
        reporter: Reporter,
        index_dir: Path | None = None,
        quiet_s: float = watch.QUIET_S,
        max_wait_s: float = watch.MAX_WAIT_S,
        trust_other_owner: bool = False,
    ) -> None:
        # A bad .code-evidence.toml must not cost the editor its server: the file is ignored
        # whole (the engine's config_error says why, shown to the user) and defaults apply.
        self.engine = Engine(
            root, index_dir, trust_other_owner=trust_other_owner, bad_config="defaults"
        )
        self.engine.preload_models()
        self.root = self.engine.workspace
        self.reporter = reporter
        cfg = self.engine.config
        self._base = _Base(cfg.context.budget_tokens, cfg.stages.rerank, tuple(cfg.index.exclude))
        self.default_limit: int | None = None
        self._settings = protocol.Settings()  # the editor's, applied over the file's
        # Hover, lenses and status on workers of their own; finds on the others, deep last.
        self.pool = RequestPool(f"read-{self.root.name}")
        self._last_payload: dict[str, Any] | None = None
        self.passes = PassScheduler(
            self.engine,
            _StatusRelay(self),
            indexed_head=self.indexed_head,
            quiet_s=quiet_s,
            max_wait_s=max_wait_s,
            on_config_change=self.reload_config,
        )

    # -- lifecycle -------------------------------------------------------------
    def start(self) -> None:
        """Start watching and run the first pass (with progress: it may take minutes)."""
        self.passes.start()

    def close(self) -> None:
        """Stop watching, cancel a running pass (what it committed stays) and release the
        index: an editor closing must not wait for an hour of embedding."""
        self.passes.close()
        self.pool.close()
        self.engine.close()

    @property
    def generation(self) -> int:
        """Completed passes: a cache key for anything derived from the index."""
        return self.passes.generation

    def index_state(self) -> str:
        return self.passes.index_state()

    # -- editor documents and settings ---------------------------------------------------
    def exists(self, rel: str) -> bool:
        return self.passes.buffer(rel) is not None or (self.root / rel).is_file()

    def document_text(self, rel: str) -> str | None:
        """The editor's buffer of ``rel`` if it is open, else the disk copy."""
        text = self.passes.buffer(rel)
        if text is not None:
            return text
        try:
            return (self.root / rel).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    def reload_config(self) -> None:
        """``.code-evidence.toml`` changed: its settings apply now, under the editor's, and a
        pass brings the index in line (excludes, chunking). A file that does not hold is
        shown as an error and the last good settings stay."""
        error = self.engine.reload_config()
        if error:
            self.reporter.error(f"Code Evidence, {self.root}: {error}")
            return
        cfg = self.engine.config
        self._base = _Base(cfg.context.budget_tokens, cfg.stages.rerank, tuple(cfg.index.exclude))
        self.apply_settings(self._settings)
        self.passes.request_pass(f"{CONFIG_FILE} changed")

    def apply_settings(self, s: protocol.Settings) -> None:
        self._settings = s
        cfg = self.engine.config
        exclude = (*self._base.exclude, *s.exclude)
        self.engine.configure(
            cfg.changed(
                context={
                    "budget_tokens": self._base.budget_tokens
                    if s.budget_tokens is None
                    else s.budget_tokens
                },
                stages={"rerank": self._base.rerank if s.rerank == "auto" else s.rerank == "on"},
                index={"exclude": exclude},
            )
        )
        self.default_limit = s.limit
        if exclude != tuple(cfg.index.exclude):
            self.passes.request_pass("exclude setting changed")

    # -- status ----------------------------------------------------------------
    def _payload(
        self, state: str, message: str, last_pass: IndexReport | None, scan: bool = True
    ) -> dict[str, Any]:
        status = self.read_status(scan)
        return protocol.status_payload(
            self.root,
            status.shown_state(state),
            message,
            status,
            last_pass,
            self.engine.config.stages.vectors,
        )

    def status_payload(self) -> dict[str, Any]:
        """What ``codeEvidence.status`` answers: the last message with fresh counts."""
        msg = (self._last_payload or {}).get("message") or ""
        error = self.passes.watch_error
        if error:
            msg = f"{msg}; {error}" if msg else error
        return self._payload(self.index_state(), msg, self.passes.last_report)

    def publish(self, status: PassStatus) -> None:
        """The scheduler's news as a ``codeEvidence/status`` notification. A pass that starts
        keeps the last counts (reading them means scanning the folder, and the pass is about
        to change them); every other turn reads them fresh."""
        if status.event == "started" and self._last_payload is not None:
            payload = {**self._last_payload, "state": status.state, "message": status.message}
        else:
            payload = self._payload(status.state, status.message, status.last_pass, status.scanned)
        if status.watch_error and status.watch_error not in payload["message"]:
            payload = {**payload, "message": f"{payload['message']}; {status.watch_error}"}
        if payload == self._last_payload:
            return
        self._last_payload = payload
        self.reporter.status(payload)

    # -- reads -------------------------------------------------------------------
    def submit(self, priority: Priority, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn`` on the pool (await it with ``asyncio.wrap_future``)."""
        return self.pool.submit(priority, fn, *args)

    def find(self, req: FindRequest, cancel: threading.Event | None = None) -> FindResult:
        """The engine's answer from the committed index (files deleted since the last pass
        are already left out by the engine). ``cancel``: set when the client gave up; a deep
        find also pauses between cross-encoder pairs while hover, lenses or status wait."""
        pause = self.pool.yield_to_latency if req.depth == "deep" else None
        control = RequestControl(cancel or threading.Event(), pause)
        return self.engine.find(req, False, control)

    def related(self, rel: str, line: int, name: str | None = None) -> Related:
        """What hover and code lenses show at ``rel:line`` (see ``Engine.related``)."""
        return self.engine.related(rel, line, name)

    def find_as_of(self, req: FindRequest, ref: str) -> FindResult:
        """An answer from the code at ``ref`` (a snapshot indexed in the cache; the working
        tree and this folder's index are not touched)."""
        return self.engine.find_as_of(req, ref)

    def read_status(self, scan: bool = True) -> Status:
        """``scan`` False: without listing the workspace (see ``Engine.status``)."""
        return self.engine.status(scan)

    def indexed_head(self) -> Head:
        """(commit, branch) the index was last brought to."""
        return self.engine.indexed_head()

    def outline(self, rel: str) -> list[Evidence]:
        return self.engine.outline(rel)

    def lens_places(self, rel: str) -> tuple[list[Evidence], list[ChangedWith]]:
        """Where a file's lenses go: its outline, and the files the history changed with it."""
        return self.engine.outline(rel), self.engine.changed_with(rel)


class _StatusRelay:
    """The scheduler's reporter: status through the session (which builds the LSP payload),
    progress and index changes straight to the editor."""

    def __init__(self, session: FolderSession) -> None:
        self.session = session

    def status(self, status: PassStatus) -> None:
        self.session.publish(status)

    def progress(self, title: str, cancel: threading.Event) -> ProgressHandle | None:
        return self.session.reporter.progress(title, cancel)

    def index_changed(self) -> None:
        self.session.reporter.index_changed()
