"""A stack trace a structured logger stored inside a record, printed again as the runtime
printed it.

A service that logs JSON keeps an error's trace in one string of the record (structlog's
``exception``, python-json-logger's ``exc_info``, pino's and bunyan's ``err.stack``, logstash's
``stack_trace``, zap's ``stacktrace``), its line breaks escaped as ``\\n`` (Log4j2's
``JsonLayout`` keeps it as data, ``thrown``: ``tracker_reports.thrown_trace``); a Jupyter notebook
keeps a cell's error as a list of strings (``traceback``, terminal colours and all). Pasted
from a log viewer, the record is one line, so none of the trace's frames starts a line and no
reader of a trace sees one; copied out of the viewer's field alone, the trace is one line of
``\\n`` escapes. Either way the user is asking about that trace.

:func:`unfolded` prints each such trace under its record, line by line, and takes it out of the
record, which stays for what it also says (its message, read by ``programs.log_lines``). A
value is a trace when the frames readers find frames in it (``stacktraces.parse_frames``), so a
record whose strings merely hold line breaks is left as it is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .stacktraces import parse_frames, plain
from .tracker_reports import thrown_trace

_MAX_DEPTH = 4  # pino nests the error one level down, a notebook two; deeper is no log's
_ESCAPE = re.compile(r'\\([nt"\\r])')  # JSON's escapes a trace holds, read left to right
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": ""}


def unfolded(text: str) -> str:
    """``text`` with each JSON log record's trace printed under the record, and each line that
    is a trace with its line breaks escaped unescaped."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}") and "\n" in stripped:
        whole = _record(stripped)  # one record, pretty-printed over several lines
        if whole is not None:
            return whole
    lines = []
    for line in text.split("\n"):
        record = _record(line.strip()) if line.lstrip().startswith("{") else None
        lines.append(_unescaped(line) if record is None else record)
    return "\n".join(lines)


def _record(line: str) -> str | None:
    """The record's line without its traces, each trace under it; None when it holds none."""
    if not line.endswith("}") or ("\\n" not in line and "[" not in line):
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
        return None
    if not isinstance(record, dict):
        return None
    if (error := _lambda_error(record)) is not None:
        return error  # the rest is the invocation's (its request id), nothing the code wrote
    traces: list[str] = []
    rest = _without_traces(record, traces, 0)
    if not traces:
        return None
    return "\n".join([json.dumps(rest, ensure_ascii=False), *traces])


def _lambda_error(record: dict[str, Any]) -> str | None:
    """The failure an AWS Lambda function's error response reports (what ``aws lambda invoke``
    and the console's test return), as its runtime prints it. Its type, message and frames are
    separate keys, so the frames alone name no error, and the rest (the request's id) is the
    invocation's, nothing the code wrote. Python's ``stackTrace`` holds one ``  File …`` entry
    per frame, printed under ``Traceback (most recent call last):`` with the error line last;
    Java's holds ``Class.method(File.java:12)`` entries, printed under the error line; Node's
    ``trace`` is the error's own stack, error line first."""
    kind, message = record.get("errorType"), record.get("errorMessage")
    stack = record.get("stackTrace", record.get("trace"))
    if not (isinstance(kind, str) and isinstance(message, str) and isinstance(stack, list)):
        return None
    if not stack or not all(isinstance(s, str) for s in stack):
        return None
    frames = "".join(s if s.endswith("\n") else s + "\n" for s in stack)
    if not parse_frames(frames):
        return None
    error = f"{kind}: {message}"
    if '  File "' in frames:
        return f"Traceback (most recent call last):\n{frames}{error}"
    if frames.startswith(kind):  # Node's: the stack starts with its error line
        return frames.rstrip()
    return f"{error}\n{frames.rstrip()}"


def _without_traces(value: dict[str, Any], traces: list[str], depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        trace = thrown_trace(item) if isinstance(item, dict) else _trace(item)
        if trace is not None:
            traces.append(trace)
        elif isinstance(item, dict) and depth < _MAX_DEPTH:
            out[key] = _without_traces(item, traces, depth + 1)
        elif isinstance(item, list) and depth < _MAX_DEPTH:  # a notebook's cells, their outputs
            out[key] = [
                _without_traces(x, traces, depth + 1) if isinstance(x, dict) else x for x in item
            ]
        else:
            out[key] = item
    return out


def _trace(item: Any) -> str | None:
    """The trace a value holds: one string, or a list of them (a notebook's error output, one
    per frame, its terminal colours kept as escapes); None for any other value."""
    if isinstance(item, list) and item and all(isinstance(t, str) for t in item):
        item = "\n".join(item)
    if not isinstance(item, str) or "\n" not in item:
        return None
    text = plain(item)
    return text.strip("\n") if parse_frames(text) else None


def _unescaped(line: str) -> str:
    """A trace pasted with its line breaks escaped (``\\n`` between frames, ``\\"`` around a
    path), unescaped when that is what makes its frames readable; ``line`` otherwise."""
    if "\\n" not in line or parse_frames(line):
        return line
    candidate = _ESCAPE.sub(lambda m: _ESCAPES[m[1]], line)
    return candidate if parse_frames(candidate) else line
