"""What a program prints around an error it reports without a trace: a printed error, a log line.

Go returns its errors: a program prints the one it got (``fmt.Println(err)``, ``log.Fatal(err)``,
cobra's ``Error: …``) and exits. Pasted, that is the message and what the program and its tools
print around it: ``go run``'s ``exit status 1``, the standard ``log`` package's date and time,
cobra's hint ``Run 'app --help' for usage.`` and its usage block. A service logs its errors
instead, one structured line each: JSON (zap, logrus, pino, bunyan, structlog, slog) or logfmt
(``time=… level=error msg="…" error="…"``: logrus's text, go-kit, slog). None of it is something
the user typed (``'app --help'`` is a value formatted into cobra's hint; a JSON line's keys and
escaped quotes are the logger's), and none of it but the messages says where the error comes
from: :func:`bare_message` reads the message alone out of a printed error, :func:`log_lines`
reads a log line's message and error (a JSON record too as a log service's API wraps it:
:func:`record_texts`), and :func:`printed_by` tells ``stacktraces.typed_text`` which lines are
printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

# ``go run``'s own last line when the program fails.
_EXIT_STATUS = re.compile(r"^exit status \d+\s*$", re.M)
# The standard ``log`` package's prefix (``log.Fatal``): date and time, microseconds optional.
_LOG_TIME = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d(?:\.\d+)? ")
# cobra's lines around an error: the hint under it, the usage block's headers and its closing
# line (every other line of the block is indented).
_COBRA = re.compile(
    r"^(?:Run '[^'\n]+ --help' for usage\.|Usage:|Aliases:|Examples?:|Available Commands:"
    r"|(?:Global )?Flags:|Additional help topics:|Did you mean this\?"
    r"|Use \"[^\"\n]+ \[command\] --help\" for more information about a command\.)\s*$",
    re.M,
)
MIN_MESSAGE, MAX_MESSAGE = 12, 300  # characters of a line read as a pasted message


MAX_MESSAGE_LINES = 4  # a message a literal writes over lines (``"…\n"``), pasted whole


def bare_message(raw: str) -> str | None:
    """The message a question holds when it is printed text and nothing else (a Go program's
    output, with ``go run``'s exit line and ``log``'s time left out): one line, or up to
    :data:`MAX_MESSAGE_LINES` that one literal may have written with its line breaks (httpx's
    ``Redirect response '301 …' for url '…'`` and ``Redirect location: '…'``), joined by
    spaces as a template reads ``\n``. None for more lines, or for lines too short or too
    long to be a message."""
    lines = [line for line in _EXIT_STATUS.sub("", raw).splitlines() if line.strip()]
    if not 1 <= len(lines) <= MAX_MESSAGE_LINES:
        return None
    printed = [_LOG_TIME.sub("", line.strip()) for line in lines]
    if not all(len(line) <= MAX_MESSAGE for line in printed):
        return None
    message = " ".join(printed)
    return message if MIN_MESSAGE <= len(message) <= MAX_MESSAGE * len(lines) else None


# A structured log line's keys: its message (the template the program logged), the error it
# carries (another place's message: ``log.WithError(err).Error("request failed")``), and the
# keys that make an object a log record rather than any JSON a question quotes.
MESSAGE_KEYS = ("msg", "message", "event", "@message")
ERROR_KEYS = ("error", "err", "exception", "error.message")
RECORD_KEYS = frozenset(
    {"level", "lvl", "severity", "levelname", "time", "ts", "timestamp", "@timestamp", "logger"}
)
# How deep a log service's answer keeps its record (Datadog's search: the answer, ``data``, an
# event, its ``attributes``), and how many records of a list are read for one.
_ENVELOPE_DEPTH = 3
_RECORDS_READ = 3
# Where a JSON record's message and error strings are (a serialised error's ``message`` too).
_TEXT_KEYS = "|".join(re.escape(k) for k in MESSAGE_KEYS + ERROR_KEYS)
_JSON_TEXT = re.compile(rf'"(?:{_TEXT_KEYS})"\s*:\s*("(?:[^"\\\n]|\\.)*")')
# logfmt: ``key=value`` pairs, a value bare or in double quotes with backslash escapes.
_LOGFMT_PAIR = re.compile(r'(?:^|(?<=\s))([\w.@-]+)=("(?:[^"\\\n]|\\.)*"|[^\s"]*)')


# A log line whose logger writes its time, level and name before the message: one pattern per
# common format, its message in a group named after it.
_TIME = r"\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
_LEVEL = r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|SEVERE|PANIC|DPANIC)"
_PREFIXED = re.compile(
    "|".join(
        rf"(?:{p})"
        for p in (
            # Python's logging by default (``ERROR:root:…``)
            rf"^{_LEVEL}:[\w.]*:(?P<python>.+)$",
            # Monolog's line formatter (its context and extra after: :func:`_monolog_message`)
            rf"^\[{_TIME}\] [\w.-]+\.(?:{_LEVEL}|ALERT|EMERGENCY): (?P<monolog>.+)$",
            # Ruby's Logger (``E, [time #pid] ERROR -- progname: …``)
            r"^[DIWEFAU], \[[^\]\n]+\] +[A-Z]+ -- [^:\n]*: (?P<ruby>.+)$",
            # glog and klog (``E1203 17:42:26.123456   42 main.go:42] …``)
            r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w./-]+:\d+\] (?P<glog>.+)$",
            # java.util.logging's simple format: the time, class and method, then the level
            r"^[A-Z][a-z]{2} \d{1,2}, \d{4} \d{1,2}:\d\d:\d\d [AP]M \S+ \S+\n"
            r"(?:SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST): (?P<jul>.+)$",
            # logback's default (``17:42:26.123 [main] ERROR com.example.App - …``)
            rf"^\d\d:\d\d:\d\d\.\d+ \[[^\]\n]+\] {_LEVEL} +\S+ - (?P<logback>.+)$",
            # Python's ``%(asctime)s - %(name)s - %(levelname)s - %(message)s``
            rf"^{_TIME} - [\w.]+ - {_LEVEL} - (?P<asctime>.+)$",
            # Rust's env_logger (``[2026-12-03T17:42:26Z ERROR app::db] …``)
            rf"^\[{_TIME} {_LEVEL} +[\w:]+\] (?P<env_logger>.+)$",
            # a time, then a level, then the message: zap's console encoder (the caller before
            # it, its fields after a tab), Spring Boot's (pid, thread, logger), Python's
            rf"^\[?{_TIME}\]?[ \t]+\[?{_LEVEL}\]?"
            r"(?:\t[\w./-]+:\d+(?=\t)|[ \t]+\d+ --- \[[^\]\n]*\] \S+[ \t]+(?=:)"
            r"| in [\w.]+(?=:)| [\w.]+(?=:)| - [\w.]+ -(?= ))?"
            r"[ \t]*[:-]?[ \t]+(?P<timed>[^\t\n]*[^\t\n ])(?:\t[^\n]*)?$",
        )
    ),
    re.M,
)


def formatted_by_logger(line: str) -> bool:
    """``line`` is a record a logger wrote in one of the common formats: its time is the
    logger's, part of the record, not a log router's prefix (``log_prefixes``)."""
    return _PREFIXED.match(line) is not None


@dataclass(frozen=True, slots=True)
class LogLine:
    """A log line in a paste: its message and error texts (unescaped), where in the paste the
    line is (two for ``java.util.logging``), and where those texts are (its search words)."""

    texts: list[str]
    span: tuple[int, int]
    values: list[tuple[int, int]]

    def blanks(self) -> list[tuple[int, int]]:
        """The line outside its texts: the logger's keys, time, level and fields."""
        out, at = [], self.span[0]
        for start, end in sorted(self.values):
            out.append((at, start))
            at = max(at, end)
        return [(s, e) for s, e in [*out, (at, self.span[1])] if e > s]


