"""JavaScript and TypeScript: which top-level nodes and class or object members are
definitions, as modern modules write them (``function``, ``class``, ``const f = () =>``) and as
CommonJS and pre-class code do (``Reply.prototype.send = function``, ``module.exports = {
throw () {…} }``), and TypeScript's scopes (``namespace util { }``, ``declare module "m" { }``).
"""

from __future__ import annotations

import tree_sitter as ts

from .syntax import Def as _Def
from .syntax import node_text, unquote

_JS_FUNC_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})


def _member_path(node: ts.Node | None) -> list[str] | None:
    """``a.b.c`` as its parts; None for anything but plain names and dots (``a[0].b``,
    ``f().b``, ``this.b``)."""
    parts: list[str] = []
    while node is not None and node.type == "member_expression":
        prop = node.child_by_field_name("property")
        if prop is None or prop.type != "property_identifier":
            return None
        parts.append(node_text(prop))
        node = node.child_by_field_name("object")
    if node is None or node.type != "identifier":
        return None
    parts.append(node_text(node))
    return parts[::-1]


# The name a CommonJS module's exported object of methods goes by: the file's own stem
# (koa's ``lib/context.js`` ``module.exports = { throw () {…} }`` holds ``context.throw``), put
# in by the walker, which knows the path.
MODULE_OBJECT = "<module>"
_MODULE_EXPORTS = ["module", "exports"]


def _bare_value(value: ts.Node | None) -> ts.Node | None:
    """``{…} satisfies T``, ``{…} as const``, ``({…})``: the value itself."""
    while value is not None and value.type in (
        "satisfies_expression", "as_expression", "parenthesized_expression"
    ):  # fmt: skip
        value = value.named_children[0] if value.named_children else None
    return value


def _object_def(name: str, value: ts.Node | None) -> _Def | None:
    """An object literal of methods (or function-valued properties): a container like a class
    when it holds two or more (each its own chunk), one chunk when it holds one (fastify's
    ``rootErrorHandler = { func, toJSON () {} }`` is a value with a helper, not a module of
    functions to cut into two-line pieces); None for an object of data, or no object."""
    value = _bare_value(value)
    if value is None or value.type != "object":
        return None
    methods = sum(js_member(c) is not None for c in value.named_children)
    if not methods:
        return None
    return _Def("object", name, value, "class") if methods >= 2 else _Def("object", name)


def _assigned(value: ts.Node | None) -> tuple[ts.Node | None, bool]:
    """The value at the end of a chain of assignments (``res.set = res.header = function``,
    koa's ``const proto = module.exports = {…}``), and whether the chain assigns
    ``module.exports``."""
    exports = False
    while value is not None and value.type == "assignment_expression":
        if _member_path(value.child_by_field_name("left")) == _MODULE_EXPORTS:
            exports = True
        value = value.child_by_field_name("right")
    return value, exports


def _js_assigned(expr: ts.Node) -> _Def | None:
    """A function or class assigned to a property, the way CommonJS and pre-class code define
    them (express, fastify's ``Reply.prototype.send = function (payload) {``): without this
    they fell into the windows of code between definitions, with no symbol to be found by.

    ``A.prototype.m`` is the method ``A.m``; ``exports.f`` and ``module.exports.f`` the
    function ``f``; ``module.exports = function name`` the function ``name`` (``default``
    when anonymous, like ``export default``); ``app.use`` the method ``app.use``; of
    ``res.set = res.header = function header``, the first name.
    """
    value, _ = _assigned(expr.child_by_field_name("right"))
    parts = _member_path(expr.child_by_field_name("left"))
    if value is None or parts is None or len(parts) < 2:
        return None
    named = [p for p in parts if p != "prototype"]  # Foo.prototype = { a () {} }
    obj = _object_def(MODULE_OBJECT if parts == _MODULE_EXPORTS else ".".join(named), value)
    if obj is not None:
        return obj
    if value.type not in _JS_FUNC_VALUES | {"class"}:
        return None
    if parts[:2] == _MODULE_EXPORTS:
        parts = parts[2:]
    elif parts[0] == "exports":
        parts = parts[1:]
    parts = [p for p in parts if p != "prototype"]
    if not parts:
        parts = [node_text(value.child_by_field_name("name")) or "default"]
    name = ".".join(parts)
    if value.type == "class":
        return _Def("class", name, value.child_by_field_name("body"), "class")
    return _Def("method" if len(parts) > 1 else "function", name)


