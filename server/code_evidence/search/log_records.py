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

An agent reads a record back from a log service's API, pretty-printed and wrapped in the
service's own fields: Datadog's search answers with ``data``, each event's record in its
``attributes``; ``gcloud logging read --format=json`` prints a list of entries, the record in
``jsonPayload`` or ``textPayload`` beside the entry's id, name and resource labels. Read line
by line, every key and id of that wrapping was text the user typed (must-match), and its words
were searched for. Such a record is read as its message, its error and its trace; a logger's
own record pretty-printed is printed on one line, which ``programs.log_lines`` reads as the
log line it is. (A log a line per event or entry is ``fetched_logs``'.)
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import programs
from .stacktraces import parse_frames, plain
from .tracker_reports import thrown_trace

_MAX_DEPTH = 4  # pino nests the error one level down, a notebook two; deeper is no log's
_JSON_ENDS = (("{", "}"), ("[", "]"))  # a record, or a list of them
_ESCAPE = re.compile(r'\\([nt"\\r])')  # JSON's escapes a trace holds, read left to right
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": ""}


_TRACE_NOTE = "read the trace a JSON log record holds as the runtime printed it"
_MESSAGE_NOTE = "read the message of the log record the JSON answer holds"
_LINE_NOTE = "read the JSON log record on one line"


def unfolded(text: str) -> tuple[str, str | None]:
    """``text`` with each JSON log record's trace printed under the record, and each line that
    is a trace with its line breaks escaped unescaped; and a note on what was read so (None
    when nothing was). A record a log service's answer wraps is read as its message (and its
    trace); a logger's record pretty-printed over several lines is printed on one line, so it
    reads as the log line it is (``programs.log_lines``)."""
    stripped = text.strip()
    if (stripped[:1], stripped[-1:]) in _JSON_ENDS and "\n" in stripped:
        whole = _record(stripped, whole=True)  # one answer, pretty-printed over several lines
        if whole is not None:
            return whole
    lines = []
    note = None
    for line in text.split("\n"):
        record = _record(line.strip()) if line.lstrip()[:1] in ("{", "[") else None
        if record is None:
            unescaped = _unescaped(line)
            note = note or (_TRACE_NOTE if unescaped != line else None)
            lines.append(unescaped)
        else:
            lines.append(record[0])
            note = note or record[1]
    return "\n".join(lines), note


def _record(line: str, whole: bool = False) -> tuple[str, str] | None:
    """The record's line without its traces, each trace under it, and the note that says so
    (a record pretty-printed as the ``whole`` paste is printed on one line even when it holds
    none); None when it holds none.

    Of a record a log service's answer wraps (``programs.wrapped_record``), only the record's
    message and error are read, then its traces: the rest is the service's (the event's or
    entry's id, its times, tags and resource labels), nothing the code wrote."""
    if (line[:1], line[-1:]) not in _JSON_ENDS:
        return None
    if not whole and "\\n" not in line and "[" not in line:
        return None  # no escaped line break, no list: no trace, and no answer to read
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
        return None
    if isinstance(record, dict) and (error := _lambda_error(record)) is not None:
        return error, _TRACE_NOTE  # the rest is the invocation's (its request id)
    traces: list[str] = []
    if (inner := programs.wrapped_record(record)) is not None:
        texts = programs.texts_of(_without_traces(inner, traces, 1))
        return "\n".join([*texts, *traces]), _TRACE_NOTE if traces else _MESSAGE_NOTE
    if not isinstance(record, dict):
        return None
    rest = _without_traces(record, traces, 0)
    if traces:
        return "\n".join([json.dumps(rest, ensure_ascii=False), *traces]), _TRACE_NOTE
    if whole and programs.record_texts(record) is not None:
        return json.dumps(record, ensure_ascii=False), _LINE_NOTE
    return None


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
