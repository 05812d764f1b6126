"""Every custom method, command, parameter and field of the server, in one place.

README.md ("LSP extensions") documents exactly these names; tests/test_lsp_docs.py fails when
the two disagree. Request params arrive as plain JSON (pygls has no types for custom methods),
so they are validated here into typed records, and every problem becomes a message that names
the parameter and says what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from pygls.exceptions import JsonRpcInvalidParams

from ..api import (
    MAX_BUDGET_TOKENS,
    MAX_LIMIT,
    FindResult,
    IndexReport,
    Intent,
    Status,
    to_json_dict,
)
from ..search.explain import explain
from .uris import line_range, location, path_to_uri

FIND_REQUEST = "codeEvidence/find"
EXPLAIN_REQUEST = "codeEvidence/explain"
STATUS_NOTIFICATION = "codeEvidence/status"

CMD_FIND = "codeEvidence.find"
CMD_REINDEX = "codeEvidence.reindex"
CMD_STATUS = "codeEvidence.status"
CMD_SHOW_RELATED = "codeEvidence.showRelated"
COMMANDS = (CMD_FIND, CMD_REINDEX, CMD_STATUS, CMD_SHOW_RELATED)

SETTINGS_SECTION = "codeEvidence"
# A top-level initializationOptions key, outside the settings section on purpose: settings can
# also come from workspace/configuration, which reads files inside the repository.
TRUST_OTHER_OWNER = "trustOtherOwner"

INTENTS: tuple[str, ...] = tuple(i for i in get_args(Intent))
INDEX_STATES = ("indexing", "partial", "ready")
STATUS_STATES = (*INDEX_STATES, "error")
RERANK_MODES = ("auto", "on", "off")

# JSON names of the params, in documented order; LSP's own progress tokens are accepted too.
FIND_PARAMS = (
    "query",
    "textDocument",
    "position",
    "limit",
    "budgetTokens",
    "intent",
    "asOf",
    "depth",
    "workspaceFolder",
)
DEPTHS = ("quick", "interactive", "deep")
_LSP_PARAMS = frozenset({"workDoneToken", "partialResultToken"})
# Fields the server adds to the engine's FindResult / Evidence (schema.py) when it answers.
ANSWER_EXTRA_FIELDS = ("indexState", "workspaceFolders")
EXPLAIN_EXTRA_FIELDS = ("explain",)
RESULT_EXTRA_FIELDS = ("uri", "range", "selectionRange", "workspaceFolder")
STATUS_FIELDS = (
    "workspace",
    "state",
    "commit",
    "branch",
    "dirty",
    "indexedCommit",
    "indexedAt",
    "files",
    "chunks",
    "vectorsDone",
    "vectorsTotal",
    "pendingFiles",
    "message",
    "lastPass",
)
SETTINGS = ("budgetTokens", "limit", "rerank", "exclude")


class ParamsError(ValueError):
    """Request parameters the server cannot use; the message is sent to the client."""


def invalid(message: str) -> JsonRpcInvalidParams:
    """The error a request gets when its params cannot be used: InvalidParams, with
    ``message`` (which names the method and the parameter) shown to the user."""
    return JsonRpcInvalidParams(message=message)


@dataclass(frozen=True, slots=True)
class FindParams:
    query: str
    uri: str | None = None
    line: int | None = None  # 0-based, as LSP sends it
    character: int | None = None
    limit: int | None = None  # None: the ``limit`` setting, then the engine default
    budget_tokens: int | None = None
    intent: str = "auto"
    as_of: str | None = None  # a git revision: answer from the code as it was there
    depth: str = "interactive"  # see FindRequest.depth
    # Without a document: search this workspace folder only (a URI); None: every folder.
    folder: str | None = None


def _int(raw: dict[str, Any], key: str, where: str, minimum: int) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParamsError(f"{where}: '{key}' must be an integer, got {_kind(value)}")
    if value < minimum:
        raise ParamsError(f"{where}: '{key}' must be at least {minimum}, got {value}")
    return value


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}.get(
        type(value), "object"
    )


def parse_find_params(raw: object, where: str = FIND_REQUEST) -> FindParams:
    if not isinstance(raw, dict):
        raise ParamsError(f"{where}: params must be an object with a 'query', got {_kind(raw)}")
    unknown = sorted(set(raw) - set(FIND_PARAMS) - _LSP_PARAMS)
    if unknown:
        raise ParamsError(
            f"{where}: unknown parameter(s) {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(FIND_PARAMS)})"
        )
    query = raw.get("query")
    if query is None:
        raise ParamsError(f"{where}: 'query' is required: say what you are looking for")
    if not isinstance(query, str):
        raise ParamsError(f"{where}: 'query' must be a string, got {_kind(query)}")
    if not query.strip():
        raise ParamsError(f"{where}: 'query' is empty: say what you are looking for")
    uri = None
    doc = raw.get("textDocument")
    if doc is not None:
        if not isinstance(doc, dict) or not isinstance(doc.get("uri"), str):
            raise ParamsError(f"{where}: 'textDocument' must be an object with a string 'uri'")
        uri = doc["uri"]
    line = character = None
    pos = raw.get("position")
    if pos is not None:
        if uri is None:
            raise ParamsError(f"{where}: 'position' needs 'textDocument'")
        if not isinstance(pos, dict):
            raise ParamsError(f"{where}: 'position' must be an object {{line, character}}")
        line = _int(pos, "line", f"{where} position", 0)
        character = _int(pos, "character", f"{where} position", 0)
        if line is None:
            raise ParamsError(f"{where}: 'position.line' is required")
    intent = raw.get("intent", "auto")
    if intent is None:
        intent = "auto"
    if intent not in INTENTS:
        raise ParamsError(f"{where}: 'intent' must be one of {', '.join(INTENTS)}, got {intent!r}")
    as_of = raw.get("asOf")
    if as_of is not None and (not isinstance(as_of, str) or not as_of.strip()):
        raise ParamsError(f"{where}: 'asOf' must be a git revision (a non-empty string)")
    folder = raw.get("workspaceFolder")
    if folder is not None and (not isinstance(folder, str) or not folder):
        raise ParamsError(f"{where}: 'workspaceFolder' must be a workspace folder URI")
    if folder is not None and uri is not None:
        raise ParamsError(f"{where}: give 'textDocument' or 'workspaceFolder', not both")
    depth = raw.get("depth") or "interactive"
    if depth not in DEPTHS:
        raise ParamsError(f"{where}: 'depth' must be one of {', '.join(DEPTHS)}, got {depth!r}")
    return FindParams(
        query=query,
        uri=uri,
        line=line,
        character=character or 0,
        limit=_int(raw, "limit", where, 1),
        budget_tokens=_int(raw, "budgetTokens", where, 0),
        intent=intent,
        as_of=as_of,
        depth=depth,
        folder=folder,
    )


@dataclass(frozen=True, slots=True)
class Settings:
    """The ``codeEvidence`` settings section; None means "the workspace configuration"."""

    budget_tokens: int | None = None
    limit: int | None = None
    rerank: str = "auto"
    exclude: tuple[str, ...] = field(default_factory=tuple)


def settings_section(raw: object) -> dict[str, Any] | None:
    """The ``codeEvidence`` object out of initializationOptions or didChangeConfiguration
    settings: either nested under the section name or given bare."""
    if not isinstance(raw, dict):
        return None
    inner = raw.get(SETTINGS_SECTION)
    if isinstance(inner, dict):
        return inner
    if raw and set(raw) <= set(SETTINGS):
        return raw
    return None


def parse_settings(raw: dict[str, Any]) -> tuple[Settings, list[str]]:
    """Valid keys are applied; each bad one is skipped with a warning, so one typo does not
    throw away the rest of the user's settings."""
    warnings: list[str] = []
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in SETTINGS:
            warnings.append(f"unknown setting {key!r} (known: {', '.join(SETTINGS)})")
            continue
        if value is None:
            continue
        if key in ("budgetTokens", "limit"):
            low, high = (0, MAX_BUDGET_TOKENS) if key == "budgetTokens" else (1, MAX_LIMIT)
            if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
                warnings.append(f"{key} must be an integer from {low} to {high}, got {value!r}")
                continue
            values["budget_tokens" if key == "budgetTokens" else "limit"] = value
        elif key == "rerank":
            if value not in RERANK_MODES:
                warnings.append(f"rerank must be one of {', '.join(RERANK_MODES)}, got {value!r}")
                continue
            values["rerank"] = value
        elif key == "exclude":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                warnings.append(f"exclude must be a list of glob strings, got {_kind(value)}")
                continue
            values["exclude"] = tuple(v for v in value if v.strip())
    return Settings(**values), warnings


