"""Tantivy BM25 index over chunks, with code-aware terms.

Terms are produced by :mod:`code_evidence.index.terms` (identifiers whole and split, Chinese
cut into words by :mod:`code_evidence.index.cjk`) and stored as
whitespace-separated text, so Tantivy only lower-cases and stems them; BM25 itself is Tantivy's.
Three fields: the chunk body, its qualified symbol (boosted: a name that *is* the query term is
stronger evidence than one that merely mentions it) and its path.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from ..paths import private_dir, restrict_tree
from .cjk import HAN_RUN_RE
from .locks import locked
from .terms import chunk_terms, path_terms

ANALYZER = "code_terms"
FIELD_BOOSTS = {"body": 1.0, "symbol": 1.5, "path": 1.5}


@dataclass(frozen=True, slots=True)
class LexDoc:
    """One chunk's BM25 document. ``terms`` (body, symbol: :func:`terms.chunk_terms`) when
    they were made already, by the worker that read the chunk; otherwise made here."""

    chunk_id: int
    path: str
    symbol: str
    text: str
    terms: tuple[str, str] | None = None


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(64))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_unsigned_field("id", stored=True, indexed=True, fast=True)
    sb.add_text_field("body", tokenizer_name=ANALYZER, index_option="freq")
    sb.add_text_field("symbol", tokenizer_name=ANALYZER, index_option="freq")
    sb.add_text_field("path", tokenizer_name=ANALYZER, index_option="freq")
    return sb.build()


class LexicalIndex:
    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.rebuilt = False
        self._lock = threading.RLock()
        # Parsing a query and stemming a term: quick, and never behind a commit (``_lock`` is
        # held through a commit's merges, which requests reading a pinned view need not wait).
        self._parse_lock = threading.Lock()
        self._writer: tantivy.IndexWriter | None = None
        self._copy: Path | None = None
        try:
            self._open()
        except (ValueError, OSError) as exc:
            if read_only and "read-only file system" in str(exc).lower():
                self._open_copy()  # Tantivy takes a lock file even to read
                return
            if read_only:
                raise
            # A corrupt or half-written index: start over; the engine re-adds from the store.
            shutil.rmtree(path, ignore_errors=True)
            self._open()
            self.rebuilt = True

    def _open(self) -> None:
        if self.read_only:
            self.path.mkdir(parents=True, exist_ok=True)
        else:
            private_dir(self.path)
        schema = _schema()
        if not self.read_only and not (self.path / "meta.json").exists():
            self.rebuilt = True  # a fresh index: the caller must (re)fill it
        self.index = tantivy.Index(schema, path=str(self.path), reuse=True)
        # Custom analyzers are not persisted by tantivy: register on every open.
        self.index.register_tokenizer(ANALYZER, _analyzer())
        self._stems = _analyzer()  # doc_freq reads a term as the index wrote it
        self.index.reload()

    def _open_copy(self) -> None:
        """Read a private temporary copy: the index folder is on a read-only file system."""
        self._copy = Path(tempfile.mkdtemp(prefix="code-evidence-lexical-"))
        copy = self._copy / "lexical"
        shutil.copytree(self.path, copy, ignore=shutil.ignore_patterns(".tantivy-*.lock"))
        self.path = copy
        self._open()

    def close(self) -> None:
        if self._copy is not None:
            shutil.rmtree(self._copy, ignore_errors=True)
            self._copy = None

    def _w(self) -> tantivy.IndexWriter:
        if self.read_only:
            raise RuntimeError("lexical index opened read-only")
        if self._writer is None:
            self._writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        return self._writer

    @locked
    def add(self, docs: Sequence[LexDoc]) -> None:
        w = self._w()
        last_path, path_text = None, ""  # a file's chunks come together: split its path once
        for d in docs:
            if d.path != last_path:
                last_path, path_text = d.path, " ".join(path_terms(d.path))
            body, symbol = d.terms or chunk_terms(d.text, d.symbol)
            doc = tantivy.Document()
            doc.add_unsigned("id", d.chunk_id)
            doc.add_text("body", body)
            doc.add_text("symbol", symbol)
            doc.add_text("path", path_text)
            w.add_document(doc)

    @locked
    def delete(self, chunk_ids: Sequence[int]) -> None:
        # delete_documents_by_term does not match u64 terms from Python ints; a term query does.
        w = self._w()
        schema = self.index.schema
        ids = [int(c) for c in chunk_ids]
        for i in range(0, len(ids), 1000):
            w.delete_documents_by_query(
                tantivy.Query.term_set_query(schema, "id", ids[i : i + 1000])
            )

    @locked
    def clear(self) -> None:
        self._w().delete_all_documents()

    @locked
    def commit(self) -> None:
        if self._writer is not None:
            self._writer.commit()
            self._writer.wait_merging_threads()
            self._writer = None
            restrict_tree(self.path)  # Tantivy writes its files with the umask's modes
        self.index.reload()

    @locked
    def rollback(self) -> None:
        """Drop what was added or deleted since the last commit (a pass that failed or was
        cancelled after its store transaction rolled back)."""
        if self._writer is not None:
            self._writer.rollback()
            self._writer = None

    @locked
    def view(self) -> LexicalView:
        """The index as its last commit left it, for as long as the view is kept (a pinned
        searcher: later commits do not show through it). Read-only (another process writes),
        the writer's last commit is read first: Tantivy would notice it by itself only about
        half a second later, while the store the same request reads shows that pass at once.
        A reload that finds nothing new costs some 30 microseconds."""
        if self.read_only:
            self.index.reload()
        return LexicalView(self, self.index.searcher())

    def __len__(self) -> int:
        return len(self.view())


class LexicalView:
    """What one request reads of the lexical index: a searcher pinned when the view was made.
    Taken together with the request's store snapshot (``IndexParts.consistent``), the two show
    the same index pass: a BM25 hit the store does not hold yet, or a stored chunk BM25 has
    already dropped, would make the changed file vanish from that answer."""

    def __init__(self, owner: LexicalIndex, searcher: tantivy.Searcher) -> None:
        self._owner = owner
        self._searcher = searcher

    def __len__(self) -> int:
        return int(self._searcher.num_docs)

    def doc_freq(self, term: str) -> int:
        """How many chunk bodies hold ``term`` (one code term, as :func:`code_terms` makes),
        read through the index's own analyzer: the body holds stems ("blueprints" is stored
        as "blueprint"), so the raw word would be missing."""
        with self._owner._parse_lock:
            tokens = self._owner._stems.analyze(term)
        if not tokens:
            return 0
        return int(self._searcher.doc_freq("body", tokens[0]))

    def search(
        self,
        terms: Sequence[str],
        k: int,
        require_all: bool = False,
    ) -> list[tuple[int, float]]:
        """BM25 over (body, symbol, path). ``terms`` are already code terms (see
        :func:`code_terms`); a term may repeat to weigh more (the query parser boosts with
        ``^``). ``require_all``: only chunks that hold every term. Returns (chunk id, score),
        best first."""
        weighted: dict[str, float] = {}
        for t in terms:
            if (t.isascii() and t.replace("_", "").isalnum()) or HAN_RUN_RE.fullmatch(t):
                weighted[t] = weighted.get(t, 0.0) + 1.0
        if not weighted:
            return []
        must = "+" if require_all else ""
        qtext = " ".join(f"{must}{t}^{w:g}" if w != 1.0 else must + t for t, w in weighted.items())
        with self._owner._parse_lock:
            query = self._owner.index.parse_query(
                qtext, default_field_names=list(FIELD_BOOSTS), field_boosts=FIELD_BOOSTS
            )
        hits = self._searcher.search(query, limit=k).hits
        out: list[tuple[int, float]] = []
        for score, addr in hits:
            doc = self._searcher.doc(addr)
            out.append((int(doc["id"][0]), float(score)))
        return out
