"""What the command line shows a person: the progress lines, the answer with a legend that
explains its figures, the index summary and the status table.

Kept apart from ``cli.py`` (argument parsing and dispatch) so each stays readable. Everything
from the repository (file names, symbols, text) is printed through :func:`printable`: a
carriage return in a file name must not overwrite the rank column, an escape sequence must not
drive the terminal.
"""

from __future__ import annotations

import re
import sys
import time
from typing import TextIO

from .api import FindResult, IndexReport, Status

# C0 and C1 controls, and the bidirectional overrides that reorder what a terminal shows.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, lines: bool = False) -> str:
    """``text`` with every control character as a visible escape (``\\r``, ``\\x1b``);
    ``lines``: a block of text whose line breaks and tabs are kept."""

    def escape(m: re.Match[str]) -> str:
        c = m.group()
        if lines and c in "\n\t":
            return c
        named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c)
        return named or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")

    return _CONTROL.sub(escape, text)


class ProgressBar:
    """A one-line bar on stderr when it is a terminal; a few plain lines otherwise.

    Every stage that starts also ends where the user can see it: at 100 %, or, when the next
    stage begins (or :meth:`close` is called) before it got there, with a line saying it was
    skipped. A bar left at ``lexical: 0/1`` reads as a hang."""

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.tty = stream.isatty()
        self._last = 0.0
        self._stage = ""
        self._done = 0
        self._total = 0
        self._open = False  # the current stage has not reached its total

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if stage != self._stage:
            self._end_open()
        now = time.monotonic()
        final = done >= total
        self._done, self._total, self._open = done, total, not final
        if stage == self._stage and not final and now - self._last < (0.1 if self.tty else 5):
            return
        self._stage, self._last = stage, now
        pct = 100 * done / total if total else 100.0
        if self.tty:
            filled = int(pct / 100 * 30)
            bar = "#" * filled + "-" * (30 - filled)
            self.stream.write(f"\r{stage:<8} [{bar}] {done}/{total} {pct:5.1f}%")
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(f"{stage}: {done}/{total} ({pct:.0f}%)\n")
        self.stream.flush()

    def _end_open(self) -> None:
        """The stage in progress stopped short of its total: say so on a line of its own."""
        if not self._open:
            return
        self._open = False
        lead = "\r" if self.tty else ""
        self.stream.write(
            f"{lead}{self._stage}: skipped after {self._done}/{self._total} (nothing more to do)\n"
        )
        self.stream.flush()

    def close(self) -> None:
        """The work is over: end a stage that did not reach 100 %."""
        if self.enabled:
            self._end_open()


# Reason tags, in a few words each: the legend under an answer explains the ones it shows.
REASON_TAGS = {
    "bm25": "keyword match",
    "vector": "similar meaning",
    "structural": "near the open file",
    "cochange": "changed together with the open file in git history",
    "frames": "in the pasted stack trace",
    "named": "in a file the question names",
    "exact-identifier": "defines a name in the query",
    "mentions-identifier": "uses a name in the query",
    "member-named": "a member of the type the query names, named with its words",
    "path-match": "its path matches",
    "scope-match": "in the component the scope names",
    "must-match": "holds the quoted text",
    "innermost-frame": "the trace's innermost frame",
    "stack-frame": "a frame of the trace",
    "named-line": "at the line the question names (file:line)",
    "error-message": "holds the error message",
    "message-template": "holds the string that produced the message",
    "raises": "raises the error's type",
    "exception-class": "the error's class, ranked below the code that raises it",
    "open-file": "the open file",
    "source-of-open": "the source the open build output comes from",
    "imports": "imported by the open file",
    "imported-by": "imports the open file",
    "same-dir": "next to the open file",
    "caller": "calls the symbol at the cursor",
    "callee": "called by the symbol at the cursor",
    "co-change": "often changed together with the open file",
    "often-changed": "the most often changed file in git history",
    "recent": "changed recently",
    "test": "test code (ranked lower)",
    "outside-source": "examples, benchmarks, docs or packaging (ranked lower)",
    "generated": "generated or a build output (ranked lower)",
    "build-variant": "left out of the default build (ranked lower)",
    "declaration": "a declaration only",
    "declared-in-header": "declared in a header",
    "deprecated": "marked deprecated (ranked lower)",
    "covers-query": "covers most query terms",
    "cross-encoder-top": "the reranking model put it near the top",
    "merged": "adjacent pieces joined",
    "member-first": "a member, moved before its type's header",
    "after-member": "a type's header, moved behind its member",
    "rendering-order": "placed among its file's parts by the English rendering of the question",
}

DROP_REASONS = {
    "budget": "over the token budget",
    "duplicate": "already inside another block",
    "per-file-quota": "too many from one file",
    "score-gap": "scored under 40% of the best",
    "max-blocks": "pack full",
    "weak-evidence": "weak answer: only the best block is packed",
}


def _counts(values: list[str], names: dict[str, str]) -> str:
    seen: dict[str, int] = {}
    for v in values:
        seen[v] = seen.get(v, 0) + 1
    return ", ".join(f"{n} {names.get(k, k)}" for k, n in sorted(seen.items(), key=lambda x: -x[1]))


