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


def _ascii_terms(text: str) -> list[str]:
    out: list[str] = []
    for m in IDENT_RE.finditer(text):
        ident = m.group(0)
        whole = ident.strip("_").lower()
        if not whole:
            continue
        parts = split_identifier(ident)
        if len(parts) <= 1 and (not parts or parts[0] == whole):
            out.append(whole)
            continue
        out.append(whole)
        out.extend(parts)
    return out


def path_terms(path: str) -> list[str]:
    """``src/flask/json/provider.py`` -> the folder and file names, whole and split."""
    out: list[str] = []
    for seg in re.split(r"[/\\.\-]+", path):
        if seg:
            out.extend(code_terms(seg))
    return out
