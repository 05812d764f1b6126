"""The pygls language server: LSP handlers over :class:`FolderSession`.

Threads: pygls runs handlers on its asyncio loop; every engine call goes to ``pool`` (requests)
or to a session's index thread, so the loop only parses, routes and answers. Requests are
``async`` and await their pool work, which is what makes ``$/cancelRequest`` effective: pygls
cancels the awaiting task and answers ``RequestCancelled`` at once. Everything that talks to
the client from another thread is handed to the loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from cattrs import Converter
from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from .. import __version__
from ..api import FindRequest
from ..config import ConfigError
from ..engine import EngineError
from ..paths import default_index_dir
from . import hover, lenses, protocol
from .session import FolderSession
from .uris import UriError, relative_to, uri_to_path

log = logging.getLogger(__name__)
T = TypeVar("T")

FIND_WAIT_FOR_EDITS_S = 3.0  # how long a find waits for unsaved edits to be indexed
PROGRESS_CREATE_TIMEOUT_S = 30.0


def json_converter() -> Converter:
    """lsprotocol's converter, but custom messages keep their params and results as plain
    JSON (pygls would turn them into namedtuples, renaming keys that are not identifiers, so
    a misspelt key could not even be reported by its name)."""
    conv = converters.get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, lambda obj, c: c(**obj))
    return conv


def invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


class _Protocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the LSP types (a hover whose position is
    null, a line that is a string) without answering, so the client would wait forever. Answer
    it with InvalidParams instead, and drop the message (a malformed notification is only
    logged, as JSON-RPC has no way to answer it)."""

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

    def index_changed(self) -> None:
        srv = self.server
        if srv.supports("workspace.code_lens.refresh_support"):
            srv.call_soon(srv.protocol.send_request, types.WORKSPACE_CODE_LENS_REFRESH, None)


class CodeEvidenceServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "code-evidence",
            __version__,
            converter_factory=json_converter,
            protocol_cls=_Protocol,
        )
        self.index_dir: Path | None = None
        self.sessions: dict[Path, FolderSession] = {}
        self.failed: dict[Path, str] = {}  # folders whose engine could not open, and why
        self.loop: asyncio.AbstractEventLoop | None = None
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ce-request")
        self.settings = protocol.Settings()
        self.settings_warnings: list[str] = []
        self.progress_cancel: dict[str, threading.Event] = {}
        self.related = hover.RelatedCache()
        self.reporter = _Reporter(self)
        self._multi_root = False
        # The user's opt-in to run git in repositories other users own: only from
        # initializationOptions (what the editor's own configuration starts the server with),
        # never from settings that a workspace's files can carry.
        self.trust_other_owner = False

    # -- plumbing ----------------------------------------------------------------
    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        if self.loop is None or self.loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop is shutting down
            self.loop.call_soon_threadsafe(fn, *args)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Blocking work that is not an engine read (waits, session start/stop)."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def read(self, session: FolderSession, fn: Callable[..., T], *args: Any) -> T:
        """Engine reads go to the folder's read thread (see FolderSession)."""
        return await asyncio.wrap_future(session.submit(fn, *args))

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

    # -- folders -----------------------------------------------------------------
    def index_dir_for(self, root: Path) -> Path | None:
        if self.index_dir is None:
            return None
        if not self._multi_root:
            return self.index_dir
        return self.index_dir / default_index_dir(root).name

    def open_folder(self, root: Path) -> FolderSession | None:
        root = root.resolve()
        if root in self.sessions:
            return self.sessions[root]
        try:
            session = FolderSession(
                root,
                self.reporter,
                self.index_dir_for(root),
                trust_other_owner=self.trust_other_owner,
            )
        except (EngineError, ConfigError, OSError) as exc:
            self.failed[root] = str(exc)
            log.error("cannot open %s: %s", root, exc)
            return None
        session.apply_settings(self.settings)
        self.sessions[root] = session
        self.failed.pop(root, None)
        return session

    def close_all(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        for s in sessions:
            try:
                s.close()
            except Exception:
                log.exception("closing %s failed", s.root)

    def session_for_uri(self, uri: str, where: str) -> tuple[FolderSession, str]:
        try:
            path = uri_to_path(uri)
        except UriError as exc:
            raise invalid(f"{where}: {exc}") from exc
        best: tuple[FolderSession, str] | None = None
        for root, session in self.sessions.items():
            rel = relative_to(root, path)
            if rel is not None and (best is None or len(str(root)) > len(str(best[0].root))):
                best = (session, rel)
        if best is not None:
            return best
        for root, why in self.failed.items():
            if relative_to(root, path) is not None:
                raise invalid(f"{where}: the workspace folder {root} could not be opened: {why}")
        roots = ", ".join(str(r) for r in self.sessions) or "none"
        raise invalid(f"{where}: {uri} is outside the workspace folders ({roots})")

    def default_session(self, where: str) -> FolderSession:
        for session in self.sessions.values():
            return session
        why = "; ".join(f"{r}: {m}" for r, m in self.failed.items()) or "none was given"
        raise invalid(f"{where}: no workspace folder is open ({why})")

    def apply_settings(self, raw: dict[str, Any]) -> None:
        self.settings, warnings = protocol.parse_settings(raw)
        for s in self.sessions.values():
            s.apply_settings(self.settings)
        for w in warnings:
            self.warn(f"codeEvidence settings: {w}; ignored")

    def document_text(self, session: FolderSession, rel: str) -> str | None:
        text = session.buffer(rel)
        if text is not None:
            return text
        try:
            return (session.root / rel).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    # -- requests ----------------------------------------------------------------
    async def find(self, raw: object, where: str, explained: bool = False) -> dict[str, Any]:
        try:
            p = protocol.parse_find_params(raw, where)
        except protocol.ParamsError as exc:
            raise invalid(str(exc)) from exc
        rel = None
        if p.uri is not None:
            session, rel = self.session_for_uri(p.uri, where)
            if not session.exists(rel):
                raise invalid(f"{where}: unknown document {p.uri}: it is not open and not on disk")
            await self.run(session.wait_for_buffers, FIND_WAIT_FOR_EDITS_S)
        else:
            session = self.default_session(where)
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
        try:
            if p.as_of is not None:
                result = await self.read(session, session.find_as_of, req, p.as_of)
            else:
                result = await self.read(session, session.find, req)
        except EngineError as exc:
            raise invalid(f"{where}: {exc}") from exc
        return protocol.find_answer(result, session.root, state, explained)

    async def hover(self, params: types.HoverParams) -> types.Hover | None:
        try:
            session, rel = self.session_for_uri(params.text_document.uri, "hover")
        except JsonRpcInvalidParams:
            return None  # a library file or an untitled buffer: nothing indexed to show
        text = self.document_text(session, rel)
        if text is None:
            return None
        lines = text.splitlines(keepends=True)
        if params.position.line >= len(lines):
            return None
        column = self.workspace.position_codec.position_from_client_units(
            lines, params.position
        ).character
        name = hover.identifier_at(lines[params.position.line].rstrip("\r\n"), column)
        if name is None:
            return None
        line = params.position.line + 1
        facts = await self.read(session, self._hover_facts, session, rel, line, name)
        if facts is None:
            return None
        value = hover.render(session.root, facts)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value)
        )

    def _hover_facts(
        self, session: FolderSession, rel: str, line: int, name: str
    ) -> hover.HoverFacts | None:
        key = (session.generation, str(session.root), name, rel, line)
        related = self.related.get(key)
        if related is None:
            related = session.related(rel, line, name)
            self.related.put(key, related)
        if not related.definitions and not related.caller_count:
            return None
        return hover.HoverFacts(related, _where(session))

    async def code_lens(self, params: types.CodeLensParams) -> list[types.CodeLens]:
        uri = params.text_document.uri
        try:
            session, rel = self.session_for_uri(uri, types.TEXT_DOCUMENT_CODE_LENS)
        except JsonRpcInvalidParams:
            return []  # outside every workspace folder: no lenses, and no error popup
        outline = await self.read(session, session.outline, rel)
        return lenses.unresolved(outline, uri)

    async def resolve_lens(self, lens: types.CodeLens) -> types.CodeLens:
        try:
            uri, symbol, line = lenses.lens_data(lens)
        except ValueError as exc:
            raise invalid(str(exc)) from exc
        session, rel = self.session_for_uri(uri, types.CODE_LENS_RESOLVE)

        found = await self.read(session, session.related, rel, line, lenses.lens_name(symbol))
        count, related = found.caller_count, [*found.callers, *found.related]
        return lenses.resolved(lens, session.root, uri, count, related)

    def status_of(self, root: Path | None) -> dict[str, Any]:
        if root is not None and root in self.failed:
            return protocol.status_payload(root, "error", self.failed[root])
        session = self.sessions.get(root) if root else self.default_session(protocol.CMD_STATUS)
        if session is None:
            raise invalid(f"{protocol.CMD_STATUS}: {root} is not a workspace folder")
        return session.status_payload()


