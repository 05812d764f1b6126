"""The workspace's lifecycle: ``initialize``, ``initialized`` and ``shutdown``; settings
(``workspace/didChangeConfiguration`` and ``workspace/configuration``); workspace folders
added and removed; and ``window/workDoneProgress/cancel``, which stops an index pass.

Folders open at ``initialize`` (so a request right after it finds them) and start indexing at
``initialized``, once the client can take progress and status notifications. Problems found
before then (bad settings, unusable folders) are shown once the client is listening.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from lsprotocol import types

from .. import protocol
from ..server import CodeEvidenceServer
from ..session import FolderSession
from ..uris import UriError, path_to_uri, uri_to_path

log = logging.getLogger(__name__)


def on_initialize(ls: CodeEvidenceServer, params: types.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    folders = ls.folders
    options = params.initialization_options
    if isinstance(options, dict):
        trust = options.pop(protocol.TRUST_OTHER_OWNER, False)
        if not isinstance(trust, bool):
            ls.settings_warnings.append(
                f"initialization option {protocol.TRUST_OTHER_OWNER!r} must be true or false; "
                "ignored"
            )
        folders.trust_other_owner = trust is True
    section = protocol.settings_section(options)
    if section is not None:
        folders.settings, ls.settings_warnings = protocol.parse_settings(section)
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
    folders.multi_root = len(roots) > 1
    for root in roots:
        folders.open(root)


async def on_initialized(ls: CodeEvidenceServer, params: types.InitializedParams) -> None:
    for w in ls.settings_warnings:
        ls.warn(f"codeEvidence: {w}")
    for root, why in ls.folders.failed.items():
        ls.reporter.status(protocol.status_payload(root, "error", why))
        ls.warn(f"Code Evidence cannot open {root}: {why}")
    for session in list(ls.folders.sessions.values()):
        _warn_config(ls, session)
        await ls.run(session.start)
    if ls.supports("workspace.configuration"):
        await _pull_settings(ls)


async def on_shutdown(ls: CodeEvidenceServer, params: None) -> None:
    await ls.run(ls.folders.close_all)


def apply_settings(ls: CodeEvidenceServer, raw: dict[str, Any]) -> None:
    """Valid settings apply to every folder at once; each bad one is shown as a warning."""
    settings, warnings = protocol.parse_settings(raw)
    ls.folders.apply_settings(settings)
    for w in warnings:
        ls.warn(f"codeEvidence settings: {w}; ignored")


async def _pull_settings(ls: CodeEvidenceServer, only: FolderSession | None = None) -> None:
    """Each folder's own settings (``scopeUri``: an editor's per-folder settings override the
    user's for that folder); an empty answer leaves the folder as the push set it."""
    sessions = [only] if only is not None else list(ls.folders.sessions.values())
    if not sessions:
        return
    items = [
        types.ConfigurationItem(scope_uri=path_to_uri(s.root), section=protocol.SETTINGS_SECTION)
        for s in sessions
    ]
    if only is None:  # a folder just added asks for its own and supersedes nothing
        ls.folders.settings_pulls += 1
    pull = ls.folders.settings_pulls
    try:
        values = await ls.workspace_configuration_async(types.ConfigurationParams(items=items))
    except Exception as exc:  # a client that announces but fails the request
        log.warning("workspace/configuration failed: %s", exc)
        return
    if only is None and pull != ls.folders.settings_pulls:
        return  # a newer pull is on its way: this answer may predate the last change
    warned: set[str] = set()
    for session, value in zip(sessions, values or [], strict=False):
        if not isinstance(value, dict) or not value:
            continue
        settings, warnings = protocol.parse_settings(value)
        session.apply_settings(settings)
        for w in warnings:
            if w not in warned:
                warned.add(w)
                ls.warn(f"codeEvidence settings: {w}; ignored")


async def did_change_configuration(
    ls: CodeEvidenceServer, params: types.DidChangeConfigurationParams
) -> None:
    section = protocol.settings_section(params.settings)
    pull = ls.supports("workspace.configuration")
    if section is not None and pull:
        # The baseline for folders opened later; each open folder's own settings (and the
        # warnings about them) come from the pull.
        ls.folders.apply_settings(protocol.parse_settings(section)[0])
    elif section is not None:
        apply_settings(ls, section)
    if pull:
        await _pull_settings(ls)


async def did_change_folders(
    ls: CodeEvidenceServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    folders = ls.folders
    folders.multi_root = True
    for folder in params.event.removed:
        try:
            root = uri_to_path(folder.uri).resolve()
        except UriError:
            continue
        session = folders.remove(root)
        if session is not None:
            await ls.run(session.close)
    for folder in params.event.added:
        try:
            root = uri_to_path(folder.uri)
        except UriError as exc:
            ls.warn(f"codeEvidence: workspace folder skipped: {exc}")
            continue
        session = folders.open(root)
        if session is not None:
            _warn_config(ls, session)
            if ls.supports("workspace.configuration"):
                await _pull_settings(ls, session)
            await ls.run(session.start)


def _warn_config(ls: CodeEvidenceServer, session: FolderSession) -> None:
    if session.engine.config_error:
        ls.warn(f"Code Evidence, {session.root}: {session.engine.config_error}")


def progress_cancel(ls: CodeEvidenceServer, params: types.WorkDoneProgressCancelParams) -> None:
    event = ls.progress_cancel.get(str(params.token))
    if event is not None:
        event.set()


def register(server: CodeEvidenceServer) -> None:
    server.feature(types.INITIALIZE)(on_initialize)
    server.feature(types.INITIALIZED)(on_initialized)
    server.feature(types.SHUTDOWN)(on_shutdown)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)(did_change_folders)
    server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)(progress_cancel)
