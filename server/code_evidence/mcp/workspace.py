"""The one workspace behind the MCP server: its engine, its passes, its request pool.

For the life of the server, models load once and the workspace is watched with the same
watcher and pass scheduler the language server uses (``live/passes.py``), so answers come from
the current working tree. An agent edits files and asks right after, so a question first hands
the watcher's pending changes to the scheduler and waits (up to :data:`INDEX_WAIT_S`) until a
pass that includes them has committed its text part; on an unindexed workspace the same wait
is for lexical readiness. Whatever is ready then answers, with the index state beside it
("indexing, 40 %").

Requests run on a :class:`RequestPool` (``live/pool.py``): status in the latency lane, finds
and lookups in the background lane, deep finds last, each read on its own snapshot, so a status
call is answered while a deep find runs. Everything here is synchronous and runs on the pool;
``server.py`` awaits it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from pathlib import Path
from typing import Any

from ..engine import Engine
from ..live.passes import PassScheduler, PassStatus, ProgressHandle
from ..live.pool import RequestPool
from ..paths import resolve_workspace_path
from ..search.explain import explain
from . import tools
from .tools import IndexState

log = logging.getLogger(__name__)

# How long a question waits for the index to take in changes (or, on an unindexed workspace,
# for lexical readiness) before it answers from what exists.
INDEX_WAIT_S = 30.0


class _Relay:
    """The scheduler's reporter: keeps the last status line; progress is read from the
    scheduler itself (an agent asks, nothing is pushed)."""

    def __init__(self) -> None:
        self.last: PassStatus | None = None

    def status(self, status: PassStatus) -> None:
        self.last = status
        log.info("index: %s (%s)", status.message, status.state)

    def progress(self, title: str, cancel: threading.Event) -> ProgressHandle | None:
        return None

    def index_changed(self) -> None:
        return None


class AgentWorkspace:
    """``find``, ``explain``, ``related`` and ``status`` for one workspace, each called on
    the request pool; arguments are the raw tool arguments (checked in ``tools``)."""

    def __init__(
        self,
        workspace: Path,
        index_dir: Path | None = None,
        trust_other_owner: bool = False,
        index_wait_s: float = INDEX_WAIT_S,
    ) -> None:
        self.engine = Engine(workspace, index_dir, trust_other_owner=trust_other_owner)
        self.engine.preload_models()
        self.root = self.engine.workspace
        self.index_wait_s = index_wait_s
        self._relay = _Relay()
        self.passes = PassScheduler(self.engine, self._relay)
        self.pool = RequestPool("mcp")

    def start(self) -> None:
        """Watch the workspace and start the first pass (answers wait for its text part)."""
        self.passes.start()

    def close(self) -> None:
        self.pool.close(wait=False)
        self.passes.close()
        self.engine.close()

    # -- index state -----------------------------------------------------------
    def index_state(self) -> IndexState:
        last = self._relay.last
        state = self.passes.index_state()
        message = last.message if last is not None else ""
        if last is not None and last.event == "failed":
            state = "error"
        if self.passes.watch_error:
            message = (
                f"{message}; {self.passes.watch_error}" if message else self.passes.watch_error
            )
        commit, branch = self.engine.indexed_head()
        progress = self.passes.progress_pct if state == "indexing" else None
        return IndexState(state, progress, message, commit, branch)

    def _settle(self) -> list[str]:
        """Wait for pending changes (bounded); notes for the answer when it had to stop
        waiting."""
        if self.passes.settle(self.index_wait_s):
            return []
        pct = self.passes.progress_pct
        how_far = f"indexing, {pct} %" if pct is not None else "indexing"
        return [
            f"{how_far}: waited {self.index_wait_s:.0f} s for the index to take in the latest "
            "changes; this answer comes from what was indexed by then"
        ]

    # -- tools -----------------------------------------------------------------
    def _existing(self, tool: str, key: str, path: str) -> str:
        """``path`` as the workspace-relative path of a file that exists; refused otherwise."""
        try:
            rel = resolve_workspace_path(self.root, path)
        except ValueError as exc:
            raise tools.ArgumentError(f"{tool}: {key!r}: {exc}") from exc
        if not (self.root / rel).is_file():
            raise tools.ArgumentError(f"{tool}: {key!r}: no file {rel!r} in the workspace")
        return rel

    def find(
        self, args: dict[str, Any] | None, cancel: threading.Event, explained: bool = False
    ) -> tuple[dict[str, Any], str]:
        tool = tools.EXPLAIN if explained else tools.FIND
        parsed = tools.parse_find(tool, args)
        if parsed.request.open_file is not None:
            rel = self._existing(tool, "open_file", parsed.request.open_file)
            parsed = dataclasses.replace(
                parsed, request=dataclasses.replace(parsed.request, open_file=rel)
            )
        notes = self._settle() if parsed.as_of is None else []
        if parsed.as_of is not None:
            result = self.engine.find_as_of(parsed.request, parsed.as_of)
        else:
            result = self.engine.find(parsed.request, refresh=False, cancel=cancel)
        result.notes[:0] = notes
        lines = explain(result) if explained else None
        return tools.find_answer(result, self.index_state(), lines)

    def related(self, args: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        parsed = tools.parse_related(args)
        rel = self._existing(tools.RELATED, "path", parsed.path)
        self._settle()
        found = self.engine.related(rel, parsed.line, extra=True)
        return tools.related_answer(found, self.index_state())

    def status(self, args: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        tools.parse_status(args)
        load = self.pool.load()
        # This call is one of the running requests; report the others.
        return tools.status_answer(
            self.engine.status(), self.index_state(), max(0, load.running - 1), load.queued
        )