def _where(session: FolderSession) -> str:
    commit, branch = session.indexed_head()
    return f"{branch or 'no branch'}@{(commit or 'no commit')[:10]} · {session.index_state()}"


SERVER = CodeEvidenceServer()


@SERVER.feature(types.INITIALIZE)
def on_initialize(ls: CodeEvidenceServer, params: types.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    options = params.initialization_options
    if isinstance(options, dict):
        trust = options.pop(protocol.TRUST_OTHER_OWNER, False)
        if not isinstance(trust, bool):
            ls.settings_warnings.append(
                f"initialization option {protocol.TRUST_OTHER_OWNER!r} must be true or false; "
                "ignored"
            )
        ls.trust_other_owner = trust is True
    section = protocol.settings_section(options)
    if section is not None:
        ls.settings, ls.settings_warnings = protocol.parse_settings(section)
    roots: list[Path] = []
    for folder in params.workspace_folders or []:
        try:
            roots.append(uri_to_path(folder.uri))
        except UriError as exc:
            ls.settings_warnings.append(f"workspace folder skipped: {exc}")
    if not roots and (params.root_uri or params.root_path):
        try:
            root_uri = params.root_uri
            roots.append(uri_to_path(root_uri) if root_uri else Path(params.root_path or "."))
        except UriError as exc:
            ls.settings_warnings.append(f"workspace root skipped: {exc}")
    ls._multi_root = len(roots) > 1
    for root in roots:
        ls.open_folder(root)


@SERVER.feature(types.INITIALIZED)
async def on_initialized(ls: CodeEvidenceServer, params: types.InitializedParams) -> None:
    for w in ls.settings_warnings:
        ls.warn(f"codeEvidence: {w}")
    for root, why in ls.failed.items():
        ls.reporter.status(protocol.status_payload(root, "error", why))
        ls.warn(f"Code Evidence cannot open {root}: {why}")
    for session in list(ls.sessions.values()):
        await ls.run(session.start)
    if ls.supports("workspace.configuration"):
        await _pull_settings(ls)


async def _pull_settings(ls: CodeEvidenceServer) -> None:
    item = types.ConfigurationItem(section=protocol.SETTINGS_SECTION)
    try:
        values = await ls.workspace_configuration_async(types.ConfigurationParams(items=[item]))
    except Exception as exc:  # a client that announces but fails the request
        log.warning("workspace/configuration failed: %s", exc)
        return
    if values and isinstance(values[0], dict) and values[0]:
        ls.apply_settings(values[0])


@SERVER.feature(types.SHUTDOWN)
async def on_shutdown(ls: CodeEvidenceServer, params: None) -> None:
    await ls.run(ls.close_all)


def _buffer(ls: CodeEvidenceServer, uri: str, closed: bool = False) -> FolderSession | None:
    try:
        session, rel = ls.session_for_uri(uri, "textDocument")
    except JsonRpcInvalidParams:
        return None  # a document outside the workspace (or not a file): nothing to index
    text = None if closed else ls.workspace.get_text_document(uri).source
    session.set_buffer(rel, text)
    return session


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: CodeEvidenceServer, params: types.DidOpenTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: CodeEvidenceServer, params: types.DidChangeTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: CodeEvidenceServer, params: types.DidSaveTextDocumentParams) -> None:
    session = _buffer(ls, params.text_document.uri)
    if session is not None and session.watcher.error:
        session.request_pass("file saved")


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: CodeEvidenceServer, params: types.DidCloseTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri, closed=True)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: CodeEvidenceServer, params: types.DidChangeConfigurationParams
) -> None:
    section = protocol.settings_section(params.settings)
    if section is not None:
        ls.apply_settings(section)
    elif ls.supports("workspace.configuration"):
        await _pull_settings(ls)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
