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
import keyword
import posixpath
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import tree_sitter as ts

from ..api import Chunk
from ..config import IndexConfig
from ..filekinds import file_flags

_EXT_LANG: dict[str, str] = {
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

_SPLIT_OVERLAP = 10
# Share of a file's lines inside top-level ERROR nodes above which definitions are unreliable.
_MAX_ERROR_SHARE = 0.5


def detect_language(path: str) -> str | None:
    """The grammar for ``path`` by extension; ``None`` means plain text windows."""
    return _EXT_LANG.get(posixpath.splitext(path)[1].lower())


# --------------------------------------------------------------------------- grammars


def _load_language(lang: str) -> ts.Language:
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

_IMPORT_CAPTURES = ("i", "s", "u", "m")

_KEYWORDS: dict[str, frozenset[str]] = {
    "python": frozenset(keyword.kwlist),
    "javascript": frozenset({"super", "this", "import", "function", "typeof", "void"}),
    "go": frozenset({"func", "go", "defer", "return"}),
    "rust": frozenset({"self", "Self", "super", "crate"}),
    "java": frozenset({"this", "super"}),
}
_KEYWORDS["typescript"] = _KEYWORDS["tsx"] = _KEYWORDS["javascript"]


class _Grammar(NamedTuple):
    parser: ts.Parser
    query: ts.Query  # calls and imports in one query: one pass over the tree, not two


_grammars: dict[str, _Grammar] = {}
_grammar_lock = threading.Lock()


def _grammar(lang: str) -> _Grammar:
    """Parsers and compiled queries are built once per language: compiling a query costs more
    than parsing a typical file."""
    g = _grammars.get(lang)
    if g is None:
        with _grammar_lock:
            g = _grammars.get(lang)
            if g is None:
                language = _load_language(lang)
                query = ts.Query(language, _CALL_QUERIES[lang] + "\n" + _IMPORT_QUERIES[lang])
                g = _Grammar(ts.Parser(language), query)
                _grammars[lang] = g
    return g


# --------------------------------------------------------------------------- helpers


def _text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _compact(node: ts.Node | None) -> str:
    """Node text without whitespace (``a . b`` and line-broken paths are the same name)."""
    return "".join(_text(node).split())


def _start(node: ts.Node) -> int:
    return node.start_point.row


def _end(node: ts.Node) -> int:
    """Last row the node has text on: a node ending at column 0 ends on the previous row (Rust
    line comments own their trailing newline)."""
    row, col = node.end_point
    if col == 0 and row > node.start_point.row:
        return row - 1
    return row


def _unquote(node: ts.Node) -> str:
    raw = _text(node)
    if len(raw) >= 2 and raw[0] in "\"'`" and raw[-1] == raw[0]:
        return raw[1:-1]
    return raw


def _hash(path: str, symbol: str, kind: str, text: str) -> str:
    data = f"{path}\n{symbol}\n{kind}\n{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


# --------------------------------------------------------------------------- definitions


class _Def(NamedTuple):
    kind: str
    name: str
    # Children of ``body`` are members (class-likes) or nested top-level items (Rust ``mod``).
    body: ts.Node | None = None
    scope: str = ""  # "class" | "module" | ""


_ATTACHABLE: dict[str, frozenset[str]] = {
    "python": frozenset({"comment"}),
    "javascript": frozenset({"comment", "decorator"}),
    "typescript": frozenset({"comment", "decorator"}),
    "tsx": frozenset({"comment", "decorator"}),
    "go": frozenset({"comment"}),
    "rust": frozenset({"line_comment", "block_comment", "attribute_item"}),
    "java": frozenset({"line_comment", "block_comment"}),
}


def _py_top(node: ts.Node, member: bool) -> _Def | None:
    t = node.type
    if t == "decorated_definition":
        inner = node.child_by_field_name("definition")
        return _py_top(inner, member) if inner is not None else None
    name = _text(node.child_by_field_name("name"))
    if t == "function_definition":
        return _Def("method" if member else "function", name)
    if t == "class_definition":
        return _Def("class", name, node.child_by_field_name("body"), "class")
    return None


_JS_FUNC_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})


