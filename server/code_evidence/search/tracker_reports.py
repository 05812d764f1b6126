"""A failure as an error tracker reports it, printed again as its runtime printed it.

An error tracker does not keep a trace's text: Sentry's SDKs send each frame as data (file,
function, line, the source around it), oldest first in every language, and a chain of
exceptions cause first; Rollbar's keep frames oldest first too, a chain newest first;
Bugsnag's keep frames innermost first, the exception raised before its causes. What reaches a
user or an agent is a rendering of that data:

- the event's JSON, as Sentry's page shows it (``exception.values[].stacktrace.frames``,
  snake_case) or as its API returns it (``entries[]`` of type ``exception``, camelCase,
  ``context`` as ``[line, text]`` pairs);
- the answer of Sentry's MCP server about an issue (``get_issue_details``), in Markdown: the
  issue's header, each exception (the last raised first) with its frames in a fence, one line
  each (``  File "click/core.py", line 783, in invoke`` for Python, ``at com.x.Foo.bar(
  Foo.java:12)`` for Java, ``src/app.js:12:7 (handler)`` for JavaScript, Ruby's ``from``,
  PHP's ``path(line): fn()``, ``at fn (path:line:col)`` otherwise), oldest first whatever the
  language, then the event's tags and contexts and advice to the agent;
- a Rollbar occurrence's JSON (``body.trace`` or ``body.trace_chain``, each trace's
  ``frames`` and ``exception``), as its API returns it, as its payload, or inside the item
  Rollbar's MCP server answers (``get-item-details``: the item's fields and its last
  ``occurrence``);
- a Bugsnag event's JSON (``exceptions[]``, each ``errorClass``, ``message`` and its
  ``stacktrace``), as a notifier sends it (``events``), as the Data Access API returns it
  (snake_case), or inside the error the SmartBear MCP server's ``Get Error`` answers
  (``latest_event``).

Read as they are, the frames of a Java or JavaScript rendering come in the reverse of the
order their runtime prints (so the outermost frame looked innermost), JavaScript's are no
frame any reader knows, and the tags' and contexts' values (a trace id, ``"http.server"``)
became text the answer had to contain. :func:`event_traces` and :func:`mcp_traces` print each
exception as its runtime would (the language told by its frames' files, else the platform),
innermost where that runtime puts it, and leave the rest of the report out: the failure is
all it says about the code.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..index.chunk.languages import detect_language

# The MCP server's Markdown: its heading for the issue, each exception's, each frame fence.
_MCP_ISSUE = re.compile(r"^# Issue \S+ in \*\*", re.M)
_SECTION = re.compile(r"^### (?:Error|(.+))$", re.M)
_FENCE = re.compile(r"^```\n(.*?)\n```$", re.M | re.S)
_STACK_HEAD = re.compile(
    r"^\*\*(?:Full )?Stacktrace:\*\*\s*(?:\n─+)?\n```\n(.*?)\n```$", re.M | re.S
)
# Its frame headers, language by language (getsentry/sentry-mcp, ``formatFrameHeader``).
_MCP_PY = re.compile(r'^  File "(.+)"(?:, line (\d+))?, in (.*)$')
_MCP_JAVA = re.compile(r"^at (.+)\.([^.(]+)\((.+?)(?::(\d+))?\)$")
_MCP_JS = re.compile(r"^(\S.*?):(\d+)(?::(\d+))?(?: \((.+)\))?$")
_MCP_RUBY = re.compile(r"^    from (.+?)(?::(\d+):in)?(?: `(.+)`)?$")
_MCP_PHP = re.compile(r"^(?:#\d+ )?(\S+\.php)(?:\((\d+)\))?: (.+)\(\)$")
_MCP_OTHER = re.compile(r"^    at (.+?) \((.+?)(?::(\d+))?(?::(\d+))?\)$")

# The grammar a frame's file is (``index.chunk.languages``) to the runtime whose print it gets.
_RUNTIMES = {"typescript": "javascript", "tsx": "javascript", "kotlin": "java", "scala": "java"}
# A tracker's platform (Sentry's; Bugsnag's exception type) to the runtime whose print it gets.
_PLATFORMS = {
    "node": "javascript",
    "nodejs": "javascript",
    "browserjs": "javascript",
    "android": "java",
    "cocoa": "other",
    "native": "other",
}
_MAX_CAUSES = 8  # an exception and the ones that caused it, as far as a record nests them


@dataclass(frozen=True)
class TrackedFrame:
    """One frame as a tracker keeps it."""

    path: str
    line: int | None
    function: str | None
    module: str | None = None  # a Java frame's class; a Python or Go frame's package
    column: int | None = None
    code: str | None = None  # the frame's source line, when the tracker read it


@dataclass(frozen=True)
class TrackedException:
    type: str
    value: str
    frames: list[TrackedFrame]  # oldest first, as trackers keep them


def reported(text: str) -> str | None:
    """``text`` with the error tracker's report it holds (a Sentry event's JSON, the Sentry MCP
    server's answer, a Rollbar occurrence or item, a Bugsnag event) replaced by the failure
    printed as its runtime prints it; what the user wrote before the report stays. None when it
    holds no report with frames."""
    start = _MCP_ISSUE.search(text)
    if start is not None:
        traces = mcp_traces(text[start.start() :])
        return None if traces is None else text[: start.start()] + traces
    brace = re.search(r"^\s*\{", text, re.M)
    if brace is None or not text.rstrip().endswith("}"):
        return None
    try:
        record = json.loads(text[brace.start() :])
    except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
        return None
    traces = event_traces(record) if isinstance(record, dict) else None
    return None if traces is None else text[: brace.start()] + "\n\n".join(traces)


def event_traces(record: dict[str, Any]) -> list[str] | None:
    """Each exception of a Sentry event (stored or API JSON), a Rollbar occurrence or a Bugsnag
    event as its runtime prints it, cause first; None when ``record`` is no event with
    exceptions."""
    platform = record.get("platform") if isinstance(record.get("platform"), str) else None
    values = _event_values(record)
    exceptions = [e for e in map(_exception, values) if e is not None]
    if not exceptions and (occurrence := _rollbar_data(record)) is not None:
        exceptions, platform = _rollbar_exceptions(occurrence), _first(occurrence, "language")
    if not exceptions and (errors := _bugsnag_errors(record)) is not None:
        exceptions = [e for e in map(_bugsnag_exception, errors) if e is not None]
        kinds = [e.get("type") for e in errors if isinstance(e.get("type"), str)]
        platform = kinds[0] if kinds else platform
    if not any(e.frames for e in exceptions):
        return None
    return [printed(e, platform) for e in exceptions]


def _rollbar_data(record: dict[str, Any]) -> dict[str, Any] | None:
    """A Rollbar occurrence's data: the record itself (the payload), or under the item's
    ``occurrence`` (Rollbar's MCP server's ``get-item-details``) or the API's ``result``."""
    for outer in (record, record.get("occurrence"), record.get("result")):
        if not isinstance(outer, dict):
            continue
        for data in (outer, outer.get("data")):
            if isinstance(data, dict) and isinstance(data.get("body"), dict):
                body = data["body"]
                if isinstance(body.get("trace"), dict) or isinstance(body.get("trace_chain"), list):
                    return data
    return None


