"""Drive the real language server the way an editor does: ``code-evidence serve`` started over
stdio, JSON-RPC through pygls's own client, and the server's ``codeEvidence/status``
notifications kept in order so a caller can wait for a state.

Used by lsp_latency.py, speed.py and stress.py, and by the tests (``tests/support/lsp.py``
builds its pytest-lsp client on the same waiting, request and document helpers). pygls and
lsprotocol are runtime dependencies of the server, so a benchmark run needs no dev extras; the
tests add pytest-lsp's checks on top. The tests import this file as ``bench.lsp_client``, so it
imports nothing from ``bench/`` itself; the caller has put ``server/`` on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from code_evidence.lsp.server import json_converter

ROOT = Path(__file__).resolve().parents[1]
STATUS = "codeEvidence/status"
FIND = "codeEvidence/find"
WAIT_S = 60.0

# What an editor announces: progress, settings pulled with workspace/configuration, folders,
# Markdown hovers. The server adapts to these (it asks for settings only when it may).
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(configuration=True, workspace_folders=True),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
    ),
)
# Progress only: what lsp_latency.py and speed.py have always announced (their figures are
# comparable across runs only if the session they time stays the same).
PROGRESS_ONLY = types.ClientCapabilities(
    window=types.WindowClientCapabilities(work_done_progress=True)
)


class StatusClient(Protocol):
    """Any client that records the status notifications (this module's or pytest-lsp's)."""

    statuses: list[dict[str, Any]]
    status_changed: asyncio.Event
    protocol: Any


class Client(LanguageClient):
    """pygls's client, keeping every status notification and the server's stderr task."""

    def __init__(self) -> None:
        super().__init__("code-evidence-bench", "1", converter_factory=json_converter)
        self.statuses: list[dict[str, Any]] = []
        self.status_changed = asyncio.Event()  # set on each status; wait_status waits on it
        self.stderr_task: asyncio.Task[None] | None = None


def record_status(ls: StatusClient, params: Any) -> None:
    """The ``codeEvidence/status`` handler: keep the notification, wake ``wait_status``."""
    ls.statuses.append(params)
    ls.status_changed.set()


def make_client() -> Client:
    """A client that answers what the server asks of an editor: progress tokens are accepted,
    settings are "none" (the workspace's own configuration), messages the server shows go to
    stderr."""
    client = Client()
    client.feature(STATUS)(record_status)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    def _create(ls: Client, params: Any) -> None:
        return None

    @client.feature(types.PROGRESS)
    def _progress(ls: Client, params: Any) -> None:
        return None

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def _configuration(ls: Client, params: types.ConfigurationParams) -> list[None]:
        return [None for _ in params.items]

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def _show(ls: Client, params: Any) -> None:
        print(f"server: {params.message}", file=sys.stderr)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def _log(ls: Client, params: Any) -> None:
        return None

    return client


def server_env() -> dict[str, str]:
    """This environment (with its CODE_EVIDENCE_CACHE_DIR) with this checkout's ``server/``
    first on PYTHONPATH: a server or indexer started as a subprocess runs this tree's code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p
    )
    return env


def server_command(index_dir: Path) -> list[str]:
    """``code-evidence serve`` with this interpreter, its index in ``index_dir``."""
    return [sys.executable, "-m", "code_evidence.cli", "serve", "--index-dir", str(index_dir)]


async def _copy_stderr(stream: asyncio.StreamReader | None, path: Path | None) -> None:
    """Drain the server's stderr into ``path`` (or this process's stderr): an undrained pipe
    fills up and blocks the server."""
    if stream is None:
        return
    if path is None:
        while line := await stream.readline():
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()
        return
    with path.open("wb") as fh:
        while line := await stream.readline():
            fh.write(line)
            fh.flush()


async def start(index_dir: Path, stderr_to: Path | None = None) -> Client:
    """``code-evidence serve`` over stdio as an editor starts it, its stderr copied to
    ``stderr_to`` (a file) or to this process's stderr. Stop it with :func:`stop`."""
    client = make_client()
    await client.start_io(*server_command(index_dir), env=server_env())
    stream = client._server.stderr if client._server else None
    client.stderr_task = asyncio.create_task(_copy_stderr(stream, stderr_to))
    return client


async def initialize(
    client: LanguageClient,
    *folders: Path,
    options: Any = None,
    capabilities: types.ClientCapabilities = CAPABILITIES,
) -> types.InitializeResult:
    """``initialize`` with ``folders`` as the workspace folders (the first is the root), then
    ``initialized``."""
    result = await client.initialize_async(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=folders[0].as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=options,
        )
    )
    client.initialized(types.InitializedParams())
    return result


async def stop(client: Client, timeout: float = WAIT_S) -> None:
    """``shutdown`` and ``exit``, then close the connection once the server is gone."""
    try:
        await asyncio.wait_for(client.shutdown_async(None), timeout)
        client.exit(None)
    finally:
        await client.stop()
        if client.stderr_task is not None:
            client.stderr_task.cancel()


async def wait_status(
    client: StatusClient,
    pred: Callable[[dict[str, Any]], bool],
    after: int = 0,
    timeout: float = WAIT_S,
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
    """The index answers: ``ready``, or ``partial`` (lexical and structure, vectors missing)."""
    return s["state"] in ("ready", "partial")


async def ready(client: StatusClient, after: int = 0) -> dict[str, Any]:
    """The first settled status from index ``after`` on."""
    return await wait_status(client, settled, after)


async def find(
    client: StatusClient, params: dict[str, Any], timeout: float | None = WAIT_S
) -> dict[str, Any]:
    """``codeEvidence/find`` with raw params; ``timeout`` None waits as long as it takes."""
    return await asyncio.wait_for(client.protocol.send_request_async(FIND, params), timeout)


async def command(client: LanguageClient, name: str, *args: Any) -> Any:
    """``workspace/executeCommand`` of one of the server's commands."""
    params = types.ExecuteCommandParams(command=name, arguments=list(args))
    return await asyncio.wait_for(client.workspace_execute_command_async(params), WAIT_S)


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    """``didOpen`` a Python file (its text on disk unless ``text``); returns its URI."""
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


def replace_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """``didChange`` with the whole new text: an unsaved edit in the editor."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def hover(client: LanguageClient, path: Path, line: int, col: int) -> types.Hover | None:
    """``textDocument/hover`` at a 0-based line and column."""
    return await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            position=types.Position(line=line, character=col),
        )
    )
