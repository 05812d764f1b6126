"""``textDocument/codeLens`` and ``codeLens/resolve``: ``N callers · related`` above each
function and class, and ``changes with N files`` on a file's first line.

``textDocument/codeLens`` only lists where lenses go (the file's outline, one store read);
counting callers and finding related code waits for ``codeLens/resolve``, which editors send
only for lenses on screen. The file's lens comes resolved: the files the git history changed
together with it (``Engine.changed_with``, one bounded read) are what it shows, and a file
with none (a plain folder, a new file) gets no lens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ...api import MAX_LINE, ChangedWith, Evidence
from ...live.pool import Priority
from ..protocol import CMD_SHOW_RELATED, invalid
from ..server import CodeEvidenceServer
from ..uris import location

_NO_LENS = frozenset({"module", "window"})
MAX_SYMBOL_CHARS = 1_000


def lens_name(symbol: str) -> str:
    """The bare name callers use: ``Cart.total`` is called as ``total``."""
    return symbol.rsplit(".", 1)[-1].rsplit("::", 1)[-1]


def unresolved(outline: list[Evidence], uri: str) -> list[types.CodeLens]:
    """One lens per defined symbol (a long function split into chunks gets one, at its
    first line)."""
    seen: set[str] = set()
    lenses = []
    for ev in sorted(outline, key=lambda e: e.start):
        if not ev.symbol or ev.kind in _NO_LENS or ev.symbol in seen:
            continue
        seen.add(ev.symbol)
        pos = types.Position(line=ev.start - 1, character=0)
        lenses.append(
            types.CodeLens(
                range=types.Range(start=pos, end=pos),
                data={"uri": uri, "symbol": ev.symbol, "line": ev.start},
            )
        )
    return lenses


def changes_with(root: Path, uri: str, changed: list[ChangedWith]) -> list[types.CodeLens]:
    """The file's lens: ``changes with N files`` on its first line, running
    ``codeEvidence.showRelated`` on the files (each at its first line), strongest first; none
    when the history has no partner for it."""
    if not changed:
        return []
    top = types.Position(line=0, character=0)
    n = len(changed)
    title = f"changes with {n} file{'' if n == 1 else 's'}"
    locations = [location(root, c.path, 1, 1) for c in changed]
    position = {"line": 0, "character": 0}
    return [
        types.CodeLens(
            range=types.Range(start=top, end=top),
            command=types.Command(
                title=title, command=CMD_SHOW_RELATED, arguments=[uri, position, locations]
            ),
        )
    ]


def lens_data(lens: types.CodeLens) -> tuple[str, str, int]:
    """(uri, symbol, 1-based line) from a lens this server made; ValueError otherwise."""
    data: Any = lens.data
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("uri"), str)
        or not isinstance(data.get("symbol"), str)
        or not isinstance(data.get("line"), int)
        or isinstance(data.get("line"), bool)
    ):
        raise ValueError("codeLens/resolve: this lens was not made by the Code Evidence server")
    symbol, line = data["symbol"], data["line"]
    if not symbol.strip() or len(symbol) > MAX_SYMBOL_CHARS or not lens_name(symbol):
        raise ValueError(f"codeLens/resolve: {symbol[:80]!r} is not a symbol this server made")
    if not 1 <= line <= MAX_LINE:
        raise ValueError(f"codeLens/resolve: line {line} is outside 1..{MAX_LINE}")
    return data["uri"], symbol, line


def resolved(
    lens: types.CodeLens, root: Path, uri: str, callers: int, related: list[Evidence]
) -> types.CodeLens:
    """The lens with its title and the ``codeEvidence.showRelated`` command, whose arguments
    are ``[uri, position, locations]`` like VS Code's ``editor.action.showReferences``. Each
    location is the one line its result opens at (a caller's call, a definition's first line),
    as a references view lists them."""
    title = f"{callers} caller{'' if callers == 1 else 's'} · related"
    locations = [location(root, ev.path, ev.line, ev.line) for ev in related]
    position = {"line": lens.range.start.line, "character": lens.range.start.character}
    lens.command = types.Command(
        title=title, command=CMD_SHOW_RELATED, arguments=[uri, position, locations]
    )
    return lens


async def on_code_lens(
    ls: CodeEvidenceServer, params: types.CodeLensParams
) -> list[types.CodeLens]:
    uri = params.text_document.uri
    try:
        session, rel = ls.folders.session_for_uri(uri, types.TEXT_DOCUMENT_CODE_LENS)
    except JsonRpcInvalidParams:
        return []  # outside every workspace folder: no lenses, and no error popup
    outline, changed = await ls.read(session, Priority.LATENCY, session.lens_places, rel)
    return changes_with(session.root, uri, changed) + unresolved(outline, uri)


async def on_code_lens_resolve(ls: CodeEvidenceServer, lens: types.CodeLens) -> types.CodeLens:
    try:
        uri, symbol, line = lens_data(lens)
    except ValueError as exc:
        raise invalid(str(exc)) from exc
    session, rel = ls.folders.session_for_uri(uri, types.CODE_LENS_RESOLVE)
    name = lens_name(symbol)
    found = await ls.read(session, Priority.LATENCY, session.related, rel, line, name)
    count, related = found.caller_count, [*found.callers, *found.related]
    return resolved(lens, session.root, uri, count, related)


def register(server: CodeEvidenceServer) -> None:
    server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))(
        on_code_lens
    )
    server.feature(types.CODE_LENS_RESOLVE)(on_code_lens_resolve)
