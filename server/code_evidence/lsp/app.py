"""The one language server of this process, with every feature registered: what
``code-evidence serve`` runs.

Kept apart from ``server.py`` so the dependencies point one way: the features import the server
class they run on, and this module imports both. Importing it registers everything, which is
what :func:`custom_methods` and :func:`commands` (the README's list of extensions) rely on.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from . import features
from .server import CodeEvidenceServer

SERVER = CodeEvidenceServer()
features.register(SERVER)


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
    SERVER.folders.index_dir = Path(index_dir).expanduser().resolve() if index_dir else None
    SERVER.start_io()
    return SERVER.exit_code


__all__ = ["SERVER", "commands", "custom_methods", "serve"]
