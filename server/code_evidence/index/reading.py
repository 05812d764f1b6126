"""Reading the files a pass must look at: load, hash, chunk and mark secrets, on two threads.

Most of a cold index is this stage, and a good part of it runs without the GIL: tree-sitter's
parse, the file reads and SHA-256 of large texts. Two reader threads overlap one file's parse
with another file's Python work, so on two idle cores the stage takes less wall time for the
same CPU. Results come back in the plan's order, exactly what one thread would give, so the
store writes them in the same order and the chunk ids (and so the whole index) are the same.
A short list (a save, a branch switch of a few files) is read on the caller's thread.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import deque
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..api import Chunk
from ..config import IndexConfig
from ..secrets import config_like, file_line_spans, spans_in, text_line_spans
from .chunk import chunk_file, detect_language
from .load import LoadedText, RealPaths, SkipFile, checked_text, load_text
from .scan import FileEntry
from .store import FileRow

READERS = 2  # threads: the Python part of reading holds the GIL, so more do not help
THREADED_FROM = 16  # files: below this, starting threads costs more than it saves
LOOKAHEAD = 64  # files read ahead of the consumer: bounds what waits in memory


@dataclass(slots=True)
class ReadResult:
    """One file of the plan, read: ``skip`` (a reason) when it is not indexed after all,
    ``row`` None when its content is the one indexed (only the stat changed), otherwise the
    file's new row and chunks."""

    entry: FileEntry
    skip: str | None = None
    row: FileRow | None = None
    chunks: list[Chunk] = dataclasses.field(default_factory=list)
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
        return ReadResult(entry, row=row, chunks=chunks, encoding_errors=loaded.encoding_errors)

    def read_all(self, entries: list[FileEntry]) -> Iterator[ReadResult]:
        """Every entry read, in order. Closing the iterator early (a cancelled pass) drops
        what was read ahead and waits for the files being read."""
        if len(entries) < THREADED_FROM:
            yield from map(self.read, entries)
            return
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
