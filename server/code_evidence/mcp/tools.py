"""The MCP tools' arguments checked into engine requests, and what each answer says.

The tools themselves (names, schemas) are in ``schemas.py``. Nothing here imports the MCP SDK:
``server.py`` wires the tools to it, ``workspace.py`` answers them.

A find answers with the CLI's ``--json`` answer as structured content (with the index state
added) and, as text, the context pack itself, so a host that shows only text still gets cited
code; when the evidence is insufficient the text says so first, plainly, so an agent stops
instead of acting on noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api import (
    Evidence,
    FindRequest,
    FindResult,
    Related,
    Status,
    to_json_dict,
)
from ..search.focus import first_code_line, opening_code
from .schemas import (
    DEPTHS,
    FIND_INPUT,
    INTENTS,
    RELATED,
    RELATED_INPUT,
    STATUS,
    STATUS_INPUT,
)


class ArgumentError(ValueError):
    """A tool call's arguments are wrong; the message says which and how to fix it."""


# --------------------------------------------------------------------------- arguments


@dataclass(frozen=True, slots=True)
class FindArgs:
    request: FindRequest
    as_of: str | None


@dataclass(frozen=True, slots=True)
class RelatedArgs:
    path: str
    line: int


def _check_keys(tool: str, args: dict[str, Any], schema: dict[str, Any]) -> None:
    unknown = sorted(set(args) - set(schema["properties"]))
    if unknown:
        known = ", ".join(schema["properties"]) or "none"
        raise ArgumentError(f"{tool}: unknown argument {unknown[0]!r}; it takes: {known}")
    missing = [k for k in schema.get("required", []) if args.get(k) is None]
    if missing:
        raise ArgumentError(f"{tool}: {missing[0]!r} is required")


