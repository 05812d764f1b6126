"""The MCP tools: names, input and output schemas, argument checking and what each answer says.

Everything an agent host sees is defined here, as plain JSON Schema, so ``docs/agents.md`` can
be checked against it (``tests/test_mcp_docs.py``) and the names and shapes stay stable: add
fields, never rename or remove them. Parameter names are snake_case (the MCP convention; the
language server keeps camelCase). Nothing here imports the MCP SDK: ``server.py`` wires these
tools to it, ``workspace.py`` answers them.

A find answers with the CLI's ``--json`` answer as structured content (with the index state
added) and, as text, the context pack itself, so a host that shows only text still gets cited
code; when the evidence is insufficient the text says so first, plainly, so an agent stops
instead of acting on noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api import (
    MAX_BUDGET_TOKENS,
    MAX_LIMIT,
    Evidence,
    FindRequest,
    FindResult,
    Related,
    Status,
    to_json_dict,
)

FIND = "find_evidence"
EXPLAIN = "explain_evidence"
RELATED = "related_code"
STATUS = "index_status"

INTENTS = ("auto", "find-file", "explain", "fix-failure", "verify")
DEPTHS = ("interactive", "deep")
STATES = ("indexing", "partial", "ready", "error")


class ArgumentError(ValueError):
    """A tool call's arguments are wrong; the message says which and how to fix it."""


# --------------------------------------------------------------------------- schemas

_FIND_PROPERTIES: dict[str, Any] = {
    "query": {
        "type": "string",
        "description": "What you are looking for: identifiers, a description of the behaviour, "
        "or a pasted error message or stack trace.",
    },
    "open_file": {
        "type": "string",
        "description": "Workspace-relative path of the file you are working on: its imports, "
        "callers and callees rank higher.",
    },
    "line": {
        "type": "integer",
        "minimum": 1,
        "description": "1-based line in open_file (the function there counts as the context).",
    },
    "limit": {
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LIMIT,
        "default": 10,
        "description": "How many ranked results.",
    },
    "budget_tokens": {
        "type": "integer",
        "minimum": 0,
        "maximum": MAX_BUDGET_TOKENS,
        "default": 2000,
        "description": "Token budget of the context pack (0: results only). Default: the "
        "workspace's configured budget, 2000 unless .code-evidence.toml says otherwise.",
    },
    "intent": {
        "type": "string",
        "enum": list(INTENTS),
        "default": "auto",
        "description": "What the question is for; auto guesses it from the wording.",
    },
    "as_of": {
        "type": "string",
        "description": "A git revision (commit, tag, branch): answer from the code as it was "
        "there instead of the working tree.",
    },
    "depth": {
        "type": "string",
        "enum": list(DEPTHS),
        "default": "deep",
        "description": "deep: the cross-encoder reads every head candidate, with no time "
        "limit (seconds on a large workspace); interactive: it stops at the editor's time "
        "budget.",
    },
}

_FIND_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": _FIND_PROPERTIES,
    "required": ["query"],
    "additionalProperties": False,
}

_NULLABLE_STRING = {"type": ["string", "null"]}

_EVIDENCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "start": {"type": "integer"},
        "end": {"type": "integer"},
        "symbol": {"type": "string"},
        "kind": {"type": "string"},
        "language": {"type": "string"},
        "score": {"type": "number"},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "text": {"type": "string"},
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
    },
    "required": ["path", "start", "end", "symbol", "kind", "reasons"],
}

_INDEX_STATE: dict[str, Any] = {
    "type": "object",
    "description": "How far the index is: answers come from what is committed.",
    "properties": {
        "state": {"type": "string", "enum": list(STATES)},
        "progress": {
            "type": ["integer", "null"],
            "description": "Percent of the running index pass, when one runs.",
        },
        "message": {"type": "string"},
        "indexed_commit": _NULLABLE_STRING,
        "indexed_branch": _NULLABLE_STRING,
    },
    "required": ["state", "progress", "message", "indexed_commit", "indexed_branch"],
}

