"""References: the names a chunk calls and the modules a file imports, read from the captures
of each language's query (the query runs in C; only the captures are walked here).
"""

from __future__ import annotations

import tree_sitter as ts

from .languages import IMPORT_CAPTURES, KEYWORDS, SPECS
from .syntax import compact_text, dedupe, node_text, unquote

# --------------------------------------------------------------------------- calls / imports


def _java_type_name(node: ts.Node) -> str:
    while node.type == "generic_type" and node.named_children:
        node = node.named_children[0]
    if node.type == "scoped_type_identifier" and node.named_children:
        node = node.named_children[-1]
    return node_text(node)


def calls(lang: str, caps: dict[str, list[ts.Node]]) -> tuple[list[int], list[str]]:
    """Every call site as parallel (row, bare name) lists, sorted by position."""
    found = [(n.start_byte, n.start_point.row, node_text(n)) for n in caps.get("n", ())]
    found += [(n.start_byte, n.start_point.row, _java_type_name(n)) for n in caps.get("t", ())]
    found.sort()
    skip = KEYWORDS.get(lang, frozenset())
    kept = [(row, name) for _, row, name in found if name and name not in skip]
    return [r for r, _ in kept], [n for _, n in kept]


def _py_imports(node: ts.Node) -> list[str]:
    if node.type == "import_statement":
        out = []
        for n in node.children_by_field_name("name"):
            if n.type == "aliased_import":
                n = n.child_by_field_name("name")
            out.append(compact_text(n))
        return out
    module = compact_text(node.child_by_field_name("module_name"))
    if not module:
        return []
    names = []
    for n in node.children_by_field_name("name"):
        if n.type == "aliased_import":
            n = n.child_by_field_name("name")
        names.append(compact_text(n))
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
        return [join(prefix, compact_text(inner))] if inner is not None else [prefix]
    if t == "scoped_use_list":
        p = join(prefix, compact_text(node.child_by_field_name("path")))
        return _rust_use(node.child_by_field_name("list"), p)
    if t == "use_list":
        out: list[str] = []
        for child in node.named_children:
            out.extend(_rust_use(child, prefix))
        return out
    return [join(prefix, compact_text(node))]


def _java_import(node: ts.Node) -> str:
    path = ""
    star = False
    for child in node.named_children:
        if child.type in ("scoped_identifier", "identifier"):
            path = compact_text(child)
        elif child.type == "asterisk":
            star = True
    return f"{path}.*" if star and path else path


def imports(lang: str, caps: dict[str, list[ts.Node]]) -> tuple[str, ...]:
    spec = SPECS.get(lang)
    if spec is not None:
        return dedupe(s.strip() for s in spec.imports(caps))
    nodes = sorted(
        ((n.start_byte, name, n) for name in IMPORT_CAPTURES for n in caps.get(name, ())),
        key=lambda x: x[0],
    )
    out: list[str] = []
    for _, cap, node in nodes:
        if lang == "python":
            out.extend(_py_imports(node))
        elif lang == "java":
            out.append(_java_import(node))
        elif lang == "rust":
            out.extend(_rust_use(node, "") if cap == "u" else [f"self::{node_text(node)}"])
        elif cap == "s":
            out.append(unquote(node))
    return dedupe(s.strip() for s in out)