def _rollbar_exceptions(data: dict[str, Any]) -> list[TrackedException]:
    """Rollbar keeps a trace's frames oldest first (``filename``, ``lineno``, ``method``,
    ``code``) and a chain of exceptions newest first."""
    body = data["body"]
    chain = body.get("trace_chain")
    traces = chain if isinstance(chain, list) else [body.get("trace")]
    exceptions = []
    for trace in reversed(traces[:_MAX_CAUSES]):
        if not isinstance(trace, dict):
            continue
        error = trace.get("exception") if isinstance(trace.get("exception"), dict) else {}
        raw = trace.get("frames") if isinstance(trace.get("frames"), list) else []
        frames = [f for f in map(_frame, raw) if f is not None]
        kind, value = _first(error, "class") or "", _first(error, "message") or ""
        exceptions.append(TrackedException(kind, value, frames))
    return exceptions


def _bugsnag_errors(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A Bugsnag event's exceptions, cause first: from the event itself (the Data Access API's
    event, snake_case), from the error the SmartBear MCP server's ``Get Error`` answers
    (``latest_event``), or from a notifier's payload (``events``, camelCase). Bugsnag lists
    the exception raised first and the ones that caused it after it."""
    events = record.get("events")
    for event in (
        record,
        record.get("latest_event"),
        events[0] if isinstance(events, list) and events else None,
    ):
        errors = event.get("exceptions") if isinstance(event, dict) else None
        if isinstance(errors, list) and any(
            isinstance(e, dict) and isinstance(e.get("stacktrace"), list) for e in errors
        ):
            return [e for e in reversed(errors[:_MAX_CAUSES]) if isinstance(e, dict)]
    return None


def _bugsnag_exception(error: dict[str, Any]) -> TrackedException | None:
    """Bugsnag keeps a trace's frames innermost first (``file``, ``lineNumber``, ``method``,
    ``code``: the lines around it by number)."""
    raw = error.get("stacktrace")
    if not isinstance(raw, list):
        return None
    frames = [f for f in map(_frame, reversed(raw)) if f is not None]
    kind = _first(error, "errorClass", "error_class") or ""
    return TrackedException(kind, _first(error, "message") or "", frames)


def _event_values(record: dict[str, Any]) -> list[Any]:
    exception = record.get("exception")
    if isinstance(exception, dict) and isinstance(exception.get("values"), list):
        return exception["values"]
    entries = record.get("entries")
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("type") == "exception":
            data = entry.get("data")
            if isinstance(data, dict) and isinstance(data.get("values"), list):
                return data["values"]
    return []


def _exception(value: Any) -> TrackedException | None:
    if not isinstance(value, dict):
        return None
    stack = value.get("stacktrace")
    raw = stack.get("frames") if isinstance(stack, dict) else None
    frames = [f for f in map(_frame, raw if isinstance(raw, list) else ()) if f is not None]
    return TrackedException(str(value.get("type") or ""), str(value.get("value") or ""), frames)


def _frame(value: Any) -> TrackedFrame | None:
    """One frame as a tracker keeps it: Sentry's (``abs_path``, ``lineno``, ``function``,
    ``module``, ``colno``, ``context_line`` or the API's ``context`` pairs), Rollbar's
    (``filename``, ``lineno``, ``method``, ``class_name``, ``colno``, ``code``) or Bugsnag's
    (``file``, ``lineNumber`` or ``line_number``, ``method``, a column as a number or its
    digits, ``code``: the lines around it by number)."""
    if not isinstance(value, dict):
        return None
    path = _first(value, "abs_path", "absPath", "filename", "file")
    if path is None:
        return None
    line = _number(_any(value, "lineno", "lineNo", "lineNumber", "line_number"))
    column = _any(value, "colno", "colNo", "columnNumber", "column_number")
    if isinstance(column, str):
        column = int(column) if column.isdigit() else None
    code = _first(value, "context_line", "code")
    context, around = value.get("context"), value.get("code")
    if code is None and isinstance(context, list):
        code = next((c[1] for c in context if isinstance(c, list) and c[:1] == [line]), None)
    if code is None and isinstance(around, dict):
        code = around.get(str(line))
    return TrackedFrame(
        path,
        line,
        _first(value, "function", "method"),
        _first(value, "module", "class_name"),
        _number(column),
        code if isinstance(code, str) else None,
    )


def _any(value: dict[str, Any], *keys: str) -> Any:
    """The value of the first of ``keys`` that ``value`` has."""
    return next((value[k] for k in keys if k in value), None)


def _first(value: dict[str, Any], *keys: str) -> str | None:
    return next((value[k] for k in keys if isinstance(value.get(k), str) and value[k]), None)


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def thrown_trace(value: dict[str, Any]) -> str | None:
    """The trace a Java logger's JSON record keeps as data, printed as Java prints it: Log4j2's
    ``JsonLayout`` writes the exception as ``thrown`` (``name``, ``message``, its frames in
    ``extendedStackTrace``, innermost first, each ``class``, ``method``, ``file``, ``line``;
    the exception that caused it in ``cause``, printed under ``Caused by:``). None when
    ``value`` is no such exception."""
    printed_parts: list[str] = []
    current: Any = value
    while isinstance(current, dict) and len(printed_parts) < _MAX_CAUSES:
        raw = current.get("extendedStackTrace")
        if not isinstance(current.get("name"), str) or not isinstance(raw, list):
            break
        frames = [
            TrackedFrame(f["file"], _number(f.get("line")), _first(f, "method"), _first(f, "class"))
            for f in reversed(raw)  # kept oldest first, as a tracker keeps them
            if isinstance(f, dict) and isinstance(f.get("file"), str)
        ]
        exception = TrackedException(current["name"], str(current.get("message") or ""), frames)
        text = printed(exception, "java")
        printed_parts.append(f"Caused by: {text}" if printed_parts else text)
        current = current.get("cause")
    return "\n".join(printed_parts) if printed_parts else None


def mcp_traces(text: str) -> str | None:
    """The failure a Sentry MCP server's answer about an issue shows, as its runtime prints
    it; None when ``text`` is no such answer."""
    if not _MCP_ISSUE.search(text) or "Stacktrace:**" not in text:
        return None
    platform = re.search(r"^\*\*Platform\*\*: (\S+)", text, re.M)
    exceptions = []
    sections = list(_SECTION.finditer(text))
    for i, section in enumerate(sections):
        body = text[section.end() : sections[i + 1].start() if i + 1 < len(sections) else None]
        stack = _STACK_HEAD.search(body)
        if stack is None and "**Stacktrace:**" not in body:
            continue  # the tags, the contexts, the request: no exception
        if section.group(1) is not None:
            heading = section.group(1)
        else:
            fence = _FENCE.search(body)
            heading = (
                fence.group(1) if fence and (not stack or fence.start() < stack.start()) else ""
            )
        if not heading:
            continue
        kind, _, value = heading.partition(": ")
        frames = _mcp_frames(stack.group(1)) if stack else []
        exceptions.append(TrackedException(kind, value, frames))
    if not any(e.frames for e in exceptions):
        return None
    language = platform.group(1) if platform else None
    return "\n\n".join(printed(e, language) for e in reversed(exceptions))  # cause first


def _mcp_frames(block: str) -> list[TrackedFrame]:
    frames: list[TrackedFrame] = []
    for line in block.split("\n"):
        frame = _mcp_frame(line)
        if frame is not None:
            frames.append(frame)
        elif frames and line.strip() and frames[-1].code is None:  # the frame's source line
            last = frames[-1]
            frames[-1] = TrackedFrame(
                last.path, last.line, last.function, last.module, last.column, line
            )
    return frames


def _mcp_frame(line: str) -> TrackedFrame | None:
    if m := _MCP_PY.match(line):
        return TrackedFrame(m[1], _int(m[2]), m[3])
    if m := _MCP_JAVA.match(line):
        return TrackedFrame(m[3], _int(m[4]), m[2], m[1])
    if m := _MCP_RUBY.match(line):
        return TrackedFrame(m[1], _int(m[2]), m[3])
    if m := _MCP_OTHER.match(line):
        return TrackedFrame(m[2], _int(m[3]), m[1], None, _int(m[4]))
    if m := _MCP_PHP.match(line):
        return TrackedFrame(m[1], _int(m[2]), m[3])
    if (m := _MCP_JS.match(line)) and "." in m[1].rsplit("/", 1)[-1]:
        return TrackedFrame(m[1], _int(m[2]), m[4], None, _int(m[3]))
    return None


def _int(text: str | None) -> int | None:
    return int(text) if text else None


def language(exception: TrackedException, platform: str | None) -> str:
    """The runtime whose print to use: the innermost frame's file says, else the platform."""
    for frame in reversed(exception.frames):
        grammar = detect_language(frame.path.split("?")[0])
        if grammar is not None:
            return _RUNTIMES.get(grammar, grammar)
    return _PLATFORMS.get(platform or "", platform or "other")


