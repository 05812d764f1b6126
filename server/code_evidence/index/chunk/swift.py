"""Swift: classes, structs, enums, actors, protocols and extensions with their methods and
initialisers, and functions; the modules a file imports.

An extension's methods are qualified by the type it extends (``extension Order { func
discounted() }`` -> ``Order.discounted``, kind ``extension`` for the block itself). Swift
imports name modules, not files; the resolver maps a module to its folder (``Package.swift``
targets where present).
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import Def, LanguageSpec, compact_text, field_text, in_order, node_text

_KINDS = frozenset({"class", "struct", "enum", "actor", "extension"})
_METHODS = {"function_declaration": "", "init_declaration": "init", "deinit_declaration": "deinit"}


def _type_name(node: ts.Node | None) -> str:
    """``Array<Int>`` -> ``Array``; ``Foo.Bar`` -> ``Foo.Bar``."""
    if node is None:
        return ""
    if node.type == "user_type":
        return ".".join(
            node_text(c) for c in node.named_children if c.type == "type_identifier"
        ) or compact_text(node)
    return node_text(node)


def classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t == "class_declaration":
        kind = node_text(node.child_by_field_name("declaration_kind"))
        body = node.child_by_field_name("body")
        name = _type_name(node.child_by_field_name("name"))
        if kind not in _KINDS or not name:
            return None
        return Def(kind, name, body, "class" if body is not None else "")
    if t == "protocol_declaration":
        body = node.child_by_field_name("body")
        return Def("protocol", field_text(node, "name"), body, "class" if body else "")
    if t in _METHODS and node.child_by_field_name("body") is not None:
        name = _METHODS[t] or field_text(node, "name")
        return Def("method" if member else "function", name) if name else None
    if t == "typealias_declaration" and not member:
        return Def("type", field_text(node, "name"))
    return None


def imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    """The module of each import: ``import struct Billing.Invoice`` -> ``Billing``."""
    out: list[str] = []
    for _, node in in_order(caps, ("i",)):
        ident = next((c for c in node.named_children if c.type == "identifier"), None)
        first = ident.named_children[0] if ident is not None and ident.named_children else None
        out.append(node_text(first))
    return out


def _language() -> object:
    import tree_sitter_swift

    return tree_sitter_swift.language()


SWIFT = LanguageSpec(
    name="swift",
    extensions=(".swift",),
    load=_language,
    query="""
(call_expression . [
  (simple_identifier) @n
  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @n))])
(import_declaration) @i
""",
    classify=classify,
    imports=imports,
    attachable=frozenset({"comment", "multiline_comment"}),
    keywords=frozenset({"self", "super"}),
)
