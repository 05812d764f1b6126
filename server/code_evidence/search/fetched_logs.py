"""A log as a CI system's or a log service's API or MCP server hands it to an agent: its
lines as JSON data.

An agent fixing a red build or a failing service seldom copies a terminal. It asks the CI
system or the log service, and the answer keeps the log's lines as JSON strings, every line
break and quote escaped, so no trace in it reads as one:

- Buildkite's MCP server (``read_logs``, ``tail_logs``): ``{"entries": [{"ts": …, "c":
  "<line>", "rn": …}, …]}``, a line per entry;
- Jenkins' MCP server plugin (``getBuildLog``): ``{"hasMoreContent": false, "lines": [...]}``;
- Azure DevOps' MCP server (``pipelines_get_build_log_by_id``): the task's log lines as a JSON
  array, pretty-printed, each line with its time stamp;
- GitHub's MCP server (``get_job_logs`` with its content): ``{"job_id", "logs_content",
  "message", "original_length"}``, the content a job's whole raw log (every step's, a time
  stamp before each line), or each failed job's under ``logs``;
- CircleCI's MCP server (``get_build_failure_logs``): for each failed step a ``Job:`` and a
  ``Step:`` line, then ``Logs:`` and the step's ``{"output": …, "error": …}``, the step's
  terminal in one JSON string each; CircleCI's API (v1.1, a step's ``output_url``) returns the
  same terminal as ``[{"type": "out", "message": …}, …]``;
- CloudWatch Logs (``aws logs filter-log-events``, ``get-log-events``): ``{"events":
  [{"timestamp": <ms>, "message": …}, …]}``, an event per line a container wrote (a Lambda
  function's multi-line error is one event); a Logs Insights query's ``results`` (AWS's
  CloudWatch MCP server, ``execute_log_insights_query``: ``{"@timestamp": …, "@message": …}``
  each), as its query sorted them, usually newest first;
- Cloud Logging (``gcloud logging read --format=json``): a list of entries, each line a
  service wrote to its stdout or stderr one entry with its ``textPayload``, **newest first**,
  so a traceback comes upside down.

:func:`log_text` gives the log as it was written, line by line, oldest first; what a CI runner
wrote around the step's output (its checkout, echoes and verdict) is ``ci_runners``'s to leave
out, and a single record a log service wraps is ``log_records``'.
"""

from __future__ import annotations

import json
import re
from typing import Any

# CircleCI's MCP answer: a header per job and per step, each step's streams on a ``Logs:`` line.
_CIRCLECI_HEAD = re.compile(r"^(?:=====|Job: .*|Step: .*|No logs found\.|No steps found\.)$")
_CIRCLECI_LOGS = "Logs: {"


def log_text(text: str) -> tuple[str, str] | None:
    """The log ``text`` holds as a CI system's or a log service's JSON answer, line by line,
    and whose it is (``CI log``, ``log``); None when it is no such answer."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            answer = json.loads(stripped)
        except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
            return None
        if (lines := _service_lines(answer)) is not None:
            return lines, "log"
        return None if (lines := _answer_lines(answer)) is None else (lines, "CI log")
    if _CIRCLECI_LOGS in text and (lines := _circleci_mcp(text)) is not None:
        return lines, "CI log"
    return None


def _service_lines(answer: Any) -> str | None:
    """The lines of CloudWatch Logs' events or of a Logs Insights query's results, or of Cloud
    Logging's entries (two or more, each a line of text; one entry alone is a record), oldest
    first."""
    timed = _cloudwatch(answer) if isinstance(answer, dict) else _cloud_logging(answer)
    if timed is None:
        return None
    # Newest first: gcloud's default order (also when every entry shares one instant), and a
    # Logs Insights query's ``sort @timestamp desc``.
    first, last = timed[0][0], timed[-1][0]
    if first > last or (first == last and not isinstance(answer, dict)):
        timed.reverse()
    timed.sort(key=lambda line: line[0])  # stable: lines that share an instant keep their order
    return "\n".join(line.rstrip("\r\n") for _, line in timed)


def _cloudwatch(answer: dict[str, Any]) -> list[tuple[tuple[str, str], str]] | None:
    """CloudWatch Logs' events (``filter-log-events``, ``get-log-events``: a time in
    milliseconds and a message each), or a Logs Insights query's results: as the API returns
    them (``results``, each a list of ``{"field", "value"}``) or as AWS's CloudWatch MCP server
    does (each a ``{field: value}`` object), with an ``@message`` and an ``@timestamp``."""
    events = answer.get("events")
    if isinstance(events, list) and events and all(_event(e) for e in events):
        return [((f"{e['timestamp']:020d}", ""), e["message"]) for e in events]
    results = answer.get("results")
    if not isinstance(results, list) or not results:
        return None
    rows = [_row(r) for r in results]
    if not all(
        isinstance(r.get("@message"), str) and isinstance(r.get("@timestamp"), str) for r in rows
    ):
        return None
    return [(_instant(r["@timestamp"]), r["@message"]) for r in rows]


def _row(result: Any) -> dict[str, Any]:
    if isinstance(result, list):  # the API's: ``[{"field": "@message", "value": …}, …]``
        pairs = [p for p in result if isinstance(p, dict) and isinstance(p.get("field"), str)]
        return {p["field"]: p.get("value") for p in pairs}
    return result if isinstance(result, dict) else {}


def _cloud_logging(answer: Any) -> list[tuple[tuple[str, str], str]] | None:
    """Cloud Logging's entries of text (``gcloud logging read --format=json``)."""
    if not isinstance(answer, list) or len(answer) < 2:
        return None
    if not all(
        isinstance(e, dict)
        and isinstance(e.get("textPayload"), str)
        and isinstance(e.get("timestamp"), str)
        for e in answer
    ):
        return None
    return [(_instant(e["timestamp"]), e["textPayload"]) for e in answer]


