"""A service's failure as an agent reads it back from a log service's API: one record, its
fields as JSON, the service's own around them.

- :func:`datadog_search`: what Datadog's Logs API answers a search (``POST
  /api/v2/logs/events/search``): ``data``, a list
  of events, each ``{"id", "type": "log", "attributes": {…}}``; an event's ``attributes`` hold
  the reserved ones (``timestamp``, ``host``, ``service``, ``status``, ``message``, ``tags``)
  and, again under ``attributes``, the record's own. A traceback is logged as Flask logs an
  unhandled exception (``Exception on /users [GET]``), its trace in ``error.stack`` with
  ``error.kind`` and ``error.message`` (Datadog's standard attributes for an error, what its
  Python integration fills); an error line is the record's message. ``links`` and ``meta``
  (the page's cursor, the request's id) come after.
- :func:`gcloud_read`: what ``gcloud logging read --format=json`` prints for one entry: a
  JSON array, pretty-printed, of ``LogEntry`` objects (``insertId``, ``logName``,
  ``resource`` with its labels, ``severity``, ``timestamp``, ``receiveTimestamp``). The
  service logs through google-cloud-logging's ``StructuredLogHandler``, so the entry's
  ``jsonPayload.message`` is the record as Python's logging formats it (Flask's line, then the
  traceback it appends), beside the logger's name and the logging call's source location.
- :func:`cloudwatch_events`: what ``aws logs filter-log-events --output json`` prints for an
  ECS task's stream: ``events``, one per line the container wrote (its stream, time in
  milliseconds, message, ingestion time and id), then ``searchedLogStreams``.
- :func:`gcloud_lines`: what ``gcloud logging read --format=json`` prints for a Cloud Run
  service that writes plain text: one entry per line of its stdout, ``textPayload``, newest
  first (gcloud's default order).
- :func:`insights_mcp`: what AWS's CloudWatch MCP server (awslabs/mcp,
  ``execute_log_insights_query``) answers for ``fields @timestamp, @message, @logStream, @log
  | sort @timestamp desc`` over the ECS task's log group: its query's id, status and
  statistics, and each row as a ``{field: value}`` object, newest first.
"""

from __future__ import annotations

import json

_TRACE = "Traceback (most recent call last):"
# What Cloud Logging keeps of every entry a Cloud Run service writes: its instance, its log,
# the revision it runs as.
_CLOUD_RUN = {
    "labels": {"instanceId": "00f46b9285a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6"},
    "logName": "projects/acme-prod/logs/run.googleapis.com%2Fstdout",
    "resource": {
        "labels": {
            "configuration_name": "web",
            "location": "us-central1",
            "project_id": "acme-prod",
            "revision_name": "web-00042-xyz",
            "service_name": "web",
        },
        "type": "cloud_run_revision",
    },
}


def _error(text: str) -> tuple[str, str] | None:
    """The last exception's type (as printed) and message, for a traceback; None otherwise."""
    if _TRACE not in text:
        return None
    last = text.rstrip("\n").split("\n")
    for i in range(len(last) - 1, -1, -1):
        if last[i].startswith("  "):  # the last frame's lines; the error follows them
            kind, _, message = "\n".join(last[i + 1 :]).strip().partition(": ")
            return kind, message
    return None


