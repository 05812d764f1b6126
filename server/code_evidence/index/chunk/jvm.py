"""Kotlin and Scala: classes, interfaces/traits, objects and companions, enums, extensions and
functions; imports, and the package a file declares.

As for Java, packages are not part of symbols (``InvoiceService.total``); objects and companion
objects are class-like scopes (``InvoiceService.Companion.create``), and extension functions are
qualified by the type they extend (Kotlin ``fun Order.discounted()`` -> ``Order.discounted``,
Scala ``extension (o: Order) def discounted`` -> ``Order.discounted``). The file's package is
recorded among its imports (``package com.acme.billing``): Kotlin files need not sit in folders
that spell their package, so the resolver goes by what files declare.
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import DECLARES, Def, LanguageSpec, compact_text, field_text, has_token, in_order

# --------------------------------------------------------------------------- kotlin

_KT_BODIES = frozenset({"class_body", "enum_class_body"})


def _kt_body(node: ts.Node) -> ts.Node | None:
    return next((c for c in node.named_children if c.type in _KT_BODIES), None)


def _kt_receiver(node: ts.Node) -> str:
    """The extended type of ``fun Order.discounted()`` (nothing for a plain function)."""
    for i, child in enumerate(node.children):
        if node.field_name_for_child(i) == "name":
            return ""
        if child.type == "nullable_type" and child.named_children:
            child = child.named_children[0]
        if child.type == "user_type":
            names = [c for c in child.named_children if c.type == "identifier"]
            return compact_text(names[0]) if names else ""
    return ""


def _kt_classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t == "class_declaration":
        body = _kt_body(node)
        if has_token(node, "interface"):
            kind = "interface"
        elif body is not None and body.type == "enum_class_body":
            kind = "enum"
        else:
            kind = "class"
        return Def(kind, field_text(node, "name"), body, "class" if body else "")
    if t in ("object_declaration", "companion_object"):
        body = _kt_body(node)
        name = field_text(node, "name") or "Companion"
        return Def("object", name, body, "class" if body else "")
    if t == "function_declaration":
        if not any(c.type == "function_body" for c in node.named_children):
            return None  # abstract or an interface's: part of its class
        name = field_text(node, "name")
        receiver = _kt_receiver(node)
        if receiver:
            return Def("method", f"{receiver}.{name}")
        return Def("method" if member else "function", name)
    if t == "type_alias" and not member:
        return Def("type", field_text(node, "type"))
    return None


def _kt_imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    out: list[str] = []
    for cap, node in in_order(caps, ("i", "pk")):
        path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
        if path is None:
            continue
        name = compact_text(path)
        if cap == "pk":
            out.append(DECLARES + name)
        else:
            out.append(f"{name}.*" if has_token(node, "*") or has_token(node, ".*") else name)
    return out


def _kotlin_language() -> object:
    import tree_sitter_kotlin

    return tree_sitter_kotlin.language()


KOTLIN = LanguageSpec(
    name="kotlin",
    extensions=(".kt", ".kts"),
    load=_kotlin_language,
    query="""
(call_expression . [(identifier) @n (navigation_expression (identifier) @n .)])
(import) @i
(package_header) @pk
""",
    classify=_kt_classify,
    imports=_kt_imports,
    attachable=frozenset({"line_comment", "block_comment"}),
    keywords=frozenset({"this", "super"}),
)

# --------------------------------------------------------------------------- scala

_SCALA_TYPES = {
    "class_definition": "class",
    "object_definition": "object",
    "trait_definition": "trait",
    "enum_definition": "enum",
    "package_object": "object",
}


def _scala_extended(node: ts.Node) -> str:
    """The type an ``extension (o: Order)`` block extends."""
    params = node.child_by_field_name("parameters")
    first = params.named_children[0] if params is not None and params.named_children else None
    type_node = first.child_by_field_name("type") if first is not None else None
    while type_node is not None and type_node.type == "generic_type":
        type_node = type_node.child_by_field_name("type")
    return compact_text(type_node)


def _scala_classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t in _SCALA_TYPES:
        body = node.child_by_field_name("body")
        return Def(_SCALA_TYPES[t], field_text(node, "name"), body, "class" if body else "")
    if t == "function_definition":
        return Def("method" if member else "function", field_text(node, "name"))
    if t == "extension_definition":
        body = node.child_by_field_name("body")
        name = _scala_extended(node)
        return Def("extension", name, body, "class") if body is not None and name else None
    if t == "package_clause":  # package a { ... }: what it holds, as if at the top level
        body = node.child_by_field_name("body")
        return Def("", "", body, "transparent") if body is not None else None
    if t == "type_definition" and not member:
        return Def("type", field_text(node, "name"))
    return None


def _scala_members(body: ts.Node) -> list[ts.Node]:
    """A template body's statements; an extension with one method holds just that method."""
    return [body] if body.type == "function_definition" else list(body.named_children)


def _scala_package(node: ts.Node) -> str:
    """Chained and nested clauses add up: ``package a`` + ``package b`` -> ``a.b``."""
    parts = [compact_text(node.child_by_field_name("name"))]
    prev = node.prev_named_sibling
    while prev is not None:
        if prev.type == "package_clause" and prev.child_by_field_name("body") is None:
            parts.append(compact_text(prev.child_by_field_name("name")))
        prev = prev.prev_named_sibling
    cur = node.parent
    while cur is not None:
        if cur.type == "package_clause":
            parts.append(compact_text(cur.child_by_field_name("name")))
        cur = cur.parent
    return ".".join(reversed([p for p in parts if p]))


def _scala_import(node: ts.Node) -> list[str]:
    path: list[str] = []
    out: list[str] = []
    for i, child in enumerate(node.children):
        if child.is_named and node.field_name_for_child(i) == "path":
            path.append(compact_text(child))
        elif child.type == "namespace_wildcard":
            out.append(".".join([*path, "*"]))
        elif child.type == "namespace_selectors":
            for sel in child.named_children:
                name = sel.child_by_field_name("name") if sel.type != "identifier" else sel
                if name is not None and name.type == "identifier":
                    out.append(".".join([*path, compact_text(name)]))
                elif sel.type == "namespace_wildcard":
                    out.append(".".join([*path, "*"]))
    return out or ([".".join(path)] if path else [])


def _scala_imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    out: list[str] = []
    for cap, node in in_order(caps, ("i", "pk")):
        if cap == "pk":
            after = node.next_named_sibling
            if after is None or after.type != "package_clause":  # the last of a chain
                out.append(DECLARES + _scala_package(node))
        else:
            out.extend(_scala_import(node))
    return out


def _scala_language() -> object:
    import tree_sitter_scala

    return tree_sitter_scala.language()


# Alternatives are spelled out flat: a nested ``[[...] ...]`` silently matches nothing here.
_SC_NAME = "(identifier) @n (field_expression field: (identifier) @n)"
SCALA = LanguageSpec(
    name="scala",
    extensions=(".scala", ".sc"),
    load=_scala_language,
    query=f"""
(call_expression function: [{_SC_NAME}])
(call_expression function: (generic_function function: [{_SC_NAME}]))
(instance_expression [(type_identifier) @n (generic_type type: (type_identifier) @n)])
(import_declaration) @i
(package_clause) @pk
""",
    classify=_scala_classify,
    imports=_scala_imports,
    members=_scala_members,
    attachable=frozenset({"comment", "block_comment", "annotation"}),
    keywords=frozenset({"this", "super"}),
)
