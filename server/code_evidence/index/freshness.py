"""How recently each file changed, from the workspace's git history (the freshness feature and
the embedding order read it).

One ``git log`` per HEAD: the newest commit touching each file, kept in the store; when HEAD
moves forward only the new commits are read. Through the hardened helper, like every git call.
The same log feeds the co-change table (``cochange.py``).
"""

from __future__ import annotations

from ..git import Git
from .cochange import LoggedCommit
from .store import Store


def read_log(git: Git, head: str, since: str | None = None) -> list[LoggedCommit] | None:
    """The commits reachable from ``head`` (only those after ``since`` when given, for an
    incremental update), newest first, each with the files it touched. None when git cannot
    say (not a repository, a shallow or odd clone)."""
    args = ["log", "--relative", "--no-renames", "--name-only", "-z", "--format=%x1e%H %ct", head]
    if since:
        args.append(f"^{since}")
    out = git.output(*args, timeout=120)
    if out is None:
        return None
    log: list[LoggedCommit] = []
    for record in out.decode("utf-8", "replace").split("\x1e"):
        header, _, names = record.partition("\0")
        parts = header.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        paths = dict.fromkeys(p for p in (n.strip("\n") for n in names.split("\0")) if p)
        log.append(LoggedCommit(parts[0], int(parts[1]), tuple(paths)))
    return log


def last_commits(log: list[LoggedCommit]) -> dict[str, tuple[str, int]]:
    """Workspace-relative path -> (sha, commit time) of the newest commit in ``log`` (newest
    first) that touched it."""
    found: dict[str, tuple[str, int]] = {}
    for commit in log:
        for name in commit.paths:
            if name not in found:  # newest first: the first sighting wins
                found[name] = (commit.sha, commit.time)
    return found


def commit_time(git: Git, sha: str) -> int | None:
    out = git.output("show", "-s", "--no-show-signature", "--format=%ct", sha)
    text = out.decode().strip() if out else ""
    return int(text) if text.isdigit() else None


def is_ancestor(git: Git, older: str, newer: str) -> bool:
    return git.output("merge-base", "--is-ancestor", older, newer) is not None


def update_history(git: Git, store: Store, head: str) -> None:
    """From one ``git log``: the newest commit touching each file (freshness) and which files
    changed together (co-change). Incremental when the new HEAD descends from the last one
    both were read at, a full walk otherwise (once per HEAD)."""
    previous = store.get_meta("history_head")
    since = (
        previous
        if previous
        and previous == store.get_meta("cochange_head")
        and is_ancestor(git, previous, head)
        else None
    )
    log = read_log(git, head, since)
    head_time = commit_time(git, head)
    if log is None or head_time is None:
        return
    with store.transaction():
        store.set_last_commits(last_commits(log), replace=since is None)
        store.cochange().record(log, replace=since is None)
        store.set_meta(
            {"history_head": head, "cochange_head": head, "history_head_time": str(head_time)}
        )
