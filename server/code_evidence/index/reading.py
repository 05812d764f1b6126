"""Reading the files a pass must look at: load, hash, chunk, mark secrets and make the BM25
terms, in worker processes for a large pass and on two threads for a middling one.

Most of a cold index is this stage, and most of it is Python that holds the GIL (the chunker's
walk over the syntax tree, the secret scan, splitting identifiers into terms). On threads it
shared one interpreter with the pass's writer, so a cold index of 520,000 chunks kept 1.15 of
two cores busy (issue 24). A pass of at least ``PROCESSES_FROM`` files therefore reads in
worker processes (one per core, each a fresh interpreter: ``readworker.py`` says why not
``multiprocessing``), in batches of ``BATCH`` files; the calling thread only writes what comes
back. Results come back in the plan's order, exactly what one thread would give, so the store
writes them in the same order and the chunk ids (and so the whole index) are the same. A
worker that dies (killed for memory) costs speed, not the pass: the files not yet read are
read on threads. A short list (a save, a branch switch of a few files) is read on the
caller's thread.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import sys
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..api import Chunk
from ..config import IndexConfig
from ..secrets import config_like, file_line_spans, spans_in, text_line_spans
from . import cjk
from .chunk import chunk_file, detect_language
from .load import LoadedText, RealPaths, SkipFile, checked_text, load_text
from .readworker import ReadWorker, WorkerDied
from .scan import FileEntry
from .store import FileRow
from .terms import chunk_terms

log = logging.getLogger(__name__)

READERS = 2  # threads: the Python part of reading holds the GIL, so more do not help
THREADED_FROM = 16  # files: below this, starting threads costs more than it saves
LOOKAHEAD = 64  # files read ahead of the consumer: bounds what waits in memory
# Files: from this many, worker processes. Starting one (a fresh interpreter importing the
# chunker) takes about half a second; a thousand files take several seconds to read.
PROCESSES_FROM = 1000
# Reading a file costs about 1.7 times what writing it does (the sixth session's profile of
# the 519,588-chunk cold index: 2,933 samples against 1,720 once the terms moved), so past
# two or three workers the writer on the calling thread is the limit; more only add memory
# (about 80 MB each).
MAX_PROCESSES = 4
BATCH = 32  # files per message to a worker: fewer, larger messages between processes
AHEAD = 2  # batches sent to each worker before its first answer is read: none waits idle


@dataclass(slots=True)
class ReadResult:
    """One file of the plan, read: ``skip`` (a reason) when it is not indexed after all,
    ``row`` None when its content is the one indexed (only the stat changed), otherwise the
    file's new row and chunks."""

    entry: FileEntry
    skip: str | None = None
    row: FileRow | None = None
    chunks: list[Chunk] = dataclasses.field(default_factory=list)
    terms: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # one per chunk
    encoding_errors: bool = False


def with_secrets(path: str, text: str, chunks: list[Chunk]) -> list[Chunk]:
    """The chunks with the secret spans of the whole file (see ``secrets.file_line_spans``):
    found once over the file, so a chunk holding only the middle of a key hides it too."""
    lines = text.splitlines()
    config = config_like(path)
    spans = file_line_spans(lines, config)
    out = []
    for ch in chunks:
        if "\n".join(lines[ch.start - 1 : ch.end]) == ch.text:
            found = spans_in(spans, ch.start, ch.end)
        else:  # not a slice of the file's lines: scan the chunk on its own
            found = text_line_spans(ch.text, ch.start, config)
        out.append(dataclasses.replace(ch, secrets=found) if found else ch)
    return out


