"""Message templates: a chunk's string literals read as patterns a pasted error message can be
matched against, and the places that raise or throw a named exception type.

A message the user pastes was produced by a literal in the code with values formatted in:
``f"Invalid value {x!r}: expected"``, ``"%s not found" % name``, ``"...".format(...)``, JS
template literals ``${x}``, Go's ``fmt.Errorf("... %v", x)`` / ``errors.New``, Rust's
``format!`` / ``panic!`` / ``anyhow!`` / ``#[error("... {0}")]``, Java's ``String.format`` and
concatenation (each literal piece is a template of its own). Each placeholder matches any
value; the literal pieces between them must appear in the message in order. A chunk's best
template scores by how much of the message its literal pieces cover, so the ``raise`` with the
whole sentence outranks the class definition that merely shares the exception's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# Single-line string literals of every language: "..", '..', `..` (JS templates may span
# lines). A prefix (f, r, b, u) is outside the quotes and so ignored.
_LITERAL = re.compile(
    r'"((?:[^"\\\n]|\\.){4,400})"|\'((?:[^\'\\\n]|\\.){4,400})\'|`((?:[^`\\]|\\.){4,400})`'
)
_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
# What a value is formatted in with: {..} (Python, Rust, C#, Kotlin ${..}, JS ${..}), %-verbs
# (printf, Python %, Go), {} and Java's String.format verbs.
_PLACEHOLDER = re.compile(
    r"\$\{[^}]*\}|\{[^{}]*\}|%(?:\([\w]+\))?[-+ #0]*\d*(?:\.\d+)?[sdrfvqxXTeEgGiocbwpn%]"
    r"|\$\w+"
)
_ESCAPES = {"\\n": " ", "\\t": " ", "\\'": "'", '\\"': '"', "\\\\": "\\", "{{": "{", "}}": "}"}
MIN_LITERAL = 8  # characters of literal text a template needs to be evidence
MIN_COVERAGE = 0.3  # share of the message a template must explain


@dataclass(frozen=True, slots=True)
class TemplateMatch:
    coverage: float  # share of the message body the template's literal pieces cover
    literal: str  # the literal that matched, as written


@lru_cache(maxsize=16384)
def _pieces(literal: str) -> tuple[tuple[str, ...], int] | None:
    """The literal's fixed pieces between placeholders (placeholders match any value) and
    their length; None under :data:`MIN_LITERAL`. Cached: a workspace repeats its literals
    across questions, and splitting is all the work a literal needs (no regex is compiled)."""
    text = literal
    for k, v in _ESCAPES.items():
        text = text.replace(k, v)
    pieces = _PLACEHOLDER.split(text)
    fixed = sum(len(p.strip()) for p in pieces)
    if fixed < MIN_LITERAL:
        return None
    return tuple(p for p in pieces if p), fixed


def _in_order(pieces: tuple[str, ...], body: str) -> bool:
    """The pieces occur in ``body`` in order without overlapping: what the regex
    ``piece.*?piece...`` (dot matching newlines) finds. Taking each piece's first occurrence
    after the previous one is enough: an earlier end never leaves less room for the rest."""
    pos = 0
    for piece in pieces:
        at = body.find(piece, pos)
        if at < 0:
            return False
        pos = at + len(piece)
    return True


def literals(text: str) -> list[str]:
    """The string literals of a chunk's text, as written (escapes and placeholders kept).
    Triple-quoted strings are docstrings, not messages: left out (a one-line question that
    is a docstring's sentence must not read as a pasted message)."""
    text = _TRIPLE.sub(" ", text)
    return [next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(text)]


def message_body(message: str) -> str:
    """``pkg.Error: the text`` -> ``the text`` (the part a literal in the code produced)."""
    head, sep, body = message.partition(": ")
    return body.strip() if sep and " " not in head.strip().rsplit('" ', 1)[-1] else message


def best_template(text: str, bodies: list[str]) -> TemplateMatch | None:
    """The chunk's literal that explains most of a message body (None under
    :data:`MIN_COVERAGE`). The coverage a literal would give is known before matching, so a
    literal that could not beat the best so far is never matched."""
    best: TemplateMatch | None = None
    sized = [(body, max(1, len(body.strip()))) for body in bodies if body]
    if not sized:
        return None
    for literal in literals(text):
        split = _pieces(literal)
        if split is None:
            continue
        pieces, fixed = split
        for body, size in sized:
            coverage = min(1.0, fixed / size)
            if coverage < MIN_COVERAGE or (best is not None and coverage <= best.coverage):
                continue
            if _in_order(pieces, body):
                best = TemplateMatch(coverage, literal)
    return best


def raises(text: str, type_name: str) -> bool:
    """The chunk raises or throws ``type_name`` (Python ``raise X(``, JS/Java/C#/Kotlin
    ``throw new X(`` / ``throw X(``, Rust ``Err(X`` / ``X::``-variants returned as errors)."""
    name = re.escape(type_name)
    return (
        re.search(
            rf"\b(?:raise|throw(?:\s+new)?|Err\(|return\s+(?:new\s+)?)\s*(?:[\w.]+\.)?{name}\b",
            text,
        )
        is not None
    )
