"""Where a result opens: the one line of it that holds the question.

A result is a range (a function, a merged run of pieces, 150 lines of an object literal of
error codes); an editor that jumps to its first line leaves the reader to find the raise site,
the hunk, the frame's line, 40 lines further down. Each result says the line to open at
(``Evidence.line``): a line the question points at itself (a pasted trace's frame, a compiler's
``file:line``, ``app.py:42``), innermost first; else the line holding most of the question's
words (:class:`LineScorer`); else the line that names the definition (past its decorators and
doc comment); else the first line. The context pack cuts a block too large for
its budget around the same line. Measured in ``docs/quality.md`` ("Where a result opens").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ..api import Chunk, Evidence

W_IDENTIFIER = 3.0  # a name the question gives, whole, on the line
W_LITERAL = 5.0  # a pasted message's literal text, or a piece of it, on the line
MIN_FRAGMENT_CHARS = 8  # a shorter fragment ("line", "' at ") matches anywhere
# A string literal's piece between placeholders must be this long to say it wrote part of the
# message: "is not set" is on many lines, "The environment variable" on few.
MIN_PIECE_CHARS = 12

_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`((?:[^`\\\n]|\\.)*)`')
# What a template puts a value in: {name!r}, ${x}, %s, %(name)s, %-10d, {} and {0}.
_PLACEHOLDER = re.compile(r"\$?\{[^{}]*\}|%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]")
_SPACE = re.compile(r"\s+")


class LineScorer:
    """How much of the question a line holds: each distinct BM25 term it has as a word or a
    part of an identifier (``error`` in ``RuntimeError``, not in ``errors``; the question's
    identifiers whole count three), and five for each literal fragment of a pasted message it
    holds, or each piece of its own string literals that a fragment holds: a message the code
    writes over several lines (``"The view function did not return a valid"`` then
    ``" response. The return type must be ..."``) has no line holding a whole fragment, but
    every line of it holds a piece of one.

    A text is read in one go (:meth:`scores`): each term and fragment is looked up with
    ``str.find`` and only its occurrences cost Python work, not every line's identifiers; a
    result's text runs to hundreds of lines and an answer has ten of them."""

    def __init__(self, terms: list[str], identifiers: list[str], fragments: list[str]) -> None:
        # A one-letter term (``x`` of ``get_x``) is on most lines and says nothing about one.
        self.weights = {t: 1.0 for t in terms if len(t) > 1 or not t.isascii()}
        for ident in identifiers:
            if ident:
                self.weights[ident.lower()] = W_IDENTIFIER
        self.frags = [_norm(f) for f in fragments if len(f) >= MIN_FRAGMENT_CHARS]

    def scores(self, text: str) -> dict[int, float]:
        """Line index -> score, for the lines of ``text`` that score."""
        low = text.lower()
        if len(low) != len(text):  # a character whose lower case is longer: read it as is
            low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE.finditer(text))
        got: dict[int, float] = {}

        def add(lines: set[int], weight: float) -> None:
            for i in lines:
                got[i] = got.get(i, 0.0) + weight

        for term, weight in self.weights.items():
            add(_occurrences(low, term, starts, text if term.isascii() else None), weight)
        for frag in self.frags:
            add(_occurrences(low, frag, starts, None), W_LITERAL)
        if self.frags:
            for i, weight in self._statements(text, starts).items():
                got[i] = got.get(i, 0.0) + weight
        return got

    def _statements(self, text: str, starts: list[int]) -> dict[int, float]:
        """Each line's share of a message the code writes: five for each piece of its string
        literals that a fragment holds; the first line of a run of such lines (one message
        written over several) takes the run's sum, so that of two templates sharing words
        (``"… can only be registered for Exception classes or HTTP"`` in two raises) the one
        writing more of the message comes first, and at its first line."""
        pieces: dict[int, float] = {}
        for m in _LITERAL.finditer(text):
            body = next((g for g in m.groups() if g is not None), "")
            for piece in _PLACEHOLDER.split(body):
                if self._writes(_norm(piece)):
                    line = bisect.bisect_right(starts, m.start()) - 1
                    pieces[line] = pieces.get(line, 0.0) + W_LITERAL
        out: dict[int, float] = {}
        run: list[int] = []
        for line in [*sorted(pieces), -2]:
            if run and line != run[-1] + 1:
                out.update((i, pieces[i]) for i in run[1:])
                out[run[0]] = sum(pieces[i] for i in run)
                run = []
            run.append(line)
        return out

    def _writes(self, piece: str) -> bool:
        """Whether a literal's piece wrote part of a pasted message: a fragment holds it (12
        characters or more), it is a whole fragment (``"err is nil"``), or it shares four
        words in a row with one (a value the code quotes before the words: ``"'name' can
        only be used when a request"``)."""
        if len(piece) < MIN_FRAGMENT_CHARS:
            return False
        if any(piece == f or (len(piece) >= MIN_PIECE_CHARS and piece in f) for f in self.frags):
            return True
        words = piece.split()
        return any(
            " ".join(words[k : k + 4]) in f
            for k in range(len(words) - 3)
            for f in self.frags
            if len(" ".join(words[k : k + 4])) >= MIN_PIECE_CHARS
        )

    def best(self, text: str) -> tuple[int, float]:
        """The index of ``text``'s line that scores most (the first of the best) and its
        score; (0, 0.0) when none does."""
        got = self.scores(text)
        if not got:
            return 0, 0.0
        best = min(got, key=lambda i: (-got[i], i))
        return best, got[best]


