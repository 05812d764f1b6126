"""Typed records that cross module boundaries, and the public answer shape.

The answer shape (``FindResult`` and what it holds) is a contract: the CLI prints it with
``--json``, the language server sends it, benchmarks read it. Add fields, never rename or
remove them. Everything serialises through :func:`to_json_dict`, so there is one encoding.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Intent = Literal["find-file", "explain", "fix-failure", "verify", "auto"]
Depth = Literal["quick", "interactive", "deep"]

# Request limits (docs/cli.md "Limits"): a pasted traceback may be long, so an over-long query
# is cut with a note; a result count or budget beyond these is a mistake, refused with a message.
MAX_QUERY_CHARS = 20_000
# A longer paste is read first (``search.query.read_paste``: log prefixes off, an error
# tracker's report as its failure), within its last this many characters, then cut.
MAX_PASTE_CHARS = 1_000_000
MAX_LIMIT = 200
MAX_BUDGET_TOKENS = 100_000
MAX_LINE = 2**31 - 1  # LSP's largest line number (a uinteger)


class EngineError(Exception):
    """A problem with the user's input or environment, with a message meant for them."""


class RequestCancelled(Exception):
    """The host gave up on a request (its client cancelled it) and the engine stopped early."""


@dataclass(frozen=True, slots=True)
class RequestControl:
    """How a long-lived host steers a running find. ``cancel``: set when its client gave up;
    the cross-encoder starts no further pair. ``pause``: called between two stages and between
    two cross-encoder pairs; returns once the host's latency-sensitive requests (hover,
    status) are served, so a deep find gives them the CPU instead of competing for it."""

    cancel: threading.Event = field(default_factory=threading.Event)
    pause: Callable[[], None] | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable unit of a file: a function, method, class, grouped top-level code, or a
    line window of a non-code file. ``hash`` is content-addressed (text plus path context), so an
    unchanged chunk is never embedded twice, whatever workspace or branch it appears in."""

    path: str  # workspace-relative, POSIX separators
    start: int  # 1-based, inclusive
    end: int  # 1-based, inclusive
    symbol: str  # qualified name ("Flask.run"), "" for windows and grouped top-level code
    kind: str  # function | method | class | module | window | ...
    language: str  # python | javascript | typescript | tsx | go | rust | java | text
    text: str
    hash: str
    imports: tuple[str, ...] = ()  # the file's imports (module names / specifiers)
    calls: tuple[str, ...] = ()  # bare names called inside the chunk
    is_test: bool = False
    is_generated: bool = False
    is_vendor: bool = False
    # Where the file holds credentials, found over the whole file at index time, in file
    # coordinates (``secrets.LineSpan``): what ``secrets.shown`` hides in any text of it.
    secrets: tuple[tuple[int, int, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class FindRequest:
    """One question. ``open_file`` and ``line`` are the editor state; both are optional."""

    query: str
    open_file: str | None = None  # workspace-relative path
    line: int | None = None  # 1-based line in open_file
    limit: int = 10
    budget_tokens: int | None = None  # None: the configured default
    intent: Intent = "auto"
    # quick: the feature scorer alone (hover, lenses); interactive: the model reranker works
    # inside the time budget; deep: it scores more candidates with no time limit (agents, CLI
    # --deep).
    depth: Depth = "interactive"


def checked(req: FindRequest) -> tuple[FindRequest, list[str]]:
    """The request within the limits, and notes on what was cut; :class:`EngineError` when a
    value is a mistake rather than something long."""
    if not isinstance(req.query, str) or not req.query.strip():
        raise EngineError("the query is empty: say what you are looking for")
    if not any(c.isalnum() for c in req.query):
        # Only punctuation and symbols: nothing any channel can match. Letters and digits of
        # every script count (str.isalnum is Unicode-aware), so a question in Chinese, Greek
        # or Arabic is a real query even where the word splitter cannot cut it up.
        raise EngineError(
            "nothing to search for: the query has only punctuation or symbols; add a word, "
            "a name or an error message"
        )
    if req.open_file is not None and not isinstance(req.open_file, str):
        raise EngineError(f"open_file must be a path, got {type(req.open_file).__name__}")
    check_line(req.line)
    if req.limit < 1:
        raise EngineError("--limit must be at least 1")
    if req.limit > MAX_LIMIT:
        raise EngineError(f"--limit must be at most {MAX_LIMIT} (got {req.limit})")
    if req.budget_tokens is not None and not 0 <= req.budget_tokens <= MAX_BUDGET_TOKENS:
        raise EngineError(
            f"--budget must be between 0 (no context pack) and {MAX_BUDGET_TOKENS} tokens "
            f"(got {req.budget_tokens})"
        )
    if len(req.query) <= MAX_QUERY_CHARS:
        return req, []
    # A long paste is a log: its end holds the traceback and the error line, so that is kept.
    note = f"the query was {len(req.query)} characters; only the last {MAX_QUERY_CHARS} were used"
    return dataclasses.replace(req, query=req.query[-MAX_QUERY_CHARS:]), [note]


def check_line(line: object) -> None:
    """A 1-based line number a request may name (None: no line); :class:`EngineError` else."""
    if line is None:
        return
    if not isinstance(line, int) or isinstance(line, bool) or not 1 <= line <= MAX_LINE:
        raise EngineError(f"line must be a whole number from 1 to {MAX_LINE}, got {line!r}")


@dataclass(slots=True)
class Evidence:
    path: str
    start: int
    end: int
    symbol: str
    kind: str
    language: str
    score: float
    reasons: list[str]
    text: str
    # Per-stage scores (bm25 rank, vector similarity, fused, feature boost, rerank).
    scores: dict[str, float] = field(default_factory=dict)
    # The line to open at, start <= line <= end: where the result holds the question (a trace
    # frame's line, the raise site in a long function: search/focus.py); 0 gives the start.
    line: int = 0

    def __post_init__(self) -> None:
        if not self.start <= self.line <= self.end:
            self.line = self.start


@dataclass(slots=True)
class Dropped:
    path: str
    start: int
    end: int
    reason: str


@dataclass(slots=True)
class ContextPack:
    text: str
    tokens: int
    budget: int
    dropped: list[Dropped] = field(default_factory=list)


@dataclass(slots=True)
class StageTiming:
    """How many candidates a stage passed on and how long it took. (In the answer's JSON the
    map of these is called ``trace``, a name kept for compatibility.)"""

    candidates: int
    ms: float


@dataclass(slots=True)
class FindResult:
    query: str
    workspace: str
    commit: str | None
    branch: str | None
    results: list[Evidence]
    context: ContextPack
    confidence: float
    insufficient: bool
    insufficient_reason: str | None
    trace: dict[str, StageTiming]  # stage timings, by stage
    intent: str = "auto"
    # "read-write" normally; "read-only" when another process holds the writer lock and the
    # answer comes from the index as it was.
    index_mode: str = "read-write"
    notes: list[str] = field(default_factory=list)
    # The English rendering the models read when the question holds Chinese (glossary terms
    # in English, identifiers verbatim; search/crosslingual.py), or that ordered the parts of
    # files when they stepped aside (search/parts.py); null otherwise.
    rendering: str | None = None


@dataclass(frozen=True, slots=True)
class ChangedWith:
    """A file the workspace's git history changed together with another (``index/cochange``):
    in how many of that file's recent commits, when last, and how strongly (the share of its
    recency-weighted commits, each counted less the more files it touched)."""

    path: str
    commits: int
    last_changed: str  # ISO date (UTC) of the newest such commit
    strength: float


@dataclass(slots=True)
class Related:
    """What the editor shows for one name at one place (hover, code lens): where the name is
    defined, who calls it (matched by name), and other code a quick search relates to it
    there. Every location still exists in the working tree."""

    name: str
    symbol: str  # the qualified symbol the place belongs to ("" when it is none)
    definitions: list[Evidence]
    callers: list[Evidence]
    caller_count: int  # all callers, of which ``callers`` lists the first
    related: list[Evidence]
    # What the code at the place calls (the definitions of the names it calls), and the tests
    # that exercise it (test code calling the name, or calling into the file from a test file
    # that imports it).
    callees: list[Evidence] = field(default_factory=list)
    tests: list[Evidence] = field(default_factory=list)
    # The files the history changed together with the place's file, strongest first: what
    # else a change here usually touches (none for a plain folder).
    changed_with: list[ChangedWith] = field(default_factory=list)


@dataclass(slots=True)
class IndexReport:
    """What one index/update pass did."""

    files_seen: int
    files_changed: int
    files_removed: int
    files_skipped: int
    chunks_total: int
    chunks_added: int
    chunks_removed: int
    embedded: int  # chunk texts sent to the model (cache misses)
    vectors_from_cache: int
    ms: float
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count
    read_only: bool = False
    cancelled: bool = False  # stopped early on request; what was committed stays
    # Files the index holds after the pass. With ``files_skipped`` (which counts the files
    # skipped in earlier passes and not read again, too) it adds up to every file the scan met.
    files_indexed: int = 0


@dataclass(slots=True)
class Status:
    workspace: str
    index_dir: str
    commit: str | None
    branch: str | None
    dirty: bool | None
    indexed_commit: str | None
    indexed_at: str | None
    files: int
    chunks: int
    vectors: int
    pending: int  # files changed on disk since the last index pass
    index_bytes: int
    model: str | None
    locked_by_other: bool
    state: str = "ready"  # "indexing" | "partial" (vectors still missing) | "ready"
    ranking: str = "defaults"  # or what `code-evidence tune` fitted, with its validation gain
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> files (and folders)
    # Chunks that get a vector once indexing is done (catalogs, lockfiles, fixtures and data
    # files are BM25 only: filekinds.wants_vector).
    vector_target: int = 0

    def shown_state(self, reported: str) -> str:
        """The state to show beside these counts: ``ready`` or ``partial`` as of the counts
        (read with them; a pass can add vectors between two reads, which once paired "ready"
        with 0 of 23 vectors), anything else (a pass running, a failure) as ``reported``."""
        return self.state if reported in ("ready", "partial") else reported


def to_json_dict(obj: Any) -> Any:
    """Dataclasses -> plain JSON-ready values (dicts keep field order)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_json_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_json_dict(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_json_dict(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 6)
    return obj
