"""Shared helpers for the language-server tests: start the real server over stdio with
pytest-lsp's client, and wait for its ``codeEvidence/status`` notifications."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from code_evidence.lsp.server import json_converter

ROOT = Path(__file__).resolve().parents[1]
STATUS = "codeEvidence/status"
WAIT_S = 60.0

CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
    ),
)


class Client(LanguageClient):
    """pytest-lsp's client, keeping every status notification."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statuses: list[dict[str, Any]] = []
        self.status_changed = asyncio.Event()


def make_client(skip: tuple[str, ...] = ()) -> Client:
    client = Client(converter_factory=json_converter)
    register_lsp_features(
        client, {k: v for k, v in DEFAULT_CLIENT_FEATURES.items() if k not in skip}
    )

    @client.feature(STATUS)
    def _status(ls: Client, params: Any) -> None:
        ls.statuses.append(params)
        ls.status_changed.set()

    return client


def server_env() -> dict[str, str]:
    env = dict(os.environ)  # carries the session's CODE_EVIDENCE_CACHE_DIR
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p
    )
    return env


async def start(index_dir: Path, factory: Callable[[], Client] = make_client) -> Client:
    config = ClientServerConfig(
        server_command=[
            sys.executable,
            "-m",
            "code_evidence.cli",
            "serve",
            "--index-dir",
            str(index_dir),
        ],
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


async def wait_status(
    client: Client, pred: Callable[[dict[str, Any]], bool], after: int = 0, timeout: float = WAIT_S
) -> dict[str, Any]:
    """The first status notification (from index ``after`` on) that satisfies ``pred``."""

    async def loop() -> dict[str, Any]:
        seen = after
        while True:
            while seen < len(client.statuses):
                s = client.statuses[seen]
                seen += 1
                if pred(s):
                    return s
            client.status_changed.clear()
            await client.status_changed.wait()

    return await asyncio.wait_for(loop(), timeout)


def settled(s: dict[str, Any]) -> bool:
    return s["state"] in ("ready", "partial")


async def ready(client: Client, after: int = 0) -> dict[str, Any]:
    return await wait_status(client, settled, after)


async def find(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    return await asyncio.wait_for(
        client.protocol.send_request_async("codeEvidence/find", params), WAIT_S
    )


async def command(client: Client, name: str, *args: Any) -> Any:
    params = types.ExecuteCommandParams(command=name, arguments=list(args))
    return await asyncio.wait_for(client.workspace_execute_command_async(params), WAIT_S)


def open_doc(client: Client, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=version,
                text=path.read_text() if text is None else text,
            )
        )
    )
    return uri


def replace_doc(client: Client, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def stop(client: Client) -> None:
    try:
        await asyncio.wait_for(client.shutdown_session(), 30)
    finally:
        await client.stop()