def _js_namespace(node: ts.Node) -> _Def | None:
    """A TypeScript ``namespace A.B { }`` or ``declare module "express" { }``: a scope whose
    items are definitions under its name (zod's ``export namespace util { … }`` holds
    ``util.assertNever``), not one window of everything in it."""
    body = node.child_by_field_name("body")
    name = node.child_by_field_name("name")
    if body is None or name is None or not unquote(name):
        return None
    return _Def("module", unquote(name), body, "module")


def _wraps_function(value: ts.Node, depth: int = 0) -> bool:
    """Whether ``value`` is a call that takes a function literal, directly or through another
    such call: React's ``forwardRef((props, ref) => …)``, ``memo(function Card() {…})``,
    ``memo(forwardRef(…))``, a ``debounce(() => …, 100)``. The name it is bound to is the
    definition (react-bootstrap's ``const Button = React.forwardRef(…)`` was a file-long module
    chunk with no symbol); a call with no function in it (``express()``) is not."""
    if value.type != "call_expression" or depth > 2:
        return False
    args = value.child_by_field_name("arguments")
    if args is None:
        return False
    return any(
        a.type in _JS_FUNC_VALUES or _wraps_function(a, depth + 1) for a in args.named_children
    )


def js_top(node: ts.Node) -> _Def | None:
    t = node.type
    if t in ("internal_module", "module"):
        return _js_namespace(node)
    if t == "ambient_declaration":  # declare namespace X { } / declare module "m" { }
        scopes = [c for c in node.named_children if c.type in ("internal_module", "module")]
        return _js_namespace(scopes[0]) if scopes else None
    if t == "expression_statement":
        expr = node.named_children[0] if node.named_children else None
        if expr is not None and expr.type == "assignment_expression":
            return _js_assigned(expr)
        if expr is not None and expr.type == "internal_module":  # a bare namespace X { }
            return _js_namespace(expr)
        return None
    if t == "export_statement":
        inner = node.child_by_field_name("declaration")
        if inner is None:
            inner = node.child_by_field_name("value")
            obj = _object_def(MODULE_OBJECT, inner)  # export default { data () {} }
            if obj is not None:
                return obj
            if inner is not None and inner.type in _JS_FUNC_VALUES | {"class"}:
                kind = "class" if inner.type == "class" else "function"
                body = inner.child_by_field_name("body") if kind == "class" else None
                name = node_text(inner.child_by_field_name("name")) or "default"
                return _Def(kind, name, body, "class" if body is not None else "")
            return None
        return js_top(inner)
    if t in ("function_declaration", "generator_function_declaration"):
        return _Def("function", node_text(node.child_by_field_name("name")))
    if t in _JS_CLASSES:
        name = node_text(node.child_by_field_name("name"))
        return _Def("class", name, node.child_by_field_name("body"), "class")
    if t in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) == 1:
            value = decls[0].child_by_field_name("value")
            name = node_text(decls[0].child_by_field_name("name"))
            if value is not None and (value.type in _JS_FUNC_VALUES or _wraps_function(value)):
                return _Def("function", name)
            value, exports = _assigned(value)
            return _object_def(MODULE_OBJECT if exports else name, value)
        return None
    if t == "interface_declaration":
        return _Def("interface", node_text(node.child_by_field_name("name")))
    if t == "type_alias_declaration":
        return _Def("type", node_text(node.child_by_field_name("name")))
    if t == "enum_declaration":
        return _Def("enum", node_text(node.child_by_field_name("name")))
    return None


def js_member(node: ts.Node) -> _Def | None:
    t = node.type
    if t == "method_definition":
        return _Def("method", unquote(node.child_by_field_name("name")))
    if t in ("field_definition", "public_field_definition"):
        value = node.child_by_field_name("value")
        if value is not None and value.type in _JS_FUNC_VALUES:
            name = node.child_by_field_name("property") or node.child_by_field_name("name")
            return _Def("method", unquote(name)) if name is not None else None
    if t == "pair":  # an object literal's ``key: function () {…}``
        value = node.child_by_field_name("value")
        key = node.child_by_field_name("key")
        named = key is not None and key.type in ("property_identifier", "string", "number")
        if named and value is not None and value.type in _JS_FUNC_VALUES:
            return _Def("method", unquote(key))
    return None
