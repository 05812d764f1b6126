"""URIs, paths and ranges between LSP and the engine.

The engine speaks workspace-relative POSIX paths and 1-based inclusive line spans; LSP speaks
``file://`` URIs and 0-based, end-exclusive positions. Every crossing goes through here so the
two conventions never mix. Whole-line ranges end at character 0 of the next line, which is
exact in any position encoding (UTF-8, UTF-16 or UTF-32) without reading the file.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..paths import resolve_workspace_path


class UriError(ValueError):
    """A URI the server cannot map to a file in one of its workspace folders."""


def uri_to_path(uri: str) -> Path:
    """The absolute local path of a ``file://`` URI (percent-decoded)."""
    if not isinstance(uri, str) or not uri:
        raise UriError("the document URI is empty")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        scheme = parts.scheme or "no scheme"
        raise UriError(f"only file:// URIs are supported, got {uri!r} ({scheme})")
    if parts.netloc not in ("", "localhost"):
        raise UriError(f"URI {uri!r} names a remote host ({parts.netloc}); only local files")
    path = unquote(parts.path)
    if "\0" in path:
        raise UriError(f"URI {uri!r} contains a NUL byte")
    # file:///C:/x on Windows: drop the slash before the drive letter.
    if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    if not path or not os.path.isabs(path):
        raise UriError(f"URI {uri!r} has no absolute path")
    return Path(path)


def path_to_uri(path: Path) -> str:
    return Path(os.path.abspath(path)).as_uri()


def relative_to(root: Path, path: Path) -> str | None:
    """``path`` as the engine's workspace-relative name, or None when it is outside ``root``
    (after resolving symlinks and ``..``)."""
    try:
        rel = resolve_workspace_path(root, str(path))
    except ValueError:
        return None
    return None if rel == "." else rel


def line_range(start: int, end: int) -> dict[str, dict[str, int]]:
    """1-based inclusive lines -> an LSP ``Range`` covering them whole."""
    first = max(start - 1, 0)
    last = max(end, first)
    return {"start": {"line": first, "character": 0}, "end": {"line": last, "character": 0}}


def location(root: Path, rel: str, start: int, end: int) -> dict[str, object]:
    """An LSP ``Location`` (as JSON) for lines of a workspace file."""
    return {"uri": path_to_uri(root / rel), "range": line_range(start, end)}


def location_link(root: Path, rel: str, line: int) -> str:
    """A markdown link target that opens ``rel`` at ``line`` (1-based); VS Code and most
    markdown renderers honour the ``#L`` fragment, others open the file."""
    return f"{path_to_uri(root / rel)}#L{line}"
