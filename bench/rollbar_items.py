"""A Python traceback as Rollbar delivers it to an agent: the ``get-item-details`` answer of
Rollbar's MCP server (rollbar/rollbar-mcp-server): the item's fields and, under
``occurrence``, its last occurrence as Rollbar's API returns it (the ``metadata`` removed).

pyrollbar sends a trace as data (``_trace_data``): each frame's ``filename`` as the traceback
names it, ``lineno``, ``method`` and the source line as ``code``, oldest first; the exception's
``class`` (unqualified) and ``message``. A chain of exceptions (``__cause__``, ``__context__``)
goes as ``trace_chain``, the last raised first; one exception as ``trace``. The occurrence
carries, as a real one does, the request, the server, the person and the notifier.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sentry_events import chain

_FRAME = re.compile(r'^  File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>.+)$')


def _trace(block: str) -> dict[str, Any]:
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


def mcp_item(trace: str) -> str:
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
