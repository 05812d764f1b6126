"""``textDocument/hover``: an evidence panel for the identifier under the cursor.

A hover fires on every mouse rest, so it uses only cheap reads: definitions and callers come
from the store's name tables, and "related" from a ``quick`` find, whose rerank is the feature
scorer alone (never the cross-encoder), cached per index generation. The panel is markdown,
each location a link that opens it.

A name the open file imports under another name (``from billing import total as t``, ``import
{ total as t }``, ``use a::total as t;``) has no definition of its own: the panel follows the
alias to the imported name, so it shows what the Related list already found.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from ...api import Evidence, Related
from ...live.pool import Priority
from ...search.focus import opening_code
from ..server import CodeEvidenceServer
from ..session import FolderSession
from ..uris import location_link

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
# Ruby method names may end in ? or ! (``valid?``, ``save!``), and its symbols keep them.
_RUBY_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:[?!](?!=))?")
_RUBY_EXTS = (".rb", ".rake", ".gemspec", ".ru")
_KEYWORDS_TEXT = """
and as assert async await break case class const continue def del elif else except export false
finally for from func function if import in interface is lambda let match new nil none not null
or package pass pub raise return self static struct this throw true try type var void while with
yield
"""
_KEYWORDS = frozenset(_KEYWORDS_TEXT.split())


def _used_as_name(line: str, m: re.Match[str]) -> bool:
    """A keyword of one language is a name in another (C++'s ``router.match(...)``): a member
    access or a call is never a keyword."""
    before = line[: m.start()].rstrip()
    return before.endswith((".", "->", "::")) or line[m.end() :].lstrip().startswith("(")


def identifier_at(line: str, column: int, ruby: bool = False) -> str | None:
    """The identifier touching ``column`` (code points) on ``line``; keywords and numbers are
    not identifiers worth a panel, unless used as a member or called. In Ruby a trailing ``?``
    or ``!`` is part of the name."""
    for m in (_RUBY_IDENT if ruby else _IDENT).finditer(line):
        if m.start() <= column <= m.end():
            word = m.group()
            if len(word) < 2 or (word.lower() in _KEYWORDS and not _used_as_name(line, m)):
                return None
            return word
        if m.start() > column:
            break
    return None


# One import statement: ``from m import ...``, ``import ...``, ``export ...``, ``use ...``,
# ``using ...``, with a parenthesised or braced name list that may span lines.
_IMPORT_STMT = re.compile(
    r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import|import|export|use|using)\b"
    r"(?:[^\n(){}]*(?:\([^)]*\)|\{[^}]*\}))*[^\n]*",
    re.M,
)


def import_alias(text: str, name: str) -> str | None:
    """The name ``name`` stands for when the file imports it under an alias, else None:
    ``X as name`` (Python, JS/TS, Rust, Kotlin, PHP), ``X => name`` (Scala) and ``using name =
    a.b.X`` (C#). A module alias (``import numpy as np``) gives the module's last part, which
    has no definition either, so the panel stays as it was."""
    n = re.escape(name)
    forms = (
        re.compile(rf"([A-Za-z_$][\w$]*)\s+as\s+{n}(?![\w$])"),
        re.compile(rf"([A-Za-z_$][\w$]*)\s*=>\s*{n}(?![\w$])"),
        re.compile(rf"^[ \t]*using\s+{n}\s*=\s*(?:[\w]+\.)*([A-Za-z_]\w*)", re.M),
    )
    for m in _IMPORT_STMT.finditer(text):
        for form in forms:
            found = form.search(m.group())
            if found and found.group(1) != name:
                return found.group(1)
    return None


@dataclass(frozen=True, slots=True)
class HoverFacts:
    found: Related  # what Engine.related returned for the name here (the alias followed)
    where: str  # "branch@commit · state"
    alias: str | None = None  # the name under the cursor, when it is an import alias


def _link(root: Path, ev: Evidence) -> str:
    label = f"{ev.path}:{ev.line}"
    sym = f" `{ev.symbol}`" if ev.symbol else ""
    return f"[{label}]({location_link(root, ev.path, ev.line)}){sym}"


def _code(text: str) -> str:
    """``text`` as inline markdown code, fenced with more backticks than it holds."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _call(caller: Evidence) -> str:
    """``: `code``` of the line a caller opens at (its call); nothing when that is blank."""
    code = opening_code(caller, 100)
    return f": {_code(code)}" if code else ""


def render(root: Path, facts: HoverFacts) -> str:
    """The panel as markdown; each location a ``path:line`` link that opens it, a caller's
    with the code of its call."""
    found = facts.found
    title = f"**`{found.name}`**"
    if facts.alias:
        title = f"**`{facts.alias}`** (alias of `{found.name}`)"
    lines = [f"{title} — Code Evidence", ""]
    if found.definitions:
        lines.append("**Defined in**")
        lines.extend(f"- {_link(root, d)} ({d.kind})" for d in found.definitions)
    else:
        lines.append("_No definition in this workspace._")
    lines.append("")
    if found.callers:
        more = found.caller_count - len(found.callers)
        lines.append(f"**Callers** ({found.caller_count})")
        lines.extend(f"- {_link(root, c)}{_call(c)}" for c in found.callers)
        if more > 0:
            lines.append(f"- … and {more} more")
    else:
        lines.append("_No callers found (matched by name)._")
    if found.related:
        lines.append("")
        lines.append("**Related**")
        lines.extend(f"- {_link(root, r)}" for r in found.related)
    lines.append("")
    lines.append(f"_index: {facts.where}_")
    return "\n".join(lines)


class RelatedCache:
    """What ``Engine.related`` found, per (index generation, workspace, name, file, line): a
    new pass invalidates everything at once by changing the generation."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[tuple[object, ...], Related] = OrderedDict()

    def get(self, key: tuple[object, ...]) -> Related | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: tuple[object, ...], value: Related) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


# One per process, like the server: a hover on the same name in the same index generation
# costs nothing.
_RELATED = RelatedCache()


async def on_hover(ls: CodeEvidenceServer, params: types.HoverParams) -> types.Hover | None:
    try:
        session, rel = ls.folders.session_for_uri(params.text_document.uri, "hover")
    except JsonRpcInvalidParams:
        return None  # a library file or an untitled buffer: nothing indexed to show
    text = session.document_text(rel)
    if text is None:
        return None
    lines = text.splitlines(keepends=True)
    if params.position.line >= len(lines):
        return None
    column = ls.workspace.position_codec.position_from_client_units(
        lines, params.position
    ).character
    ruby = rel.lower().endswith(_RUBY_EXTS)
    name = identifier_at(lines[params.position.line].rstrip("\r\n"), column, ruby)
    if name is None:
        return None
    line = params.position.line + 1
    facts = await ls.read(session, Priority.LATENCY, _facts, session, rel, line, name)
    if facts is None:
        return None
    value = render(session.root, facts)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def _facts(session: FolderSession, rel: str, line: int, name: str) -> HoverFacts | None:
    """On the folder's latency lane: what the panel shows, or None when the name is unknown."""
    related = _related(session, rel, line, name)
    alias = None
    if not related.definitions:
        target = import_alias(session.document_text(rel) or "", name)
        followed = _related(session, rel, line, target) if target else None
        if followed is not None and (followed.definitions or followed.caller_count):
            related, alias = followed, name
    if not related.definitions and not related.caller_count:
        return None
    return HoverFacts(related, _where(session), alias)


def _related(session: FolderSession, rel: str, line: int, name: str) -> Related:
    key = (session.generation, str(session.root), name, rel, line)
    related = _RELATED.get(key)
    if related is None:
        related = session.related(rel, line, name)
        _RELATED.put(key, related)
    return related


def _where(session: FolderSession) -> str:
    commit, branch = session.indexed_head()
    return f"{branch or 'no branch'}@{(commit or 'no commit')[:10]} · {session.index_state()}"


def register(server: CodeEvidenceServer) -> None:
    server.feature(types.TEXT_DOCUMENT_HOVER)(on_hover)
