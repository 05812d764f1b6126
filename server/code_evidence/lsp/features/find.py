"""``codeEvidence/find`` and ``codeEvidence/explain``, and the ``codeEvidence.find`` command.

A question asked from an open document first waits briefly for the user's unsaved edits to be
indexed, so the answer cites what is on screen; the answer itself comes from the folder's
request pool (a deep find after palette finds, never before a hover), from the last committed
index, with the index state beside it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from ...api import FindRequest
from ...engine import EngineError
from ...live.pool import Priority
from .. import protocol
from ..protocol import invalid
from ..server import CodeEvidenceServer
from ..session import FolderSession

FIND_WAIT_FOR_EDITS_S = 3.0  # how long a find waits for unsaved edits to be indexed


async def answer(
    ls: CodeEvidenceServer, raw: object, where: str, explained: bool = False
) -> dict[str, Any]:
    """One folder's answer when the question names a document or a folder; otherwise every
    folder's, merged by score (a multi-root workspace is searched whole)."""
    try:
        p = protocol.parse_find_params(raw, where)
    except protocol.ParamsError as exc:
        raise invalid(str(exc)) from exc
    rel = None
    if p.uri is not None:
        session, rel = ls.folders.session_for_uri(p.uri, where)
        if not session.exists(rel):
            raise invalid(f"{where}: unknown document {p.uri}: it is not open and not on disk")
        await ls.run(session.passes.wait_for_buffers, FIND_WAIT_FOR_EDITS_S)
    elif p.folder is not None:
        session = ls.folders.session_for_folder(p.folder, where)
    else:
        sessions = ls.folders.all_sessions(where)
        answers = await asyncio.gather(
            *(_answer_in(ls, s, p, None, where, explained) for s in sessions)
        )
        return protocol.merged_answer(list(answers), p.limit or sessions[0].default_limit or 10)
    return await _answer_in(ls, session, p, rel, where, explained)


async def _answer_in(
    ls: CodeEvidenceServer,
    session: FolderSession,
    p: protocol.FindParams,
    rel: str | None,
    where: str,
    explained: bool,
) -> dict[str, Any]:
    req = FindRequest(
        query=p.query,
        open_file=rel,
        line=None if p.line is None else p.line + 1,
        limit=p.limit or session.default_limit or 10,
        budget_tokens=p.budget_tokens,
        intent=p.intent,  # type: ignore[arg-type]
        depth=p.depth,  # type: ignore[arg-type]
    )
    state = session.index_state()
    # A deep find or an --as-of (which indexes a past commit first) queues behind palette finds;
    # neither ever holds up hover, lenses or status (see live/pool.py).
    priority = Priority.DEEP if p.depth == "deep" or p.as_of else Priority.INTERACTIVE
    cancel = threading.Event()
    try:
        if p.as_of is not None:
            result = await ls.read(session, priority, session.find_as_of, req, p.as_of)
        else:
            result = await ls.read(session, priority, session.find, req, cancel)
    except EngineError as exc:
        raise invalid(f"{where}: {exc}") from exc
    except asyncio.CancelledError:
        cancel.set()  # $/cancelRequest: a running find stops between two rerank pairs
        raise
    return protocol.find_answer(result, session.root, state, explained)


async def find_request(ls: CodeEvidenceServer, params: Any) -> dict[str, Any]:
    return await answer(ls, params, protocol.FIND_REQUEST)


async def explain_request(ls: CodeEvidenceServer, params: Any) -> dict[str, Any]:
    return await answer(ls, params, protocol.EXPLAIN_REQUEST, explained=True)


async def cmd_find(ls: CodeEvidenceServer, *args: Any) -> dict[str, Any]:
    if len(args) != 1:
        raise invalid(
            f"{protocol.CMD_FIND} takes one argument, the {protocol.FIND_REQUEST} params "
            f"object; got {len(args)}"
        )
    return await answer(ls, args[0], protocol.CMD_FIND)


def register(server: CodeEvidenceServer) -> None:
    server.feature(protocol.FIND_REQUEST)(find_request)
    server.feature(protocol.EXPLAIN_REQUEST)(explain_request)
    server.command(protocol.CMD_FIND)(cmd_find)
