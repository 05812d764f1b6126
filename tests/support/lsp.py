"""The language-server tests' client: the real server over stdio with pytest-lsp's client
(its specification checks and default editor features), and the status, request and document
helpers of ``bench/lsp_client.py``, which the benchmarks drive the same server with.

Import every LSP helper from here; the shared ones are re-exported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from bench.lsp_client import (
    CAPABILITIES,
    STATUS,
    WAIT_S,
    command,
    find,
    open_doc,
    ready,
    record_status,
    replace_doc,
    server_command,
    server_env,
    settled,
    wait_status,
)
from code_evidence.lsp.server import json_converter

__all__ = [
    "STATUS",
    "WAIT_S",
    "Client",
    "command",
    "find",
    "initialize",
    "make_client",
    "open_doc",
    "ready",
    "replace_doc",
    "server_env",
    "settled",
    "start",
    "stop",
    "wait_status",
]


class Client(LanguageClient):
    """pytest-lsp's client, keeping every status notification."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statuses: list[dict[str, Any]] = []
        self.status_changed = asyncio.Event()


def make_client(skip: tuple[str, ...] = ()) -> Client:
    """A client with pytest-lsp's default features, less the methods in ``skip`` (a test
    registers its own handler for those)."""
    client = Client(converter_factory=json_converter)
    register_lsp_features(
        client, {k: v for k, v in DEFAULT_CLIENT_FEATURES.items() if k not in skip}
    )
    client.feature(STATUS)(record_status)
    return client


async def start(index_dir: Path, factory: Callable[[], Client] = make_client) -> Client:
    config = ClientServerConfig(
        server_command=server_command(index_dir),
        client_factory=factory,
        server_env=server_env(),
    )
    return await config.start()  # type: ignore[return-value]


async def initialize(client: Client, *folders: Path, options: Any = None) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=CAPABILITIES,
            root_uri=folders[0].as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=options,
        )
    )


async def stop(client: Client) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 30)
    finally:
        await client.stop()
