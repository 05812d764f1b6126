"""Which files change together, from the workspace's own git history: the co-change recall
channel and feature read it ("I'm in this file: what else must change with it?").

The indexer records, per commit reachable from HEAD (the past only), the files it touched, in
two store tables, from the same ``git log`` the freshness feature reads (one walk per HEAD,
incremental when HEAD moves forward; through the hardened helper like every git call). The
table is bounded: the newest :data:`MAX_COMMITS` commits, and a commit that touched more than
:data:`MAX_FILES` files (a mass rename, a formatting sweep) is kept only as its size, since it
says next to nothing about which files belong together. A plain folder has no history and so
no partners: the channel then contributes nothing.

A partner's strength is the share of the open file's (recency-weighted) commits that also
touched it, each commit counted less the more files it touched. It is a plain ratio in [0, 1],
so a feature weight means the same in every repository.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

MAX_COMMITS = 20_000  # newest commits kept
MAX_FILES = 100  # a commit touching more is kept as its size only
SMALL_COMMIT = 4  # a commit touching up to this many files counts fully
HALF_LIFE_DAYS = 365.0  # a commit a year older than HEAD counts half
RECENT_COMMITS = 300  # the open file's newest commits read per question (bounded per request)
MIN_STRENGTH = 0.05  # weaker partners are noise (one big commit long ago)

DDL = """
CREATE TABLE IF NOT EXISTS commits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    sha TEXT NOT NULL UNIQUE,
    time INTEGER NOT NULL,
    n_files INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS commit_files (commit_id INTEGER NOT NULL, path TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS commit_files_path ON commit_files(path);
CREATE INDEX IF NOT EXISTS commit_files_commit ON commit_files(commit_id);
"""


@dataclass(frozen=True, slots=True)
class LoggedCommit:
    """One commit of ``git log``: its files, workspace-relative."""

    sha: str
    time: int
    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Partner:
    """A file that changed together with the open file: how strongly (see the module
    docstring), in how many commits, and when last (unix time)."""

    path: str
    strength: float
    count: int
    last_time: int


def commit_weight(n_files: int) -> float:
    """How much one commit says about its files belonging together: fully up to
    :data:`SMALL_COMMIT` files, then less and less (a sweep of 100 files counts 0.03)."""
    others = max(1, n_files - 1)
    return min(1.0, (SMALL_COMMIT - 1) / others)


class CoChangeTable:
    """The two tables on the store's connection (writes inside the store's transaction)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def record(self, log: Iterable[LoggedCommit], replace: bool) -> None:
        """Within the caller's transaction: add the commits (newest first, as git logs them),
        then keep only the newest :data:`MAX_COMMITS`."""
        if replace:
            self.db.execute("DELETE FROM commit_files")
            self.db.execute("DELETE FROM commits")
        for i, commit in enumerate(log):
            if i >= MAX_COMMITS:
                break
            cur = self.db.execute(
                "INSERT OR IGNORE INTO commits(sha, time, n_files) VALUES(?,?,?)",
                (commit.sha, commit.time, len(commit.paths)),
            )
            if cur.rowcount != 1 or not 1 < len(commit.paths) <= MAX_FILES:
                continue  # already known, or nothing to pair (one file) or a sweep
            cid = cur.lastrowid
            self.db.executemany(
                "INSERT INTO commit_files(commit_id, path) VALUES(?,?)",
                [(cid, p) for p in commit.paths],
            )
        self.db.execute(
            "DELETE FROM commits WHERE id NOT IN "
            "(SELECT id FROM commits ORDER BY time DESC, id LIMIT ?)",
            (MAX_COMMITS,),
        )
        self.db.execute("DELETE FROM commit_files WHERE commit_id NOT IN (SELECT id FROM commits)")

    def partners(self, path: str, head_time: int, limit: int) -> list[Partner]:
        """The ``limit`` strongest partners of ``path`` over its newest
        :data:`RECENT_COMMITS` commits, strongest first (none when git history is missing)."""
        try:
            rows = self.db.execute(
                "SELECT c.id, c.time, c.n_files, o.path FROM "
                "(SELECT c0.id, c0.time, c0.n_files FROM commit_files f "
                " JOIN commits c0 ON c0.id = f.commit_id WHERE f.path = ? "
                " ORDER BY c0.time DESC LIMIT ?) c "
                "JOIN commit_files o ON o.commit_id = c.id",
                (path, RECENT_COMMITS),
            ).fetchall()
        except sqlite3.OperationalError:  # an index from before these tables, read-only
            return []
        commits: dict[int, float] = {}
        found: dict[str, list[float]] = {}  # path -> [weight, count, last time]
        for cid, when, n_files, other in rows:
            recency = 2.0 ** (-max(0, head_time - when) / 86400 / HALF_LIFE_DAYS)
            commits[cid] = recency
            if other == path:
                continue
            acc = found.setdefault(other, [0.0, 0, 0])
            acc[0] += recency * commit_weight(n_files)
            acc[1] += 1
            acc[2] = max(acc[2], when)
        total = sum(commits.values())
        if not total:
            return []
        out = [
            Partner(p, w / total, int(n), int(t))
            for p, (w, n, t) in found.items()
            if w / total >= MIN_STRENGTH
        ]
        out.sort(key=lambda x: (-x.strength, x.path))
        return out[:limit]