_FIND_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "workspace": {"type": "string"},
        "commit": _NULLABLE_STRING,
        "branch": _NULLABLE_STRING,
        "results": {"type": "array", "items": _EVIDENCE},
        "context": {
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "tokens": {"type": "integer"},
                "budget": {"type": "integer"},
                "dropped": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "start": {"type": "integer"},
                            "end": {"type": "integer"},
                            "reason": {"type": "string"},
                        },
                    },
                },
            },
            "required": ["text", "tokens", "budget", "dropped"],
        },
        "confidence": {"type": "number"},
        "insufficient": {"type": "boolean"},
        "insufficient_reason": _NULLABLE_STRING,
        "trace": {"type": "object"},
        "intent": {"type": "string"},
        "index_mode": {"type": "string"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "index": _INDEX_STATE,
    },
    "required": [
        "query",
        "workspace",
        "commit",
        "branch",
        "results",
        "context",
        "confidence",
        "insufficient",
        "insufficient_reason",
        "trace",
        "intent",
        "index_mode",
        "notes",
        "index",
    ],
}

_EXPLAIN_OUTPUT: dict[str, Any] = {
    **_FIND_OUTPUT,
    "properties": {
        **_FIND_OUTPUT["properties"],
        "explain": {
            "type": "array",
            "items": {"type": "string"},
            "description": "One line per result: its rank and score in each channel, fusion, "
            "features and rerank (the CLI's --explain).",
        },
    },
    "required": [*_FIND_OUTPUT["required"], "explain"],
}

_LOCATION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "start": {"type": "integer"},
        "end": {"type": "integer"},
        "symbol": {"type": "string"},
        "kind": {"type": "string"},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "first_line": {
            "type": "string",
            "description": "The first non-blank line of the code there (a signature, usually).",
        },
    },
    "required": ["path", "start", "end", "symbol", "kind", "reasons", "first_line"],
}

_RELATED_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Workspace-relative path of a file."},
        "line": {
            "type": "integer",
            "minimum": 1,
            "description": "1-based line in it: the function or class there is the subject.",
        },
    },
    "required": ["path", "line"],
    "additionalProperties": False,
}

_RELATED_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name looked up ('' if none is there)."},
        "symbol": {"type": "string", "description": "The qualified symbol at path:line."},
        "definitions": {"type": "array", "items": _LOCATION},
        "callers": {"type": "array", "items": _LOCATION},
        "caller_count": {"type": "integer"},
        "callees": {"type": "array", "items": _LOCATION},
        "tests": {"type": "array", "items": _LOCATION},
        "related": {"type": "array", "items": _LOCATION},
        "index": _INDEX_STATE,
    },
    "required": [
        "name",
        "symbol",
        "definitions",
        "callers",
        "caller_count",
        "callees",
        "tests",
        "related",
        "index",
    ],
}

_STATUS_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

