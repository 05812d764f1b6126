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


@lru_cache(maxsize=4096)
def _pattern(literal: str) -> tuple[re.Pattern[str], int] | None:
    """The literal as a regex (placeholders match any value) and its literal length."""
    text = literal
    for k, v in _ESCAPES.items():
        text = text.replace(k, v)
    pieces = [p for p in _PLACEHOLDER.split(text)]
    fixed = sum(len(p.strip()) for p in pieces)
    if fixed < MIN_LITERAL:
        return None
    parts = [re.escape(p) for p in pieces]
    return re.compile(".*?".join(parts), re.S), fixed


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
    :data:`MIN_COVERAGE`)."""
    best: TemplateMatch | None = None
    for literal in literals(text):
        compiled = _pattern(literal)
        if compiled is None:
            continue
        pattern, fixed = compiled
        for body in bodies:
            if not body or pattern.search(body) is None:
                continue
            coverage = min(1.0, fixed / max(1, len(body.strip())))
            if coverage >= MIN_COVERAGE and (best is None or coverage > best.coverage):
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