_NEWLINE = re.compile("\n")


def _occurrences(low: str, term: str, starts: list[int], text: str | None) -> set[int]:
    """The lines (indexes) of ``low`` holding ``term``; with ``text`` (the original case, for
    an ASCII term), only where it is a word or an identifier's part there."""
    lines: set[int] = set()
    i = low.find(term)
    while i >= 0:
        if text is None or _part_at(text, i, i + len(term)):
            lines.add(bisect.bisect_right(starts, i) - 1)
        i = low.find(term, i + 1)
    return lines


def _part_at(text: str, i: int, j: int) -> bool:
    """``text[i:j]`` starts and ends where an identifier's part does (``split_identifier``):
    at a non-alphanumeric neighbour, a lower-to-upper case change, a letter-digit change, or
    the last capital of an acronym before a capitalised word (``HTTP|Server``)."""
    return _boundary(text, i) and _boundary(text, j)


def _boundary(text: str, k: int) -> bool:
    """Whether a part may start (or the previous one end) at index ``k`` of ``text``."""
    if k <= 0 or k >= len(text):
        return True
    a, b = text[k - 1], text[k]
    if not a.isalnum() or not b.isalnum():
        return True
    if a.isdigit() != b.isdigit():
        return True
    if a.islower() and b.isupper():
        return True
    return a.isupper() and b.isupper() and k + 1 < len(text) and text[k + 1].islower()


def _norm(text: str) -> str:
    """Lower case, single spaces, without the quotes and punctuation around it: a message's
    fragment ends where its sentence does, its literal with the period."""
    return _SPACE.sub(" ", text).strip(" .,;:!?'\"\t\n").lower()


def focus_line(chunk: Chunk, named: Sequence[int], score: LineScorer) -> int:
    """The line of ``chunk`` to open at: the first of ``named`` (the lines the question points
    at in the chunk's file, innermost frame first) inside it, else its best-scoring line when
    any line scores, else the line naming it (:func:`name_line`)."""
    for line in named:
        if chunk.start <= line <= chunk.end:
            return line
    best, got = score.best(chunk.text)
    return min(chunk.start + best, chunk.end) if got > 0 else name_line(chunk)


_LAST_NAME = re.compile(r"[A-Za-z_$][\w$]*[!?=]?$")  # Ruby's save!, empty?, name=


def name_line(chunk: Chunk) -> int:
    """The first line of a definition that holds its name (the ``def`` or ``fn`` line, past
    its decorators, attributes, annotations and doc comment), its first line when there is
    none (a window of lines, a module's top level)."""
    m = _LAST_NAME.search(chunk.symbol)
    if m is None:
        return chunk.start
    word = re.compile(rf"(?<![\w$]){re.escape(m.group())}(?![\w$])")
    for i, line in enumerate(chunk.text.split("\n")[: chunk.end - chunk.start + 1]):
        if word.search(line):
            return chunk.start + i
    return chunk.start


class Focus:
    """The line each chunk of one answer opens at: ``named`` maps a workspace path to the
    lines the question points at in it (recall's ``RecallResult.lines``). Each chunk is read
    once: the pack's cut of a block and the block's result ask for the same line."""

    def __init__(self, named: dict[str, list[int]], score: LineScorer) -> None:
        self.named = named
        self.score = score
        self._seen: dict[tuple[str, int, int], int] = {}

    def __call__(self, chunk: Chunk) -> int:
        key = (chunk.path, chunk.start, chunk.end)
        if key not in self._seen:
            self._seen[key] = focus_line(chunk, self.named.get(chunk.path, ()), self.score)
        return self._seen[key]


def opening_code(ev: Evidence, limit: int = 200) -> str:
    """The code on the line a result opens at (a caller's call), stripped and cut to
    ``limit`` characters; its first non-blank line when that one is blank."""
    lines = ev.text.split("\n")
    at = ev.line - ev.start
    if 0 <= at < len(lines) and lines[at].strip():
        return lines[at].strip()[:limit]
    return first_code_line(ev.text, limit)


def first_code_line(text: str, limit: int = 200) -> str:
    """The first non-blank line of ``text``, stripped and cut to ``limit`` characters (a
    definition's signature, usually)."""
    return next((line.strip()[:limit] for line in text.splitlines() if line.strip()), "")


def call_line(chunk: Chunk, name: str) -> int:
    """The first line of ``chunk`` that calls ``name`` (``name(``, ``.name(``, Rust's
    ``name!(`` and ``name::<T>(``); the line naming the caller when none does
    (:func:`name_line`; a recursive definition's own signature is the call's line too). A
    caller listed in a hover opens where it calls, as "find references" does."""
    call = re.compile(rf"(?<![\w$]){re.escape(name)}\s*(?:::<[^>\n]*>\s*|!\s*)?\(")
    lines = chunk.text.split("\n")[: chunk.end - chunk.start + 1]
    for i, line in enumerate(lines):
        if call.search(line):
            return chunk.start + i
    return name_line(chunk)