_STATUS_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "workspace": {"type": "string"},
        "commit": _NULLABLE_STRING,
        "branch": _NULLABLE_STRING,
        "dirty": {"type": ["boolean", "null"]},
        "indexed_commit": _NULLABLE_STRING,
        "indexed_at": _NULLABLE_STRING,
        "files": {"type": "integer"},
        "chunks": {"type": "integer"},
        "vectors_done": {"type": "integer"},
        "vectors_total": {"type": "integer"},
        "pending_files": {
            "type": "integer",
            "description": "Files changed on disk since the last index pass.",
        },
        "tuned": {
            "type": "string",
            "description": "The ranking settings: defaults, or what `code-evidence tune` fitted.",
        },
        "state": {"type": "string", "enum": list(STATES)},
        "progress": {"type": ["integer", "null"]},
        "message": {"type": "string"},
        "read_only": {
            "type": "boolean",
            "description": "Another process (an editor's language server) holds the index and "
            "keeps it fresh; this server answers from it.",
        },
        "requests_running": {"type": "integer"},
        "requests_queued": {"type": "integer"},
    },
    "required": [
        "workspace",
        "commit",
        "branch",
        "dirty",
        "indexed_commit",
        "indexed_at",
        "files",
        "chunks",
        "vectors_done",
        "vectors_total",
        "pending_files",
        "tuned",
        "state",
        "progress",
        "message",
        "read_only",
        "requests_running",
        "requests_queued",
    ],
}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        FIND,
        "Find code evidence",
        "Find the code that answers a question about this workspace: the definition, its "
        "callers, the other files a change needs, where an error comes from. Returns ranked, "
        "cited results (workspace-relative path, 1-based lines, symbol, why it ranked) and a "
        "context pack of the code itself under a token budget. Prefer it to grep-and-read: it "
        "ranks by exact identifiers, imports, calls and history. When it says there is no "
        "reliable evidence, do not act on its candidates.",
        _FIND_INPUT,
        _FIND_OUTPUT,
    ),
    ToolSpec(
        EXPLAIN,
        "Explain a find",
        "The same search as find_evidence, with why each result ranked where it did: its "
        "rank and score in each channel (BM25, vectors, structure, stack frames), fusion, "
        "feature boosts and the rerank.",
        _FIND_INPUT,
        _EXPLAIN_OUTPUT,
    ),
    ToolSpec(
        RELATED,
        "Code related to a place",
        "What is connected to the function or class at path:line: where its name is "
        "defined, who calls it (matched by name), what it calls, the tests that exercise it, "
        "and other related code. Locations only, each with its first line.",
        _RELATED_INPUT,
        _RELATED_OUTPUT,
    ),
    ToolSpec(
        STATUS,
        "Index status",
        "How fresh the index is: the commit and branch, dirty, files, chunks, vectors done of "
        "total, files changed since the last pass, whether indexing is running and how far, "
        "and the ranking settings.",
        _STATUS_INPUT,
        _STATUS_OUTPUT,
    ),
)
BY_NAME = {t.name: t for t in TOOLS}


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
    _check_keys(tool, args, _FIND_INPUT)
    query = _string(tool, args, "query") or ""
    if not query.strip():
        raise ArgumentError(f"{tool}: 'query' is empty: say what you are looking for")
    open_file = _string(tool, args, "open_file")
    line = _integer(tool, args, "line", _FIND_INPUT)
    if line is not None and open_file is None:
        raise ArgumentError(f"{tool}: 'line' needs 'open_file'")
    limit = _integer(tool, args, "limit", _FIND_INPUT)
    request = FindRequest(
        query=query,
        open_file=open_file,
        line=line,
        limit=10 if limit is None else limit,
        budget_tokens=_integer(tool, args, "budget_tokens", _FIND_INPUT),
        intent=_choice(tool, args, "intent", INTENTS) or "auto",  # type: ignore[arg-type]
        depth=_choice(tool, args, "depth", DEPTHS) or "deep",  # type: ignore[arg-type]
    )
    as_of = _string(tool, args, "as_of")
    if as_of is not None and not as_of.strip():
        raise ArgumentError(f"{tool}: 'as_of' is empty: give a commit, tag or branch")
    return FindArgs(request, as_of)


def parse_related(args: dict[str, Any] | None) -> RelatedArgs:
    args = args or {}
    _check_keys(RELATED, args, _RELATED_INPUT)
    path = _string(RELATED, args, "path") or ""
    if not path.strip():
        raise ArgumentError(f"{RELATED}: 'path' is empty")
    line = _integer(RELATED, args, "line", _RELATED_INPUT)
    assert line is not None  # required
    return RelatedArgs(path, line)


def parse_status(args: dict[str, Any] | None) -> None:
    _check_keys(STATUS, args or {}, _STATUS_INPUT)


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
    return f"{ev.path}:{ev.start}-{ev.end}" + (f" {ev.symbol}" if ev.symbol else "")


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


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


def location(ev: Evidence) -> dict[str, Any]:
    return {
        "path": ev.path,
        "start": ev.start,
        "end": ev.end,
        "symbol": ev.symbol,
        "kind": ev.kind,
        "reasons": list(ev.reasons),
        "first_line": first_line(ev.text),
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
        "index": to_json_dict(index),
    }
    lines = [line for line in (index.line(),) if line]
    if not found.name:
        lines.append("No function or class is defined at that line.")
        return data, "\n".join(lines)
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
        lines.extend(f"  {_loc(e)}  {first_line(e.text)}" for e in items)
        if count is not None and count > len(items):
            lines.append(f"  … and {count - len(items)} more")
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
        "vectors_total": status.chunks,
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
        f"{status.vectors}/{status.chunks} vectors; {status.pending} file(s) changed since the "
        f"last pass; workspace {where}{' (dirty)' if status.dirty else ''}, indexed at "
        f"{(status.indexed_commit or 'nothing')[:10]}; ranking: {status.ranking}"
        + (f"; {index.message}" if index.message else "")
    )
    return data, text
