"""Callers and callees through the resolved imports: a qualified match where one exists, the
bare name only as a fallback.

The index records calls by name (``calls`` table): ``total()`` in one module and a method
``total`` of an unrelated class share every caller. The import graph (``imports.py``, and the
same-package edges of ``packages.py``: Go and Java packages, Rust ``impl`` blocks) says which
files can see which: a call of ``name`` in a file that imports (or is) the file defining it is a
qualified match. When at least one such call exists the others are dropped; when none does (a
method reached through an object, a dynamic import, a language whose imports do not resolve)
every call by that name is kept, as before.

Only the languages whose imports name the defining file are narrowed: Python, JavaScript and
TypeScript, Go, Rust and Java. C and C++ reach a definition through a header, included
transitively, and Ruby, PHP, C#, Kotlin, Scala and Swift resolve whole namespaces or rely on
autoloading: their calls stay matched by name.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..index.store import Store, StoredChunk

NARROWED_SUFFIXES = (
    *(".py", ".pyi", ".go", ".rs", ".java"),
    *(".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
)


def narrowed(path: str) -> bool:
    """Calls to a definition in ``path`` can be narrowed through the import graph."""
    return path.endswith(NARROWED_SUFFIXES)


def visible_from(store: Store, homes: Iterable[str]) -> set[str]:
    """The files that can see a definition in one of ``homes``: those files and the files
    importing them (or using them within one package)."""
    out: set[str] = set()
    for home in homes:
        out.add(home)
        out.update(store.importers_of(home))
    return out


def resolved_callers(store: Store, name: str, homes: Iterable[str], limit: int = 200) -> list[int]:
    """Chunk ids calling ``name`` whose file sees its definition in ``homes`` (the files that
    define the name being asked about); every caller by name when none does."""
    ids = store.callers_of(name, limit=limit)
    home_list = [h for h in dict.fromkeys(homes) if h]
    if not ids or not home_list or not all(narrowed(h) for h in home_list):
        return ids
    seen = visible_from(store, home_list)
    chunks = store.get_chunks(ids)
    qualified = [cid for cid in ids if cid in chunks and chunks[cid].chunk.path in seen]
    return qualified or ids


def resolved_callees(store: Store, here: StoredChunk, limit: int = 200) -> list[StoredChunk]:
    """Definitions of the names ``here`` calls: per name, those in its own file or in a file
    its file imports when there are any, else every definition of that name."""
    found = [sc for sc in store.chunks_named(here.chunk.calls, limit=limit) if sc.id != here.id]
    if not found or not narrowed(here.chunk.path):
        return found
    near = {here.chunk.path, *store.imports_of(here.chunk.path)}
    by_name: dict[str, list[StoredChunk]] = {}
    for sc in found:
        by_name.setdefault(sc.name, []).append(sc)
    out: list[StoredChunk] = []
    for group in by_name.values():
        local = [sc for sc in group if sc.chunk.path in near]
        out.extend(local or group)
    return out


def definers_seen_from(store: Store, path: str, name: str) -> list[str]:
    """The files defining ``name`` that ``path`` can see (itself, or a file it imports); all
    of them when it sees none."""
    files = list(dict.fromkeys(sc.chunk.path for sc in store.chunks_named([name])))
    near = {path, *store.imports_of(path)}
    return [f for f in files if f in near] or files
