"""``workspace/executeCommand``: ``codeEvidence.reindex``, ``codeEvidence.status`` and
``codeEvidence.showRelated`` (``codeEvidence.find`` is with the find request, in ``find.py``).

Each answers with the same ``codeEvidence/status`` payloads the server sends on its own, so a
client that missed a notification can ask.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import protocol
from ..protocol import invalid
from ..server import CodeEvidenceServer
from ..uris import UriError, uri_to_path

REINDEX_WAIT_S = 24 * 3600  # a reindex answers when its pass is done, however long it takes


async def cmd_reindex(ls: CodeEvidenceServer, *args: Any) -> list[dict[str, Any]]:
    if args:
        raise invalid(f"{protocol.CMD_REINDEX} takes no arguments; got {len(args)}")
    folders = ls.folders
    sessions = list(folders.sessions.values())
    waits = [(s, s.passes.request_pass("reindex requested", progress=True)) for s in sessions]
    for session, generation in waits:
        await ls.run(session.passes.wait_for, generation, REINDEX_WAIT_S)
    out = [await ls.run(s.status_payload) for s in sessions]
    out.extend(protocol.status_payload(root, "error", why) for root, why in folders.failed.items())
    return out


async def cmd_status(ls: CodeEvidenceServer, *args: Any) -> dict[str, Any]:
    if len(args) > 1 or (args and not isinstance(args[0], str)):
        raise invalid(f"{protocol.CMD_STATUS} takes no argument or one workspace folder URI")
    root = None
    if args:
        try:
            root = uri_to_path(args[0]).resolve()
        except UriError as exc:
            raise invalid(f"{protocol.CMD_STATUS}: {exc}") from exc
    return await ls.run(_status_of, ls, root)


def _status_of(ls: CodeEvidenceServer, root: Path | None) -> dict[str, Any]:
    folders = ls.folders
    if root is not None and root in folders.failed:
        return protocol.status_payload(root, "error", folders.failed[root])
    where = protocol.CMD_STATUS
    session = folders.sessions.get(root) if root else folders.default_session(where)
    if session is None:
        raise invalid(f"{protocol.CMD_STATUS}: {root} is not a workspace folder")
    return session.status_payload()


def cmd_show_related(ls: CodeEvidenceServer, *args: Any) -> list[Any]:
    """Editors map this lens command to their references view; a client that sends it to the
    server instead gets the locations back."""
    if len(args) != 3 or not isinstance(args[2], list):
        raise invalid(f"{protocol.CMD_SHOW_RELATED} takes [uri, position, locations]")
    return args[2]


def register(server: CodeEvidenceServer) -> None:
    server.command(protocol.CMD_REINDEX)(cmd_reindex)
    server.command(protocol.CMD_STATUS)(cmd_status)
    server.command(protocol.CMD_SHOW_RELATED)(cmd_show_related)
