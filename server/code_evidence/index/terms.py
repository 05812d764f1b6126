"""Code-aware word splitting shared by the lexical index and query analysis.

Both sides must split identically or BM25 silently misses: ``getUserName`` and
``get_user_name`` both become ``get user name`` and the whole identifier is kept as one more
term, so an exact identifier outranks a loose bag of its parts.
"""

from __future__ import annotations

import re

from . import cjk

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
# camelCase / PascalCase / acronym / digit boundaries inside one identifier.
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_PATH_SEP_RE = re.compile(r"[/\\.\-]+")


def split_identifier(ident: str) -> list[str]:
    """``HTTPServerError2`` -> ``['http', 'server', 'error', '2']``; ``_x_y`` -> ``['x', 'y']``."""
    parts: list[str] = []
    for piece in ident.split("_"):
        if piece:
            parts.extend(p.lower() for p in _PART_RE.findall(piece))
    return parts


def code_terms(text: str) -> list[str]:
    """Every identifier whole (lower-cased) followed by its parts, in text order.

    Single-part identifiers are emitted once, so plain words are not double-counted. Runs of
    Chinese characters are cut into words (:mod:`cjk`) where they stand; text without any
    yields exactly what it did before Chinese was analysed.
    """
    if not text.isascii() and cjk.has_han(text):
        return _mixed_terms(text)
    return _ascii_terms(text)


def _mixed_terms(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in cjk.HAN_RUN_RE.finditer(text):
        out.extend(_ascii_terms(text[pos : m.start()]))
        out.extend(cjk.segment(m.group(0)))
        pos = m.end()
    out.extend(_ascii_terms(text[pos:]))
    return out


# Terms of each identifier seen lately (identifier -> its whole form and parts, or nothing).
# A code base repeats its identifiers: on Django 4 million occurrences are 118,000 distinct
# ones, and splitting each occurrence anew was most of the lexical index's time (issue 24).
# Emptied when full: the common identifiers come back at once, and memory stays bounded.
_IDENT_TERMS: dict[str, tuple[str, ...]] = {}
_IDENT_TERMS_MAX = 1 << 15


def identifier_terms(ident: str) -> tuple[str, ...]:
    """One identifier's terms: whole (lower-cased, outer underscores gone), then its parts
    when it has more than the whole; nothing for underscores alone."""
    whole = ident.strip("_").lower()
    if not whole:
        return ()
    parts = split_identifier(ident)
    if len(parts) <= 1 and (not parts or parts[0] == whole):
        return (whole,)
    return (whole, *parts)


def _ascii_terms(text: str) -> list[str]:
    cache = _IDENT_TERMS
    out: list[str] = []
    extend = out.extend
    for ident in IDENT_RE.findall(text):
        found = cache.get(ident)
        if found is None:
            found = identifier_terms(ident)
            if len(cache) >= _IDENT_TERMS_MAX:
                cache.clear()
            cache[ident] = found
        extend(found)
    return out


def chunk_terms(text: str, symbol: str) -> tuple[str, str]:
    """A chunk's BM25 fields as the lexical index stores them: its body's and its symbol's
    terms, each joined by spaces. A pure function of the two texts, so it can run wherever the
    chunk is made (a reading worker) rather than on the thread that writes the index."""
    return " ".join(code_terms(text)), " ".join(code_terms(symbol))


def path_terms(path: str) -> list[str]:
    """``src/flask/json/provider.py`` -> the folder and file names, whole and split."""
    out: list[str] = []
    for seg in _PATH_SEP_RE.split(path):
        if seg:
            out.extend(code_terms(seg))
    return out
