"""Messages an interpreter writes itself, for any program (``'Request' object has no attribute
'is_xhr'``, Node's ``req.acceptsEncoding is not a function``).

No ``raise`` or ``throw`` in the workspace produced them, so their raise sites are not where
they come from; and the names they quote are the program's (a type, an attribute, a module and
so its file), not values formatted in. ``query.analyze`` reads them from a pasted failure's
error lines (``stacktraces.error_lines``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..index.imports import js_module_files

# What the Python interpreter writes.
_NAME = r"[A-Za-z_]\w*"
_DOTTED = r"[A-Za-z_][\w.]*"
_PY_RUNTIME = tuple(
    re.compile(p)
    for p in (
        rf"^'(?P<type>{_DOTTED})' object has no attribute '(?P<name>{_NAME})'",
        rf"^type object '(?P<type>{_DOTTED})' has no attribute '(?P<name>{_NAME})'",
        rf"^module '(?P<module>{_DOTTED})' has no attribute '(?P<name>{_NAME})'",
        rf"^cannot import name '(?P<name>{_NAME})' from '(?P<module>{_DOTTED})'",
        rf"^No module named '(?P<module>{_DOTTED})'",
        rf"^name '(?P<name>{_NAME})' is not defined",
    )
)
# What Node's V8 writes itself (the same rule: the quoted or named parts are the program's).
# A receiver (``req`` of ``req.acceptsEncoding``) is a variable: only the last name counts.
_JS_NAME = r"[A-Za-z_$][\w$]*"
_JS_PATH = rf"(?:{_JS_NAME}|\(intermediate value\))(?:\.{_JS_NAME})*"
_JS_RUNTIME = tuple(
    re.compile(p)
    for p in (
        rf"^(?P<path>{_JS_PATH}) is not (?:a function|a constructor|iterable)\b",
        rf"^Cannot (?:read|set) properties of (?:undefined|null) \((?:reading|setting) "
        rf"'(?P<name>{_JS_NAME})'\)",
        rf"^Cannot read property '(?P<name>{_JS_NAME})' of (?:undefined|null)",
        rf"^(?P<name>{_JS_NAME}) is not defined\b",
        rf"^Class constructor (?P<name>{_JS_NAME}) cannot be invoked without 'new'",
        r"^The requested module '(?P<spec>[^']+)' does not provide an export named "
        rf"'(?P<name>{_JS_NAME})'",
        r"^Cannot find module '(?P<spec>\.{1,2}/[^']+)'",
    )
)
# The interpreter's own types name no code of the workspace.
_BUILTIN_TYPES = frozenset(
    {
        "NoneType", "object", "type", "str", "bytes", "bytearray", "int", "float", "complex",
        "bool", "list", "tuple", "dict", "set", "frozenset", "function", "method", "module",
        "builtin_function_or_method", "generator", "coroutine",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RuntimeNames:
    """What an interpreter-written message names: identifiers, and the files of the module it
    names (path suffixes)."""

    names: tuple[str, ...]
    files: tuple[str, ...]
    builtin: tuple[str, ...] = ()  # the interpreter's own types it quotes ('NoneType')


def runtime_names(message: str) -> RuntimeNames | None:
    """``AttributeError: 'Request' object has no attribute 'is_xhr'`` -> names ``Request``,
    ``is_xhr``; ``cannot import name 'url_quote' from 'werkzeug.urls'`` -> ``url_quote`` and
    the files of ``werkzeug.urls``; Node's ``TypeError: req.acceptsEncoding is not a
    function`` -> ``acceptsEncoding``, ``The requested module './utils.js' does not provide an
    export named 'setCharset'`` -> ``setCharset`` and ``utils.js``. None when the message is
    not one the interpreter writes."""
    _, sep, body = message.partition(": ")
    if not sep:
        return None
    body = body.strip()
    for pattern in _PY_RUNTIME:
        m = pattern.match(body)
        if m is None:
            continue
        got = m.groupdict()
        quoted = [n for n in (got.get("type"), got.get("name")) if n]
        return RuntimeNames(
            names=tuple(n for n in quoted if n not in _BUILTIN_TYPES),
            files=tuple(module_files(got["module"])) if got.get("module") else (),
            builtin=tuple(n for n in quoted if n in _BUILTIN_TYPES),
        )
    for pattern in _JS_RUNTIME:
        m = pattern.match(body)
        if m is None:
            continue
        got = m.groupdict()
        name = got.get("name") or (got.get("path") or "").rsplit(".", 1)[-1]
        names = (name,) if name and not name.startswith("(") else ()
        return RuntimeNames(names, tuple(specifier_files(got["spec"])) if got.get("spec") else ())
    return None


def module_files(module: str) -> list[str]:
    """Where a dotted module lives: ``werkzeug.urls`` -> ``werkzeug/urls.py`` or
    ``werkzeug/urls/__init__.py`` (a path suffix; ``src/`` layouts match too)."""
    base = module.replace(".", "/")
    return [f"{base}.py", f"{base}/__init__.py"]


def specifier_files(spec: str) -> list[str]:
    """Where a relative JavaScript import lives, as path suffixes, by the resolver's own rules
    (``index/imports.py``): ``./router/layer`` -> ``router/layer.ts``, ``router/layer.js``, …,
    ``router/layer/index.js``; ``../utils.js`` -> ``utils.js``, ``utils.ts``, …"""
    base = re.sub(r"^(?:\.{1,2}/)+", "", spec)
    if not base or base.startswith("/"):
        return []
    return js_module_files(base)
