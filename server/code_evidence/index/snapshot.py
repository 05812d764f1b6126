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
import shutil
import tempfile
from pathlib import Path

from ..git import Git, GitError, UnsafeTree
from .scan import is_secret_path

_SYMLINK, _GITLINK = "120000", "160000"


class HistoryError(ValueError):
    """The reference does not name a commit of this repository, or its tree cannot be
    written safely."""


def resolve_commit(git: Git, ref: str) -> str:
    if not ref.strip() or ref.startswith("-"):
        raise HistoryError(f"not a git revision: {ref!r}")
    if not git.is_repo():
        raise HistoryError(git.refusal or f"{git.root} is not a git repository")
    sha = git.resolve_commit(ref)
    if not sha:
        raise HistoryError(f"{ref!r} does not name a commit in {git.root}")
    return sha


def snapshot(git: Git, ref: str, cache_root: Path) -> tuple[str, Path]:
    """(commit sha, folder holding the tree of the workspace at that commit)."""
    sha = resolve_commit(git, ref)
    digest = hashlib.sha256(str(git.root).encode()).hexdigest()[:12]
    base = cache_root / "as-of" / f"{git.root.name}-{digest}-{sha[:12]}"
    tree = base / "tree"
    if tree.is_dir():
        return sha, tree
    base.mkdir(parents=True, exist_ok=True)
    try:
        unpack(git, sha, tree)
    except GitError as exc:
        raise HistoryError(str(exc)) from exc
    return sha, tree


def unpack(git: Git, sha: str, dest: Path, links: bool = True) -> None:
    """The workspace's folder as of ``sha``, written to ``dest`` (which must not exist) in one
    rename, so a half-written tree is never seen. ``links=False`` leaves symlinks out; secret
    files (``scan.is_secret_path``) and submodules are always left out. Raises
    :class:`git.UnsafeTree` before writing anything when the tree holds an unsafe path."""
    entries = git.tree(sha)
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
        parent.mkdir(exist_ok=True)
    target = parent / parts[-1]
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)  # a folder became a file
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o755 if executable else 0o644)
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
    link.parent.mkdir(parents=True, exist_ok=True)
    if not link.exists() and not link.is_symlink():
        os.symlink(target, link)


def last_commits(
    git: Git, head: str, since: str | None = None
) -> dict[str, tuple[str, int]] | None:
    """Workspace-relative path -> (sha, commit time) of the newest commit that touched it, for
    the commits reachable from ``head`` (only those after ``since`` when given, for an
    incremental update). None when git cannot say (not a repository, a shallow or odd clone)."""
    args = ["log", "--relative", "--no-renames", "--name-only", "-z", "--format=%x1e%H %ct", head]
    if since:
        args.append(f"^{since}")
    out = git.output(*args, timeout=120)
    if out is None:
        return None
    found: dict[str, tuple[str, int]] = {}
    for record in out.decode("utf-8", "replace").split("\x1e"):
        header, _, names = record.partition("\0")
        parts = header.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        sha, when = parts[0], int(parts[1])
        for name in names.split("\0"):
            name = name.strip("\n")
            if name and name not in found:  # newest first: the first sighting wins
                found[name] = (sha, when)
    return found


def commit_time(git: Git, sha: str) -> int | None:
    out = git.output("show", "-s", "--no-show-signature", "--format=%ct", sha)
    text = out.decode().strip() if out else ""
    return int(text) if text.isdigit() else None


def is_ancestor(git: Git, older: str, newer: str) -> bool:
    return git.output("merge-base", "--is-ancestor", older, newer) is not None


__all__ = [
    "HistoryError",
    "UnsafeTree",
    "commit_time",
    "is_ancestor",
    "last_commits",
    "resolve_commit",
    "snapshot",
    "unpack",
    "write_file",
]
