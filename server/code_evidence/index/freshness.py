"""How recently each file changed, from the workspace's git history (the freshness feature and
the embedding order read it).

One ``git log`` per HEAD: the newest commit touching each file, kept in the store; when HEAD
moves forward only the new commits are read. Through the hardened helper, like every git call.
"""

from __future__ import annotations

from ..git import Git


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
