"""What an index pass must do: the comparison of the workspace (or of the files the watcher
saw change) with what the store holds, and the key that decides when everything is read again.

Status asks the same question as a pass without running one, so it lives apart from the pass.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from ..config import IndexConfig
from ..filekinds import TEST_RULES_VERSION
from ..secrets import DETECTOR_VERSION
from .chunk import CHUNKER_VERSION
from .scan import FileEntry
from .store import FileRow, Store


def vector_target(reader: Store) -> int:
    """How many chunks get a vector once every pass is done: all but those the policy leaves
    to BM25 (``filekinds.wants_vector``), counted by the index passes."""
    return reader.counts()[1] - int(reader.get_meta("bm25_only") or 0)


def chunking_key(cfg: IndexConfig) -> str:
    """What decides how a file is read and cut (and which of its parts are secret): a pass
    under another key re-reads and re-chunks every file, and re-decides every skip."""
    decided = {
        "include_generated": cfg.include_generated,
        "max_file_bytes": cfg.max_file_bytes,
        "max_line_chars": cfg.max_line_chars,
        "window_lines": cfg.window_lines,
        "window_overlap": cfg.window_overlap,
        "max_chunk_lines": cfg.max_chunk_lines,
        "secrets": DETECTOR_VERSION,
        "tests": TEST_RULES_VERSION,
        "chunker": CHUNKER_VERSION,
    }
    return json.dumps(decided, sort_keys=True)


@dataclass(frozen=True, slots=True)
class Plan:
    """What an index pass must do, from comparing the scan with the store."""

    to_read: list[FileEntry]
    removed: list[str]
    known: dict[str, FileRow]  # the stored rows of the files to read (all, when rechunking)
    rechunk: bool = False  # the chunking key changed: every file is read and cut again


def plan(reader: Store, entries: list[FileEntry], key: str) -> Plan:
    """Compare the scan with what is indexed by size and mtime, and with what was read and
    skipped by size, mtime and mode; everything, when ``key`` (:func:`chunking_key`) is not
    the one the index was built under. Reads the committed state, so status can call it
    while a pass runs. Only the stats of every file are read; whole rows (imports decoded)
    only for the files to read, so a warm restart of a large workspace decodes none."""
    stats = file_stats(reader)
    skipped = reader.skipped_stats()
    present = {e.path for e in entries}
    removed = [p for p in [*stats, *skipped] if p not in present]
    if reader.get_meta("chunking") != key:
        return Plan(list(entries), removed, reader.files(), rechunk=bool(stats or skipped))
    to_read = [
        e
        for e in entries
        if stats.get(e.path) != (e.size, e.mtime_ns)
        and skipped.get(e.path) != (e.size, e.mtime_ns, e.mode)
    ]
    known = {e.path: row for e in to_read if e.path in stats and (row := reader.file_row(e.path))}
    return Plan(to_read, removed, known)


def plan_paths(reader: Store, entries: list[FileEntry], paths: set[str], key: str) -> Plan | None:
    """:func:`plan` for a pass over ``paths`` only (what the watcher saw change; ``entries``:
    those of them the scan keeps). None when a full pass is due instead: the chunking key
    changed, or a path that is gone was a folder of indexed files."""
    if reader.get_meta("chunking") != key:
        return None
    present = {e.path: e for e in entries}
    known: dict[str, FileRow] = {}
    removed: list[str] = []
    to_read: list[FileEntry] = []
    for path in sorted(paths):
        row, skip = reader.file_row(path), _skipped_stat(reader, path)
        if row is not None:
            known[path] = row
        entry = present.get(path)
        if entry is None:
            if row is not None or skip is not None:
                removed.append(path)
            elif _has_files_under(reader, path):
                return None
        elif (row is None or (row.size, row.mtime_ns) != (entry.size, entry.mtime_ns)) and skip != (
            entry.size,
            entry.mtime_ns,
            entry.mode,
        ):
            to_read.append(entry)
    return Plan(to_read, removed, known)


def overlay_stamp(text: str) -> tuple[int, int]:
    """A (size, mtime) pair for an editor buffer: a negative content-derived "mtime" can never
    equal a real one, so closing the buffer makes the disk copy look changed again."""
    digest = hashlib.sha256(text.encode("utf-8", "replace")).digest()
    return len(text), -(int.from_bytes(digest[:7], "big") + 1)


def overlaid(entries: list[FileEntry], overlays: dict[str, str]) -> list[FileEntry]:
    """The scanned files with editor buffers standing in for their disk copies."""
    return [
        FileEntry(e.path, *overlay_stamp(overlays[e.path])) if e.path in overlays else e
        for e in entries
    ]


def _skipped_stat(reader: Store, path: str) -> tuple[int, int, int] | None:
    """The stat a skipped file was skipped at (see ``Store.skipped_stats``), for one path."""
    query = "SELECT size, mtime_ns, mode FROM skipped_files WHERE path=?"
    row = reader.db.execute(query, (path,)).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def _has_files_under(reader: Store, folder: str) -> bool:
    """Whether any indexed file lies under ``folder`` (a folder moved or deleted)."""
    low = folder.rstrip("/") + "/"
    high = low[:-1] + "0"  # "0" follows "/": every path with the prefix sorts before it
    query = "SELECT 1 FROM files WHERE path >= ? AND path < ? LIMIT 1"
    return reader.db.execute(query, (low, high)).fetchone() is not None


def file_stats(reader: Store) -> dict[str, tuple[int, int]]:
    """Every indexed file's (size, mtime): all :func:`plan` compares, no row decoded."""
    rows = reader.db.execute("SELECT path, size, mtime_ns FROM files")
    return {path: (size, mtime) for path, size, mtime in rows}


def chunks_per_file(reader: Store) -> dict[str, int]:
    return dict(reader.db.execute("SELECT path, count(*) FROM chunks GROUP BY path"))