async def did_change_folders(
    ls: CodeEvidenceServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    ls._multi_root = True
    for folder in params.event.removed:
        try:
            root = uri_to_path(folder.uri).resolve()
        except UriError:
            continue
        ls.failed.pop(root, None)
        session = ls.sessions.pop(root, None)
        if session is not None:
            await ls.run(session.close)
    for folder in params.event.added:
        try:
            root = uri_to_path(folder.uri)
        except UriError as exc:
            ls.warn(f"codeEvidence: workspace folder skipped: {exc}")
            continue
        session = ls.open_folder(root)
        if session is not None:
            await ls.run(session.start)


@SERVER.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
def progress_cancel(ls: CodeEvidenceServer, params: types.WorkDoneProgressCancelParams) -> None:
    event = ls.progress_cancel.get(str(params.token))
    if event is not None:
        event.set()


@SERVER.feature(protocol.FIND_REQUEST)
async def find_request(ls: CodeEvidenceServer, params: Any) -> dict[str, Any]:
    return await ls.find(params, protocol.FIND_REQUEST)


@SERVER.feature(protocol.EXPLAIN_REQUEST)
async def explain_request(ls: CodeEvidenceServer, params: Any) -> dict[str, Any]:
    return await ls.find(params, protocol.EXPLAIN_REQUEST, explained=True)


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
async def on_hover(ls: CodeEvidenceServer, params: types.HoverParams) -> types.Hover | None:
    return await ls.hover(params)


@SERVER.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=True))
async def on_code_lens(
    ls: CodeEvidenceServer, params: types.CodeLensParams
) -> list[types.CodeLens]:
    return await ls.code_lens(params)


@SERVER.feature(types.CODE_LENS_RESOLVE)
async def on_code_lens_resolve(ls: CodeEvidenceServer, lens: types.CodeLens) -> types.CodeLens:
    return await ls.resolve_lens(lens)


@SERVER.command(protocol.CMD_FIND)
async def cmd_find(ls: CodeEvidenceServer, *args: Any) -> dict[str, Any]:
    if len(args) != 1:
        raise invalid(
            f"{protocol.CMD_FIND} takes one argument, the {protocol.FIND_REQUEST} params "
            f"object; got {len(args)}"
        )
    return await ls.find(args[0], protocol.CMD_FIND)


@SERVER.command(protocol.CMD_REINDEX)
async def cmd_reindex(ls: CodeEvidenceServer, *args: Any) -> list[dict[str, Any]]:
    if args:
        raise invalid(f"{protocol.CMD_REINDEX} takes no arguments; got {len(args)}")
    sessions = list(ls.sessions.values())
    waits = [(s, s.request_pass("reindex requested", progress=True)) for s in sessions]
    for session, generation in waits:
        await ls.run(session.wait_for, generation, 24 * 3600)
    out = [await ls.run(s.status_payload) for s in sessions]
    out.extend(protocol.status_payload(root, "error", why) for root, why in ls.failed.items())
    return out


@SERVER.command(protocol.CMD_STATUS)
async def cmd_status(ls: CodeEvidenceServer, *args: Any) -> dict[str, Any]:
    if len(args) > 1 or (args and not isinstance(args[0], str)):
        raise invalid(f"{protocol.CMD_STATUS} takes no argument or one workspace folder URI")
    root = None
    if args:
        try:
            root = uri_to_path(args[0]).resolve()
        except UriError as exc:
            raise invalid(f"{protocol.CMD_STATUS}: {exc}") from exc
    return await ls.run(ls.status_of, root)


@SERVER.command(protocol.CMD_SHOW_RELATED)
def cmd_show_related(ls: CodeEvidenceServer, *args: Any) -> list[Any]:
    """Editors map this lens command to their references view; a client that sends it to the
    server instead gets the locations back."""
    if len(args) != 3 or not isinstance(args[2], list):
        raise invalid(f"{protocol.CMD_SHOW_RELATED} takes [uri, position, locations]")
    return args[2]


def custom_methods() -> list[str]:
    """The non-LSP methods this server handles (what README.md must list)."""
    return sorted(m for m in SERVER.protocol.fm.features if m.startswith("codeEvidence/"))


def commands() -> list[str]:
    return sorted(SERVER.protocol.fm.commands)


def serve(index_dir: str | None = None) -> int:
    """Run over stdio until the client exits. Logs go to stderr (stdout is the protocol)."""
    level = os.environ.get("CODE_EVIDENCE_LOG_LEVEL", "WARNING").upper()
    fmt = "%(levelname)s %(name)s: %(message)s"
    logging.basicConfig(level=level, stream=sys.stderr, format=fmt)
    SERVER.index_dir = Path(index_dir).expanduser().resolve() if index_dir else None
    SERVER.start_io()
    return 0


__all__ = ["SERVER", "CodeEvidenceServer", "commands", "custom_methods", "serve"]
