"""C and C++: functions, prototypes, structs, classes, namespaces and macros; quoted includes.

A C or C++ function usually exists twice: declared in a header (often with the doc comment)
and defined with its body in a source file. Both are chunks; a prototype's kind (at namespace
level or in a class body) is ``declaration`` so ranking can prefer the body
(``search/features.py``). Out-of-class member
definitions (``void Pool::grow() {...}``) are methods qualified by their class, inside the
namespaces around them: ``net.Pool.grow``. Preprocessor conditionals (header guards, ``#ifdef``
blocks) and ``extern "C" { }`` are transparent: what they hold is walked as if they were not
there. System includes (``<stdio.h>``) are not recorded: only ``#include "..."`` can name a
workspace file.
"""

from __future__ import annotations

import re

import tree_sitter as ts

from .syntax import Def, LanguageSpec, in_order, node_text, preproc_block, unquote

DECLARATION = "declaration"  # a function declared without its body (a prototype)

_TRANSPARENT = frozenset(
    {"preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif", "preproc_elifdef"}
)
_TYPES = {
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "class_specifier": "class",
    "enum_specifier": "enum",
}
# Declarator wrappers between a declaration and the name it declares.
_WRAPPERS = frozenset(
    {
        "pointer_declarator",
        "reference_declarator",
        "array_declarator",
        "attributed_declarator",
        "init_declarator",
        "parenthesized_declarator",
    }
)
# A header that says it is C++ (``.h`` is parsed as C otherwise).
_CPP_HINT = re.compile(
    r"^[ \t]*(?:namespace\b|template\s*<|class\s+\w+[^;(]*[{:]\s*$|(?:public|private|protected)"
    r"\s*:|#\s*include\s*<[a-z_]+>)",
    re.M,
)


# A line that is one macro alone, in capitals, with its arguments perhaps and no statement
# after it: ``NLOHMANN_JSON_NAMESPACE_BEGIN``, ``TOML_NAMESPACE_START``, ``TOML_NODISCARD``,
# ``JSON_HEDLEY_NON_NULL(3)``, ``TOML_NAMESPACE_END;``.
_BARE_MACRO = re.compile(r"[ \t]*([A-Z_][A-Z0-9_]{2,})(?:\([^()\n]*\))?[ \t]*;?[ \t]*")


def without_bare_macros(lines: list[str]) -> list[str]:
    """The lines as the grammar should read them. A bare macro line (:data:`_BARE_MACRO`) reads
    as the type of what follows, so ``NLOHMANN_JSON_NAMESPACE_BEGIN`` over ``namespace detail
    {`` made the whole namespace one function named ``namespace``. Such a line is blanked; one
    whose name says it opens a namespace, over a ``{`` of its own (toml++'s
    ``TOML_NAMESPACE_START``), becomes ``namespace``. A macro over a ``{`` that opens no
    namespace (GoogleTest's ``TEST(A, B)`` written over two lines) is left as it is."""
    out = list(lines)
    for i, line in enumerate(lines):
        m = _BARE_MACRO.fullmatch(line)
        if m is None or (line.rstrip().endswith(";") and "NAMESPACE" not in m.group(1)):
            continue  # ``MAX_SIZE;`` may end a statement of several lines
        after = next((nxt.strip() for nxt in lines[i + 1 : i + 4] if nxt.strip()), "")
        if after.startswith("{"):
            if "NAMESPACE" in m.group(1) and not line.rstrip().endswith(";"):
                out[i] = "namespace"
            continue
        out[i] = ""
    return out


def looks_like_cpp(text: str) -> bool:
    return _CPP_HINT.search(text) is not None


def _name_parts(node: ts.Node | None) -> list[str]:
    """``a::B<int>::~B`` -> ``["a", "B", "~B"]``."""
    if node is None:
        return []
    t = node.type
    if t == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        return _name_parts(scope) + _name_parts(node.child_by_field_name("name"))
    if t in ("template_function", "template_type", "template_method"):
        return _name_parts(node.child_by_field_name("name"))
    if t == "nested_namespace_specifier":
        return [p for c in node.named_children for p in _name_parts(c)]
    text = node_text(node)
    return [text] if text else []


def _declared(node: ts.Node | None) -> tuple[list[str], bool]:
    """The name a declarator declares, and whether it declares a function (the name sits
    right inside a function declarator: ``(*cb)(int)`` is a pointer, not a function)."""
    parent = ""
    while node is not None:
        t = node.type
        if t != "function_declarator" and t not in _WRAPPERS:
            return _name_parts(node), parent == "function_declarator"
        inner = node.child_by_field_name("declarator")
        if inner is None:  # reference and parenthesized declarators: the last child
            named = [c for c in node.named_children if c.type != "attribute_declaration"]
            inner = named[-1] if named else None
        parent, node = t, inner
    return [], False