def _js_top(node: ts.Node) -> _Def | None:
    t = node.type
    if t == "export_statement":
        inner = node.child_by_field_name("declaration")
        if inner is None:
            inner = node.child_by_field_name("value")
            if inner is not None and inner.type in _JS_FUNC_VALUES | {"class"}:
                kind = "class" if inner.type == "class" else "function"
                body = inner.child_by_field_name("body") if kind == "class" else None
                name = _text(inner.child_by_field_name("name")) or "default"
                return _Def(kind, name, body, "class" if body is not None else "")
            return None
        return _js_top(inner)
    if t in ("function_declaration", "generator_function_declaration"):
        return _Def("function", _text(node.child_by_field_name("name")))
    if t in _JS_CLASSES:
        name = _text(node.child_by_field_name("name"))
        return _Def("class", name, node.child_by_field_name("body"), "class")
    if t in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) == 1:
            value = decls[0].child_by_field_name("value")
            if value is not None and value.type in _JS_FUNC_VALUES:
                return _Def("function", _text(decls[0].child_by_field_name("name")))
        return None
    if t == "interface_declaration":
        return _Def("interface", _text(node.child_by_field_name("name")))
    if t == "type_alias_declaration":
        return _Def("type", _text(node.child_by_field_name("name")))
    if t == "enum_declaration":
        return _Def("enum", _text(node.child_by_field_name("name")))
    return None


