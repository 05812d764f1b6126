"""Issue 21: a hover on an import alias said "No definition in this workspace" while Related
listed the definition. The server follows the alias, so every editor gets it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from code_evidence.lsp.features.hover import import_alias
from support.lsp import initialize, open_doc, ready, start, stop
from support.project import git, init_repo

BILLING = '''"""Invoice arithmetic."""


def compute_invoice_total(items, discount=0.0):
    """Sum the line items and apply the discount."""
    return sum(price * qty for price, qty in items) - discount
'''

APP = """from billing import compute_invoice_total as cit


def checkout(cart):
    return cit(cart.items, discount=cart.discount)
"""


@pytest.mark.parametrize(
    ("text", "alias", "target"),
    [
        ("from billing import compute_invoice_total as cit\n", "cit", "compute_invoice_total"),
        ("from billing import (\n    Invoice,\n    total as t,\n)\n", "t", "total"),
        ("import { computeTotal as ct, x } from './billing';\n", "ct", "computeTotal"),
        ("export { computeTotal as ct } from './billing';\n", "ct", "computeTotal"),
        ("use crate::billing::{total as t, Invoice};\n", "t", "total"),
        ("import billing.Total as T\n", "T", "Total"),  # Kotlin
        ("use App\\Models\\User as U;\n", "U", "User"),  # PHP
        ("import scala.collection.{Map => M}\n", "M", "Map"),
        ("using Json = Newtonsoft.Json.JsonConvert;\n", "Json", "JsonConvert"),
    ],
)
def test_import_alias_finds_the_imported_name(text: str, alias: str, target: str) -> None:
    assert import_alias(text, alias) == target


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("with open(p) as f:\n    pass\n", "f"),  # not an import
        ("try:\n    x()\nexcept ValueError as e:\n    pass\n", "e"),
        ("import * as billing from './billing';\n", "billing"),  # a namespace, not a name
        ("from billing import compute_invoice_total as cit\n", "citx"),
        ("from billing import cit\n", "cit"),  # not an alias at all
    ],
)
def test_import_alias_ignores_what_is_not_an_import_alias(text: str, name: str) -> None:
    assert import_alias(text, name) is None


@pytest.mark.asyncio
async def test_hover_on_an_import_alias_shows_the_definition(tmp_path: Path) -> None:
    ws = tmp_path / "shop"
    ws.mkdir()
    (ws / "billing.py").write_text(BILLING)
    (ws / "app.py").write_text(APP)
    init_repo(ws)
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "shop")
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, ws)
        await ready(client)
        uri = open_doc(client, ws / "app.py")
        lines = APP.splitlines()
        for line_no, col in ((0, lines[0].index(" cit") + 2), (4, lines[4].index("cit(") + 1)):
            hover = await client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=line_no, character=col),
                )
            )
            assert hover is not None, (line_no, col)
            md = hover.contents.value  # type: ignore[union-attr]
            assert "**`cit`** (alias of `compute_invoice_total`)" in md, md
            assert "**Defined in**" in md and "[billing.py:4]" in md, md
            assert "No definition in this workspace" not in md
    finally:
        await stop(client)
