"""The code as it was at a commit, without touching the user's working tree.

``--as-of REF`` answers from a snapshot: that commit's tree written into the cache from
``git ls-tree`` and ``git cat-file`` (never ``git archive``, which applies the repository's
smudge filters) and indexed like any folder. Snapshots are keyed by commit, so asking again is
free, and their chunks go through the shared content-addressed embedding cache, so only code
that no longer exists in any indexed tree costs embeddings.

A tree from history is untrusted: a path that is ``.git``, ``..`` or absolute refuses the
whole commit (:class:`git.UnsafeTree`), secret files are not written, and a symlink is kept
only when it points inside the snapshot.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import shutil
import tempfile
from pathlib import Path

from ..git import Git, GitError
from ..paths import private_dir
from ..secrets import is_secret_path


class UnsafeTree(GitError):
    """A commit whose tree holds a path that must never be written (``.git``, ``..``, ...)."""

    def __init__(self, commit: str, path: str, why: str) -> None:
        super().__init__(
            f"commit {commit[:12]} holds an unsafe path {path!r} ({why}); it was not unpacked"
        )
        self.commit = commit
        self.path = path


_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_path(path: str) -> str | None:
    """Why a path from a git tree must not be written into a folder, or None when it is fine.

    Git's own checkout refuses these; a tree from history can still hold them (any tool can
    write such objects, and a clone does not check by default). Components are split on both
    separators, so a name that is ``.git`` on Windows is caught here too.
    """
    if not path:
        return "empty path"
    if "\0" in path:
        return "NUL byte"
    if path.startswith(("/", "\\")) or _DRIVE.match(path):
        return "absolute path"
    for part in re.split(r"[/\\]", path):
        if part in ("", ".", ".."):
            return "'..' or an empty component" if part == ".." else "empty or '.' component"
        name = part.rstrip(". ").lower()  # Windows ignores trailing dots and spaces
        if name == ".git" or name == "git~1":
            return "a .git folder"
    return None


_SYMLINK, _GITLINK = "120000", "160000"


class SnapshotError(ValueError):
    """The reference does not name a commit of this repository, or its tree cannot be
    written safely."""


def resolve_commit(git: Git, ref: str) -> str:
    if not ref.strip() or ref.startswith("-"):
        raise SnapshotError(f"not a git revision: {ref!r}")
    if not git.is_repo():
        raise SnapshotError(git.refusal or f"{git.root} is not a git repository")
    sha = git.resolve_commit(ref)
    if not sha:
        raise SnapshotError(f"{ref!r} does not name a commit in {git.root}")
    return sha


def snapshot(git: Git, ref: str, cache_root: Path) -> tuple[str, Path]:
    """(commit sha, folder holding the tree of the workspace at that commit)."""
    sha = resolve_commit(git, ref)
    digest = hashlib.sha256(str(git.root).encode()).hexdigest()[:12]
    base = cache_root / "as-of" / f"{git.root.name}-{digest}-{sha[:12]}"
    tree = base / "tree"
    if tree.is_dir():
        return sha, tree
    private_dir(cache_root, repair=False)  # (the engine repairs the root when it is ours)
    private_dir(cache_root / "as-of")
    private_dir(base)
    try:
        unpack(git, sha, tree)
    except GitError as exc:
        raise SnapshotError(str(exc)) from exc
    return sha, tree


def unpack(git: Git, sha: str, dest: Path, links: bool = True) -> None:
    """The workspace's folder as of ``sha``, written to ``dest`` (which must not exist) in one
    rename, so a half-written tree is never seen. ``links=False`` leaves symlinks out; secret
    files (``secrets.is_secret_path``) and submodules are always left out. Raises
    :class:`git.UnsafeTree` before writing anything when the tree holds an unsafe path."""
    entries = git.tree(sha)
    for e in entries:  # every path checked before anything is written
        why = unsafe_path(e.path)
        if why is not None:
            raise UnsafeTree(sha, e.path, why)
    tmp = Path(tempfile.mkdtemp(prefix="tree-", dir=dest.parent))
    try:
        symlinks = []
        with git.blobs() as blobs:
            for e in entries:
                if e.mode == _GITLINK or e.kind != "blob" or is_secret_path(e.path):
                    continue
                if e.mode == _SYMLINK:
                    symlinks.append(e)
                    continue
                data = blobs.read_object(e.oid)
                if data is not None:
                    write_file(tmp, e.path, data, executable=e.mode == "100755")
            if links:
                for e in symlinks:
                    target = blobs.read_object(e.oid)
                    if target is not None:
                        _link_inside(tmp, e.path, target.decode("utf-8", "surrogateescape"))
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_file(root: Path, path: str, data: bytes, executable: bool = False) -> None:
    """Write ``data`` at ``root/path`` (a path :func:`git.unsafe_path` accepted), never
    through a symlink: each folder on the way must be a real folder inside ``root``."""
    parent = root
    parts = path.split("/")
    for part in parts[:-1]:
        parent = parent / part
        if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
            parent.unlink()  # a file (or link) became a folder between two commits
        parent.mkdir(mode=0o700, exist_ok=True)
    target = parent / parts[-1]
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)  # a folder became a file
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o700 if executable else 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _link_inside(root: Path, path: str, target: str) -> None:
    """A symlink only when it is relative and lands inside ``root`` (an absolute link or one
    that climbs out is left out, as the working-tree scan would not follow it either)."""
    if not target or os.path.isabs(target) or "\0" in target:
        return
    landed = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if landed == ".." or landed.startswith("../") or is_secret_path(landed):
        return
    link = root / path
    link.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not link.exists() and not link.is_symlink():
        os.symlink(target, link)


__all__ = [
    "SnapshotError",
    "UnsafeTree",
    "resolve_commit",
    "snapshot",
    "unpack",
    "unsafe_path",
    "write_file",
]