def _js_member(node: ts.Node) -> _Def | None:
    t = node.type
    if t == "method_definition":
        return _Def("method", _unquote(node.child_by_field_name("name")))
    if t in ("field_definition", "public_field_definition"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in _JS_FUNC_VALUES:
            name = node.child_by_field_name("property") or node.child_by_field_name("name")
            return _Def("method", _unquote(name)) if name is not None else None
    return None


def _go_type_name(node: ts.Node | None) -> str:
    """Receiver type without pointer or type parameters: ``(s *Server[T])`` -> ``Server``."""
    while node is not None:
        if node.type == "type_identifier":
            return _text(node)
        if node.type == "parameter_list":
            decls = node.named_children
            node = decls[0].child_by_field_name("type") if decls else None
        elif node.type in ("pointer_type", "parenthesized_type"):
            node = node.named_children[0] if node.named_children else None
        elif node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:
            return _text(node)
    return ""


_GO_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _go_type_kind(spec: ts.Node) -> str:
    value = spec.child_by_field_name("type")
    return _GO_TYPE_KINDS.get(value.type, "type") if value is not None else "type"


def _go_top(node: ts.Node) -> _Def | None:
    t = node.type
    if t == "function_declaration":
        return _Def("function", _text(node.child_by_field_name("name")))
    if t == "method_declaration":
        recv = _go_type_name(node.child_by_field_name("receiver"))
        name = _text(node.child_by_field_name("name"))
        return _Def("method", f"{recv}.{name}" if recv else name)
    if t == "type_declaration":
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        if len(specs) == 1:
            return _Def(_go_type_kind(specs[0]), _text(specs[0].child_by_field_name("name")))
        # Grouped ``type ( ... )``: handled by ``_go_type_group``.
        return _Def("type", "", node, "go-types") if specs else None
    return None


_RUST_KINDS = {
    "struct_item": "struct",
    "enum_item": "enum",
    "union_item": "struct",
    "type_item": "type",
    "macro_definition": "macro",
}


def _rust_impl_name(node: ts.Node) -> str:
    t = node.child_by_field_name("type")
    while t is not None and t.type in ("generic_type", "reference_type", "pointer_type"):
        t = t.child_by_field_name("type")
    if t is not None and t.type == "scoped_type_identifier":
        t = t.child_by_field_name("name")
    return _text(t)


def _rust_top(node: ts.Node, member: bool) -> _Def | None:
    t = node.type
    if t == "function_item":
        return _Def("method" if member else "function", _text(node.child_by_field_name("name")))
    if member:
        return None
    if t in _RUST_KINDS:
        return _Def(_RUST_KINDS[t], _text(node.child_by_field_name("name")))
    if t == "impl_item":
        return _Def("impl", _rust_impl_name(node), node.child_by_field_name("body"), "class")
    if t == "trait_item":
        name = _text(node.child_by_field_name("name"))
        return _Def("trait", name, node.child_by_field_name("body"), "class")
    if t == "mod_item":
        body = node.child_by_field_name("body")
        if body is not None:
            return _Def("module", _text(node.child_by_field_name("name")), body, "module")
    return None


_JAVA_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "record_declaration": "record",
    "annotation_type_declaration": "interface",
}
_JAVA_METHODS = frozenset(
    {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
)


def _java_top(node: ts.Node, member: bool) -> _Def | None:
    t = node.type
    if t in _JAVA_TYPES:
        name = _text(node.child_by_field_name("name"))
        return _Def(_JAVA_TYPES[t], name, node.child_by_field_name("body"), "class")
    if member and t in _JAVA_METHODS and node.child_by_field_name("body") is not None:
        return _Def("method", _text(node.child_by_field_name("name")))
    return None


def _classifier(lang: str) -> Callable[[ts.Node, bool], _Def | None]:
    if lang == "python":
        return _py_top
    if lang in ("javascript", "typescript", "tsx"):
        return lambda n, member: _js_member(n) if member else _js_top(n)
    if lang == "go":
        return lambda n, member: None if member else _go_top(n)
    if lang == "rust":
        return _rust_top
    return _java_top


def _members(body: ts.Node) -> list[ts.Node]:
    """Named children of a class body; Java enum bodies keep their methods one level down."""
    out: list[ts.Node] = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            out.extend(child.named_children)
        else:
            out.append(child)
    return out


# --------------------------------------------------------------------------- spans


@dataclass(slots=True)
class _Span:
    start: int  # 0-based row, inclusive
    end: int  # 0-based row, inclusive
    symbol: str
    kind: str
    grouped: bool = False  # non-definition code collected between definitions


class _Walker:
    """Turns the top level (and class bodies) of one tree into spans, in file order."""

    def __init__(self, lang: str, max_lines: int) -> None:
        self.lang = lang
        self.classify = _classifier(lang)
        self.attachable = _ATTACHABLE[lang]
        self.max_lines = max(1, max_lines)
        self.spans: list[_Span] = []

    def items(self, nodes: Sequence[ts.Node], prefix: str, member: bool, owner: str) -> None:
        """Emit definitions among ``nodes`` and group what lies between them.

        ``owner`` is the symbol and kind given to grouped non-definition code: ``""``/module at
        the top level, the class name/class inside a class body.
        """
        defs: list[_Def | None] = [self.classify(n, member) for n in nodes]
        starts = [_start(n) for n in nodes]
        consumed = [False] * len(nodes)
        # Comments, decorators and attributes directly above a definition belong to it.
        for i, d in enumerate(defs):
            if d is None:
                continue
            j = i - 1
            while (
                j >= 0
                and defs[j] is None
                and nodes[j].type in self.attachable
                and _end(nodes[j]) >= starts[j + 1] - 1
                and (j == 0 or _end(nodes[j - 1]) < starts[j])
            ):
                consumed[j] = True
                starts[i] = starts[j]
                j -= 1
        group: list[int] = []
        for i, node in enumerate(nodes):
            d = defs[i]
            if d is None:
                if consumed[i]:
                    continue
                if group and _end(node) - starts[group[0]] + 1 > self.max_lines:
                    self._group(nodes, starts, group, owner)
                    group = []
                group.append(i)
                continue
            if group:
                self._group(nodes, starts, group, owner)
                group = []
            self._definition(node, d, starts[i], prefix)
        if group:
            self._group(nodes, starts, group, owner)

    def _group(
        self, nodes: Sequence[ts.Node], starts: list[int], group: list[int], owner: str
    ) -> None:
        kind = "module" if not owner else "class"
        self.spans.append(_Span(starts[group[0]], _end(nodes[group[-1]]), owner, kind, True))

    def _definition(self, node: ts.Node, d: _Def, start: int, prefix: str) -> None:
        symbol = f"{prefix}{d.name}"
        end = _end(node)
        if d.scope == "go-types":
            self._go_types(node, start)
            return
        if d.body is None or not d.scope:
            self.spans.append(_Span(start, end, symbol, d.kind))
            return
        if d.scope == "module":
            self.items(d.body.named_children, f"{symbol}.", member=False, owner="")
            return
        self._class(node, d, start, end, symbol)

    def _class(self, node: ts.Node, d: _Def, start: int, end: int, symbol: str) -> None:
        assert d.body is not None
        sub = _Walker(self.lang, self.max_lines)
        sub.items(_members(d.body), f"{symbol}.", member=True, owner=symbol)
        first_def = next((s for s in sub.spans if not s.grouped), None)
        if first_def is None or first_def.start <= start:
            # No methods, or a one-line class: nothing sensible to split off.
            self.spans.append(_Span(start, end, symbol, d.kind))
            return
        # Members before the first method (docstring, fields) fold into the class header; the
        # ones between or after methods stay as grouped chunks under the class name.
        header_end = first_def.start - 1
        self.spans.append(_Span(start, header_end, symbol, d.kind))
        for s in sub.spans:
            if s.end <= header_end:
                continue
            if s.grouped:
                s.kind = d.kind
            self.spans.append(s)

    def _go_types(self, node: ts.Node, start: int) -> None:
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        for k, spec in enumerate(specs):
            s = start if k == 0 else _start(spec)
            e = _end(node) if k == len(specs) - 1 else _end(spec)
            name = _text(spec.child_by_field_name("name"))
            self.spans.append(_Span(s, e, name, _go_type_kind(spec)))


def _split(start: int, end: int, max_lines: int) -> list[tuple[int, int]]:
    """Pieces of at most ``max_lines`` rows that overlap a little, so a statement cut at a
    boundary is still whole in one of the two pieces."""
    if end - start + 1 <= max_lines:
        return [(start, end)]
    overlap = min(_SPLIT_OVERLAP, max_lines // 3)
    out: list[tuple[int, int]] = []
    s = start
    while True:
        e = min(s + max_lines - 1, end)
        out.append((s, e))
        if e >= end:
            return out
        s = e - overlap + 1


# --------------------------------------------------------------------------- calls / imports


def _java_type_name(node: ts.Node) -> str:
    while node.type == "generic_type" and node.named_children:
        node = node.named_children[0]
    if node.type == "scoped_type_identifier" and node.named_children:
        node = node.named_children[-1]
    return _text(node)


def _calls(lang: str, caps: dict[str, list[ts.Node]]) -> tuple[list[int], list[str]]:
    """Every call site as parallel (row, bare name) lists, sorted by position."""
    found = [(n.start_byte, n.start_point.row, _text(n)) for n in caps.get("n", ())]
    found += [(n.start_byte, n.start_point.row, _java_type_name(n)) for n in caps.get("t", ())]
    found.sort()
    skip = _KEYWORDS.get(lang, frozenset())
    kept = [(row, name) for _, row, name in found if name and name not in skip]
    return [r for r, _ in kept], [n for _, n in kept]


def _py_imports(node: ts.Node) -> list[str]:
    if node.type == "import_statement":
        out = []
        for n in node.children_by_field_name("name"):
            if n.type == "aliased_import":
                n = n.child_by_field_name("name")
            out.append(_compact(n))
        return out
    module = _compact(node.child_by_field_name("module_name"))
    if not module:
        return []
    names = []
    for n in node.children_by_field_name("name"):
        if n.type == "aliased_import":
            n = n.child_by_field_name("name")
        names.append(_compact(n))
    if module.strip("."):
        # ``from a import b``: b may be a submodule; the resolver drops it when it is not.
        return [module, *(f"{module}.{n}" for n in names)]
    return [f"{module}{n}" for n in names] if names else [module]


def _rust_use(node: ts.Node | None, prefix: str) -> list[str]:
    """Leaf paths of a use tree: ``a::{b, c::d as e}`` -> ``a::b``, ``a::c::d``."""
    if node is None:
        return [prefix] if prefix else []

    def join(p: str, q: str) -> str:
        return f"{p}::{q}" if p and q else p or q

    t = node.type
    if t == "self":
        return [prefix or "self"]
    if t == "use_as_clause":
        return _rust_use(node.child_by_field_name("path"), prefix)
    if t == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        return [join(prefix, _compact(inner))] if inner is not None else [prefix]
    if t == "scoped_use_list":
        p = join(prefix, _compact(node.child_by_field_name("path")))
        return _rust_use(node.child_by_field_name("list"), p)
    if t == "use_list":
        out: list[str] = []
        for child in node.named_children:
            out.extend(_rust_use(child, prefix))
        return out
    return [join(prefix, _compact(node))]


def _java_import(node: ts.Node) -> str:
    path = ""
    star = False
    for child in node.named_children:
        if child.type in ("scoped_identifier", "identifier"):
            path = _compact(child)
        elif child.type == "asterisk":
            star = True
    return f"{path}.*" if star and path else path


def _imports(lang: str, caps: dict[str, list[ts.Node]]) -> tuple[str, ...]:
    nodes = sorted(
        ((n.start_byte, name, n) for name in _IMPORT_CAPTURES for n in caps.get(name, ())),
        key=lambda x: x[0],
    )
    out: list[str] = []
    for _, cap, node in nodes:
        if lang == "python":
            out.extend(_py_imports(node))
        elif lang == "java":
            out.append(_java_import(node))
        elif lang == "rust":
            out.extend(_rust_use(node, "") if cap == "u" else [f"self::{_text(node)}"])
        elif cap == "s":
            out.append(_unquote(node))
    return _dedupe(s.strip() for s in out)


# --------------------------------------------------------------------------- windows

_MD_HEADING_RE = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_RST_UNDERLINE_RE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")


def _headings(lines: list[str], path: str) -> list[tuple[int, str]]:
    """(row, title) of Markdown / reST headings, so a window can name its section."""
    ext = posixpath.splitext(path)[1].lower()
    out: list[tuple[int, str]] = []
    if ext in (".md", ".markdown", ".mdx"):
        fenced = False
        for i, line in enumerate(lines):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and line.startswith(("#", " ")):
                m = _MD_HEADING_RE.match(line)
                if m:
                    out.append((i, m.group(1)))
    elif ext in (".rst", ".rest"):
        for i in range(1, len(lines)):
            title = lines[i - 1].strip()
            if title and _RST_UNDERLINE_RE.match(lines[i]) and not _RST_UNDERLINE_RE.match(title):
                out.append((i - 1, title))
    return out


def _windows(lines: list[str], path: str, size: int, overlap: int) -> list[_Span]:
    size = max(1, size)
    overlap = max(0, min(overlap, size - 1))
    heads = _headings(lines, path)
    head_rows = [r for r, _ in heads]
    spans: list[_Span] = []
    s = 0
    n = len(lines)
    while s < n:
        e = min(s + size - 1, n - 1)
        symbol = ""
        if heads:
            k = bisect.bisect_right(head_rows, s) - 1
            if k < 0 and head_rows[0] <= e:
                k = 0
            if k >= 0:
                symbol = heads[k][1]
        spans.append(_Span(s, e, symbol, "window"))
        if e >= n - 1:
            break
        s = e - overlap + 1
    return spans


# --------------------------------------------------------------------------- entry point


def _parse_spans(
    lang: str, lines: list[str], cfg: IndexConfig
) -> tuple[list[_Span], tuple[str, ...], list[int], list[str]] | None:
    """Definition spans, imports and call sites; ``None`` when the parse is not usable."""
    g = _grammar(lang)
    src = "\n".join(lines).encode("utf-8", "surrogatepass")
    tree = g.parser.parse(src)
    root = tree.root_node
    top = root.named_children
    if root.has_error:
        bad = sum(_end(n) - _start(n) + 1 for n in top if n.type == "ERROR" or n.is_missing)
        if root.type == "ERROR" or bad > _MAX_ERROR_SHARE * len(lines):
            return None
    walker = _Walker(lang, cfg.max_chunk_lines)
    walker.items(top, "", member=False, owner="")
    caps = ts.QueryCursor(g.query).captures(root)
    rows, names = _calls(lang, caps)
    return walker.spans, _imports(lang, caps), rows, names


def chunk_file(path: str, text: str, cfg: IndexConfig) -> list[Chunk]:
    """Chunks of one file, in file order. Never raises on odd content; see the module doc."""
    if not text or not text.strip():
        return []
    lines = text.splitlines()
    is_test, is_generated, is_vendor = file_flags(path, text)
    lang = detect_language(path)
    spans: list[_Span] = []
    imports: tuple[str, ...] = ()
    rows: list[int] = []
    names: list[str] = []
    if lang is not None:
        try:
            parsed = _parse_spans(lang, lines, cfg)
        except Exception:  # a grammar or query failure must cost this file its structure only
            parsed = None
        if parsed is not None:
            spans, imports, rows, names = parsed
    if not spans:
        spans = _windows(lines, path, cfg.window_lines, cfg.window_overlap)
        imports, rows, names = (), [], []
    language = lang or "text"

    max_lines = max(1, cfg.max_chunk_lines)
    out: list[Chunk] = []
    for span in spans:
        start, end = span.start, min(span.end, len(lines) - 1)
        while end > start and not lines[end].strip():
            end -= 1
        while start < end and not lines[start].strip():
            start += 1
        pieces = [(start, end)] if span.kind == "window" else _split(start, end, max_lines)
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
                    calls=_dedupe(names[lo:hi]),
                    is_test=is_test,
                    is_generated=is_generated,
                    is_vendor=is_vendor,
                )
            )
    return out
