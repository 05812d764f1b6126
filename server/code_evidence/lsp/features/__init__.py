"""What the language server answers: one LSP feature a module, each registering its handlers.

``find`` (``codeEvidence/find``, ``codeEvidence/explain``, the find command), ``hover``,
``lenses`` (code lenses and their resolve), ``documents`` (open, change, save, close),
``workspace`` (lifecycle, settings, folders, progress cancel) and ``commands`` (reindex, status,
showRelated). Handlers are thin: they validate, find the folder's session and hand the work to
it. ``register`` is called once, by ``app.py``, on the server it creates.
"""

from __future__ import annotations

from ..server import CodeEvidenceServer
from . import commands, documents, find, hover, lenses, workspace


def register(server: CodeEvidenceServer) -> None:
    for feature in (workspace, documents, find, hover, lenses, commands):
        feature.register(server)
