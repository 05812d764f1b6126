"""A Python traceback as Rollbar and Bugsnag deliver it to an agent, each through its MCP
server.

Rollbar (rollbar/rollbar-mcp-server, ``get-item-details``): the item's fields and, under
``occurrence``, its last occurrence as Rollbar's API returns it (the ``metadata`` removed).
pyrollbar sends a trace as data (``_trace_data``): each frame's ``filename`` as the traceback
names it, ``lineno``, ``method`` and the source line as ``code``, oldest first; the exception's
``class`` (unqualified) and ``message``. A chain of exceptions (``__cause__``, ``__context__``)
goes as ``trace_chain``, the last raised first; one exception as ``trace``.

Bugsnag (SmartBear/smartbear-mcp, ``Get Error``): ``error_details``, the error's last event as
Bugsnag's Data Access API returns it (``latest_event``, snake_case, its threads removed),
``pivots`` and the dashboard's ``url``. bugsnag-python sends each exception with its frames
innermost first (``file`` relative to the project root, or to the packages' root for an
installed package's; ``lineNumber``, ``method``, ``inProject``, and ``code``: the seven lines
around the frame's, by number); the exception raised first, then the ones that caused it.

Each carries, as a real one does, the request, the server, the person and the notifier.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sentry_events import chain, file_lines

_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')


def _trace(block: str) -> dict[str, Any]:
    """One exception of the chain: its frames oldest first, each with the line the traceback
    printed under it, and its class (unqualified) and message."""
    lines = block.strip("\n").split("\n")
    frames: list[dict[str, Any]] = []
    last = -1
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if not m:
            continue
        last = i
        frame: dict[str, Any] = {
            "filename": m["path"],
            "lineno": int(m["line"]),
            "method": m["func"],
        }
        printed = lines[i + 1] if i + 1 < len(lines) else ""
        if printed.startswith("    ") and not _FRAME.match(printed):
            frame["code"] = printed.strip()
        frames.append(frame)
    rest = [x for x in lines[last + 1 :] if not x.startswith("    ")]
    error = "\n".join(x for x in rest if not x.strip() or not set(x.strip()) <= set("^~"))
    error = error.strip()
    head, _, message = error.partition(": ")
    return {"frames": frames, "exception": {"class": head.rsplit(".", 1)[-1], "message": message}}


def rollbar_item(trace: str) -> str:
    """The traceback's item as Rollbar's MCP server answers ``get-item-details``."""
    traces = [_trace(block) for block in chain(trace)]  # cause first
    body = {"trace_chain": traces[::-1]} if len(traces) > 1 else {"trace": traces[0]}
    last = traces[-1]["exception"]
    title = f"{last['class']}: {last['message']}".split("\n")[0]
    item = {
        "id": 1458392011,
        "counter": 412,
        "environment": "production",
        "framework": "flask",
        "title": title,
        "timestamp": 1714300000,
        "last_occurrence_id": 401234567890,
        "last_occurrence_timestamp": 1714558323,
        "level": "error",
        "project_id": 712345,
        "language": "python",
        "platform": "server",
        "hash": "8f3c2a1e9d7b6c5a4f3e2d1c0b9a8f7e6d5c4b3a",
        "status": "active",
        "total_occurrences": 37,
        "unique_occurrences": 12,
        "first_occurrence_timestamp": 1714300000,
        "assigned_user_id": None,
        "group_status": 1,
    }
    occurrence = {
        "id": 401234567890,
        "item_id": 1458392011,
        "timestamp": 1714558323,
        "version": 2,
        "data": {
            "body": body,
            "uuid": "2f1e0d9c-8b7a-4c6d-9e5f-4a3b2c1d0e9f",
            "level": "error",
            "environment": "production",
            "framework": "flask",
            "language": "python",
            "timestamp": 1714558323,
            "platform": "linux",
            "code_version": "874ca2bc",
            "context": "project#index",
            "notifier": {"name": "pyrollbar", "version": "1.0.0"},
            "server": {"host": "web-7d9f", "pid": 4121, "argv": ["gunicorn", "app:app"]},
            "request": {
                "url": "https://web.acme.test/users",
                "method": "GET",
                "headers": {"Host": "web.acme.test", "User-Agent": "Mozilla/5.0"},
                "GET": {},
                "user_ip": "203.0.113.7",
            },
            "person": {"id": "1042", "username": "jane"},
        },
    }
    return json.dumps({**item, "occurrence": occurrence})


_PROJECT_ROOT = "/srv/app/"


def _bugsnag_file(path: str) -> tuple[str, bool]:
    """(file, inProject) as bugsnag-python names a frame's file: made absolute, then relative to
    the packages' root or to the project's."""
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1], False
    if path.startswith("/"):
        return path, False
    return (_PROJECT_ROOT + path, False) if path.startswith("<") else (path, True)


def _bugsnag_code(workspace: Path, path: str, line: int, printed: str | None) -> dict | None:
    """The seven lines around ``line`` by number (the notifier reads the file; a file the
    checkout lacks gives the line the traceback printed)."""
    lines = file_lines(workspace, path)
    if lines is not None:
        start = max(line - 3, 1)
        end = min(start + 7, len(lines) + 1)
        return {str(n): lines[n - 1].rstrip() for n in range(max(end - 7, 1), end)}
    return {str(line): printed} if printed else None


def bugsnag_error(trace: str, workspace: Path) -> str:
    """The traceback's error as the SmartBear MCP server's ``Get Error`` answers about it."""
    traces = [_trace(block) for block in chain(trace)]  # cause first
    exceptions = []
    for t in reversed(traces):  # the exception raised first, then its causes
        stacktrace = []
        for f in reversed(t["frames"]):  # innermost first
            file, in_project = _bugsnag_file(f["filename"])
            frame = {
                "file": file,
                "line_number": f["lineno"],
                "method": f["method"],
                "in_project": in_project,
                "code": _bugsnag_code(workspace, f["filename"], f["lineno"], f.get("code")),
            }
            stacktrace.append(frame)
        error = t["exception"]
        exceptions.append(
            {
                "error_class": error["class"],
                "message": error["message"],
                "type": "python",
                "stacktrace": stacktrace,
            }
        )
    last = exceptions[0]
    event = {
        "id": "6630a1f3007e2b1f5c3d0000",
        "url": "https://api.bugsnag.com/projects/5f1e0d9c8b7a6c5d4e3f2a1b/events/6630a1f3007e2b1f5c3d0000",
        "project_url": "https://api.bugsnag.com/projects/5f1e0d9c8b7a6c5d4e3f2a1b",
        "is_full_report": True,
        "error_id": "6863e2af8c857c0a5023b411",
        "received_at": "2024-05-01T10:12:03.117Z",
        "exceptions": exceptions,
        "severity": "error",
        "severity_reason": {"type": "unhandledException"},
        "unhandled": True,
        "context": "GET /users",
        "app": {"release_stage": "production", "version": "874ca2bc", "type": "flask"},
        "device": {
            "hostname": "web-7d9f",
            "runtime_versions": {"python": "3.12.3", "flask": "3.0.3"},
        },
        "user": {"id": "1042"},
        "request": {
            "url": "https://web.acme.test/users",
            "http_method": "GET",
            "client_ip": "203.0.113.7",
            "headers": {"Host": "web.acme.test", "User-Agent": "Mozilla/5.0"},
        },
        "breadcrumbs": [
            {
                "timestamp": "2024-05-01T10:12:02.981Z",
                "name": "GET /users",
                "type": "navigation",
                "meta_data": {"to": "/users"},
            }
        ],
        "metaData": {"request": {"path": "/users", "referer": "https://web.acme.test/"}},
    }
    details = {
        "id": "6863e2af8c857c0a5023b411",
        "project_id": "5f1e0d9c8b7a6c5d4e3f2a1b",
        "error_class": last["error_class"],
        "message": last["message"].split("\n")[0],
        "context": "GET /users",
        "severity": "error",
        "events": 37,
        "users": 12,
        "first_seen": "2024-04-28T09:46:40.000Z",
        "last_seen": "2024-05-01T10:12:03.117Z",
        "status": "open",
        "release_stages": ["production"],
        "grouping_reason": "frame-inner",
    }
    pivots = [
        {"event_field_display_id": "app.release_stage", "name": "Stage", "cardinality": 1},
        {"event_field_display_id": "user.id", "name": "User", "cardinality": 12},
    ]
    answer = {
        "error_details": details,
        "latest_event": event,
        "pivots": pivots,
        "url": "https://app.bugsnag.com/acme/web/errors/6863e2af8c857c0a5023b411",
    }
    return json.dumps(answer)