def printed(exception: TrackedException, platform: str | None) -> str:
    """``exception`` as its runtime prints it."""
    kind = language(exception, platform)
    error = f"{exception.type}: {exception.value}" if exception.value else exception.type
    inner_first = list(reversed(exception.frames))
    if kind == "python":
        lines = ["Traceback (most recent call last):"]
        for f in exception.frames:
            lines.append(f'  File "{f.path}", line {f.line or 0}, in {f.function or "<module>"}')
            if f.code and f.code.strip():
                lines.append("    " + f.code.strip())
        return "\n".join([*lines, error])
    if kind == "java":
        owner = [f"{f.module}." if f.module else "" for f in inner_first]
        at = [
            f"\tat {o}{f.function}({f.path.rsplit('/', 1)[-1]}:{f.line})"
            for o, f in zip(owner, inner_first, strict=True)
        ]
        return "\n".join([error, *at])
    if kind == "ruby":
        places = [f"{f.path}:{f.line}:in '{f.function or 'block'}'" for f in inner_first]
        first = f"{places[0]}: {exception.value} ({exception.type})" if places else error
        return "\n".join([first, *(f"\tfrom {p}" for p in places[1:])])
    if kind == "php":
        stack = [
            f"#{i} {f.path}({f.line}): {f.function or '{main}'}()"
            for i, f in enumerate(inner_first)
        ]
        return "\n".join([f"PHP Fatal error:  Uncaught {error}", "Stack trace:", *stack])
    if kind == "rust":
        lines = [f"thread 'main' panicked at {exception.value or exception.type}"]
        lines.append("stack backtrace:")
        for i, f in enumerate(inner_first):
            lines += [
                f"  {i}: {f.function or '<unknown>'}",
                f"             at {f.path}:{f.line}:{f.column or 1}",
            ]
        return "\n".join(lines)
    if kind == "go":
        lines = [f"panic: {exception.value or exception.type}", "", "goroutine 1 [running]:"]
        for f in inner_first:
            name = f"{f.module}.{f.function}" if f.module else f.function or "main"
            lines += [f"{name}(...)", f"\t{f.path}:{f.line} +0x0"]
        return "\n".join(lines)
    frames = []
    for f in inner_first:
        place = ":".join(str(x) for x in (f.path, f.line, f.column) if x is not None)
        frames.append(f"    at {f.function} ({place})" if f.function else f"    at {place}")
    return "\n".join([error, *frames])