def find_answer(
    result: FindResult, root: Path, index_state: str, explained: bool = False
) -> dict[str, Any]:
    """The engine's answer as JSON, each result with its LSP location, plus the index state
    (and, for ``codeEvidence/explain``, one explanation line per result and per drop)."""
    answer = to_json_dict(result)
    if explained:
        answer["explain"] = explain(result)
    folder = path_to_uri(root)
    for item in answer["results"]:
        loc = location(root, item["path"], item["start"], item["end"])
        item["uri"] = loc["uri"]
        item["range"] = loc["range"]
        # What a LocationLink calls targetSelectionRange: the line to select and reveal.
        item["selectionRange"] = line_range(item["line"], item["line"])
        item["workspaceFolder"] = folder
    answer["indexState"] = index_state
    answer["workspaceFolders"] = [folder]
    return answer


def merged_answer(answers: list[dict[str, Any]], limit: int) -> dict[str, Any]:
    """Answers of several workspace folders (each from :func:`find_answer`) as one: every
    result, best score first, cut to ``limit``, each saying its ``workspaceFolder``. The rest
    (context pack, confidence, commit, trace) is the answer of the folder with the best
    result, which a note names; ``indexState`` is the least ready folder's."""
    if len(answers) == 1:
        return answers[0]
    results = sorted(
        (r for a in answers for r in a["results"]), key=lambda r: r["score"], reverse=True
    )
    best = max(answers, key=lambda a: a["results"][0]["score"] if a["results"] else float("-inf"))
    merged = dict(best)
    merged["results"] = results[:limit]
    merged["workspaceFolders"] = [f for a in answers for f in a["workspaceFolders"]]
    states = [a["indexState"] for a in answers]
    merged["indexState"] = next((s for s in INDEX_STATES if s in states), best["indexState"])
    merged["notes"] = [
        *best["notes"],
        f"searched {len(answers)} workspace folders; the context pack, confidence and commit "
        f"are {best['workspace']}'s",
    ]
    if "explain" in best:
        merged["explain"] = [line for a in answers for line in a["explain"]]
    return merged


def status_payload(
    folder: Path,
    state: str,
    message: str,
    status: Status | None = None,
    last_pass: IndexReport | None = None,
    vectors_enabled: bool = True,
) -> dict[str, Any]:
    """The ``codeEvidence/status`` notification (also what ``codeEvidence.status`` returns).
    Without a ``status`` (the engine could not open) the counts are null."""
    s = status
    return {
        "workspace": path_to_uri(folder),
        "state": state,
        "commit": s.commit if s else None,
        "branch": s.branch if s else None,
        "dirty": s.dirty if s else None,
        "indexedCommit": s.indexed_commit if s else None,
        "indexedAt": s.indexed_at if s else None,
        "files": s.files if s else None,
        "chunks": s.chunks if s else None,
        "vectorsDone": s.vectors if s else None,
        "vectorsTotal": (s.vector_target if vectors_enabled else 0) if s else None,
        "pendingFiles": s.pending if s else None,
        "message": message,
        "lastPass": None if last_pass is None else to_json_dict(last_pass),
    }
