"""SQLite store: the source of truth for files, chunks, import edges and call names.

Tantivy and USearch are derived from it. Every update is one transaction that also raises the
``derived_dirty`` flag; the flag is cleared only after the derived indexes are committed, so a
crash at any point is detected on the next open and the derived indexes are rebuilt from here
instead of serving a half state.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..api import Chunk
from .cochange import DDL as COCHANGE_DDL
from .cochange import CoChangeTable
from .generated import GENERATED_META, GeneratedFiles
from .storefile import (
    StoreCorrupt,
    StoreOutdated,
    StoreUnwritable,
    connect_reader,
    connect_writer,
)

# An index built under another schema is rebuilt on open (with a note), never an error.
SCHEMA_VERSION = "7"
__all__ = ["SCHEMA_VERSION", "Store", "StoreCorrupt", "StoreOutdated", "StoreUnwritable"]

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    language TEXT,
    imports TEXT NOT NULL DEFAULT '[]',
    encoding_errors INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    language TEXT NOT NULL,
    text TEXT NOT NULL,
    hash TEXT NOT NULL,
    calls TEXT NOT NULL DEFAULT '[]',
    is_test INTEGER NOT NULL DEFAULT 0,
    is_generated INTEGER NOT NULL DEFAULT 0,
    is_vendor INTEGER NOT NULL DEFAULT 0,
    emb_key TEXT,
    secrets TEXT NOT NULL DEFAULT '[]',
    commit_sha TEXT,
    indexed_at TEXT
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_name ON chunks(name);
CREATE TABLE IF NOT EXISTS calls (chunk_id INTEGER NOT NULL, name TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS calls_name ON calls(name);
CREATE INDEX IF NOT EXISTS calls_chunk ON calls(chunk_id);
CREATE TABLE IF NOT EXISTS skipped_files (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    mode INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_history (
    path TEXT PRIMARY KEY,
    sha TEXT NOT NULL,
    time INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS import_edges (src TEXT NOT NULL, dst TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS import_src ON import_edges(src);
CREATE INDEX IF NOT EXISTS import_dst ON import_edges(dst);
"""
_DDL += COCHANGE_DDL


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    language: str | None
    imports: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored, with its row id (the key in the lexical and vector indexes)."""

    id: int
    chunk: Chunk
    emb_key: str | None

    @property
    def name(self) -> str:
        return symbol_name(self.chunk.symbol)


def symbol_name(symbol: str) -> str:
    """The last component of a qualified symbol: what call sites name."""
    return symbol.rsplit(".", 1)[-1] if symbol else ""


_CHUNK_COLS = (
    "id, path, start, end, symbol, kind, language, text, hash, calls, "
    "is_test, is_generated, is_vendor, emb_key, secrets"
)


_FILE_COLS = "path, size, mtime_ns, content_hash, language, imports"


def _row_to_file(r: tuple) -> FileRow:
    return FileRow(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5])))


def _row_to_chunk(row: sqlite3.Row | tuple) -> StoredChunk:
    (cid, path, start, end, symbol, kind, language, text, hsh, calls, t, g, v, emb, sec) = row
    return StoredChunk(
        id=cid,
        chunk=Chunk(
            path=path,
            start=start,
            end=end,
            symbol=symbol,
            kind=kind,
            language=language,
            text=text,
            hash=hsh,
            calls=tuple(json.loads(calls)),
            is_test=bool(t),
            is_generated=bool(g),
            is_vendor=bool(v),
            secrets=tuple(tuple(s) for s in json.loads(sec)) if sec != "[]" else (),  # type: ignore[misc]
        ),
        emb_key=emb,
    )


class Store:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._snapshots = 0  # depth of nested snapshot() blocks
        try:
            self.db = connect_reader(path) if read_only else connect_writer(path, _DDL)
            version = self.get_meta("schema_version")
            if version is None and not read_only:
                self.set_meta_now({"schema_version": SCHEMA_VERSION})
            elif version is not None and version != SCHEMA_VERSION:
                self.db.close()
                raise StoreOutdated(version, SCHEMA_VERSION)
            self.db.execute("SELECT count(*) FROM chunks").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(f"{path}: {exc}") from exc

    _generated: tuple[str | None, GeneratedFiles] | None = None

    def close(self) -> None:
        self.db.close()

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def set_meta_now(self, values: dict[str, str | None]) -> None:
        """In a transaction of its own."""
        with self.transaction():
            self.set_meta(values)

    def set_meta(self, values: dict[str, str | None]) -> None:
        """Within the caller's transaction (see :meth:`transaction`)."""
        self.db.executemany(
            "INSERT INTO meta(key, value) VALUES(?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            list(values.items()),
        )

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Every read inside the block sees one committed state of the store, whatever a
        writer commits meanwhile (a read transaction: WAL readers never block the writer).
        Nested blocks share the outermost one. One connection, one thread: see
        ``IndexParts.reader``."""
        if self._snapshots == 0:
            self.db.execute("BEGIN DEFERRED")
            self.db.execute("SELECT 1 FROM meta LIMIT 1").fetchall()  # the snapshot starts here
        self._snapshots += 1
        try:
            yield self
        finally:
            self._snapshots -= 1
            if self._snapshots == 0:
                self.db.rollback()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.rollback()
            raise
        self.db.commit()

    # -- files --------------------------------------------------------------
    def files(self) -> dict[str, FileRow]:
        rows = self.db.execute(f"SELECT {_FILE_COLS} FROM files").fetchall()
        return {r[0]: _row_to_file(r) for r in rows}

    def skipped_stats(self) -> dict[str, tuple[int, int, int]]:
        """Files read once and skipped (binary, minified, ...), with the stat that decided it
        (size, mtime, mode: a ``chmod`` making a file readable changes only the mode)."""
        rows = self.db.execute("SELECT path, size, mtime_ns, mode FROM skipped_files")
        return {p: (size, mtime, mode) for p, size, mtime, mode in rows}

    def skipped_reasons(self) -> dict[str, int]:
        """How many remembered skips there are for each reason (``minified``, ``binary``...)."""
        return dict(self.db.execute("SELECT reason, count(*) FROM skipped_files GROUP BY reason"))

    def set_skipped(self, path: str, size: int, mtime_ns: int, mode: int, reason: str) -> None:
        self.db.execute(
            "INSERT INTO skipped_files(path, size, mtime_ns, mode, reason) VALUES(?,?,?,?,?) "
            "ON CONFLICT(path) DO UPDATE SET size=excluded.size, mtime_ns=excluded.mtime_ns, "
            "mode=excluded.mode, reason=excluded.reason",
            (path, size, mtime_ns, mode, reason),
        )

    def forget_skipped(self, paths: Iterable[str]) -> None:
        self.db.executemany("DELETE FROM skipped_files WHERE path=?", [(p,) for p in paths])

    def set_last_commits(self, commits: dict[str, tuple[str, int]], replace: bool) -> None:
        """Within the caller's transaction: the newest commit touching each path (what the
        freshness feature reads)."""
        if replace:
            self.db.execute("DELETE FROM file_history")
        self.db.executemany(
            "INSERT INTO file_history(path, sha, time) VALUES(?,?,?) "
            "ON CONFLICT(path) DO UPDATE SET sha=excluded.sha, time=excluded.time",
            [(p, sha, t) for p, (sha, t) in commits.items()],
        )

    def cochange(self) -> CoChangeTable:
        """Which files changed together (``cochange.py``), on this connection."""
        return CoChangeTable(self.db)

    def commit_times(self, paths: Iterable[str]) -> dict[str, int]:
        path_list = list(dict.fromkeys(paths))
        out: dict[str, int] = {}
        for i in range(0, len(path_list), 500):
            part = path_list[i : i + 500]
            marks = ",".join("?" * len(part))
            for p, t in self.db.execute(
                f"SELECT path, time FROM file_history WHERE path IN ({marks})", part
            ):
                out[p] = t
        return out

    def file_row(self, path: str) -> FileRow | None:
        r = self.db.execute(f"SELECT {_FILE_COLS} FROM files WHERE path=?", (path,)).fetchone()
        return None if r is None else _row_to_file(r)

    def paths(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT path FROM files")]

    def paths_ending(self, name: str, limit: int) -> list[str]:
        """Up to ``limit`` indexed files that are ``name`` or end with ``/name`` (case
        matters): read in SQLite, not by listing every path for one question."""
        tail = "/" + name
        rows = self.db.execute(
            "SELECT path FROM files WHERE path = ? OR substr(path, -?) = ? LIMIT ?",
            (name, len(tail), tail, limit),
        )
        return [r[0] for r in rows]

    def chunks_of(self, path: str) -> list[StoredChunk]:
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE path=? ORDER BY start", (path,)
        ).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def get_chunks(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        out: dict[int, StoredChunk] = {}
        id_list = list(dict.fromkeys(ids))
        for i in range(0, len(id_list), 500):
            part = id_list[i : i + 500]
            marks = ",".join("?" * len(part))
            for r in self.db.execute(
                f"SELECT {_CHUNK_COLS} FROM chunks WHERE id IN ({marks})", part
            ):
                sc = _row_to_chunk(r)
                out[sc.id] = sc
        return out

    def chunk_ids(self) -> list[int]:
        return [r[0] for r in self.db.execute("SELECT id FROM chunks")]

    def all_chunks(self) -> Iterator[StoredChunk]:
        for r in self.db.execute(f"SELECT {_CHUNK_COLS} FROM chunks ORDER BY id"):
            yield _row_to_chunk(r)

    def counts(self) -> tuple[int, int]:
        files = self.db.execute("SELECT count(*) FROM files").fetchone()[0]
        chunks = self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return files, chunks

    def replace_file(
        self,
        row: FileRow,
        keep: Sequence[tuple[int, Chunk]],
        new_chunks: Sequence[tuple[Chunk, str | None]],
        encoding_errors: bool = False,
        commit: str | None = None,
        indexed_at: str | None = None,
    ) -> tuple[list[int], list[int]]:
        """Within the caller's transaction: upsert a file, keep the chunk rows in ``keep``
        (id and the chunk as it is now: an unchanged chunk moves when lines above it change,
        and its secret spans with it, while its vector and BM25 document stay valid), delete
        its other chunks, insert ``new_chunks`` stamped with the commit they were indexed at.
        Returns (removed ids, added ids)."""
        old = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path=?", (row.path,))]
        kept = {cid for cid, _ in keep}
        removed = [cid for cid in old if cid not in kept]
        self._delete_chunk_ids(removed)
        self.db.executemany(
            "UPDATE chunks SET start=?, end=?, secrets=? WHERE id=?",
            [(ch.start, ch.end, json.dumps(ch.secrets), cid) for cid, ch in keep],
        )
        self.db.execute(
            "INSERT INTO files(path, size, mtime_ns, content_hash, language, imports, "
            "encoding_errors) VALUES(?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET "
            "size=excluded.size, mtime_ns=excluded.mtime_ns, content_hash=excluded.content_hash, "
            "language=excluded.language, imports=excluded.imports, "
            "encoding_errors=excluded.encoding_errors",
            (
                row.path,
                row.size,
                row.mtime_ns,
                row.content_hash,
                row.language,
                json.dumps(list(row.imports)),
                int(encoding_errors),
            ),
        )
        rows = [
            (chunk.path, chunk.start, chunk.end, chunk.symbol, symbol_name(chunk.symbol),
             chunk.kind, chunk.language, chunk.text, chunk.hash,
             json.dumps(list(chunk.calls)) if chunk.calls else "[]", int(chunk.is_test),
             int(chunk.is_generated), int(chunk.is_vendor), emb_key,
             json.dumps(chunk.secrets) if chunk.secrets else "[]", commit, indexed_at)
            for chunk, emb_key in new_chunks
        ]  # fmt: skip
        self.db.executemany(
            "INSERT INTO chunks(path, start, end, symbol, name, kind, language, text, hash, "
            "calls, is_test, is_generated, is_vendor, emb_key, secrets, commit_sha, "
            "indexed_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        # AUTOINCREMENT ids of one statement's rows on one connection are consecutive.
        last = self.db.execute("SELECT last_insert_rowid()").fetchone()[0] if rows else 0
        added = list(range(last - len(rows) + 1, last + 1))
        self.db.executemany(
            "INSERT INTO calls(chunk_id, name) VALUES(?, ?)",
            [(cid, n) for cid, (ch, _) in zip(added, new_chunks, strict=True) for n in ch.calls],
        )
        return removed, added

    def set_emb_keys(self, keys: Sequence[tuple[int, str]]) -> None:
        with self.transaction():
            self.db.executemany("UPDATE chunks SET emb_key=? WHERE id=?", [(k, i) for i, k in keys])

    def touch_file(self, path: str, size: int, mtime_ns: int) -> None:
        """Content unchanged, only the stat changed (a checkout rewrote the same bytes)."""
        self.db.execute("UPDATE files SET size=?, mtime_ns=? WHERE path=?", (size, mtime_ns, path))

    def remove_file(self, path: str) -> list[int]:
        ids = [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path=?", (path,))]
        self._delete_chunk_ids(ids)
        self.db.execute("DELETE FROM files WHERE path=?", (path,))
        self.db.execute("DELETE FROM import_edges WHERE src=?", (path,))
        return ids

    def _delete_chunk_ids(self, ids: Sequence[int]) -> None:
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            self.db.execute(f"DELETE FROM chunks WHERE id IN ({marks})", part)
            self.db.execute(f"DELETE FROM calls WHERE chunk_id IN ({marks})", part)

    # -- graph --------------------------------------------------------------
    def generated_files(self) -> GeneratedFiles:
        """Build outputs and twins as the last index pass found them (``generated.py``),
        parsed once per index generation."""
        raw = self.get_meta(GENERATED_META)
        if self._generated is None or self._generated[0] != raw:
            self._generated = (raw, GeneratedFiles.from_json(raw))
        return self._generated[1]

    def imports_of(self, path: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT dst FROM import_edges WHERE src=?", (path,))]

    def chunk_ids_of(self, path: str) -> list[int]:
        """Ids only: the neighbourhood of a module imported everywhere is thousands of chunks,
        and reading their text to learn their ids cost the hover its time budget."""
        return [r[0] for r in self.db.execute("SELECT id FROM chunks WHERE path=?", (path,))]

    def emb_keys(self, ids: Sequence[int]) -> dict[int, str]:
        out: dict[int, str] = {}
        for i in range(0, len(ids), 500):
            part = list(ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for cid, key in self.db.execute(
                f"SELECT id, emb_key FROM chunks WHERE id IN ({marks}) AND emb_key IS NOT NULL",
                part,
            ):
                out[cid] = key
        return out

    def importers_of(self, path: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT src FROM import_edges WHERE dst=?", (path,))]

    def chunks_named(self, names: Iterable[str], limit: int = 200) -> list[StoredChunk]:
        """Definitions whose last symbol component is one of ``names``."""
        name_list = [n for n in dict.fromkeys(names) if n]
        if not name_list:
            return []
        marks = ",".join("?" * len(name_list))
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE name IN ({marks}) LIMIT ?",
            [*name_list, limit],
        ).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def caller_counts(self, names: Iterable[str]) -> dict[str, int]:
        """How many chunks call each name (by bare name: cheap enough for a lens per function)."""
        name_list = [n for n in dict.fromkeys(names) if n]
        if not name_list:
            return {}
        marks = ",".join("?" * len(name_list))
        rows = self.db.execute(
            f"SELECT name, count(DISTINCT chunk_id) FROM calls WHERE name IN ({marks}) "
            "GROUP BY name",
            name_list,
        )
        return {name: n for name, n in rows}

    def callers_of(self, name: str, limit: int = 200) -> list[int]:
        """Chunk ids whose code calls ``name``."""
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT chunk_id FROM calls WHERE name=? LIMIT ?", (name, limit)
            )
        ]

    def scope_members(self, path: str, owner: str, max_lines: int) -> list[StoredChunk] | None:
        """The chunks of ``owner`` (a class) and its members in ``path``, or None when they
        span more than ``max_lines`` (decided from the line numbers alone, without the text)."""
        where = "path=? AND (symbol=? OR substr(symbol, 1, ?)=?)"
        args = (path, owner, len(owner) + 1, owner + ".")
        start, end = self.db.execute(
            f"SELECT min(start), max(end) FROM chunks WHERE {where}", args
        ).fetchone()
        if start is None or end - start + 1 > max_lines:
            return None
        rows = self.db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE {where} ORDER BY start", args
        ).fetchall()
        return [_row_to_chunk(r) for r in rows]

    def chunk_at(self, path: str, line: int) -> StoredChunk | None:
        """The innermost (shortest) chunk of ``path`` that contains ``line``."""
        row = self.db.execute(
            f"SELECT {_CHUNK_COLS} FROM chunks WHERE path=? AND start<=? AND end>=? "
            "ORDER BY (end - start) LIMIT 1",
            (path, line, line),
        ).fetchone()
        return None if row is None else _row_to_chunk(row)
