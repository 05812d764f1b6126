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

from .stacktraces import value_spans

# Single-line string literals of every language: "..", '..', `..` (JS templates may span
# lines). A prefix (f, r, b, u) is outside the quotes and so ignored. Short and empty ones are
# matched too (and dropped by ``literals``): skipping Go's ``return "", fmt.Errorf("…")`` empty
# string paired its closing quote with the next literal's opening one, and the message was lost.
_LITERAL = re.compile(
    r'"((?:[^"\\\n]|\\.){0,400})"|\'((?:[^\'\\\n]|\\.){0,400})\'|`((?:[^`\\]|\\.){0,400})`'
)
MIN_LITERAL_CHARS = 4  # shorter literals ("", ", ", "%s") write no message
_TRIPLE = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
# A line that is a comment (``//``, ``/*``, a block comment's ``*``, ``#`` and a space): what it
# quotes writes no message (cobra's ``// that go along with 'unknown command' messages.``).
_COMMENT_LINE = re.compile(r"^[ \t]*(?://|/\*|\*(?:[ \t/]|$)|#(?:[ \t!]|$)).*$", re.M)
# What a value is formatted in with: {..} (Python, Rust, C#, Kotlin ${..}, JS ${..}, Ruby #{..}),
# %-verbs (printf, Python %, Go), {} and Java's String.format verbs, PHP's "$x" and "$x->y",
# Swift's \(..).
_PLACEHOLDER = re.compile(
    r"#\{[^}]*\}|\$\{[^}]*\}|\{[^{}]*\}|\\\([^)]*\)"
    r"|%(?:\([\w]+\))?[-+ #0]*\d*(?:\.\d+)?[sdrfvqxXTeEgGiocbwpn%]|\$\w+(?:->\w+)*"
)
_ESCAPES = {"\\n": " ", "\\t": " ", "\\'": "'", '\\"': '"', "\\\\": "\\", "{{": "{", "}}": "}"}
# A literal that is an address: a scheme or a protocol-relative "//" first. A chunk with more
# than MAX_ADDRESSES of them is a table of addresses (see literals).
_ADDRESS = re.compile(r"\s*(?:[A-Za-z][A-Za-z0-9+.-]*:)?//")
MAX_ADDRESSES = 3
# What may continue an address (so a match ending before it is inside a longer address), and
# an address literal that ends in a placeholder (its end is open: any value follows).
_URL_CHAR = re.compile(r"[A-Za-z0-9_/?=&%#~+@-]|[.:,;][A-Za-z0-9_]")
_OPEN_END = re.compile(rf"(?:{_PLACEHOLDER.pattern})\s*$")
# A literal that ends in ": " and a value wraps another error's message (Go's ``fmt.Errorf(
# "invalid argument %q for %q flag: %v", …, err)``, Python's ``f"cannot load {path}: {e}"``,
# Rust's ``#[error("io error: {0}")]``): what follows its last piece in the pasted message is
# the wrapped error's text, which the template did write by formatting it in.
_WRAP_END = re.compile(rf":\s*(?:{_PLACEHOLDER.pattern})\s*$")
MIN_LITERAL = 8  # characters of literal text a template needs to be evidence
MIN_COVERAGE = 0.3  # share of the message a template must explain
# A chunk whose literal writes at least this share of the pasted message is where the message
# comes from, by exact match: the cross-encoder's reading of its code does not lower it
# (serde_json's ``panic!("cannot access key {:?} in JSON {}", …)`` in a nine-line ``match``
# read as less like the message than a two-line ``NumberKey``; rerank.py).
TRUSTED_COVERAGE = 0.5


def trusted(coverage: float | None) -> bool:
    """Whether a chunk's template coverage makes it the message's source whatever a model
    reads (``TRUSTED_COVERAGE``): the rerank stage and ``--explain`` ask the same question."""
    return (coverage or 0.0) >= TRUSTED_COVERAGE


@dataclass(frozen=True, slots=True)
class TemplateMatch:
    coverage: float  # share of the body's written text (:func:`written`) the literal writes
    literal: str  # the literal that matched, as written


@dataclass(frozen=True, slots=True)
class _Pieces:
    fixed: tuple[str, ...]  # the literal's text between placeholders (placeholders match any value)
    size: int  # their characters, spaces at their ends aside
    closed: bool  # a closed address: must match a whole address (see :func:`_in_order`)
    wraps: bool  # ends in ": " and a value: another error's message follows (``_WRAP_END``)


# A literal that is one camelCase or PascalCase name (``"TimeoutError"`` in ``__all__``, a key,
# ``getattr``'s argument) names something; it wrote no message.
_CAMEL_NAME = re.compile(r"[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")


@lru_cache(maxsize=16384)
def _pieces(literal: str) -> _Pieces | None:
    """The literal's fixed pieces, read for matching; None under :data:`MIN_LITERAL` or for a
    name (:data:`_CAMEL_NAME`).
    Cached: a workspace repeats its literals across questions and candidates, and this is all
    the work a literal needs before matching (no regex is compiled)."""
    if _CAMEL_NAME.fullmatch(literal):
        return None
    text = literal
    for k, v in _ESCAPES.items():
        text = text.replace(k, v)
    pieces = _PLACEHOLDER.split(text)
    # A message's closing full stop is where wrappers append (Twig: ``Unknown "x" filter.``
    # is printed ``Unknown "x" filter in "page.html" at line 3.``): not a piece to require.
    if pieces and pieces[-1].endswith(".") and not pieces[-1].endswith(".."):
        pieces[-1] = pieces[-1][:-1]
    fixed = sum(len(p.strip()) for p in pieces)
    if fixed < MIN_LITERAL:
        return None
    closed = _ADDRESS.match(literal) is not None and not _OPEN_END.search(literal)
    wraps = _WRAP_END.search(text) is not None
    return _Pieces(tuple(p for p in pieces if p), fixed, closed, wraps)


