"""Open documents: ``textDocument/didOpen``, ``didChange``, ``didSave`` and ``didClose``.

The editor's buffer is what the user sees, saved or not, so it is what gets searched: each
change hands the buffer to the folder's pass scheduler, which indexes it at the next debounced
pass (and only when it differs from the disk copy). A document outside every workspace folder
is not indexed and raises nothing.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ..server import CodeEvidenceServer
from ..session import FolderSession


def _buffer(
    ls: CodeEvidenceServer, uri: str, closed: bool = False
) -> tuple[FolderSession, str] | None:
    try:
        session, rel = ls.folders.session_for_uri(uri, "textDocument")
    except JsonRpcInvalidParams:
        return None  # a document outside the workspace (or not a file): nothing to index
    text = None if closed else ls.workspace.get_text_document(uri).source
    session.passes.set_buffer(rel, text)
    return session, rel


def did_open(ls: CodeEvidenceServer, params: types.DidOpenTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri)


def did_change(ls: CodeEvidenceServer, params: types.DidChangeTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri)


def did_save(ls: CodeEvidenceServer, params: types.DidSaveTextDocumentParams) -> None:
    """Without a file watcher, a save is the only news of a change on disk."""
    found = _buffer(ls, params.text_document.uri)
    if found is not None and found[0].passes.watch_error:
        found[0].passes.request_pass("file saved", paths=[found[1]])


def did_close(ls: CodeEvidenceServer, params: types.DidCloseTextDocumentParams) -> None:
    _buffer(ls, params.text_document.uri, closed=True)


def register(server: CodeEvidenceServer) -> None:
    server.feature(types.TEXT_DOCUMENT_DID_OPEN)(did_open)
    server.feature(types.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    server.feature(types.TEXT_DOCUMENT_DID_SAVE)(did_save)
    server.feature(types.TEXT_DOCUMENT_DID_CLOSE)(did_close)
