"""Issue 21: settings per workspace folder, and ``.code-evidence.toml`` edits that take effect
without a restart (a bad edit is shown as an error and the last good settings stay)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from support.lsp import (
    Client,
    find,
    initialize,
    make_client,
    ready,
    settled,
    start,
    stop,
    wait_status,
)
from support.project import git, init_repo, write_project

pytestmark = pytest.mark.asyncio


async def _budget_becomes(client: Client, want: int, params: dict[str, Any]) -> int:
    """The context budget a find reports, once it is ``want`` (or the last seen after 60 s)."""
    deadline = time.monotonic() + 60
    seen = -1
    while time.monotonic() < deadline:
        seen = (await find(client, params))["context"]["budget"]
        if seen == want:
            return seen
        await asyncio.sleep(0.3)
    return seen


async def test_code_evidence_toml_edits_apply_without_a_restart(
    project: Path, tmp_path: Path
) -> None:
    client = await start(tmp_path / "idx")
    try:
        await initialize(client, project)
        await ready(client)
        q = {"query": "discount_for"}
        assert (await find(client, q))["context"]["budget"] == 2000
        config = project / ".code-evidence.toml"
        config.write_text("[context]\nbudget_tokens = 900\n")
        assert await _budget_becomes(client, 900, q) == 900
        config.write_text("[context]\nbudget_tokenz = 5\n")  # a typo: refused whole
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "budget_tokenz" in m.message for m in client.messages
        ):
            await asyncio.sleep(0.2)
        shown = [m for m in client.messages if "budget_tokenz" in m.message]
        assert shown and shown[-1].type == types.MessageType.Error
        assert "last good settings stay" in shown[-1].message
        assert (await find(client, q))["context"]["budget"] == 900  # the last good one
        config.unlink()  # gone: back to the defaults
        assert await _budget_becomes(client, 2000, q) == 2000
    finally:
        await stop(client)


def _scoped_client(per_folder: dict[str, dict[str, Any]]) -> Client:
    """A client whose workspace/configuration answers per ``scopeUri``, as VS Code does with
    folder-level settings."""
    client = make_client(skip=(types.WORKSPACE_CONFIGURATION,))

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def _configuration(ls: Client, params: types.ConfigurationParams) -> list[Any]:
        return [per_folder.get(item.scope_uri or "", {}) for item in params.items]

    return client


async def test_each_folder_gets_its_own_settings(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "billing"
    write_project(other, {"ledger.py": "def post_ledger_entry(amount):\n    return amount\n"})
    init_repo(other)
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "ledger")
    a, b = project.resolve().as_uri(), other.resolve().as_uri()
    per_folder = {a: {"budgetTokens": 600}, b: {"budgetTokens": 1200, "limit": 1}}
    client = await start(tmp_path / "idx", lambda: _scoped_client(per_folder))
    try:
        await initialize(client, project, other)
        for uri in (a, b):
            await wait_status(client, lambda s, u=uri: settled(s) and s["workspace"] == u)
        in_a = await _budget_becomes(client, 600, {"query": "cart", "workspaceFolder": a})
        assert in_a == 600
        answer_b = await find(client, {"query": "post_ledger_entry", "workspaceFolder": b})
        assert answer_b["context"]["budget"] == 1200 and len(answer_b["results"]) == 1
        # A change of one folder's settings: the server pulls each folder's again.
        per_folder[a] = {"budgetTokens": 0}
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"codeEvidence": {}})
        )
        assert await _budget_becomes(client, 0, {"query": "cart", "workspaceFolder": a}) == 0
        answer_b = await find(client, {"query": "post_ledger_entry", "workspaceFolder": b})
        assert answer_b["context"]["budget"] == 1200
    finally:
        await stop(client)