@dataclass(frozen=True, slots=True)
class Reader:
    """What reading one file needs besides the file: the workspace, the editor buffers that
    stand in for their files, the stored content hashes (an unchanged content is not chunked
    again unless ``rechunk``) and the index settings."""

    workspace: Path
    overlays: Mapping[str, str]
    known_hashes: Mapping[str, str]
    rechunk: bool
    cfg: IndexConfig
    real_paths: RealPaths = dataclasses.field(init=False)  # the pass's, made from ``workspace``

    def __post_init__(self) -> None:
        object.__setattr__(self, "real_paths", RealPaths(self.workspace))

    def read(self, entry: FileEntry) -> ReadResult:
        cfg = self.cfg
        try:
            if entry.path in self.overlays:
                text = checked_text(self.overlays[entry.path], entry.path, cfg)
                loaded = LoadedText(text, False)
            else:
                loaded = load_text(self.workspace, entry.path, cfg, self.real_paths)
        except SkipFile as skip:
            return ReadResult(entry, skip=skip.reason)
        content_hash = hashlib.sha256(loaded.text.encode("utf-8", "replace")).hexdigest()
        if self.known_hashes.get(entry.path) == content_hash and not self.rechunk:
            return ReadResult(entry)
        chunks = chunk_file(entry.path, loaded.text, cfg)
        chunks = with_secrets(entry.path, loaded.text, chunks)
        language = detect_language(entry.path, loaded.text)
        imports = chunks[0].imports if chunks else ()
        row = FileRow(entry.path, entry.size, entry.mtime_ns, content_hash, language, imports)
        terms = [chunk_terms(ch.text, ch.symbol) for ch in chunks]
        return ReadResult(
            entry, row=row, chunks=chunks, terms=terms, encoding_errors=loaded.encoding_errors
        )

    def read_all(self, entries: list[FileEntry]) -> Iterator[ReadResult]:
        """Every entry read, in order. Closing the iterator early (a cancelled pass) drops
        what was read ahead: threads finish the file they hold, workers are stopped."""
        if len(entries) < THREADED_FROM:
            yield from map(self.read, entries)
            return
        workers = reading_processes() if len(entries) >= PROCESSES_FROM else 0
        if workers:
            yield from self._read_in_processes(workers, entries)
        else:
            yield from self._read_threaded(entries)

    def _read_threaded(self, entries: list[FileEntry]) -> Iterator[ReadResult]:
        pool = ThreadPoolExecutor(READERS, thread_name_prefix="code-evidence-read")
        pending: deque[Future[ReadResult]] = deque()
        try:
            ahead = iter(entries)
            for entry in ahead:
                pending.append(pool.submit(self.read, entry))
                if len(pending) >= LOOKAHEAD:
                    break
            while pending:
                done = pending.popleft().result()
                entry = next(ahead, None)
                if entry is not None:
                    pending.append(pool.submit(self.read, entry))
                yield done
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _read_in_processes(self, n: int, entries: list[FileEntry]) -> Iterator[ReadResult]:
        """Batch i goes to worker i mod n, and each worker answers its batches in the order
        sent, so reading the answers round the workers gives the plan's order. A worker that
        cannot start or dies leaves what was not yet received to threads."""
        setup = (
            self.workspace.absolute(),  # the workers run in "/"
            dict(self.overlays),
            dict(self.known_hashes),
            self.rechunk,
            self.cfg,
            cjk.SEGMENTER,  # a module setting: the workers must cut Chinese alike
        )
        batches = [entries[i : i + BATCH] for i in range(0, len(entries), BATCH)]
        workers: list[ReadWorker] = []
        sent = received = 0  # batches sent; batches answered and handed on (a prefix of sent)
        try:
            for _ in range(n):
                workers.append(ReadWorker(setup))
            while received < len(batches):
                # Refilled after the answer was handed on: a send that finds its worker dead
                # must not lose an answer received but not yet given.
                while sent < len(batches) and sent - received < AHEAD * n:
                    workers[sent % n].send(batches[sent])
                    sent += 1
                done = workers[received % n].receive()
                received += 1
                yield from done
        except (WorkerDied, OSError) as exc:
            log.warning("reading on threads: a reading worker failed (%s)", exc)
        finally:
            # Every batch answered: the workers exit on their closed input. Otherwise (a
            # failure, a cancelled pass, an error raised from a batch) they are stopped now,
            # before any threaded reading, so none idles on its memory meanwhile.
            for worker in workers:
                worker.close(kill=received < len(batches))
        if received < len(batches):  # a worker failed (anything else has propagated)
            yield from self._read_threaded([e for b in batches[received:] for e in b])


def reading_processes() -> int:
    """Worker processes for a large pass: one per core this process may run on, at most
    ``MAX_PROCESSES``; none (threads) on one core, where they would only add copying."""
    if not sys.executable:  # an embedded interpreter: nothing to start workers with
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return 0 if cores < 2 else min(cores, MAX_PROCESSES)