def datadog_search(text: str) -> str:
    """``text`` (a traceback or an error line) as Datadog's Logs API answers a search for it."""
    error = _error(text)
    own: dict[str, object] = {
        "logger": {"name": "flask.app", "thread_name": "MainThread"},
        "dd": {
            "service": "web",
            "env": "production",
            "version": "874ca2bc",
            "trace_id": "6630a1f3000000004b1e2f3a4b5c6d7e",
            "span_id": "5472658215243123456",
        },
        "http": {"method": "GET", "url_details": {"path": "/users"}, "status_code": 500},
    }
    if error is not None:
        own["error"] = {"kind": error[0], "message": error[1], "stack": text}
    event = {
        "id": "AgAAAY8xAbCdEfGhAAAAAAAAABhBWThZQWJDZEVBQUJEYkVlWW1CRnhRQUE",
        "type": "log",
        "attributes": {
            "attributes": own,
            "host": "web-7d9f",
            "message": "Exception on /users [GET]" if error is not None else text,
            "service": "web",
            "status": "error",
            "tags": ["env:production", "service:web", "version:874ca2bc", "source:python"],
            "timestamp": "2024-05-01T10:12:03.117Z",
        },
    }
    answer = {
        "data": [event],
        "links": {"next": "https://api.datadoghq.com/api/v2/logs/events?page[cursor]=eyJhZnRl"},
        "meta": {
            "elapsed": 132,
            "page": {"after": "eyJhZnRlciI6IkFnQUFBWTh4In0"},
            "request_id": "pddv1ChZ4c2JmbTNSOVJqZXhVbWZOZl9nUVEi",
            "status": "done",
        },
    }
    return json.dumps(answer)


def gcloud_read(text: str) -> str:
    """``text`` (a traceback or an error line) as ``gcloud logging read --format=json`` prints
    the entry that logged it."""
    message = f"Exception on /users [GET]\n{text}" if _TRACE in text else text
    entry = {
        "insertId": "65f1c2a3000b1e2f3a4b5c6d",
        "jsonPayload": {
            "message": message,
            "python_logger": "flask.app",
        },
        **_CLOUD_RUN,
        "receiveTimestamp": "2024-05-01T10:12:03.318842915Z",
        "severity": "ERROR",
        "sourceLocation": {
            "file": "/srv/app/.venv/lib/python3.12/site-packages/flask/app.py",
            "function": "log_exception",
            "line": "1414",
        },
        "timestamp": "2024-05-01T10:12:03.117482Z",
    }
    return json.dumps([entry], indent=2)


def cloudwatch_events(text: str) -> str:
    """``text``, a line per event, as ``aws logs filter-log-events`` prints an ECS stream."""
    stream = "ecs/web/0f3c7a1e9d2b4c6a8e1f3a5b7c9d1e2f"
    events = [
        {
            "logStreamName": stream,
            "timestamp": 1714558323117 + i // 4,  # a burst of lines shares its millisecond
            "message": line,
            "ingestionTime": 1714558323905 + i // 4,
            "eventId": f"381746023983717{i:04d}0000000000000000000000000000000000000",
        }
        for i, line in enumerate(text.split("\n"))
    ]
    searched = [{"logStreamName": stream, "searchedCompletely": True}]
    return json.dumps({"events": events, "searchedLogStreams": searched}, indent=4)


def gcloud_lines(text: str) -> str:
    """``text``, a line per entry, as ``gcloud logging read --format=json`` prints a Cloud Run
    service's stdout: newest first."""
    entries = []
    for i, line in enumerate(text.split("\n")):
        nanos = 117482915 + 131073 * i
        entries.append(
            {
                "insertId": f"65f1c2a3000b{i:06x}",
                **_CLOUD_RUN,
                "receiveTimestamp": f"2024-05-01T10:12:03.{nanos + 90210000:09d}Z",
                "textPayload": line,
                "timestamp": f"2024-05-01T10:12:03.{nanos:09d}Z",
            }
        )
    return json.dumps(entries[::-1], indent=2)


def insights_mcp(text: str) -> str:
    """``text``, a line per row, as AWS's CloudWatch MCP server answers a Logs Insights query
    for the task's recent lines, newest first."""
    rows = [
        {
            "@timestamp": f"2024-05-01 10:12:03.{117 + i:03d}",
            "@message": line,
            "@logStream": "ecs/web/0f3c7a1e9d2b4c6a8e1f3a5b7c9d1e2f",
            "@log": "123456789012:/ecs/web",
        }
        for i, line in enumerate(text.split("\n"))
    ]
    answer = {
        "queryId": "3f1e6a2b-9c4d-4e7f-8a1b-2c3d4e5f6a7b",
        "status": "Complete",
        "statistics": {"recordsMatched": float(len(rows)), "recordsScanned": 5120.0},
        "results": rows[::-1],
    }
    return json.dumps(answer, indent=2)
