"""What every language shares: small helpers for reading tree nodes, the record a classifier
returns for a definition, and the description of a language that lives in its own module.

The six first languages (Python, JS/TS, Go, Rust, Java) keep their tables in ``languages.py``,
``definitions.py`` and ``references.py``; every language added since is one
:class:`LanguageSpec` in a module of its family (``c_family.py``, ``csharp.py``, ``ruby.py``,
``php.py``, ``jvm.py``, ``swift.py``), so adding a language touches one file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import tree_sitter as ts

# --------------------------------------------------------------------------- node helpers


def node_text(node: ts.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def compact_text(node: ts.Node | None) -> str:
    """Node text without whitespace (``a . b`` and line-broken paths are the same name)."""
    return "".join(node_text(node).split())


def first_row(node: ts.Node) -> int:
    return node.start_point.row


def last_row(node: ts.Node) -> int:
    """Last row the node has text on: a node ending at column 0 ends on the previous row (Rust
    line comments own their trailing newline)."""
    row, col = node.end_point
    if col == 0 and row > node.start_point.row:
        return row - 1
    return row


def unquote(node: ts.Node) -> str:
    raw = node_text(node)
    if len(raw) >= 2 and raw[0] in "\"'`" and raw[-1] == raw[0]:
        return raw[1:-1]
    return raw


def dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def field_text(node: ts.Node, name: str) -> str:
    return node_text(node.child_by_field_name(name))


def has_token(node: ts.Node, token: str) -> bool:
    """Whether ``node`` has the anonymous child ``token`` (a keyword such as ``interface``)."""
    return any(not c.is_named and c.type == token for c in node.children)


def in_order(caps: dict[str, list[ts.Node]], names: Sequence[str]) -> list[tuple[str, ts.Node]]:
    """The captures named ``names`` as (capture, node), in source order."""
    found = [(n.start_byte, name, n) for name in names for n in caps.get(name, ())]
    found.sort(key=lambda x: x[0])
    return [(name, n) for _, name, n in found]


# Among a file's import specifiers, a package or namespace the file declares itself (C#, PHP,
# Kotlin, Scala): ``package Acme.Billing``. No import is spelled with a space, so the resolver
# tells the two apart, and maps other files' imports to the files that declare what they name.
DECLARES = "package "

# --------------------------------------------------------------------------- definitions


class Def(NamedTuple):
    """A definition a classifier found: its kind and bare name, and how to walk inside it."""

    kind: str
    name: str
    # Children of ``body`` are members (class-likes) or nested top-level items (Rust ``mod``).
    body: ts.Node | None = None
    # "class": members under ``name``; "module": items under ``name``; "transparent": items
    # as if they stood where the node stands (``#ifdef`` blocks, ``extern "C" { }``, C#
    # namespaces, Ruby's ``class << self``), with no chunk and no name of its own; "" none.
    scope: str = ""


def named_children(node: ts.Node) -> list[ts.Node]:
    return list(node.named_children)


# The kind of a conditional block (``#if``, ``#ifdef``, ``#else``) walked transparently.
PREPROC = "preproc"


def preproc_items(node: ts.Node) -> list[ts.Node]:
    """What a conditional block holds: its named children but the condition it tests (``#if
    !NET20``'s expression, ``#ifdef``'s name)."""
    return [
        c
        for i, c in enumerate(node.children)
        if c.is_named and node.field_name_for_child(i) not in ("condition", "name")
    ]


def preproc_block(
    node: ts.Node, member: bool, classify: Callable[[ts.Node, bool], Def | None]
) -> Def | None:
    """A conditional block that holds a definition is walked as if its items stood where it
    stands (Newtonsoft.Json wraps whole files in ``#if !(NETFX_CORE || PORTABLE)``; a C header
    its guard); one that holds none is code like the code around it (cJSON's ``#ifdef true /
    #undef true / #endif``), not a chunk of a line or two of its own."""
    if any(classify(c, member) is not None for c in preproc_items(node)):
        return Def(PREPROC, "", node, "transparent")
    return None


@dataclass(frozen=True)
class LanguageSpec:
    """One language, as its family module describes it.

    ``query`` finds call names (capture ``n``) and whatever ``imports`` reads; ``classify``
    says whether a node (a class member when the flag is set) is a definition; ``members``
    lists what a class-like's ``body`` holds; ``imports`` turns the captures into the file's
    import specifiers (see ``index/imports.py`` for what each language's resolver expects).
    """

    name: str
    extensions: tuple[str, ...]
    load: Callable[[], object]  # the grammar's raw language pointer, from its wheel
    query: str
    classify: Callable[[ts.Node, bool], Def | None]
    imports: Callable[[dict[str, list[ts.Node]]], list[str]]
    attachable: frozenset[str] = frozenset({"comment"})
    keywords: frozenset[str] = frozenset()
    members: Callable[[ts.Node], list[ts.Node]] = named_children
    # The source as the grammar should read it, line for line (C's and C++'s macros that stand
    # for syntax); the chunks keep the file's own text.
    prepare: Callable[[list[str]], list[str]] | None = None
