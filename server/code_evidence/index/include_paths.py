"""Path-style imports of C/C++ (``#include "..."``), Ruby (``require``/``require_relative``) and
PHP (``require``/``include``) mapped to workspace files.

All three name a file by a path that the compiler or interpreter searches for in a few places:
next to the including file, at the project root, and in include or load directories the build
configures and we do not read. So: the including file's folder first, then the root, then any
file whose path ends with the specifier, nearest to the including file first. Pure path
arithmetic over the known paths, like ``imports.py``.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable


def _norm(base: str, spec: str) -> str | None:
    """``spec`` joined to ``base`` and normalised; ``None`` above the workspace root."""
    joined = posixpath.normpath(posixpath.join(base, spec)) if base else posixpath.normpath(spec)
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


def _shared_depth(a: str, b: str) -> int:
    """How many leading folders two paths share."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


class IncludePaths:
    """Lookups by file name, so a suffix match is a dict hit plus a filter."""

    def __init__(self, known: Iterable[str]) -> None:
        self.known = frozenset(known)
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.known):
            self._by_name[posixpath.basename(path)].append(path)

    def ending_with(self, rel: str) -> list[str]:
        """Known paths equal to ``rel`` or ending with ``/rel``."""
        return [
            p
            for p in self._by_name.get(posixpath.basename(rel), [])
            if p == rel or p.endswith("/" + rel)
        ]

    def _nearest(self, path: str, cands: list[str]) -> list[str]:
        """The candidate nearest to ``path`` (most shared folders, then shallowest)."""
        if not cands:
            return []
        return [min(cands, key=lambda c: (-_shared_depth(path, c), c.count("/"), c))]

    def _here_or_root(self, path: str, spec: str) -> list[str]:
        for base in (posixpath.dirname(path), ""):
            cand = _norm(base, spec)
            if cand is not None and cand in self.known:
                return [cand]
        return []

    # ------------------------------------------------------------------ C / C++

    def include(self, path: str, spec: str) -> list[str]:
        """``#include "net/socket.h"``: beside the file, at the root, then the nearest file
        whose path ends with it (an include directory we were not told about)."""
        spec = spec.strip()
        if not spec or spec.startswith("/"):
            return []
        found = self._here_or_root(path, spec)
        if found:
            return found
        rel = posixpath.normpath(spec)
        if rel.startswith(".."):
            rel = rel.lstrip("./")  # "../include/x.h" from a folder we cannot place: by suffix
        return self._nearest(path, self.ending_with(rel)) if rel else []

    # ------------------------------------------------------------------ Ruby

    def require(self, path: str, spec: str) -> list[str]:
        """``./x`` (``require_relative``) from the file's folder; a load-path ``require``
        from ``lib/`` folders (a gem's, or an app's), or by its full path when it has folders.
        A one-word ``require "json"`` matches only a ``lib/json.rb``: otherwise it is a gem."""
        spec = spec.strip()
        if not spec:
            return []
        rel = spec if spec.endswith(".rb") else f"{spec}.rb"
        if spec.startswith(("./", "../")):
            cand = _norm(posixpath.dirname(path), rel)
            return [cand] if cand is not None and cand in self.known else []
        if rel.startswith("/"):
            return []
        in_lib = self.ending_with(f"lib/{rel}")
        if in_lib:
            return self._nearest(path, in_lib)
        if "/" in rel:
            if rel in self.known:
                return [rel]
            return self._nearest(path, self.ending_with(rel))
        return []

    # ------------------------------------------------------------------ PHP

    def php_include(self, path: str, spec: str) -> list[str]:
        """``require __DIR__ . '/x.php'`` (recorded as ``./x.php``) and ``include 'lib/y.php'``:
        beside the file, at the root, then by path suffix when the path has folders."""
        spec = spec.strip()
        if not spec or spec.startswith("/"):
            return []
        found = self._here_or_root(path, spec)
        if found or "/" not in spec.lstrip("./"):
            return found
        rel = posixpath.normpath(spec).lstrip("./")
        return self._nearest(path, self.ending_with(rel)) if rel else []
