"""C#: classes, interfaces, structs, records and enums with their methods; ``using`` directives
and the namespaces a file declares.

Namespaces are to C# what packages are to Java: they are not part of symbols (``Invoice.Total``,
not ``Acme.Billing.Invoice.Total``), and block namespaces are walked transparently. The file's
namespaces are recorded among its imports (``package Acme.Billing``) so the resolver can map a
``using Acme.Billing;`` elsewhere to the files that declare it.
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import (
    DECLARES,
    Def,
    LanguageSpec,
    compact_text,
    field_text,
    in_order,
    preproc_block,
)

_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "struct_declaration": "struct",
    "record_declaration": "record",
    "record_struct_declaration": "record",
}
_PREPROC = frozenset({"preproc_if", "preproc_elif", "preproc_else"})
_METHODS = frozenset(
    {
        "method_declaration",
        "constructor_declaration",
        "destructor_declaration",
        "operator_declaration",
        "conversion_operator_declaration",
    }
)


def classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t in _PREPROC:
        return preproc_block(node, member, classify)
    if t == "namespace_declaration":
        body = node.child_by_field_name("body")
        return Def("", "", body, "transparent") if body is not None else None
    if t in _TYPES:
        body = node.child_by_field_name("body")
        return Def(_TYPES[t], field_text(node, "name"), body, "class" if body else "")
    if t == "enum_declaration":
        return Def("enum", field_text(node, "name"))
    if t == "delegate_declaration":
        return Def("type", field_text(node, "name"))
    if member and t in _METHODS and node.child_by_field_name("body") is not None:
        name = field_text(node, "name") or ("operator" if "operator" in t else "")
        return Def("method", name) if name else None
    return None


def _namespace(node: ts.Node) -> str:
    """The full name of a (possibly nested) namespace declaration."""
    parts: list[str] = []
    cur: ts.Node | None = node
    while cur is not None:
        if cur.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
            parts.append(compact_text(cur.child_by_field_name("name")))
        cur = cur.parent
    return ".".join(reversed([p for p in parts if p]))


def imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    """``using A.B;``, ``using static A.B.C;`` and ``using X = A.B.C;`` as ``A.B`` / ``A.B.C``;
    each declared namespace as ``package A.B``."""
    out: list[str] = []
    for cap, node in in_order(caps, ("i", "ns")):
        if cap == "ns":
            out.append(DECLARES + _namespace(node))
            continue
        target = next(
            (c for c in node.named_children if c.type in ("qualified_name", "identifier")), None
        )
        if node.child_by_field_name("name") is not None:  # an alias: the target follows "="
            names = [c for c in node.named_children if c.type in ("qualified_name", "identifier")]
            target = names[-1] if names else None
        if target is not None:
            out.append(compact_text(target))
    return out


def _language() -> object:
    import tree_sitter_c_sharp

    return tree_sitter_c_sharp.language()


# Alternatives are spelled out flat (nested ``[[...] ...]`` can silently match nothing).
_NAME = "(identifier) @n (generic_name (identifier) @n)"
CSHARP = LanguageSpec(
    name="csharp",
    extensions=(".cs",),
    load=_language,
    query=f"""
(invocation_expression function: [{_NAME}])
(invocation_expression function: (member_access_expression name: [{_NAME}]))
(invocation_expression function:
  (conditional_access_expression (member_binding_expression name: [{_NAME}])))
(object_creation_expression type: [{_NAME}])
(object_creation_expression type: (qualified_name name: [{_NAME}]))
(using_directive) @i
(namespace_declaration name: (_) @ns)
(file_scoped_namespace_declaration name: (_) @ns)
""",
    classify=classify,
    imports=imports,
    keywords=frozenset({"nameof", "typeof", "base", "this"}),
)
