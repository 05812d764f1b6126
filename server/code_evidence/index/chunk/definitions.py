"""Definitions: which top-level nodes (and class members) of a tree are the chunks a person would
cite, with their qualified symbols, kinds and attached comments, per language.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import tree_sitter as ts

from .javascript import MODULE_OBJECT, js_member, js_top
from .languages import SPECS
from .syntax import PREPROC, first_row, last_row, node_text, preproc_items
from .syntax import Def as _Def

_SPLIT_OVERLAP = 10

# --------------------------------------------------------------------------- definitions


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
    name = node_text(node.child_by_field_name("name"))
    if t == "function_definition":
        return _Def("method" if member else "function", name)
    if t == "class_definition":
        return _Def("class", name, node.child_by_field_name("body"), "class")
    return None


def _go_type_name(node: ts.Node | None) -> str:
    """Receiver type without pointer or type parameters: ``(s *Server[T])`` -> ``Server``."""
    while node is not None:
        if node.type == "type_identifier":
            return node_text(node)
        if node.type == "parameter_list":
            decls = node.named_children
            node = decls[0].child_by_field_name("type") if decls else None
        elif node.type in ("pointer_type", "parenthesized_type"):
            node = node.named_children[0] if node.named_children else None
        elif node.type == "generic_type":
            node = node.child_by_field_name("type")
        else:
            return node_text(node)
    return ""


_GO_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _go_type_kind(spec: ts.Node) -> str:
    value = spec.child_by_field_name("type")
    return _GO_TYPE_KINDS.get(value.type, "type") if value is not None else "type"


def _go_top(node: ts.Node) -> _Def | None:
    t = node.type
    if t == "function_declaration":
        return _Def("function", node_text(node.child_by_field_name("name")))
    if t == "method_declaration":
        recv = _go_type_name(node.child_by_field_name("receiver"))
        name = node_text(node.child_by_field_name("name"))
        return _Def("method", f"{recv}.{name}" if recv else name)
    if t == "type_declaration":
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        if len(specs) == 1:
            return _Def(_go_type_kind(specs[0]), node_text(specs[0].child_by_field_name("name")))
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
    return node_text(t)


def _rust_top(node: ts.Node, member: bool) -> _Def | None:
    t = node.type
    if t == "function_item":
        return _Def("method" if member else "function", node_text(node.child_by_field_name("name")))
    if member:
        return None
    if t in _RUST_KINDS:
        return _Def(_RUST_KINDS[t], node_text(node.child_by_field_name("name")))
    if t == "impl_item":
        return _Def("impl", _rust_impl_name(node), node.child_by_field_name("body"), "class")
    if t == "trait_item":
        name = node_text(node.child_by_field_name("name"))
        return _Def("trait", name, node.child_by_field_name("body"), "class")
    if t == "mod_item":
        body = node.child_by_field_name("body")
        if body is not None:
            return _Def("module", node_text(node.child_by_field_name("name")), body, "module")
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
        name = node_text(node.child_by_field_name("name"))
        return _Def(_JAVA_TYPES[t], name, node.child_by_field_name("body"), "class")
    if member and t in _JAVA_METHODS and node.child_by_field_name("body") is not None:
        return _Def("method", node_text(node.child_by_field_name("name")))
    return None


def _classifier(lang: str) -> Callable[[ts.Node, bool], _Def | None]:
    if lang in SPECS:
        return SPECS[lang].classify
    if lang == "python":
        return _py_top
    if lang in ("javascript", "typescript", "tsx"):
        return lambda n, member: js_member(n) if member else js_top(n)
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


# A Rust ``impl`` header whose ``{`` is this close to its start (the ``impl`` line, an
# attribute above it), with no member before its first method, is no chunk of its own.
_BARE_HEADER_LINES = 2


def _doc_block(node: ts.Node) -> int:
    """1 for a ``/** ... */`` block: it documents what follows it even across one blank line,
    as express writes every function (``*/``, a blank line, ``res.send = function``). Not a
    banner of stars (``/*****/``, gin's section heads): that heads a section, not a function."""
    text = node.text or b""
    return 1 if text.startswith(b"/**") and text[3:4] in (b" ", b"\n", b"\t") else 0


def _trailing(node: ts.Node) -> bool:
    """Whether ``node`` starts on the line where code before it ends (a comment after code)."""
    prev = node.prev_sibling
    return prev is not None and last_row(prev) == first_row(node)


def _heading_line(node: ts.Node) -> bool:
    """A comment, or C#'s ``#region Serialize`` / ``#endregion`` (a section by another name)."""
    return "comment" in node.type or node.type in ("preproc_region", "preproc_endregion")


# A section heading is this many lines at most (longer comments are a licence, or code
# commented out), and stands this many blank lines at most above what it heads.
_HEADING_LINES = 4
_HEADING_GAP = 2


def _heading(nodes: Sequence[ts.Node], starts: list[int], group: list[int], i: int) -> bool:
    """Whether the code gathered before ``nodes[i]`` is comments only, just above it: a section
    heading (``// Primitive/Object array converters``, ``// ----``), a file's first comment
    (``# frozen_string_literal: true``), never a licence (longer). Alone it made a chunk of a
    line or two that matched questions by its words and pointed at nothing; it heads the
    definition below it instead."""
    if _trailing(nodes[group[0]]) or not all(_heading_line(nodes[k]) for k in group):
        return False
    end = last_row(nodes[group[-1]])
    return end - starts[group[0]] < _HEADING_LINES and starts[i] - end - 1 <= _HEADING_GAP


@dataclass(slots=True)
class Span:
    start: int  # 0-based row, inclusive
    end: int  # 0-based row, inclusive
    symbol: str
    kind: str
    grouped: bool = False  # non-definition code collected between definitions


class Walker:
    """Turns the top level (and class bodies) of one tree into spans, in file order."""

    def __init__(self, lang: str, max_lines: int, module: str = "module") -> None:
        self.lang = lang
        self.module = module  # what a module's exported object is called (MODULE_OBJECT)
        self.classify = _classifier(lang)
        spec = SPECS.get(lang)
        self.attachable = spec.attachable if spec is not None else _ATTACHABLE[lang]
        self.members = spec.members if spec is not None else _members
        self.max_lines = max(1, max_lines)
        self.spans: list[Span] = []

    def items(self, nodes: Sequence[ts.Node], prefix: str, member: bool, owner: str) -> None:
        """Emit definitions among ``nodes`` and group what lies between them.

        ``owner`` is the symbol and kind given to grouped non-definition code: ``""``/module at
        the top level, the class name/class inside a class body.
        """
        defs: list[_Def | None] = [self.classify(n, member) for n in nodes]
        starts = [first_row(n) for n in nodes]
        consumed = [False] * len(nodes)
        # Comments, decorators and attributes directly above a definition belong to it (not a
        # comment that ends a line of code: ``module Delegator # :nodoc:``).
        for i, d in enumerate(defs):
            if d is None or d.scope == "transparent":
                continue
            j = i - 1
            while (
                j >= 0
                and defs[j] is None
                and nodes[j].type in self.attachable
                and last_row(nodes[j]) >= starts[j + 1] - 1 - _doc_block(nodes[j])
                and (j == 0 or last_row(nodes[j - 1]) < starts[j])
                and not _trailing(nodes[j])
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
                if group and last_row(node) - starts[group[0]] + 1 > self.max_lines:
                    self._group(nodes, starts, group, owner)
                    group = []
                group.append(i)
                continue
            heading = None
            if group and _heading(nodes, starts, group, i):
                heading, group = starts[group[0]], []
            if group:
                self._group(nodes, starts, group, owner)
                group = []
            first = len(self.spans)
            if d.scope == "transparent":
                if d.body is not None:
                    inner = preproc_items(d.body) if d.kind == PREPROC else self.members(d.body)
                    self.items(inner, prefix, member, owner)
                if d.kind == PREPROC and len(self.spans) > first:
                    self.spans[first].start = min(self.spans[first].start, starts[i])  # #if
            else:
                self._definition(node, d, starts[i], prefix)
            if heading is not None and len(self.spans) > first:
                self.spans[first].start = heading  # it opens the definition's first chunk
        if group:
            self._group(nodes, starts, group, owner)

    def _group(
        self, nodes: Sequence[ts.Node], starts: list[int], group: list[int], owner: str
    ) -> None:
        kind = "module" if not owner else "class"
        self.spans.append(Span(starts[group[0]], last_row(nodes[group[-1]]), owner, kind, True))

    def _definition(self, node: ts.Node, d: _Def, start: int, prefix: str) -> None:
        symbol = f"{prefix}{self.module if d.name == MODULE_OBJECT else d.name}"
        end = last_row(node)
        if d.scope == "go-types":
            self._go_types(node, start)
            return
        if d.body is None or not d.scope:
            self.spans.append(Span(start, end, symbol, d.kind))
            return
        if d.scope == "module":
            self.items(d.body.named_children, f"{symbol}.", member=False, owner="")
            return
        self._class(node, d, start, end, symbol)

    def _class(self, node: ts.Node, d: _Def, start: int, end: int, symbol: str) -> None:
        assert d.body is not None
        sub = Walker(self.lang, self.max_lines, self.module)
        sub.items(self.members(d.body), f"{symbol}.", member=True, owner=symbol)
        first_def = next((s for s in sub.spans if not s.grouped), None)
        if first_def is None or first_def.start <= start:
            # No methods, or a one-line class: nothing sensible to split off.
            self.spans.append(Span(start, end, symbol, d.kind))
            return
        # Members before the first method (docstring, fields) fold into the class header; the
        # ones between or after methods stay as grouped chunks under the class name.
        header_end = first_def.start - 1
        bare = (
            d.kind == "impl"
            and first_row(d.body) - start < _BARE_HEADER_LINES
            and not any(s.grouped and s.end < first_def.start for s in sub.spans)
        )
        if bare:
            # A bare ``impl Number {`` says nothing of its own (the type is defined elsewhere)
            # and, one line long, outranked the methods for any question naming the type: it
            # opens its first method's chunk instead, where ``impl Display for Number`` still
            # tells which trait the method implements.
            first_def.start = start
        else:
            self.spans.append(Span(start, header_end, symbol, d.kind))
        for s in sub.spans:
            if s.end <= header_end:
                continue
            if s.grouped and s.symbol == symbol:  # a nested class's own keep its kind
                s.kind = d.kind
            self.spans.append(s)

    def _go_types(self, node: ts.Node, start: int) -> None:
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias")]
        for k, spec in enumerate(specs):
            s = start if k == 0 else first_row(spec)
            e = last_row(node) if k == len(specs) - 1 else last_row(spec)
            name = node_text(spec.child_by_field_name("name"))
            self.spans.append(Span(s, e, name, _go_type_kind(spec)))


def split_span(start: int, end: int, max_lines: int) -> list[tuple[int, int]]:
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