def _function(node: ts.Node, member: bool) -> Def | None:
    parts, _ = _declared(node.child_by_field_name("declarator"))
    if not parts:
        return None
    kind = "method" if member or len(parts) > 1 else "function"
    return Def(kind, ".".join(parts))


def _type(node: ts.Node, kind: str, name: str) -> Def | None:
    body = node.child_by_field_name("body")
    if body is None or not name:
        return None  # a forward declaration or an anonymous type: not a chunk of its own
    if kind in ("class", "struct") and body.type == "field_declaration_list":
        return Def(kind, name, body, "class")
    return Def(kind, name)


def _typedef(node: ts.Node) -> Def | None:
    inner = node.child_by_field_name("type")
    names = [_declared(d)[0] for d in node.children_by_field_name("declarator")]
    name = ".".join(names[0]) if names and names[0] else ""
    if inner is not None and inner.type in _TYPES and inner.child_by_field_name("body"):
        found = _type(inner, _TYPES[inner.type], name)
        # The typedef names the chunk; its members are C fields, never methods.
        return Def(found.kind, found.name) if found is not None else None
    return Def("type", name) if name else None


def classify(node: ts.Node, member: bool) -> Def | None:
    t = node.type
    if t in _TRANSPARENT:
        return preproc_block(node, member, classify)
    if t == "function_definition":
        return _function(node, member)
    if t == "template_declaration":
        inner = next(
            (c for c in reversed(node.named_children) if c.type != "template_parameter_list"),
            None,
        )
        return classify(inner, member) if inner is not None else None
    if t in _TYPES:
        return _type(node, _TYPES[t], ".".join(_name_parts(node.child_by_field_name("name"))))
    if t == "preproc_function_def":
        return Def("macro", node_text(node.child_by_field_name("name")))
    if t == "declaration" or (member and t == "field_declaration"):
        for d in node.children_by_field_name("declarator"):
            parts, is_function = _declared(d)
            if is_function and parts:
                return Def(DECLARATION, ".".join(parts))
        return None
    if member:
        return None
    if t == "type_definition":
        return _typedef(node)
    if t == "namespace_definition":
        parts = _name_parts(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        if body is None:
            return None
        return Def("namespace", ".".join(parts), body, "module" if parts else "transparent")
    if t == "linkage_specification":
        body = node.child_by_field_name("body")
        if body is None:
            return None
        if body.type == "declaration_list":
            return Def("", "", body, "transparent")
        return classify(body, member)
    return None


def includes(caps: dict[str, list[ts.Node]]) -> list[str]:
    """Quoted includes, as written: ``"net/socket.h"`` -> ``net/socket.h``."""
    return [unquote(n) for _, n in in_order(caps, ("s",))]


def _c_language() -> object:
    import tree_sitter_c

    return tree_sitter_c.language()


def _cpp_language() -> object:
    import tree_sitter_cpp

    return tree_sitter_cpp.language()


_INCLUDES = "(preproc_include path: (string_literal) @s)"

C = LanguageSpec(
    name="c",
    extensions=(".c", ".h"),
    prepare=without_bare_macros,
    load=_c_language,
    query=f"""
(call_expression function: [(identifier) @n (field_expression field: (field_identifier) @n)])
{_INCLUDES}
""",
    classify=classify,
    imports=includes,
)

# Alternatives are spelled out flat: a nested ``[[...] ...]`` can silently match nothing.
_CPP_NAME = "(identifier) @n (template_function name: (identifier) @n)"
_CPP_CALLEES = "\n".join(
    f"(call_expression function: {callee})"
    for callee in (
        f"[{_CPP_NAME}]",
        "(field_expression field: [(field_identifier) @n"
        " (template_method name: (field_identifier) @n)])",
        f"(qualified_identifier name: [{_CPP_NAME}])",
        f"(qualified_identifier name: (qualified_identifier name: [{_CPP_NAME}]))",
        "(qualified_identifier name: (qualified_identifier name:"
        f" (qualified_identifier name: [{_CPP_NAME}])))",
    )
)
CPP = LanguageSpec(
    name="cpp",
    # ``.inl`` and ``.tcc``: a header-only library's implementation, included by its headers
    # (toml++'s ``impl/parser.inl``, libstdc++'s ``bits/*.tcc``).
    extensions=(
        *(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp"),
        *(".inl", ".tcc"),
    ),
    load=_cpp_language,
    query=f"""
{_CPP_CALLEES}
(new_expression type: [(type_identifier) @n (template_type name: (type_identifier) @n)])
(new_expression type: (qualified_identifier name: [
  (type_identifier) @n (template_type name: (type_identifier) @n)]))
{_INCLUDES}
""",
    classify=classify,
    imports=includes,
    keywords=frozenset({"this"}),
    prepare=without_bare_macros,
)
