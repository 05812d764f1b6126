"""Lookups for editor features: a file's outline, the symbol at a line, definitions and
callers of a name (by name, narrowed through the resolved imports: ``calls.py``), and the
"related code" that hover and code lenses show. Cheap reads: they run on every mouse rest.

Every location returned still exists in the working tree (``exists``): a file deleted since the
last pass must not be offered.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..api import ChangedWith, Evidence, FindRequest, FindResult, Related
from ..index.store import Store, symbol_name
from . import calls
from .focus import call_line, name_line
from .pipeline import stored_evidence

# What hover and code lenses show for a name: one set of limits for both.
RELATED_DEFINITIONS = 3
RELATED_CALLERS = 10
RELATED_OTHER = 5
RELATED_CALLEES = 10
RELATED_TESTS = 5
RELATED_CHANGED_WITH = 10


class Lookups:
    """``reader`` gives the store connection requests read; ``exists`` says whether a
    workspace-relative file is still there (on disk or as an editor buffer)."""

    def __init__(self, reader: Callable[[], Store], exists: Callable[[str], bool]) -> None:
        self._reader = reader
        self._exists = exists

    def outline(self, path: str) -> list[Evidence]:
        """The chunks of one file in line order: where lenses go."""
        return [stored_evidence(sc) for sc in self._reader().chunks_of(path)]

    def symbol_at(self, path: str, line: int) -> Evidence | None:
        sc = self._reader().chunk_at(path, line)
        return None if sc is None else stored_evidence(sc)

    def definitions(self, name: str, limit: int = 5) -> list[Evidence]:
        """Chunks that define ``name`` (last component of their symbol), code before tests and
        bodies before prototypes, in files that still exist."""
        found = self._reader().chunks_named([name], limit=limit * 4)
        found = [sc for sc in found if self._exists(sc.chunk.path)]
        # A C/C++ prototype comes after the definition with the body.
        found.sort(
            key=lambda sc: (
                sc.chunk.is_test,
                sc.chunk.kind == "window",
                sc.chunk.kind == "declaration",
                sc.chunk.path,
            )
        )
        return [stored_evidence(sc, ["definition"], name_line(sc.chunk)) for sc in found[:limit]]

    def callers(self, name: str, limit: int = 10, homes: list[str] | None = None) -> list[Evidence]:
        """Chunks that call ``name``, in files that still exist. With ``homes`` (the files
        defining the ``name`` asked about), those whose file sees one of them through its
        imports, when any does (``calls.py``); else every caller by name."""
        reader = self._reader()
        ids = calls.resolved_callers(reader, name, homes or [], limit=limit * 4)
        chunks = reader.get_chunks(ids)
        live = [sc for sc in chunks.values() if self._exists(sc.chunk.path)]
        live.sort(key=lambda sc: (sc.chunk.is_test, sc.chunk.path))
        return [stored_evidence(sc, ["caller"], call_line(sc.chunk, name)) for sc in live[:limit]]

    def caller_counts(self, names: list[str]) -> dict[str, int]:
        return self._reader().caller_counts(names)

    def related(
        self,
        rel: str,
        line: int,
        name: str | None,
        find: Callable[[FindRequest], FindResult],
        extra: bool = False,
    ) -> Related:
        """What hover and code lenses show at ``rel:line`` (1-based): for ``name`` (default:
        the symbol defined there) its definitions, callers, and what a quick search (``find``)
        from that place finds besides them. Locations already listed are not repeated.
        ``extra`` (an agent's question, not a mouse rest): the callees and tests too."""
        here = self.symbol_at(rel, line)
        symbol = here.symbol if here is not None else ""
        name = name or symbol_name(symbol).rsplit("::", 1)[-1]
        changed = self.changed_with(rel) if extra else []
        if not name:
            return Related("", symbol, [], [], 0, [], changed_with=changed)
        # At the name's own definition (a lens) the question is its qualified symbol and the
        # definition is not its own caller; elsewhere (a hover on a call site) the question is
        # the name and the function around the cursor is one of the callers.
        own = here is not None and symbol_name(symbol) == name
        query = symbol if own else name
        definitions = self.definitions(name, RELATED_DEFINITIONS)
        count = self.caller_counts([name]).get(name, 0)
        seen_here = [here] if here is not None else []
        homes = [rel] if own else calls.definers_seen_from(self._reader(), rel, name)
        callers = _exclude(
            self.callers(name, RELATED_CALLERS, homes), seen_here if own else [], RELATED_CALLERS
        )
        quick = find(
            FindRequest(query, open_file=rel, line=line, limit=10, budget_tokens=0, depth="quick")
        )
        callees = self.callees(rel, line) if extra and own else []
        tests = self.tests(rel, name) if extra else []
        listed = [*definitions, *callers, *seen_here, *callees, *tests]
        others = _exclude(quick.results, listed, RELATED_OTHER)
        return Related(name, symbol, definitions, callers, count, others, callees, tests, changed)

    def changed_with(self, rel: str, limit: int = RELATED_CHANGED_WITH) -> list[ChangedWith]:
        """The files still there that the history changed together with ``rel``, strongest
        first (the co-change channel's partners; none for a plain folder)."""
        store = self._reader()
        head_time = store.get_meta("history_head_time")
        if not head_time:
            return []
        partners = store.cochange().partners(rel, int(head_time), limit * 2)
        return [
            ChangedWith(
                p.path,
                p.count,
                time.strftime("%Y-%m-%d", time.gmtime(p.last_time)),
                round(p.strength, 3),
            )
            for p in partners
            if self._exists(p.path)
        ][:limit]

    def callees(self, rel: str, line: int) -> list[Evidence]:
        """Definitions of the names the chunk at ``rel:line`` calls (in its file or a file it
        imports when there are any, else by name; code before tests), in files that still
        exist."""
        reader = self._reader()
        here = reader.chunk_at(rel, line)
        if here is None or not here.chunk.calls:
            return []
        found = [
            sc
            for sc in calls.resolved_callees(reader, here, limit=RELATED_CALLEES * 4)
            if self._exists(sc.chunk.path)
        ]
        found.sort(key=lambda sc: (sc.chunk.is_test, sc.chunk.kind == "window", sc.chunk.path))
        return [stored_evidence(sc, ["callee"]) for sc in found[:RELATED_CALLEES]]

    def tests(self, rel: str, name: str) -> list[Evidence]:
        """Test code for ``name`` in ``rel``: tests that call the name, then test functions of
        test files importing ``rel`` that call anything ``rel`` defines."""
        reader = self._reader()
        out: dict[int, Evidence] = {}
        for cid, sc in reader.get_chunks(reader.callers_of(name, limit=200)).items():
            if sc.chunk.is_test and self._exists(sc.chunk.path):
                out[cid] = stored_evidence(sc, ["test", "calls-it"], call_line(sc.chunk, name))
        defined = {sc.name for sc in reader.chunks_of(rel) if sc.name}
        for path in reader.importers_of(rel):
            if len(out) >= RELATED_TESTS or not self._exists(path):
                continue
            for sc in reader.chunks_of(path):
                if sc.chunk.is_test and defined.intersection(sc.chunk.calls) and sc.id not in out:
                    out[sc.id] = stored_evidence(sc, ["test", "imports-file"])
        ranked = sorted(out.values(), key=lambda ev: ("calls-it" not in ev.reasons, ev.path))
        return ranked[:RELATED_TESTS]


def _exclude(items: list[Evidence], seen: list[Evidence], limit: int) -> list[Evidence]:
    """``items`` minus locations already listed (same file and overlapping lines)."""
    out: list[Evidence] = []
    for ev in items:
        if any(s.path == ev.path and s.start <= ev.end and ev.start <= s.end for s in seen):
            continue
        out.append(ev)
        if len(out) >= limit:
            break
    return out
