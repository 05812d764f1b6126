"""The workspace folders the editor opened: one :class:`FolderSession` each, and the ones that
could not open, with why.

Every request names a document or none; this registry finds the folder it belongs to (the
innermost, for nested folders) or says in the error why there is none: outside every folder,
in a folder whose index could not open, or no folder at all. It also decides where each
folder's index lives when the server was given one ``--index-dir``: that folder itself for a
single root, one subfolder per root once there are several.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..config import ConfigError
from ..engine import EngineError
from ..paths import default_index_dir
from . import protocol
from .protocol import invalid
from .session import FolderSession, Reporter
from .uris import UriError, relative_to, uri_to_path

log = logging.getLogger(__name__)


class Folders:
    """The open folders by resolved root, the failed ones with their reason, and what every
    new folder starts with (settings, the owner opt-in, where its index goes)."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        self.index_dir: Path | None = None  # ``serve --index-dir``
        self.sessions: dict[Path, FolderSession] = {}
        self.failed: dict[Path, str] = {}  # folders whose engine could not open, and why
        self.settings = protocol.Settings()
        self.multi_root = False
        # Settings pulls started (workspace/configuration): an answer to an older pull than
        # the newest is stale, since a change may have been pushed in between.
        self.settings_pulls = 0
        # The user's opt-in to run git in repositories other users own: only from
        # initializationOptions (what the editor's own configuration starts the server with),
        # never from settings that a workspace's files can carry.
        self.trust_other_owner = False

    def index_dir_for(self, root: Path) -> Path | None:
        if self.index_dir is None:
            return None
        if not self.multi_root:
            return self.index_dir
        return self.index_dir / default_index_dir(root).name

    def open(self, root: Path) -> FolderSession | None:
        """The folder's session, opened now if need be; None (and a reason in ``failed``)
        when its engine cannot open."""
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

    def remove(self, root: Path) -> FolderSession | None:
        """Forget a folder the editor closed; the caller closes the session it gets back."""
        self.failed.pop(root, None)
        return self.sessions.pop(root, None)

    def close_all(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        for s in sessions:
            try:
                s.close()
            except Exception:
                log.exception("closing %s failed", s.root)

    def apply_settings(self, settings: protocol.Settings) -> None:
        self.settings = settings
        for s in self.sessions.values():
            s.apply_settings(settings)

    def session_for_uri(self, uri: str, where: str) -> tuple[FolderSession, str]:
        """The session of the innermost folder holding ``uri`` and the document's path in it;
        InvalidParams, saying why, when there is none."""
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
        """The first folder, for a request that names no document."""
        return self.all_sessions(where)[0]

    def all_sessions(self, where: str) -> list[FolderSession]:
        """Every open folder, for a question that names no document; InvalidParams, saying
        why, when none is open."""
        if self.sessions:
            return list(self.sessions.values())
        why = "; ".join(f"{r}: {m}" for r, m in self.failed.items()) or "none was given"
        raise invalid(f"{where}: no workspace folder is open ({why})")

    def session_for_folder(self, uri: str, where: str) -> FolderSession:
        """The session of the workspace folder ``uri`` names (a question asked of one folder
        of a multi-root workspace)."""
        try:
            root = uri_to_path(uri).resolve()
        except UriError as exc:
            raise invalid(f"{where}: {exc}") from exc
        if root in self.sessions:
            return self.sessions[root]
        if root in self.failed:
            raise invalid(
                f"{where}: the workspace folder {root} could not be opened: {self.failed[root]}"
            )
        roots = ", ".join(str(r) for r in self.sessions) or "none"
        raise invalid(f"{where}: {uri} is not a workspace folder ({roots})")