def _in_order(pieces: tuple[str, ...], body: str, closed: bool = False) -> list[int] | None:
    """Where the pieces occur in ``body`` in order without overlapping (None when they do
    not): what the regex ``piece.*?piece...`` (dot matching newlines) finds. Taking each
    piece's first occurrence after the previous one is enough: an earlier end never leaves
    less room for the rest. ``closed``: the last piece must also end where an address in the
    body ends (not inside a longer one: ``https://host/data`` is not the page
    ``https://host/data/dict``)."""
    pos = 0
    starts: list[int] = []
    for i, piece in enumerate(pieces):
        at = body.find(piece, pos)
        if closed and i == len(pieces) - 1:
            while at >= 0 and _URL_CHAR.match(body, at + len(piece)):
                at = body.find(piece, at + 1)
        if at < 0:
            return None
        starts.append(at)
        pos = at + len(piece)
    return starts


def literals(text: str) -> list[str]:
    """The string literals of a chunk's text that could have produced a message, as written
    (escapes and placeholders kept). Triple-quoted strings are docstrings, not messages: left
    out (a one-line question that is a docstring's sentence must not read as a pasted
    message), and a comment line prints nothing. Nor are the addresses (``https://…``,
    ``//host/…``) of a chunk that holds more than :data:`MAX_ADDRESSES` of them: such a table
    names every address in it alike, and would read as the template of any question quoting
    one, above the function that fetches it (whose own address, a template like
    ``f"https://host/item_{code}.html"``, still counts)."""
    text = _COMMENT_LINE.sub("", _TRIPLE.sub(" ", text))
    found = [next(g for g in m.groups() if g is not None) for m in _LITERAL.finditer(text)]
    found = [lit for lit in found if len(lit) >= MIN_LITERAL_CHARS]
    address = [_ADDRESS.match(lit) is not None for lit in found]
    if sum(address) <= MAX_ADDRESSES:
        return found
    return [lit for lit, is_address in zip(found, address, strict=True) if not is_address]


def message_body(message: str) -> str:
    """``pkg.Error: the text`` -> ``the text`` (the part a literal in the code produced)."""
    head, sep, body = message.partition(": ")
    return body.strip() if sep and " " not in head.strip().rsplit('" ', 1)[-1] else message


def written(body: str) -> list[int]:
    """How much of a message body its template wrote, before each position: the count of its
    characters that are neither space nor inside a value formatted in (quoted parts, numbers,
    paths: :func:`stacktraces.value_spans`). Coverage is of this: a template that wrote a
    whole message explains all of it however long its values are (a path, nlohmann's
    ``[json.exception.type_error.302]`` before its text), and a literal found only inside a
    value (``'heading_permalink'`` quoted by another library's message) explains nothing."""
    value = bytearray(len(body))
    for start, end in value_spans(body):
        value[start:end] = b"\x01" * (end - start)
    counts = [0]
    for char, inside in zip(body, value, strict=True):
        counts.append(counts[-1] + (not inside and not char.isspace()))
    return counts


def best_template(text: str, bodies: list[str]) -> TemplateMatch | None:
    """The chunk's literal that explains most of a message body (None under
    :data:`MIN_COVERAGE`). A literal's length bounds the coverage it could give, so a literal
    that could not beat the best so far is never matched."""
    best: TemplateMatch | None = None
    sized = [(body, written(body)) for body in bodies if body]
    if not sized:
        return None
    for literal in literals(text):
        read = _pieces(literal)
        if read is None:
            continue
        for body, counts in sized:
            size = max(1, counts[-1])
            bound = 1.0 if read.wraps else min(1.0, read.size / size)  # all written text
            if bound < MIN_COVERAGE or (best is not None and bound <= best.coverage):
                continue
            starts = _in_order(read.fixed, body, read.closed)
            if starts is None:
                continue
            covered = sum(
                counts[at + len(piece)] - counts[at]
                for at, piece in zip(starts, read.fixed, strict=True)
            )
            if read.wraps:  # the wrapped message, formatted in after the last piece
                covered += counts[-1] - counts[starts[-1] + len(read.fixed[-1])]
            coverage = min(1.0, covered / size)
            if coverage >= MIN_COVERAGE and (best is None or coverage > best.coverage):
                best = TemplateMatch(coverage, literal)
    return best


def raises(text: str, type_name: str) -> bool:
    """The chunk raises or throws ``type_name`` (Python ``raise X(``, Ruby ``raise X, "…"`` /
    ``fail X``, JS/Java/C#/Kotlin/PHP ``throw new X(`` / ``throw X.Create(``, Rust ``Err(X`` /
    ``X::``-variants returned as errors; C++'s throwing macros and helpers, ``JSON_THROW(X::
    create(…))``, ``throw_or_mimic<X>(…)``), its name qualified or not (``errors.X``,
    ``Mod::X``, PHP's ``\\Ns\\X``). An exception made with ``new`` is made to be thrown,
    often a line later once it is dressed (Twig's ``$e = new SyntaxError(…);
    $e->addSuggestions(…); throw $e;``): that is a raise site too."""
    name = re.escape(type_name)
    return (
        re.search(
            rf"\b(?:(?:raise|fail|throw|new|return)\s+|Err\(\s*|\w*THROW\w*\(\s*|throw\w*<\s*)"
            rf"\\?(?:\w+(?:\.|::|\\))*{name}\b",
            text,
        )
        is not None
    )