def legend(result: FindResult) -> list[str]:
    """Three lines under an answer that say what its figures mean."""
    lines = [
        "confidence: 0-1, the chance that the first result's file is the right one (fitted on "
        "the dev set's projects); under the threshold the answer is marked insufficient"
    ]
    dropped = [d.reason for d in result.context.dropped]
    if dropped:
        lines.append(
            f"dropped: {len(dropped)} near-miss results left out of the context pack "
            f"({_counts(dropped, DROP_REASONS)})"
        )
    tags = sorted({t for r in result.results for t in r.reasons})
    if tags:
        lines.append("tags: " + "; ".join(f"{t} = {REASON_TAGS.get(t, t)}" for t in tags))
    return lines


def skipped_summary(skipped: dict[str, int]) -> str:
    """``2 skipped: 1 minified, 1 too-large`` (``none skipped`` when empty)."""
    total = sum(skipped.values())
    if not total:
        return "none skipped"
    parts = ", ".join(f"{n} {k}" for k, n in sorted(skipped.items(), key=lambda x: (-x[1], x[0])))
    return f"{total} skipped: {parts}"


def empty_index_reason(status: Status) -> str | None:
    """Why a find has nothing to search, when the index holds no chunks; None otherwise."""
    return _empty(status.chunks, status.skipped)


def _empty(chunks: int, skipped: dict[str, int]) -> str | None:
    if chunks:
        return None
    if skipped:
        return f"the index is empty: every file was skipped ({skipped_summary(skipped)})"
    return "the index is empty: the folder has no files to index"


def index_state(branch: str | None, commit: str | None) -> str:
    """``main@3f2a9c1d04``; what the answer was read from when there is no commit to name (a
    plain folder, a repository without commits or one indexed as a folder)."""
    if not commit:
        return "working tree (no commit)"
    return f"{printable(branch or 'detached')}@{commit[:10]}"


def render(result: FindResult, quiet: bool = False) -> str:
    """The answer for a person; every line of it from the repository escaped (``printable``).
    Without ``quiet`` a legend follows the verdict."""
    p = printable
    lines = []
    where = index_state(result.branch, result.commit)
    lines.append(f"query: {p(result.query)}   [{result.intent}]   index: {where}")
    for note in result.notes:
        lines.append(f"note: {p(note)}")
    if not result.results:
        lines.append("no results")
    for i, r in enumerate(result.results, 1):
        # ``path:line`` first, as grep prints it, so a terminal's link opens where the result
        # holds the question; the result's lines after it.
        loc = f"{p(r.path)}:{r.line} ({r.start}-{r.end})"
        lines.append(
            f"{i:>2}. {loc:<56} {p(r.symbol) or '-':<32} {r.score:.4f}  {p(', '.join(r.reasons))}"
        )
    verdict = f"confidence {result.confidence:.2f}"
    if result.insufficient:
        verdict += f" — insufficient evidence: {p(result.insufficient_reason or '')}"
    lines.append(verdict)
    if not quiet:
        lines.extend(f"  {line}" for line in legend(result))
    ctx = result.context
    lines.append(f"--- context ({ctx.tokens}/{ctx.budget} tokens, {len(ctx.dropped)} dropped) ---")
    lines.append(printable(ctx.text, lines=True))
    return "\n".join(lines)


def render_index(workspace: str, report: IndexReport) -> str:
    """The one line ``index`` prints: files indexed and skipped add up to the files seen."""
    seen = report.files_indexed + report.files_skipped
    empty = _empty(report.chunks_total, report.skipped)
    return (f"{empty}\n" if empty else "") + (
        f"indexed {workspace}: {seen} files seen, {report.files_indexed} indexed "
        f"({report.files_changed} changed, {report.files_removed} removed), "
        f"{skipped_summary(report.skipped)}; {report.chunks_total} chunks "
        f"(+{report.chunks_added} -{report.chunks_removed}), embedded {report.embedded} "
        f"({report.vectors_from_cache} from cache) in {report.ms / 1000:.1f}s"
    )


def render_status(s: Status) -> str:
    fresh = "up to date" if s.pending == 0 else f"{s.pending} files pending"
    rows = [
        ("workspace", s.workspace),
        ("index", s.index_dir),
        ("commit", f"{s.commit or '-'} ({s.branch or 'no branch'}){' dirty' if s.dirty else ''}"),
        ("indexed", f"{s.indexed_commit or '-'} at {s.indexed_at or 'never'} — {fresh}"),
        ("files", f"{s.files} ({skipped_summary(s.skipped)})"),
        ("chunks", f"{s.chunks} ({s.vectors} with vectors)"),
        ("size", f"{s.index_bytes / 1e6:.1f} MB"),
        ("model", s.model or "-"),
        ("ranking", s.ranking),
        ("writer", "another process" if s.locked_by_other else "this process"),
    ]
    return "\n".join(f"{k:<10} {printable(v)}" for k, v in rows)