def _string(tool: str, args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentError(f"{tool}: {key!r} must be a string, got {type(value).__name__}")
    return value


def _integer(tool: str, args: dict[str, Any], key: str, schema: dict[str, Any]) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ArgumentError(f"{tool}: {key!r} must be an integer, got {value!r}")
    spec = schema["properties"][key]
    lo, hi = spec.get("minimum"), spec.get("maximum")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
        raise ArgumentError(f"{tool}: {key!r} must be {bounds}, got {value}")
    return value


def _choice(tool: str, args: dict[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = _string(tool, args, key)
    if value is not None and value not in choices:
        raise ArgumentError(f"{tool}: {key!r} must be one of {', '.join(choices)}; got {value!r}")
    return value


def parse_find(tool: str, args: dict[str, Any] | None) -> FindArgs:
    """``find_evidence`` / ``explain_evidence`` arguments as an engine request."""
    args = args or {}
    _check_keys(tool, args, FIND_INPUT)
    query = _string(tool, args, "query") or ""
    if not query.strip():
        raise ArgumentError(f"{tool}: 'query' is empty: say what you are looking for")
    open_file = _string(tool, args, "open_file")
    line = _integer(tool, args, "line", FIND_INPUT)
    if line is not None and open_file is None:
        raise ArgumentError(f"{tool}: 'line' needs 'open_file'")
    limit = _integer(tool, args, "limit", FIND_INPUT)
    request = FindRequest(
        query=query,
        open_file=open_file,
        line=line,
        limit=10 if limit is None else limit,
        budget_tokens=_integer(tool, args, "budget_tokens", FIND_INPUT),
        intent=_choice(tool, args, "intent", INTENTS) or "auto",  # type: ignore[arg-type]
        depth=_choice(tool, args, "depth", DEPTHS) or "deep",  # type: ignore[arg-type]
    )
    as_of = _string(tool, args, "as_of")
    if as_of is not None and not as_of.strip():
        raise ArgumentError(f"{tool}: 'as_of' is empty: give a commit, tag or branch")
    return FindArgs(request, as_of)


def parse_related(args: dict[str, Any] | None) -> RelatedArgs:
    args = args or {}
    _check_keys(RELATED, args, RELATED_INPUT)
    path = _string(RELATED, args, "path") or ""
    if not path.strip():
        raise ArgumentError(f"{RELATED}: 'path' is empty")
    line = _integer(RELATED, args, "line", RELATED_INPUT)
    assert line is not None  # required
    return RelatedArgs(path, line)


def parse_status(args: dict[str, Any] | None) -> None:
    _check_keys(STATUS, args or {}, STATUS_INPUT)


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True, slots=True)
class IndexState:
    state: str
    progress: int | None
    message: str
    indexed_commit: str | None
    indexed_branch: str | None

    def line(self) -> str:
        """``index: indexing, 40 % (...)`` for the top of a text answer; "" when ready."""
        if self.state == "ready":
            return ""
        pct = f", {self.progress} %" if self.progress is not None else ""
        why = {
            "indexing": "answers come from what is indexed so far",
            "partial": "some chunks have no vectors yet; BM25 and structure cover them",
            "error": "the last index pass failed",
        }.get(self.state, "")
        return f"index: {self.state}{pct}: {why}" + (f" ({self.message})" if self.message else "")


def find_answer(
    result: FindResult, index: IndexState, explained: list[str] | None = None
) -> tuple[dict[str, Any], str]:
    """(structured content, text content) of a find: the CLI's ``--json`` answer with the
    index state, and the context pack (or the plain "no reliable evidence" verdict)."""
    data = to_json_dict(result)
    data["index"] = to_json_dict(index)
    if explained is not None:
        data["explain"] = explained
    return data, find_text(result, index, explained)


def _loc(ev: Evidence) -> str:
    """``path:start-end symbol``, and the line it opens at when that is not its first."""
    at = f" (line {ev.line})" if ev.line != ev.start else ""
    return f"{ev.path}:{ev.start}-{ev.end}" + (f" {ev.symbol}" if ev.symbol else "") + at


def find_text(result: FindResult, index: IndexState, explained: list[str] | None) -> str:
    head = [line for line in (index.line(),) if line]
    if result.insufficient:
        closest = "; ".join(_loc(r) for r in result.results[:5]) or "none"
        head.append(
            f"No reliable evidence for {result.query!r}: {result.insufficient_reason}. "
            f"Closest candidates (do not rely on them): {closest}."
        )
        if explained:
            head.extend(explained)
        return "\n".join(head)
    if not result.results:
        head.append(f"No results for {result.query!r}.")
        return "\n".join(head)
    if explained is not None:
        return "\n".join([*head, *explained])
    pack = result.context.text
    if not pack:  # budget 0: the locations are the answer
        pack = "\n".join(_loc(r) for r in result.results)
    return "\n\n".join([*head, pack]) if head else pack


def location(ev: Evidence) -> dict[str, Any]:
    return {
        "path": ev.path,
        "start": ev.start,
        "end": ev.end,
        "line": ev.line,
        "symbol": ev.symbol,
        "kind": ev.kind,
        "reasons": list(ev.reasons),
        "first_line": first_code_line(ev.text),
    }


def related_answer(found: Related, index: IndexState) -> tuple[dict[str, Any], str]:
    data: dict[str, Any] = {
        "name": found.name,
        "symbol": found.symbol,
        "definitions": [location(e) for e in found.definitions],
        "callers": [location(e) for e in found.callers],
        "caller_count": found.caller_count,
        "callees": [location(e) for e in found.callees],
        "tests": [location(e) for e in found.tests],
        "related": [location(e) for e in found.related],
        "changed_with": [to_json_dict(c) for c in found.changed_with],
        "index": to_json_dict(index),
    }
    lines = [line for line in (index.line(),) if line]
    changed = [
        f"  {c.path} ({c.commits} commit{'s' if c.commits != 1 else ''}, last {c.last_changed})"
        for c in found.changed_with
    ]
    changed_text = ["changed with its file:", *changed] if changed else []
    if not found.name:
        lines.append("No function or class is defined at that line.")
        return data, "\n".join([*lines, *changed_text])
    lines.append(f"{found.name}" + (f" ({found.symbol})" if found.symbol else ""))
    sections = (
        ("defined in", found.definitions, None),
        ("callers", found.callers, found.caller_count),
        ("calls", found.callees, None),
        ("tests", found.tests, None),
        ("related", found.related, None),
    )
    for title, items, count in sections:
        if not items:
            lines.append(f"{title}: none found")
            continue
        lines.append(f"{title}" + (f" ({count})" if count is not None else "") + ":")
        lines.extend(f"  {_loc(e)}  {opening_code(e)}" for e in items)
        if count is not None and count > len(items):
            lines.append(f"  … and {count - len(items)} more")
    lines.extend(changed_text or ["changed with its file: none in the history"])
    return data, "\n".join(lines)


def status_answer(
    status: Status, index: IndexState, running: int, queued: int
) -> tuple[dict[str, Any], str]:
    data: dict[str, Any] = {
        "workspace": status.workspace,
        "commit": status.commit,
        "branch": status.branch,
        "dirty": status.dirty,
        "indexed_commit": status.indexed_commit,
        "indexed_at": status.indexed_at,
        "files": status.files,
        "chunks": status.chunks,
        "vectors_done": status.vectors,
        "vectors_total": status.vector_target,
        "pending_files": status.pending,
        "tuned": status.ranking,
        "state": index.state,
        "progress": index.progress,
        "message": index.message,
        "read_only": status.locked_by_other,
        "requests_running": running,
        "requests_queued": queued,
    }
    pct = f" {index.progress} %" if index.progress is not None else ""
    where = f"{status.branch or 'no branch'}@{(status.commit or 'no commit')[:10]}"
    text = (
        f"{index.state}{pct}: {status.files} files, {status.chunks} chunks, "
        f"{status.vectors}/{status.vector_target} vectors; {status.pending} file(s) changed "
        f"since the last pass; workspace {where}{' (dirty)' if status.dirty else ''}, indexed at "
        f"{(status.indexed_commit or 'nothing')[:10]}; ranking: {status.ranking}"
        + (f"; {index.message}" if index.message else "")
    )
    return data, text
