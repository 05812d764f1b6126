"""Where things live: the per-user cache root, a workspace's index folder, and a user's path
as the workspace-relative name the index uses.

One cache root for everything this project stores (indexes, the embedding cache, ``--as-of``
snapshots), so ``CODE_EVIDENCE_CACHE_DIR`` moves all of it at once.

What is stored there is real file text (secrets a file holds included, masked only when shown)
and the user's questions, so it is private to the user: folders 0700, files 0600, whatever the
umask, and modes an older version left are repaired when an index opens
(:func:`private_dir`, :func:`create_private_file`, :func:`restrict_tree`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable
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


def changed_paths(root: Path, paths: Iterable[str]) -> frozenset[str] | None:
    """Changed files (a watcher's, an editor's) as the index names them; None (scan
    everything) when one is the root or leaves the workspace (a link out of it): only the
    full scan decides those."""
    out = set()
    for path in paths:
        try:
            rel = resolve_workspace_path(root, path)
        except ValueError:
            return None
        if rel == ".":
            return None
        out.add(rel)
    return frozenset(out)


PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def _restrict(path: str | Path, st: os.stat_result) -> None:
    """Give ``path`` the private mode of its kind when it has another, and it is ours to
    change (best effort: a read-only file system is reported elsewhere)."""
    if st.st_uid != os.geteuid():
        return
    if stat.S_ISDIR(st.st_mode):
        want = PRIVATE_DIR_MODE
    elif stat.S_ISREG(st.st_mode):
        # An executable file (a snapshot's script) stays executable, for its owner only.
        want = 0o700 if st.st_mode & stat.S_IXUSR else PRIVATE_FILE_MODE
    else:
        return
    if stat.S_IMODE(st.st_mode) != want:
        with contextlib.suppress(OSError):
            os.chmod(path, want, follow_symlinks=False)


def private_dir(path: Path, repair: bool = True) -> Path:
    """``path`` as a folder only its owner can enter: created 0700 with any missing parents,
    or (``repair``) set to 0700 when it exists. Raises OSError when it cannot be created."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, PRIVATE_DIR_MODE)
        with contextlib.suppress(OSError):
            os.chmod(folder, PRIVATE_DIR_MODE)  # the umask may have taken bits away
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    if repair or missing:
        with contextlib.suppress(OSError):
            _restrict(path, os.lstat(path))
    return path


def private_cache_root() -> Path:
    """The cache root, created private. An existing one is repaired when it is the default
    location (ours by name); a folder the user named in ``CODE_EVIDENCE_CACHE_DIR`` keeps the
    mode it has (it may be a folder they share), while everything created in it is private."""
    return private_dir(cache_root(), repair=not os.environ.get(CACHE_DIR_ENV))


# What an index folder holds (``lexical`` is a folder of Tantivy's files).
WATCH_PROBE = "watch-probe"  # the file watcher's probe files (live/watch.py, FolderWatcher.fence)
INDEX_ENTRIES = (
    "store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "requests.jsonl", "requests.tmp",
    "tuned.json", "tuned.tmp", "writer.lock", "vectors.usearch", "vectors.usearch.log", "lexical",
    WATCH_PROBE,
)  # fmt: skip


def private_index_dir(index_dir: Path) -> None:
    """Create the index folder private, or repair the modes of an index an older version
    wrote with the umask's (0755 folders, 0644 files). Only an index folder is repaired (one
    that holds a store, or nothing yet), and in it only what an index holds: ``--index-dir``
    may name a folder that holds other things too."""
    ours = not index_dir.exists() or (index_dir / "store.sqlite").exists()
    if not ours:
        with contextlib.suppress(OSError):
            ours = not any(index_dir.iterdir())
    private_dir(index_dir, repair=ours)
    for name in INDEX_ENTRIES:
        entry = index_dir / name
        if entry.is_dir() and not entry.is_symlink():
            restrict_tree(entry)
        else:
            with contextlib.suppress(OSError):
                _restrict(entry, os.lstat(entry))


def create_private_file(path: Path) -> None:
    """Create ``path`` empty and 0600 unless it exists; an existing one gets 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), PRIVATE_FILE_MODE)
    try:
        with contextlib.suppress(OSError):
            if stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE_MODE:
                os.fchmod(fd, PRIVATE_FILE_MODE)
    finally:
        os.close(fd)


def open_private(path: Path, mode: str = "a") -> int:
    """A file descriptor on ``path`` (``"a"``: append, ``"w"``: truncate), created 0600."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    flags |= os.O_APPEND if mode == "a" else os.O_TRUNC
    fd = os.open(path, flags, PRIVATE_FILE_MODE)
    with contextlib.suppress(OSError):
        if stat.S_IMODE(os.fstat(fd).st_mode) != PRIVATE_FILE_MODE:
            os.fchmod(fd, PRIVATE_FILE_MODE)
    return fd


def restrict_tree(root: Path) -> None:
    """Folders 0700 and files 0600 under ``root`` (itself included), symlinks not followed:
    what Tantivy and older versions wrote with the umask's modes."""
    with contextlib.suppress(OSError):
        _restrict(root, os.lstat(root))
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            full = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                _restrict(full, os.lstat(full))
