"""Ruby: classes and modules (nested, and ``class A::B``) with their methods, ``def self.x``
and ``class << self``; ``require`` / ``require_relative`` / ``load``.

Modules hold methods and classes the way classes do, so both are class-like scopes and their
names qualify what they hold: ``Billing.Invoice.total``. Method names keep their ``?`` and
``!``. ``require_relative "x"`` is recorded as ``./x`` so the resolver can tell it from a load
path ``require``.
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import Def, LanguageSpec, in_order, node_text

_SKIP_FIELDS = frozenset({"name", "superclass", "value"})


def _name(node: ts.Node) -> str:
    """``A::B`` -> ``A.B``; ``::A`` -> ``A``."""
    return node_text(node.child_by_field_name("name")).replace("::", ".").strip(".")


def classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t in ("class", "module"):
        name = _name(node)
        return Def(t, name, node, "class") if name else None
    if t == "method":
        return Def("method" if member else "function", node_text(node.child_by_field_name("name")))
    if t == "singleton_method":
        return Def("method", node_text(node.child_by_field_name("name")))
    if t == "singleton_class":  # class << self: its methods belong to the class around it
        return Def("", "", node, "transparent")
    return None


def members(node: ts.Node) -> list[ts.Node]:
    """What a class, module or ``class << self`` holds: its body's statements, and the comments
    the grammar keeps beside the body."""
    out: list[ts.Node] = []
    for i, child in enumerate(node.children):
        if not child.is_named or node.field_name_for_child(i) in _SKIP_FIELDS:
            continue
        if child.type == "body_statement":
            out.extend(child.named_children)
        else:
            out.append(child)
    return out


def imports(caps: dict[str, list[ts.Node]]) -> list[str]:
    out: list[str] = []
    for _, call in in_order(caps, ("i",)):
        method = node_text(call.child_by_field_name("method"))
        args = call.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        if first is None or first.type != "string":
            continue
        parts = first.named_children
        if len(parts) != 1 or parts[0].type != "string_content":
            continue  # interpolated: not a path we can know
        path = node_text(parts[0])
        out.append(f"./{path}" if method == "require_relative" else path)
    return out


def _language() -> object:
    import tree_sitter_ruby

    return tree_sitter_ruby.language()


RUBY = LanguageSpec(
    name="ruby",
    extensions=(".rb", ".rake", ".gemspec", ".ru"),
    load=_language,
    query="""
(call method: (identifier) @n)
(call receiver: [(constant) @n (scope_resolution name: (constant) @n)]
  method: (identifier) @_new (#eq? @_new "new"))
((call method: (identifier) @_req) @i
  (#any-of? @_req "require" "require_relative" "load"))
""",
    classify=classify,
    imports=imports,
    members=members,
    keywords=frozenset(
        {
            "new",
            "require",
            "require_relative",
            "load",
            "include",
            "extend",
            "prepend",
            "attr_reader",
            "attr_writer",
            "attr_accessor",
            "private",
            "protected",
            "public",
            "module_function",
            "raise",
        }
    ),
)
