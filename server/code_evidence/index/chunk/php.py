"""PHP: classes, interfaces, traits and enums with their methods, and functions; ``use``
declarations, ``require``/``include`` of literal paths, and the namespace a file declares.

Like C# and Java, namespaces are not part of symbols (``InvoiceService.total``); the file's
namespace is recorded among its imports (``package App\\Billing``) for the resolver. A ``use``
of a class is recorded as its full name (``App\\Models\\User``, which PSR-4 maps to a file); a
``use function``/``use const`` as its namespace with a trailing backslash (``App\\Support\\``):
functions are not autoloaded by file name.
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import DECLARES, Def, LanguageSpec, compact_text, field_text, has_token, in_order

_TYPES = {
    "class_declaration": "class",
    "interface_declaration": "interface",
    "trait_declaration": "trait",
    "enum_declaration": "enum",
}
_INCLUDES = " ".join(
    f"({kind}_expression)" for kind in ("include", "include_once", "require", "require_once")
)


def classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t in _TYPES:
        body = node.child_by_field_name("body")
        return Def(_TYPES[t], field_text(node, "name"), body, "class" if body else "")
    if t == "function_definition" and not member:
        return Def("function", field_text(node, "name"))
    if t == "method_declaration" and member and node.child_by_field_name("body") is not None:
        return Def("method", field_text(node, "name"))
    if t == "namespace_definition":  # the braced form: namespace A { ... }
        body = node.child_by_field_name("body")
        return Def("", "", body, "transparent") if body is not None else None
    return None


def _uses(node: ts.Node) -> list[str]:
    """Full names a ``use`` declaration imports (groups expanded, aliases dropped)."""
    prefix = ""
    clauses: list[ts.Node] = []
    for child in node.named_children:
        if child.type == "namespace_name":
            prefix = compact_text(child)
        elif child.type == "namespace_use_clause":
            clauses.append(child)
        elif child.type == "namespace_use_group":
            clauses.extend(c for c in child.named_children if c.type == "namespace_use_clause")
    out: list[str] = []
    for clause in clauses:
        target = next(
            (c for c in clause.named_children if c.type in ("qualified_name", "name")), None
        )
        if target is None:
            continue
        full = "\\".join(p for p in (prefix, compact_text(target)) if p).lstrip("\\")
        if any(has_token(n, k) for n in (node, clause) for k in ("function", "const")):
            full = full.rsplit("\\", 1)[0] + "\\" if "\\" in full else ""
        out.append(full)
    return out


def _include(node: ts.Node) -> str:
    """``require __DIR__ . '/x.php'`` -> ``./x.php``; ``include 'lib/y.php'`` -> ``lib/y.php``;
    anything computed at run time -> nothing."""
    strings: list[ts.Node] = []
    stack = list(node.named_children)
    while stack:
        cur = stack.pop()
        if cur.type in ("string", "encapsed_string"):
            strings.append(cur)
        elif cur.type in ("binary_expression", "parenthesized_expression"):
            stack.extend(cur.named_children)
    if not strings:
        return ""
    last = max(strings, key=lambda n: n.start_byte)
    parts = last.named_children
    if len(parts) != 1 or parts[0].type != "string_content":
        return ""
    path = compact_text(parts[0])
    text = compact_text(node)
    if "__DIR__" in text or "dirname(__FILE__)" in text:
        return "./" + path.lstrip("/")
    return path


def imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    out: list[str] = []
    for cap, node in in_order(caps, ("i", "r", "ns")):
        if cap == "i":
            out.extend(_uses(node))
        elif cap == "r":
            out.append(_include(node))
        else:
            out.append(DECLARES + compact_text(node).lstrip("\\"))
    return out


def _language() -> object:
    import tree_sitter_php

    return tree_sitter_php.language_php()


_NAME = "[(name) @n (qualified_name (name) @n .)]"  # one level: nested alternations misbehave
PHP = LanguageSpec(
    name="php",
    extensions=(".php", ".phtml"),
    load=_language,
    query=f"""
(function_call_expression function: {_NAME})
(member_call_expression name: (name) @n)
(nullsafe_member_call_expression name: (name) @n)
(scoped_call_expression name: (name) @n)
(object_creation_expression {_NAME})
(namespace_use_declaration) @i
[{_INCLUDES}] @r
(namespace_definition name: (namespace_name) @ns)
""",
    classify=classify,
    imports=imports,
    keywords=frozenset({"static", "self", "parent"}),
)