def log_lines(text: str) -> list[LogLine]:
    """The log records in ``text``: a line in one of the common formats that write a time and
    a level before the message (``_PREFIXED``), and a line that is a JSON object, or two
    ``key=value`` pairs or more, with a message key and a record key (a level or a time); a
    logfmt record whose message is empty is a log line too, with no text to read."""
    out: list[LogLine] = []
    taken: set[int] = set()
    for m in _PREFIXED.finditer(text):
        if m.lastgroup is None:
            continue
        start, end = m.span(m.lastgroup)
        if m.lastgroup == "monolog":
            end = start + len(_monolog_message(text[start:end]))
        if text[start:end].strip():
            out.append(LogLine([text[start:end].strip()], m.span(), [(start, end)]))
            taken.update(range(m.start(), m.end() + 1))
    at = 0
    for line in text.split("\n"):
        start, at = at, at + len(line) + 1
        stripped = line.strip()
        if start in taken:
            continue
        if (stripped[:1], stripped[-1:]) in (("{", "}"), ("[", "]")):
            record = _json_record(stripped)
            if record is not None:
                values = [(start + m.start(1), start + m.end(1)) for m in _JSON_TEXT.finditer(line)]
                out.append(LogLine(record, (start, start + len(line)), values))
            continue
        pairs = {m.group(1): m for m in _LOGFMT_PAIR.finditer(line)}
        if len(pairs) < 2 or not RECORD_KEYS & pairs.keys():
            continue
        if not any(k in pairs for k in MESSAGE_KEYS):
            continue
        found = [pairs[k] for k in (*MESSAGE_KEYS, *ERROR_KEYS) if k in pairs]
        texts = [t for t in (_logfmt_value(m.group(2)) for m in found) if t]
        values = [(start + m.start(2), start + m.end(2)) for m in found]
        out.append(LogLine(texts, (start, start + len(line)), values))
    return out


