"""How often each file changed in the workspace's own git history: the change-frequency prior.

A change question asked without an open file ("fix(binding): dereference pointer to struct")
names a place only loosely, and several files of a package match its words about equally. The
file that changed most often in the past is the likelier one to change again: this is the
oldest finding of defect prediction (past changes predict future ones better than size or
complexity), and it needs no data beyond the co-change tables the indexer already keeps
(``cochange.py``: the past only, reachable from HEAD, so it can never see the change asked
about).

The count is recency-weighted like co-change (a commit a year older than HEAD counts half) and
each commit counts less the more files it touched (a sweep says nothing about one file), so a
file's churn is "how many focused recent changes it had". Commits that touched one file only
are not in those tables (they pair nothing); every file loses them alike, so the order they
give stays close to the full count's.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .cochange import HALF_LIFE_DAYS, commit_weight
from .store import Store


def churn(store: Store, paths: Iterable[str]) -> dict[str, float]:
    """path -> its recency-weighted count of focused commits, 0 for a path git never saw in
    one (a plain folder, or an index from before the history tables: empty)."""
    head_time = store.get_meta("history_head_time")
    if head_time is None:
        return {}
    return counts(store.db, int(head_time), paths)


def counts(db: sqlite3.Connection, head: int, paths: Iterable[str]) -> dict[str, float]:
    """:func:`churn` on the co-change tables of ``db``, as seen from ``head`` (unix time)."""
    path_list = list(dict.fromkeys(paths))
    out = dict.fromkeys(path_list, 0.0)
    try:
        for i in range(0, len(path_list), 500):
            part = path_list[i : i + 500]
            marks = ",".join("?" * len(part))
            rows = db.execute(
                "SELECT f.path, c.time, c.n_files FROM commit_files f "
                f"JOIN commits c ON c.id = f.commit_id WHERE f.path IN ({marks})",
                part,
            )
            for path, when, n_files in rows:
                recency = 2.0 ** (-max(0, head - when) / 86400 / HALF_LIFE_DAYS)
                out[path] += recency * commit_weight(n_files)
    except sqlite3.OperationalError:  # an index from before these tables, read-only
        return {}
    return out
