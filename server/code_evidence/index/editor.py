"""What the editor tells the index: unsaved buffers, searched instead of the disk copy of their
files from the next pass on, and the files open in it, whose neighbourhood is embedded first so
answers improve where the user is while the rest of the workspace waits its turn."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..config import Config
from .indexer import PassInput


class EditorState:
    """Buffers and open files of one workspace, by workspace-relative path. The language
    server sets them on its own thread; a pass copies them when it starts."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._overlays: dict[str, str] = {}
        self._focus: frozenset[str] = frozenset()

    def set_overlay(self, rel: str, text: str | None) -> None:
        """``None`` goes back to the disk copy."""
        if text is None:
            self._overlays.pop(rel, None)
        else:
            self._overlays[rel] = text

    def set_focus(self, rels: Iterable[str]) -> None:
        self._focus = frozenset(rels)

    def exists(self, rel: str) -> bool:
        """A file answers may cite: an open buffer, or a file on disk."""
        return rel in self._overlays or (self.workspace / rel).is_file()

    def pass_input(self, config: Config, paths: frozenset[str] | None) -> PassInput:
        return PassInput(config, dict(self._overlays), self._focus, paths)