def _event(event: Any) -> bool:
    """A CloudWatch Logs event: its message and its time in milliseconds."""
    if not isinstance(event, dict) or not isinstance(event.get("message"), str):
        return False
    stamp = event.get("timestamp")
    return isinstance(stamp, int) and not isinstance(stamp, bool) and stamp >= 0


def _instant(stamp: str) -> tuple[str, str]:
    """A time stamp (RFC 3339; Logs Insights' ``2024-05-01 10:12:03.117``) as a key that orders
    it: its second, then its fraction (as many as nine digits, so ``03.1Z`` and
    ``03.117482915Z`` compare as numbers)."""
    second, _, rest = stamp.partition(".")
    fraction = re.match(r"\d*", rest)
    return second[:19].replace("T", " "), (fraction.group(0) if fraction else "").ljust(9, "0")


def _strings(items: Any, key: str | None = None) -> list[str] | None:
    """``items`` as a list of strings (each item's ``key`` when given); None unless every item
    is one."""
    if not isinstance(items, list) or not items:
        return None
    if key is not None:
        items = [item.get(key) if isinstance(item, dict) else None for item in items]
    return items if all(isinstance(item, str) for item in items) else None


def _answer_lines(answer: Any) -> str | None:
    if isinstance(answer, dict):
        lines = _strings(answer.get("lines"))  # Jenkins'
        if lines is None:
            lines = _strings(answer.get("entries"), "c")  # Buildkite's
        if lines is None:
            lines = _github_logs(answer)
        return None if lines is None else "\n".join(lines)
    if (lines := _strings(answer)) is not None and len(lines) > 1:  # Azure DevOps'
        return "\n".join(lines)
    # CircleCI's API: the step's terminal in pieces, each its stream's (``out``, ``err``)
    if not isinstance(answer, list) or not all(
        isinstance(piece, dict) and piece.get("type") in ("out", "err") for piece in answer
    ):
        return None
    pieces = _strings(answer, "message")
    return None if pieces is None else "".join(pieces)


def _github_logs(answer: dict[str, Any]) -> list[str] | None:
    """The job logs GitHub's MCP server answers ``get_job_logs`` with (``return_content``): a
    job's ``logs_content``, or each failed job's in ``logs``."""
    if isinstance(answer.get("logs_content"), str):
        return [answer["logs_content"]]
    jobs = answer.get("logs")
    if not isinstance(jobs, list):
        return None
    contents = [
        j["logs_content"]
        for j in jobs
        if isinstance(j, dict) and isinstance(j.get("logs_content"), str)
    ]
    return contents or None


def _circleci_mcp(text: str) -> str | None:
    """The streams of each step a CircleCI MCP answer reports, its headers left out."""
    kept: list[str] = []
    found = False
    for line in text.split("\n"):
        if line.startswith(_CIRCLECI_LOGS):
            try:
                streams = json.loads(line.removeprefix("Logs: "))
            except (ValueError, RecursionError):
                kept.append(line)
                continue
            if isinstance(streams, dict):
                found = True
                for stream in (streams.get("output"), streams.get("error")):
                    if isinstance(stream, str) and stream.strip():
                        kept.append(stream.rstrip("\r\n"))
                continue
        if not _CIRCLECI_HEAD.match(line):
            kept.append(line)
    return "\n".join(kept) if found else None
