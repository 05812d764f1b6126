"""Hover in the eight added languages through the real language server (pytest-lsp over stdio):
one server, the eight fixture projects as workspace folders; a hover on a call of each
fixture's function shows where it is defined (the body, not a header's prototype) and who
calls it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from code_evidence.config import IndexConfig
from code_evidence.index.chunk import chunk_file
from code_evidence.search.focus import name_line
from support.lsp import initialize, open_doc, ready, start, stop
from test_languages import CASES, make_repo

pytestmark = pytest.mark.asyncio


def definition_line(root: Path, path: str, symbol: str, kind: str) -> int:
    """The line hover links a definition at: the one naming it, past its doc comment."""
    text = (root / path).read_text()
    (chunk,) = [
        c for c in chunk_file(path, text, IndexConfig()) if c.symbol == symbol and c.kind == kind
    ]
    assert chunk.start <= name_line(chunk) <= chunk.end
    named = text.splitlines()[name_line(chunk) - 1]
    assert symbol.rsplit(".", 1)[-1] in named, named
    return name_line(chunk)


async def test_hover_shows_definition_and_callers_in_every_language(tmp_path: Path) -> None:
    roots = {case.language: make_repo(case.language, tmp_path) for case in CASES}
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, *roots.values())
        for _ in roots:
            await ready(client)
        misses = []
        for case in CASES:
            root = roots[case.language]
            name = case.symbol.rsplit(".", 1)[-1]
            lines = (root / case.caller).read_text().splitlines()
            row = next(i for i, t in enumerate(lines) if f"{name}(" in t)
            uri = open_doc(client, root / case.caller)
            hover = await asyncio.wait_for(
                client.text_document_hover_async(
                    types.HoverParams(
                        text_document=types.TextDocumentIdentifier(uri=uri),
                        position=types.Position(line=row, character=lines[row].index(name) + 2),
                    )
                ),
                60,
            )
            if hover is None:
                misses.append((case.language, "no hover"))
                continue
            md = hover.contents.value  # type: ignore[union-attr]
            line = definition_line(root, case.path, case.symbol, case.kind)
            defined = md.split("**Defined in**", 1)[-1].split("\n\n", 1)[0]
            first = defined.strip().splitlines()[0] if defined.strip() else ""
            if f"**`{name}`**" not in md or f"[{case.path}:{line}]" not in first:
                misses.append((case.language, f"definition not first: {first!r}"))
            if f"({case.kind})" not in first:
                misses.append((case.language, f"kind: {first!r}"))
            callers = md.split("**Callers**", 1)[-1].split("\n\n", 1)[0]
            if f"[{case.caller}:" not in callers:
                misses.append((case.language, f"caller missing: {callers!r}"))
        assert misses == [], "\n".join(map(str, misses))
    finally:
        await stop(client)
