"""Where things live: the per-user cache root, a workspace's index folder, and a user's path
as the workspace-relative name the index uses.

One cache root for everything this project stores (indexes, the embedding cache, ``--as-of``
snapshots), so ``CODE_EVIDENCE_CACHE_DIR`` moves all of it at once.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import platformdirs

CACHE_DIR_ENV = "CODE_EVIDENCE_CACHE_DIR"


def cache_root() -> Path:
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env) if env else Path(platformdirs.user_cache_dir("code-evidence"))


def default_index_dir(workspace: Path) -> Path:
    """``<cache root>/<folder name>-<12 hex of sha256(absolute path)>``: one index per
    workspace folder, readable by name, never colliding between two folders of one name."""
    resolved = workspace.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    return cache_root() / f"{resolved.name or 'root'}-{digest}"


def resolve_workspace_path(root: Path, user_path: str) -> str:
    """A user's path (workspace-relative or absolute) as the workspace-relative POSIX path the
    index uses; ``"."`` for the root itself. The file need not exist.

    Containment is judged after resolving symlinks and ``..``; the returned name keeps a
    symlinked file's own name when that is where it lives, because the scan indexes links under
    their own path.
    """
    if not user_path or not user_path.strip():
        raise ValueError("empty path")
    if "\0" in user_path:
        raise ValueError(f"path {user_path!r} contains a NUL byte")
    root_real = os.path.realpath(root)
    root_abs = os.path.abspath(root)
    full = user_path if os.path.isabs(user_path) else os.path.join(root_real, user_path)
    real = os.path.realpath(full)
    if os.path.commonpath([real, root_real]) != root_real:
        raise ValueError(
            f"path {user_path!r} is outside the workspace {root_real} (resolves to {real})"
        )
    lexical = os.path.normpath(full)
    for base in (root_real, root_abs):
        rel = os.path.relpath(lexical, base)
        if rel == ".." or rel.startswith("../"):
            continue
        if os.path.realpath(os.path.join(root_real, rel)) == real:
            return Path(rel).as_posix()
    return Path(os.path.relpath(real, root_real)).as_posix()