def _monolog_message(text: str) -> str:
    """Monolog's message without the two JSON values its line formatter writes after it (the
    context and the extra, ``[]`` when empty); the text as it is when they are not there."""
    message = text
    for _ in range(2):
        if message.endswith(" []"):
            message = message[:-3]
        elif message.endswith("}") and " {" in message:
            message = message[: message.rindex(" {")]
        else:
            return text
    return message


def _json_record(line: str) -> list[str] | None:
    """A JSON log record's message and error texts; None for an object that is no log record."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # no JSON, or nested past the parser's depth
        return None
    return record_texts(value)


def record_texts(value: object) -> list[str] | None:
    """The message and error texts of the log record ``value`` is, or wraps as a log service's
    API answers with one (:func:`wrapped_record`). None when it is no log record and wraps
    none."""
    if isinstance(value, dict) and not _is_entry(value) and (texts := _own_texts(value)):
        return texts
    inner = wrapped_record(value)
    return None if inner is None else texts_of(inner)


def wrapped_record(value: object, depth: int = 0) -> dict[str, object] | None:
    """The log record a log service's answer wraps in fields of its own: Datadog's event
    (``content``; ``attributes``, each event's inside its search answer's ``data``), a Cloud
    Logging entry (the record its ``jsonPayload`` or ``textPayload``, beside the entry's id,
    name and resource; ``gcloud logging read`` prints a list of them). None when ``value`` is a
    logger's own record, or wraps none within a few levels."""
    if isinstance(value, dict):
        if _own_texts(value) is not None:
            return _payload(value) if depth or _is_entry(value) else None
        items = list(value.values())
    elif isinstance(value, list):
        items = value[:_RECORDS_READ]
    else:
        return None
    if depth >= _ENVELOPE_DEPTH:
        return None
    for item in items:
        if isinstance(item, dict | list) and (found := wrapped_record(item, depth + 1)):
            return found
    return None


def _is_entry(record: dict[str, object]) -> bool:
    return "jsonPayload" in record or "textPayload" in record


def _payload(record: dict[str, object]) -> dict[str, object]:
    """A Cloud Logging entry's record: its ``jsonPayload``, or its ``textPayload`` line as the
    message; any other record as it is."""
    payload, line = record.get("jsonPayload"), record.get("textPayload")
    if not isinstance(payload, dict) and not isinstance(line, str):
        return record
    entry = {k: v for k, v in record.items() if k not in ("jsonPayload", "textPayload")}
    return {**entry, **payload} if isinstance(payload, dict) else {**entry, "message": line}


def _own_texts(record: dict[str, object]) -> list[str] | None:
    if not RECORD_KEYS & record.keys():
        return None
    record = _payload(record)
    texts = texts_of(record)
    return texts if texts and any(k in record for k in MESSAGE_KEYS) else None


def texts_of(record: dict[str, object]) -> list[str]:
    """A log record's message and error texts, in that order."""
    texts = []
    for key in (*MESSAGE_KEYS, *ERROR_KEYS):
        value = record.get(key)
        if isinstance(value, dict):  # pino's and bunyan's serialised error: its message
            value = value.get("message")
        if isinstance(value, str) and value.strip():
            texts.append(value.strip())
    return texts


def _logfmt_value(raw: str) -> str:
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        return re.sub(r"\\(.)", r"\1", raw[1:-1]).strip()
    return raw.strip()


def printed_by(text: str) -> Callable[[str], bool] | None:
    """For a paste that holds cobra's lines, ``go run``'s exit line or structured log lines,
    what says a line of it is printed (those lines, and the indented lines of cobra's usage
    block); None otherwise."""
    cobra = _COBRA.search(text) is not None
    logged = {line for r in log_lines(text) for line in text[r.span[0] : r.span[1]].split("\n")}
    if not cobra and not logged and _EXIT_STATUS.search(text) is None:
        return None
    return lambda line: bool(
        _EXIT_STATUS.match(line)
        or line in logged
        or (cobra and (_COBRA.match(line) or line[:1] in (" ", "\t")))
    )
