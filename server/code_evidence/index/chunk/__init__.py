"""Split one file into retrievable chunks: definitions for code, line windows for everything else.

Retrieval ranks chunks, not files, so a chunk should be the unit a person would cite: one
function, one method, the header of a class. Code is parsed with tree-sitter (one parse per
file); only the top level and class bodies are walked in Python, while the deep work (calls,
imports) runs as tree-sitter queries in C, because this runs over thousands of files on a
couple of cores. Any input that a grammar cannot make sense of degrades to line windows
instead of raising: an indexer that dies on one odd file indexes nothing.

Line numbers follow ``text.splitlines()``; the source handed to tree-sitter is those same lines
joined with ``"\\n"``, so tree rows and chunk lines can never disagree (CRLF, form feeds and
other exotic line breaks included).
"""

from __future__ import annotations

import bisect
import hashlib
import re

import tree_sitter as ts

from ...api import Chunk
from ...config import IndexConfig
from ...filekinds import file_flags
from .definitions import Span, Walker, split_span
from .languages import EXT_LANG, SPECS, detect_language, grammar, parser
from .references import calls, imports
from .syntax import dedupe, first_row, last_row
from .windows import windows

__all__ = ["CHUNKER_VERSION", "EXT_LANG", "chunk_file", "detect_language"]

# Part of the chunking key (``index/plan.py``): an index cut by another version is read and cut
# again on its next pass, so a change to where chunks begin and end reaches indexes that exist.
# 2: JavaScript/TypeScript functions assigned to properties (``A.prototype.m = function``,
# ``exports.f = ...``) are definitions, an object literal of methods is a container like a
# class, and a ``/** */`` block documents across a blank line. 3: a bare Rust ``impl X {``
# header opens its first method's chunk instead of being one of its own. 4: TypeScript
# namespaces and ``declare module`` blocks are scopes; ``{…} satisfies T`` is an object too.
# 5: a comment alone just above a definition (a section heading) opens its chunk; a comment
# that ends a line of code is no member's leading comment. 6: C's and C#'s conditional blocks
# are walked only when they hold a definition (C#'s were not walked at all); a C# ``#region``
# heads what follows. 7: JavaScript's ``const X = forwardRef(() => …)`` (a call that takes a
# function literal) defines ``X``. 8: ``.inl`` and ``.tcc`` files are C++ (they were cut as
# plain text windows). 9: a C/C++ line that is a bare macro standing for syntax
# (``NLOHMANN_JSON_NAMESPACE_BEGIN``, ``TOML_NAMESPACE_START`` over its ``{``, ``TOML_NODISCARD``)
# is read as what it stands for, not as a type: the namespace after it was one function.
CHUNKER_VERSION = "9"

# Share of a file's lines inside top-level ERROR nodes above which definitions are unreliable.
_MAX_ERROR_SHARE = 0.5


def _hash(path: str, symbol: str, kind: str, text: str) -> str:
    data = f"{path}\n{symbol}\n{kind}\n{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def module_stem(path: str) -> str:
    """What a file's module is called: its name without extensions, or its folder's name for
    an ``index`` file (``lib/context/index.js`` is ``context``)."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    return parts[-2] if stem == "index" and len(parts) > 1 else stem or "module"


def _parse_spans(
    path: str, lang: str, lines: list[str], cfg: IndexConfig
) -> tuple[list[Span], tuple[str, ...], list[int], list[str]] | None:
    """Definition spans, imports and call sites; ``None`` when the parse is not usable."""
    g = grammar(lang)
    spec = SPECS.get(lang)
    read = spec.prepare(lines) if spec is not None and spec.prepare is not None else lines
    src = "\n".join(read).encode("utf-8", "surrogatepass")
    tree = parser(lang).parse(src)
    root = tree.root_node
    top = root.named_children
    if root.has_error:
        bad = sum(last_row(n) - first_row(n) + 1 for n in top if n.type == "ERROR" or n.is_missing)
        if root.type == "ERROR" or bad > _MAX_ERROR_SHARE * len(lines):
            return None
    walker = Walker(lang, cfg.max_chunk_lines, module_stem(path))
    walker.items(top, "", member=False, owner="")
    caps = ts.QueryCursor(g.query).captures(root)
    rows, names = calls(lang, caps)
    return walker.spans, imports(lang, caps), rows, names


# ``#[cfg(test)] mod tests { ... }``: Rust keeps unit tests inside the file they test.
_RUST_TEST_MOD = re.compile(
    r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{"
)


def rust_test_modules(text: str) -> frozenset[str]:
    """Names of the inline modules compiled only for tests."""
    return frozenset(_RUST_TEST_MOD.findall(text))


def in_modules(symbol: str, modules: frozenset[str]) -> bool:
    """``symbol`` is one of ``modules`` or inside one (``tests.it_works``)."""
    return bool(modules) and symbol.split(".", 1)[0] in modules


def chunk_file(path: str, text: str, cfg: IndexConfig) -> list[Chunk]:
    """Chunks of one file, in file order. Never raises on odd content; see the module doc."""
    if not text or not text.strip():
        return []
    lines = text.splitlines()
    is_test, is_generated, is_vendor = file_flags(path, text)
    lang = detect_language(path, text)
    spans: list[Span] = []
    imports: tuple[str, ...] = ()
    rows: list[int] = []
    names: list[str] = []
    if lang is not None:
        try:
            parsed = _parse_spans(path, lang, lines, cfg)
        except Exception:  # a grammar or query failure must cost this file its structure only
            parsed = None
        if parsed is not None:
            spans, imports, rows, names = parsed
    if not spans:
        spans = windows(lines, path, cfg.window_lines, cfg.window_overlap)
        imports, rows, names = (), [], []
    language = lang or "text"
    test_modules = rust_test_modules(text) if language == "rust" else frozenset()

    max_lines = max(1, cfg.max_chunk_lines)
    out: list[Chunk] = []
    for span in spans:
        start, end = span.start, min(span.end, len(lines) - 1)
        while end > start and not lines[end].strip():
            end -= 1
        while start < end and not lines[start].strip():
            start += 1
        pieces = [(start, end)] if span.kind == "window" else split_span(start, end, max_lines)
        for s, e in pieces:
            body = "\n".join(lines[s : e + 1])
            if not body.strip():
                continue
            lo, hi = bisect.bisect_left(rows, s), bisect.bisect_right(rows, e)
            out.append(
                Chunk(
                    path=path,
                    start=s + 1,
                    end=e + 1,
                    symbol=span.symbol,
                    kind=span.kind,
                    language=language,
                    text=body,
                    hash=_hash(path, span.symbol, span.kind, body),
                    imports=imports,
                    calls=dedupe(names[lo:hi]),
                    is_test=is_test or in_modules(span.symbol, test_modules),
                    is_generated=is_generated,
                    is_vendor=is_vendor,
                )
            )
    return out
