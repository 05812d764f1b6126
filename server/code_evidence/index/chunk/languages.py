"""The grammars: which language a file is, its tree-sitter parser and the one query per language
that finds calls and imports (the first six languages here, the later ones from their family
modules through ``SPECS``).

Grammars come from the per-language wheels on PyPI and are loaded on first use, once per
process (nothing is downloaded at run time).
"""

from __future__ import annotations

import keyword
import posixpath
import threading
from typing import NamedTuple

import tree_sitter as ts

from .c_family import CPP, C, looks_like_cpp
from .csharp import CSHARP
from .jvm import KOTLIN, SCALA
from .php import PHP
from .ruby import RUBY
from .swift import SWIFT
from .syntax import LanguageSpec

EXT_LANG: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
}

# The languages added since, each described by its family module (see ``syntax.py``).
SPECS: dict[str, LanguageSpec] = {
    s.name: s for s in (C, CPP, CSHARP, RUBY, PHP, KOTLIN, SCALA, SWIFT)
}
EXT_LANG.update({ext: s.name for s in SPECS.values() for ext in s.extensions})


def detect_language(path: str, text: str | None = None) -> str | None:
    """The grammar for ``path`` by extension; ``None`` means plain text windows. A ``.h``
    header is C unless its ``text`` says C++."""
    lang = EXT_LANG.get(posixpath.splitext(path)[1].lower())
    if lang == "c" and text is not None and path.lower().endswith(".h") and looks_like_cpp(text):
        return "cpp"
    return lang


# --------------------------------------------------------------------------- grammars


def _load_language(lang: str) -> ts.Language:
    if lang in SPECS:
        return ts.Language(SPECS[lang].load())
    if lang == "python":
        import tree_sitter_python as mod

        return ts.Language(mod.language())
    if lang == "javascript":
        import tree_sitter_javascript as mod

        return ts.Language(mod.language())
    if lang in ("typescript", "tsx"):
        import tree_sitter_typescript as mod

        raw = mod.language_tsx() if lang == "tsx" else mod.language_typescript()
        return ts.Language(raw)
    if lang == "go":
        import tree_sitter_go as mod

        return ts.Language(mod.language())
    if lang == "rust":
        import tree_sitter_rust as mod

        return ts.Language(mod.language())
    if lang == "java":
        import tree_sitter_java as mod

        return ts.Language(mod.language())
    raise ValueError(f"no grammar for {lang!r}")


_JS_CALLS = """
(call_expression function: [
  (identifier) @n
  (member_expression property: [(property_identifier) (private_property_identifier)] @n)])
(new_expression constructor: [(identifier) @n (member_expression property: (_) @n)])
"""
_JS_IMPORTS = """
(import_statement source: (string) @s)
(export_statement source: (string) @s)
(call_expression function: (identifier) @fn arguments: (arguments . (string) @s)
  (#eq? @fn "require"))
(call_expression function: (import) arguments: (arguments . (string) @s))
"""

_CALL_QUERIES: dict[str, str] = {
    "python": "(call function: [(identifier) @n (attribute attribute: (identifier) @n)])",
    "javascript": _JS_CALLS,
    "typescript": _JS_CALLS,
    "tsx": _JS_CALLS,
    "go": "(call_expression function: [(identifier) @n (selector_expression field: (_) @n)])",
    "rust": """
(call_expression function: [
  (identifier) @n
  (scoped_identifier name: (identifier) @n)
  (field_expression field: (field_identifier) @n)
  (generic_function function: [
    (identifier) @n
    (scoped_identifier name: (identifier) @n)
    (field_expression field: (field_identifier) @n)])])
""",
    "java": """
(method_invocation name: (identifier) @n)
(object_creation_expression type: (_) @t)
""",
}

_IMPORT_QUERIES: dict[str, str] = {
    "python": "[(import_statement) (import_from_statement)] @i",
    "javascript": _JS_IMPORTS,
    "typescript": _JS_IMPORTS + "(import_require_clause source: (string) @s)",
    "tsx": _JS_IMPORTS + "(import_require_clause source: (string) @s)",
    "go": "(import_spec path: (_) @s)",
    "rust": "(use_declaration argument: (_) @u) (mod_item name: (identifier) @m !body)",
    "java": "(import_declaration) @i",
}

IMPORT_CAPTURES = ("i", "s", "u", "m")

KEYWORDS: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist),
    "javascript": frozenset({"super", "this", "import", "function", "typeof", "void"}),
    "go": frozenset({"func", "go", "defer", "return"}),
    "rust": frozenset({"self", "Self", "super", "crate"}),
    "java": frozenset({"this", "super"}),
}
KEYWORDS["typescript"] = KEYWORDS["tsx"] = KEYWORDS["javascript"]
KEYWORDS.update({s.name: s.keywords for s in SPECS.values()})


class Grammar(NamedTuple):
    language: ts.Language
    query: ts.Query  # calls and imports in one query: one pass over the tree, not two


_grammars: dict[str, Grammar] = {}
_grammar_lock = threading.Lock()
# A tree-sitter parser is not safe to share between threads (the index pass reads files on
# two, see ``index/reading.py``): one per thread and language. A query is read-only once
# compiled, and each use gets a cursor of its own, so the compiled queries are shared.
_parsers = threading.local()


def parser(lang: str) -> ts.Parser:
    """This thread's parser for ``lang``."""
    mine: dict[str, ts.Parser] | None = getattr(_parsers, "by_lang", None)
    if mine is None:
        mine = _parsers.by_lang = {}
    p = mine.get(lang)
    if p is None:
        p = mine[lang] = ts.Parser(grammar(lang).language)
    return p


def grammar(lang: str) -> Grammar:
    """Compiled queries are built once per language: compiling a query costs more than
    parsing a typical file."""
    g = _grammars.get(lang)
    if g is None:
        with _grammar_lock:
            g = _grammars.get(lang)
            if g is None:
                language = _load_language(lang)
                spec = SPECS.get(lang)
                text = (
                    spec.query
                    if spec is not None
                    else _CALL_QUERIES[lang] + "\n" + _IMPORT_QUERIES[lang]
                )
                query = ts.Query(language, text)
                g = Grammar(language, query)
                _grammars[lang] = g
    return g
