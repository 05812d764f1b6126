"""Where an index stands, read from what it committed: the commit and branch it was brought to,
how many files, chunks and vectors it holds, how many workspace files a pass would read now,
what it skipped and why. ``status`` in every shell (CLI, language server, MCP) is this."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..api import Status
from ..config import Config
from ..git import Git
from .indexer import merge_counts
from .plan import chunking_key, plan, vector_target
from .scan import ScanResult, scan_workspace
from .store import Store


@dataclass(frozen=True)
class Holder:
    """What the index's owner knows that the store does not: where it lives, whether this
    process writes it, how many vectors are in, what the engine is doing, how it ranks."""

    workspace: Path
    index_dir: Path
    vectors: int
    locked_by_other: bool
    state: str
    ranking: str


def read_status(holder: Holder, reader: Store, git: Git, config: Config, scan: bool) -> Status:
    """``scan`` False (after a pass over the files the watcher saw change): no listing of the
    workspace and no ``git status``, so ``pending`` is 0 (the watcher reports every change)
    and ``dirty`` unknown; the rest is the same. Call inside one snapshot of ``reader``."""
    size = sum(p.stat().st_size for p in holder.index_dir.rglob("*") if p.is_file())
    if not scan:
        listed, pending = ScanResult(holder.workspace, git.head_state(), []), 0
    else:
        listed = scan_workspace(holder.workspace, config.index, git)
        work = plan(reader, listed.files, chunking_key(config.index))
        pending = len(work.to_read) + len(work.removed)
    files, chunks = reader.counts()
    return Status(
        workspace=str(holder.workspace),
        index_dir=str(holder.index_dir),
        commit=listed.git.commit,
        branch=listed.git.branch,
        dirty=listed.git.dirty,
        indexed_commit=reader.get_meta("commit"),
        indexed_at=reader.get_meta("indexed_at"),
        files=files,
        chunks=chunks,
        vectors=holder.vectors,
        pending=pending,
        vector_target=vector_target(reader),
        index_bytes=size,
        model=reader.get_meta("model"),
        locked_by_other=holder.locked_by_other,
        state=holder.state,
        ranking=holder.ranking,
        skipped=merge_counts(listed.skipped, reader.skipped_reasons()),
    )
