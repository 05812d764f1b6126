"""The MCP tools as an agent host sees them: names, descriptions, input and output schemas.

Plain JSON Schema in one place, so ``docs/agents.md`` is checked against it
(``tests/test_mcp_docs.py``) and the names and shapes stay stable: add fields, never rename or
remove them. Parameter names are snake_case (the MCP convention; the language server keeps
camelCase). The find answer is the CLI's ``--json`` answer with the index state added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api import MAX_BUDGET_TOKENS, MAX_LIMIT

FIND = "find_evidence"
EXPLAIN = "explain_evidence"
RELATED = "related_code"
STATUS = "index_status"

INTENTS = ("auto", "find-file", "explain", "fix-failure", "verify")
DEPTHS = ("interactive", "deep")
STATES = ("indexing", "partial", "ready", "error")


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

FIND_INPUT: dict[str, Any] = {
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
        "line": {
            "type": "integer",
            "description": "The line to open at (start <= line <= end): where it holds the "
            "question, a trace frame's line, or the call; else the line naming it.",
        },
        "symbol": {"type": "string"},
        "kind": {"type": "string"},
        "language": {"type": "string"},
        "score": {"type": "number"},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "text": {"type": "string"},
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
    },
    "required": ["path", "start", "end", "line", "symbol", "kind", "reasons"],
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
        "rendering": _NULLABLE_STRING,
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
        "rendering",
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
        "line": {
            "type": "integer",
            "description": "The line to open at (start <= line <= end): where it holds the "
            "question, a trace frame's line, or the call; else the line naming it.",
        },
        "symbol": {"type": "string"},
        "kind": {"type": "string"},
        "reasons": {"type": "array", "items": {"type": "string"}},
        "first_line": {
            "type": "string",
            "description": "The first non-blank line of the code there (a signature, usually).",
        },
    },
    "required": ["path", "start", "end", "line", "symbol", "kind", "reasons", "first_line"],
}

RELATED_INPUT: dict[str, Any] = {
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

_CHANGED_WITH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "commits": {
            "type": "integer",
            "description": "How many of the file's recent commits also changed this one.",
        },
        "last_changed": {
            "type": "string",
            "description": "Date (YYYY-MM-DD, UTC) of the newest commit that changed both.",
        },
        "strength": {
            "type": "number",
            "description": "0-1: the share of the file's commits (recent ones and small ones "
            "weigh more) that changed this one too.",
        },
    },
    "required": ["path", "commits", "last_changed", "strength"],
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
        "changed_with": {
            "type": "array",
            "items": _CHANGED_WITH,
            "description": "Files the git history changed together with path, strongest "
            "first: what else a change there usually touches (empty without history).",
        },
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
        "changed_with",
        "index",
    ],
}

STATUS_INPUT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

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
        FIND_INPUT,
        _FIND_OUTPUT,
    ),
    ToolSpec(
        EXPLAIN,
        "Explain a find",
        "The same search as find_evidence, with why each result ranked where it did: its "
        "rank and score in each channel (BM25, vectors, structure, stack frames), fusion, "
        "feature boosts and the rerank.",
        FIND_INPUT,
        _EXPLAIN_OUTPUT,
    ),
    ToolSpec(
        RELATED,
        "Code related to a place",
        "What is connected to the function or class at path:line: where its name is "
        "defined, who calls it (matched by name), what it calls, the tests that exercise it, "
        "other related code, and the files the git history changed together with its file. "
        "Locations only, each with its first line.",
        RELATED_INPUT,
        _RELATED_OUTPUT,
    ),
    ToolSpec(
        STATUS,
        "Index status",
        "How fresh the index is: the commit and branch, dirty, files, chunks, vectors done of "
        "total, files changed since the last pass, whether indexing is running and how far, "
        "and the ranking settings.",
        STATUS_INPUT,
        _STATUS_OUTPUT,
    ),
)
BY_NAME = {t.name: t for t in TOOLS}
