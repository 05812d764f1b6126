"""The code as it was at a commit, without touching the user's working tree.

``--as-of REF`` answers from a snapshot: ``git archive`` of that commit unpacked into the cache
and indexed like any folder. Snapshots are keyed by commit, so asking again is free, and their
chunks go through the shared content-addressed embedding cache, so only code that no longer
exists in any indexed tree costs embeddings.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import tempfile
from pathlib import Path

from .scan import git_output


class HistoryError(ValueError):
    """The reference does not name a commit of this repository."""


def resolve_commit(workspace: Path, ref: str) -> str:
    if not ref.strip() or ref.startswith("-"):
        raise HistoryError(f"not a git revision: {ref!r}")
    out = git_output(workspace, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}")
    if not out:
        raise HistoryError(f"{ref!r} does not name a commit in {workspace}")
    return out.decode().strip()


def snapshot(workspace: Path, ref: str, cache_root: Path) -> tuple[str, Path]:
    """(commit sha, folder holding the tree of the workspace at that commit)."""
    sha = resolve_commit(workspace, ref)
    if git_output(workspace, "rev-parse", "--show-toplevel") is None:
        raise HistoryError(f"{workspace} is not inside a git repository")
    digest = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:12]
    base = cache_root / "as-of" / f"{workspace.name}-{digest}-{sha[:12]}"
    tree = base / "tree"
    if tree.is_dir():
        return sha, tree
    base.mkdir(parents=True, exist_ok=True)
    unpack(workspace, sha, tree)
    return sha, tree


def unpack(workspace: Path, sha: str, dest: Path, links: bool = True) -> None:
    """The workspace's folder as of ``sha``, unpacked to ``dest`` (which must not exist) in one
    rename, so a half-unpacked tree is never seen. ``links=False`` leaves symlinks out."""
    # "." from inside the workspace: only its folder, with paths relative to it (a folder
    # named by its repository path would be looked up relative to the workspace, and missed).
    data = git_output(workspace, "archive", "--format=tar", sha, ".", timeout=600)
    if data is None:
        raise HistoryError(f"git archive of {sha[:12]} failed")
    tmp = Path(tempfile.mkdtemp(prefix="tree-", dir=dest.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = [m for m in tar.getmembers() if links or not (m.issym() or m.islnk())]
            # The data filter refuses absolute paths, links out and devices.
            tar.extractall(tmp, members=members, filter="data")
        tmp.rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def last_commits(
    workspace: Path, head: str, since: str | None = None
) -> dict[str, tuple[str, int]] | None:
    """Workspace-relative path -> (sha, commit time) of the newest commit that touched it, for
    the commits reachable from ``head`` (only those after ``since`` when given, for an
    incremental update). None when git cannot say (not a repository, a shallow or odd clone)."""
    args = ["log", "--relative", "--no-renames", "--name-only", "-z", "--format=%x1e%H %ct", head]
    if since:
        args.append(f"^{since}")
    out = git_output(workspace, *args, timeout=120)
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


def commit_time(workspace: Path, sha: str) -> int | None:
    out = git_output(workspace, "show", "-s", "--format=%ct", sha)
    text = out.decode().strip() if out else ""
    return int(text) if text.isdigit() else None


def is_ancestor(workspace: Path, older: str, newer: str) -> bool:
    return git_output(workspace, "merge-base", "--is-ancestor", older, newer) is not None
