"""The pygls language server's plumbing: the server class, its protocol, threads and reporter.

What the server answers is in ``features/`` (one LSP feature a module); ``app.py`` makes the
one server of the process and registers them on it; which folder a request belongs to is
``folders.py``; each folder's engine and passes are ``session.py``. This module holds what they
all run on, and imports none of the features, so they can import it.

Threads: pygls runs handlers on its asyncio loop; every engine read goes to the folder's
request pool (``live/pool.py``: hover, lenses and status in a lane of their own, finds in
another), index passes run on its index thread (``live/passes.py``) and other blocking work
goes to ``pool``, so the loop only parses, routes and answers. Requests are
``async`` and await their pool work, which is what makes ``$/cancelRequest`` effective: pygls
cancels the awaiting task and answers ``RequestCancelled`` at once. Everything that talks to
the client from another thread is handed to the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from cattrs import Converter
from lsprotocol import converters, types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcServerNotInitialized,
)
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from .. import __version__
from ..live.pool import Priority
from . import protocol
from .folders import Folders
from .framing import serve_stream
from .session import FolderSession

log = logging.getLogger(__name__)
T = TypeVar("T")

PROGRESS_CREATE_TIMEOUT_S = 30.0


def json_converter() -> Converter:
    """lsprotocol's converter, but custom messages keep their params and results as plain
    JSON (pygls would turn them into namedtuples, renaming keys that are not identifiers, so
    a misspelt key could not even be reported by its name)."""
    conv = converters.get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, lambda obj, c: c(**obj))
    return conv


class _Protocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the LSP types (a hover whose position is
    null, a line that is a string) without answering, so the client would wait forever. Answer
    it with InvalidParams instead, and drop the message (a malformed notification is only
    logged, as JSON-RPC has no way to answer it).

    It also leaves requests unanswered after ``shutdown`` and accepts a second ``initialize``
    (which opened more folders against the first index). The lifecycle is held as the LSP
    specification says: before ``initialize`` a request gets ServerNotInitialized (-32002) and a
    notification is dropped (``exit`` excepted); a second ``initialize`` and any request after
    ``shutdown`` get InvalidRequest (-32600)."""

    _initialize_seen = False

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is None or method == types.EXIT:
            super().handle_message(message)  # a response, or exit (always honoured)
            return
        error: JsonRpcException | None = None
        if self._shutdown:
            error = JsonRpcInvalidRequest(message=f"{method}: the server is shutting down")
        elif method == types.INITIALIZE:
            if self._initialize_seen:
                error = JsonRpcInvalidRequest(message="initialize was already received")
            self._initialize_seen = True
        elif not self._initialize_seen:
            error = JsonRpcServerNotInitialized(message=f"{method}: initialize first")
        if error is None:
            super().handle_message(message)
        elif msg_id is not None:
            log.warning("refused %s: %s", method, error.message)
            self._send_response(msg_id, error=error.to_response_error())
        else:
            log.warning("dropped the notification %s: %s", method, error.message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                error = JsonRpcInvalidParams(
                    message=f"{data['method']}: malformed params ({exc.message or exc})"
                )
                self._send_response(data["id"], error=error.to_response_error())
            return JsonRPCNotification(
                method="$/codeEvidence/malformed", jsonrpc="2.0", params=None
            )


class _Progress:
    """One pass's ``$/progress`` token (a ``live.passes.ProgressHandle``)."""

    def __init__(self, server: CodeEvidenceServer, token: str) -> None:
        self.server = server
        self.token = token

    def report(self, percentage: int, message: str) -> None:
        value = types.WorkDoneProgressReport(
            percentage=percentage, message=message, cancellable=True
        )
        self.server.call_soon(self.server.work_done_progress.report, self.token, value)

    def end(self, message: str) -> None:
        value = types.WorkDoneProgressEnd(message=message)
        self.server.call_soon(self.server.work_done_progress.end, self.token, value)
        self.server.progress_cancel.pop(self.token, None)
        self.server.work_done_progress.tokens.pop(self.token, None)


class _Reporter:
    """What sessions use to reach the client (see session.Reporter)."""

    def __init__(self, server: CodeEvidenceServer) -> None:
        self.server = server

    def status(self, payload: dict[str, Any]) -> None:
        self.server.call_soon(self.server.protocol.notify, protocol.STATUS_NOTIFICATION, payload)

    def progress(self, title: str, cancel: threading.Event) -> _Progress | None:
        srv = self.server
        if srv.loop is None or not srv.supports("window.work_done_progress"):
            return None
        token = f"codeEvidence/index/{uuid.uuid4().hex[:12]}"
        srv.progress_cancel[token] = cancel  # a cancel may arrive before create is answered
        fut = asyncio.run_coroutine_threadsafe(srv.work_done_progress.create_async(token), srv.loop)
        try:
            fut.result(timeout=PROGRESS_CREATE_TIMEOUT_S)
        except Exception as exc:
            log.warning("client refused a progress token: %s", exc)
            srv.progress_cancel.pop(token, None)
            return None
        begin = types.WorkDoneProgressBegin(
            title=title, cancellable=True, percentage=0, message="scanning"
        )
        srv.call_soon(srv.work_done_progress.begin, token, begin)
        return _Progress(srv, token)

    def error(self, message: str) -> None:
        params = types.ShowMessageParams(type=types.MessageType.Error, message=message)
        self.server.call_soon(self.server.window_show_message, params)

    def index_changed(self) -> None:
        srv = self.server
        if srv.supports("workspace.code_lens.refresh_support"):
            srv.call_soon(srv.protocol.send_request, types.WORKSPACE_CODE_LENS_REFRESH, None)


class CodeEvidenceServer(LanguageServer):
    """The server the features run on: its folders, its request pool, and how any thread
    reaches the client."""

    def __init__(self) -> None:
        super().__init__(
            "code-evidence",
            __version__,
            converter_factory=json_converter,
            protocol_cls=_Protocol,
        )
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ce-request")
        self.reporter = _Reporter(self)
        self.folders = Folders(self.reporter)
        self.settings_warnings: list[str] = []  # found at initialize, shown once initialized
        self.progress_cancel: dict[str, threading.Event] = {}
        self.exit_code = 0

    def start_io(self, stdin: Any = None, stdout: Any = None) -> None:  # type: ignore[override]
        """Serve over stdio with the framing of ``framing.py`` (which survives what a broken
        or hostile client sends) instead of pygls's reader. ``exit_code`` is what ``exit``
        asked for (0 after ``shutdown``, 1 without)."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        self.exit_code = 0
        try:
            asyncio.run(serve_stream(stdin or sys.stdin.buffer, self.protocol, self._stop_event))
        except BrokenPipeError:
            log.error("the client closed the connection; shutting down")
        except SystemExit as exc:
            self.exit_code = exc.code if isinstance(exc.code, int) else 0
        except KeyboardInterrupt:
            pass
        finally:
            self.shutdown()

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.loop is None or self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            self.loop.call_soon_threadsafe(fn, *args)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work that is not an engine read (waits, session start/stop)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def read(
        self, session: FolderSession, priority: Priority, fn: Callable[..., T], *args: Any
    ) -> T:
        """Engine reads go to the folder's request pool, in ``priority``'s lane (see
        ``live/pool.py``); cancelling the awaiting task drops a read that has not started."""
        return await asyncio.wrap_future(session.submit(priority, fn, *args))

    def supports(self, dotted: str) -> bool:
        """Whether the client announced a capability, e.g. ``window.work_done_progress``."""
        try:
            node: Any = self.client_capabilities
        except Exception:
            return False
        for part in dotted.split("."):
            node = getattr(node, part, None)
            if node is None:
                return False
        return bool(node)

    def warn(self, message: str) -> None:
        params = types.ShowMessageParams(type=types.MessageType.Warning, message=message)
        self.call_soon(self.window_show_message, params)


__all__ = ["CodeEvidenceServer", "json_converter"]
