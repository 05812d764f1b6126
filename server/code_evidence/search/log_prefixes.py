"""What a log router writes before every line it forwards, taken off a pasted log (and a
quote's ``> ``, which a reply or a Markdown quote writes the same way).

A traceback copied from ``docker compose logs``, ``kubectl logs``, ``journalctl``, Heroku, npm,
``fly logs``, ``aws logs tail``, a CI system's raw log or ``gh run view --log-failed`` (what an
agent reads of a failed CI run) carries a prefix on each line (``web-1  | ``,
``2024-05-01T10:12:03.117Z stderr F ``, ``May 01 10:12:03 web01 gunicorn[4121]: ``): the
trace's frame lines then no longer start where every trace reader expects them, so no frame is
read and the error line is not an error line. The user did not write the prefix and it says
nothing about the code; the question is the text after it.

A shape is taken off only where it is the log's own: it must start most of the lines
(:data:`SHARE`; a prefix no text has, a CloudWatch stream named with its id, wherever it is),
and the shapes that are a name rather than a time (a service before a bar, a
Turborepo task) must start at least two, so one line that happens to begin like one keeps its
words (``str | None``); a compose container's name ends in its replica's number, so one line
of it is enough. A record a logger wrote (``2024-05-01 10:12:03,117 ERROR app: …``) keeps its
time: that is the logger's, and ``programs.log_lines`` reads the record by it. Shapes nest (a
CI raw log's time stamp before a compose container's name): each is taken off in turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .programs import formatted_by_logger

_TIME = r"\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?"
_ISO = rf"\d{{4}}-\d{{2}}-\d{{2}}[T ]{_TIME}(?:Z|[+-]\d{{2}}:?\d{{2}})?"
_PRI = r"(?:<\d{1,3}>)?"  # syslog's priority, as a syslog server receives the line
_SYSLOG_TIME = rf"{_PRI}(?:[A-Z][a-z]{{2}} [ \d]\d {_TIME}|{_ISO})"
_END = r"(?:[ \t]|$)"  # a router writes its prefix on an empty line too; a copy trims its space
_GITLAB_STREAM = r"[ \t]+[0-9a-f]{2}[OE]\+?"  # GitLab's stream after its time stamp: ``00O``
SHARE = 0.6  # of the non-empty lines a shape must start
# Shapes taken off one after another, a quote's quote counted again: a real log nests a few
# (a CI log's time stamp, a container's name, a reply's quote); a paste nested deeper is no
# log, and each pass copies every line.
_MAX_PASSES = 16


@dataclass(frozen=True)
class _Shape:
    name: str  # as a note names it
    pattern: re.Pattern[str]
    min_lines: int  # a name-shaped prefix needs more than one line to be told from text
    nests: bool = False  # taken off again while it still starts most lines (a quote's quote)
    # The share of lines it must start: most, but a prefix no text starts with is taken off
    # wherever it is (a multi-line event carries it on its first line only).
    share: float = SHARE


_SHAPES = (
    # The GitHub CLI's job and step before a run's raw log (``gh run view --log``,
    # ``--log-failed``: ``test (3.12)\tRun pytest\t2024-05-01T10:12:03.1174820Z …``), each
    # ended by a tab; the raw log's time stamp after them tells it from a table's columns.
    _Shape(
        "GitHub CLI job and step",
        re.compile(r"[^\t\n]{1,300}\t[^\t\n]{1,300}\t(?=\ufeff?\d{4}-\d{2}-\d{2}T)"),
        2,
    ),
    # syslog and journald (``May 01 10:12:03 web01 gunicorn[4121]: ``, or ``-o short-iso``;
    # ``<13>`` before it as a syslog server received it),
    # Heroku (``2024-05-01T10:12:03.117+00:00 app[web.1]: ``): a time, perhaps a host, then
    # the program and its process or dyno. Before the time stamp alone, which starts them too.
    _Shape(
        "syslog's header",
        re.compile(rf"{_SYSLOG_TIME} (?:[\w.-]+ )?[^\s\[\]:]+\[[\w.-]+\]:{_END}"),
        1,
    ),
    _Shape(
        "syslog's header, no process id",
        re.compile(rf"{_SYSLOG_TIME} [\w.-]+ [\w./-]+:{_END}"),
        2,
    ),
    # ``aws logs tail``: the event's time and its log stream. A stream named with an id of 32
    # hex digits (a Lambda function's ``2024/05/01/[$LATEST]…``, an ECS task's
    # ``ecs/web/…``) is no text's, so it comes off wherever it is: a Lambda function's starts a
    # multi-line event (the runtime's ``[ERROR] KeyError: …`` and its traceback, one event), a
    # task's log may be one line. (A stream named otherwise is not told from a time stamp
    # before a path: a CI log's ``tests/test_app.py ..F.``.)
    _Shape(
        "CloudWatch stream",
        re.compile(
            rf"{_ISO} (?:\d{{4}}/\d\d/\d\d/\[[^\]\s]+\]|[\w.-]+/[\w.-]+/)[0-9a-f]{{32}}{_END}"
        ),
        1,
        share=0.0,
    ),
    # A time stamp alone: GitHub Actions' and Azure Pipelines' raw logs (the first line after
    # a byte order mark), ``docker logs -t``,
    # ``kubectl logs --timestamps``, Jenkins' timestamper (in brackets); a container runtime's
    # own log file (CRI) adds the stream and whether the line is whole (``stderr F``), GitLab's
    # job log with time stamps the stream's number and kind (``00O``, ``01E+`` continuing one).
    _Shape(
        "time stamp",
        re.compile(
            rf"\ufeff?\[?{_ISO}\]?(?:[ \t]+(?:stdout|stderr)[ \t]+[FP]|{_GITLAB_STREAM})?{_END}"
        ),
        1,
    ),
    # A time of day alone: Jenkins' timestamper as its console page shows it (``10:12:03 ``,
    # or in brackets), ``ts``. Two lines at least: one line that starts with a time is text.
    _Shape("time of day", re.compile(rf"\[?{_TIME}\]?{_END}"), 2),
    # docker compose's container (``web-1  | ``, version 1's ``web_1  | ``: a service and its
    # replica's number, so one line is enough), any service's name before a bar (foreman's and
    # honcho's ``10:12:03 web.1  | ``; two lines at least, so ``str | None`` keeps its words).
    _Shape("compose container", re.compile(rf"\w[\w.-]*[-_]\d+ +\|{_END}"), 1),
    _Shape("service name", re.compile(rf"(?:{_TIME}[ \t]+)?\w[\w.-]*[ \t]*\|{_END}"), 2),
    # ``fly logs``, once its time stamp is off: the machine, its region and the level, the
    # line right after (``app[9080e6d7b12345] iad [info]``).
    _Shape(
        "Fly.io machine",
        re.compile(r"app\[[0-9a-f]{6,}\] [a-z]{3} \[(?:info|warn|error|debug|trace|fatal)\]"),
        1,
    ),
    # npm's logger, before every line it writes: its level (``npm error Missing script:
    # "build"``; npm 9 and before ``npm ERR! ``, ``npm WARN ``), so the message under it is
    # read as a program's (one line is enough: no sentence starts so).
    _Shape(
        "npm's log level",
        re.compile(
            r"npm (?:ERR!|WARN|error|warn|notice|info|verbose|verb|http|timing|silly|sill)"
            rf"{_END}"
        ),
        1,
    ),
    # ``kubectl logs --prefix`` (``[pod/web-7d9f/app] ``).
    _Shape("kubectl pod", re.compile(rf"\[pod/[^\]\s]+\]{_END}"), 2),
    # A reply's or a Markdown quote's ``> ``, one level at a time (a quote's quote is taken off
    # in turn, and pytest's ``>`` before the failing line stays: it starts few lines); Python's
    # prompt ``>>> `` is typed code, not a quote.
    _Shape("quote marker", re.compile(r">(?!>>) ?"), 1, nests=True),
    # Turborepo's package and task (``web:build: ``, ``@acme/web:test: ``); a task starts with
    # a letter, so a compiler's ``main.go:12:5: `` is not one.
    _Shape("Turborepo task", re.compile(rf"(?:@[\w.-]+/)?[\w.-]+:[A-Za-z][\w:-]*:{_END}"), 2),
)


def unprefixed(text: str) -> str:
    """``text`` with each log router's per-line prefix taken off the lines that carry it."""
    return without_prefixes(text)[0]


def without_prefixes(text: str) -> tuple[str, list[str]]:
    """:func:`unprefixed`'s text, and the names of the prefixes it took off (a note says so:
    the answer is to a question other than the bytes sent)."""
    lines = text.split("\n")
    used: dict[str, None] = {}  # in the order taken off
    for _ in range(_MAX_PASSES):
        logged = [formatted_by_logger(line) for line in lines]  # a logger's record keeps its time
        filled = [line for line, own in zip(lines, logged, strict=True) if line.strip() and not own]
        shape = next(
            (s for s in _SHAPES if (s.nests or s.name not in used) and _starts_most(s, filled)),
            None,
        )
        if shape is None:
            return "\n".join(lines), list(used)
        lines = [
            line if own else _cut(shape.pattern, line)
            for line, own in zip(lines, logged, strict=True)
        ]
        used[shape.name] = None
    return "\n".join(lines), list(used)


def _starts_most(shape: _Shape, lines: list[str]) -> bool:
    hits = sum(1 for line in lines if shape.pattern.match(line))
    return hits >= max(shape.min_lines, shape.share * len(lines))


def _cut(pattern: re.Pattern[str], line: str) -> str:
    m = pattern.match(line)
    return line[m.end() :] if m else line
