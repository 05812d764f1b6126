"""The one workspace behind the MCP server: its engine, its passes, its request pool.

For the life of the server, models load once and the workspace is watched with the same
watcher and pass scheduler the language server uses (``live/passes.py``), so answers come from
the current working tree. An agent edits files and asks right after, so a question first hands
the watcher's pending changes to the scheduler and waits (up to :data:`INDEX_WAIT_S`) until a
pass that includes them has committed its text part; on an unindexed workspace the same wait
is for lexical readiness. Whatever is ready then answers, with the index state beside it
("indexing, 40 %").

Requests run on a :class:`RequestPool` (``live/pool.py``): status and related code (what hover
shows) in the latency lane, finds in the background lane, deep finds last, each read on its own
snapshot, so a status call is answered while a deep find runs. Waiting for the index is not
work: it happens on a thread of its own, before a request takes a worker. Everything here is
synchronous; ``server.py`` awaits it.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api import RequestControl
from ..config import CONFIG_FILE
from ..engine import Engine
from ..live.passes import PassScheduler, PassStatus, ProgressHandle
from ..live.pool import Priority, RequestPool
from ..paths import resolve_workspace_path
from ..search.explain import explain
from . import schemas, tools
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
    """The tools of one workspace: :meth:`job` checks a call and says where it runs;
    ``server.py`` waits (:meth:`settle`) and runs it on the request pool."""

    def __init__(
        self,
        workspace: Path,
        index_dir: Path | None = None,
        trust_other_owner: bool = False,
        index_wait_s: float = INDEX_WAIT_S,
    ) -> None:
        # A bad .code-evidence.toml must not cost the agent its server: the file is ignored
        # whole, defaults apply, and every answer carries a note saying why.
        self.engine = Engine(
            workspace, index_dir, trust_other_owner=trust_other_owner, bad_config="defaults"
        )
        self.engine.preload_models()
        self.root = self.engine.workspace
        self.index_wait_s = index_wait_s
        self._relay = _Relay()
        self.passes = PassScheduler(self.engine, self._relay, on_config_change=self.reload_config)
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

    def settle(self) -> list[str]:
        """Wait for pending changes (bounded by ``index_wait_s``): blocking, but not work, so
        hosts wait on a thread of their own rather than on a pool worker. Notes for the answer
        when the wait ran out."""
        if self.passes.settle(self.index_wait_s):
            return []
        pct = self.passes.progress_pct
        how_far = f"indexing, {pct} %" if pct is not None else "indexing"
        return [
            f"{how_far}: waited {self.index_wait_s:g} s for the index to take in the latest "
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

    def job(self, tool: str, args: dict[str, Any] | None, cancel: threading.Event) -> Job:
        """A tool call, its arguments checked (``ArgumentError`` at once, before any wait),
        as the lane it runs in and the work to run there; ``KeyError`` for an unknown tool."""
        if tool in (schemas.FIND, schemas.EXPLAIN):
            parsed = tools.parse_find(tool, args)
            if parsed.request.open_file is not None:
                rel = self._existing(tool, "open_file", parsed.request.open_file)
                parsed = dataclasses.replace(
                    parsed, request=dataclasses.replace(parsed.request, open_file=rel)
                )
            deep = parsed.request.depth == "deep" or parsed.as_of is not None
            explained = tool == schemas.EXPLAIN
            return Job(
                Priority.DEEP if deep else Priority.INTERACTIVE,
                parsed.as_of is None,  # an --as-of answer comes from a past commit
                lambda notes: self._find(parsed, cancel, explained, notes),
            )
        if tool == schemas.RELATED:
            where = tools.parse_related(args)
            rel = self._existing(schemas.RELATED, "path", where.path)
            # What hover shows: cheap reads and a quick find, in the latency lane.
            return Job(Priority.LATENCY, True, lambda notes: self._related(rel, where.line))
        if tool == schemas.STATUS:
            tools.parse_status(args)
            return Job(Priority.LATENCY, False, lambda notes: self._status())
        raise KeyError(tool)

    def reload_config(self) -> None:
        """``.code-evidence.toml`` changed (an agent may edit it): its settings apply to the
        next question and a pass brings the index in line; one that does not hold keeps the
        last good settings, and answers say why until it is fixed."""
        error = self.engine.reload_config()
        if error:
            log.warning("%s", error)
            return
        self.passes.request_pass(f"{CONFIG_FILE} changed")

    def _find(
        self, parsed: tools.FindArgs, cancel: threading.Event, explained: bool, notes: list[str]
    ) -> tuple[dict[str, Any], str]:
        if parsed.as_of is not None:
            result = self.engine.find_as_of(parsed.request, parsed.as_of)
        else:
            deep = parsed.request.depth == "deep"
            control = RequestControl(cancel, self.pool.yield_to_latency if deep else None)
            result = self.engine.find(parsed.request, refresh=False, control=control)
        result.notes[:0] = notes
        lines = explain(result) if explained else None
        return tools.find_answer(result, self.index_state(), lines)

    def _related(self, rel: str, line: int) -> tuple[dict[str, Any], str]:
        found = self.engine.related(rel, line, extra=True)
        return tools.related_answer(found, self.index_state())

    def _status(self) -> tuple[dict[str, Any], str]:
        load = self.pool.load()
        index = self.index_state()
        status = self.engine.status()
        index = dataclasses.replace(index, state=status.shown_state(index.state))
        # This call is one of the running requests; report the others.
        return tools.status_answer(status, index, max(0, load.running - 1), load.queued)


@dataclass(frozen=True, slots=True)
class Job:
    """One checked tool call: its lane, whether it first waits for pending changes
    (:meth:`AgentWorkspace.settle`), and the work (given the notes of that wait)."""

    priority: Priority
    waits: bool
    run: Callable[[list[str]], tuple[dict[str, Any], str]]
