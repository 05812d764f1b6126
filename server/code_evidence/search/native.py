"""Crashes of native code (C, C++) as the tools that catch them print them.

A C or C++ program that fails prints no trace of its own: a sanitizer (AddressSanitizer,
UndefinedBehaviorSanitizer, LeakSanitizer, ThreadSanitizer), a debugger's backtrace (gdb's
``bt``, lldb's ``bt``), Valgrind, ``assert`` or the C++ runtime's last words about an uncaught
exception do. Each names places in its own way, and each prints a great deal around them that
the user did not type: addresses, shadow memory, register-like values, the debugger's prompt,
the source line the debugger stopped on (string literals and all). GoogleTest and Catch2
report an exception a test did not catch by its message alone. ``stacktraces`` reads the
places here as frames, the uncaught exception as an error line, and leaves the rest out of
what the user typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Place = tuple[str, int, str | None]  # path as printed, line, function

# A path as these tools print it: no spaces or parentheses (``/src/cJSON.c``, ``cJSON.c``,
# ``../sysdeps/posix/raise.c``, ``C:\src\x.cpp``).
_PATH = r"((?:[A-Za-z]:)?[^\s():]+)"
# A sanitizer's frame, innermost first: ``#0 0x55d4c3a1b2c2 in cJSON_Parse /src/cJSON.c:1120``;
# one without a source (``in _start (/bin/prog+0x10f0)``) names no file.
_SANITIZER = re.compile(
    rf"^[ \t]*#\d+ 0x[0-9a-f]+ in (.+)(?<! at) {_PATH}:(\d+)(?::\d+)?(?: \(BuildId: \w+\))?[ \t]*$",
    re.M,
)
# gdb's backtrace, innermost first: ``#1  0x00005555555552a4 in parse_value (item=0x0, …) at
# cJSON.c:1443`` (the address is left out when the frame stopped at a line's start), and the
# line it stops on, which names the same place without the ``#N``.
_GDB = re.compile(
    rf"^(?:#\d+[ \t]+(?:0x[0-9a-f]+ in )?|0x[0-9a-f]+ in )(\S.*) at {_PATH}:(\d+)[ \t]*$",
    re.M,
)
# lldb's: ``  * frame #0: 0x0000000100003f50 prog`parse_value(item=0x0) at cJSON.c:1443:9``.
_LLDB = re.compile(
    rf"^[ \t]*(?:\* )?frame #\d+: 0x[0-9a-f]+ [^`\n]*`(.+) at {_PATH}:(\d+)(?::\d+)?[ \t]*$",
    re.M,
)
# Valgrind's: ``==4242==    at 0x10868A: parse_value (cJSON.c:1443)`` and ``by 0x…: main
# (test.c:20)``; a frame in a library without debug information is ``(in /lib/…so)``.
_VALGRIND = re.compile(
    rf"^==\d+==[ \t]+(?:at|by) 0x[0-9A-Fa-f]+: (.+) \({_PATH}:(\d+)\)[ \t]*$", re.M
)
# UndefinedBehaviorSanitizer's place: ``/src/cJSON.c:1443:9: runtime error: member access
# within null pointer of type 'struct cJSON'``.
_UBSAN = re.compile(rf"^{_PATH}:(\d+):\d+: runtime error: ", re.M)
# A failed ``assert``, glibc's (``prog: cJSON.c:1443: parse_value: Assertion `item' failed.``,
# the function as ``__PRETTY_FUNCTION__`` writes it in C++) and macOS's (``Assertion failed:
# (item), function parse_value, file cJSON.c, line 1443.``).
_ASSERT = re.compile(rf"^(?:\S+: )?{_PATH}:(\d+): (.+?): Assertion [`'].*' failed\.[ \t]*$", re.M)
_ASSERT_MAC = re.compile(
    r"^Assertion failed: .*, function (\w+), file (\S+), line (\d+)\.[ \t]*$", re.M
)
# The C++ runtime's last words about an uncaught exception: libstdc++'s ``terminate called
# after throwing an instance of 'nlohmann::…::type_error'`` with ``  what():  [json.exception…]
# …`` under it, and libc++'s ``libc++abi: terminating due to uncaught exception of type
# std::runtime_error: boom``.
_TERMINATE = re.compile(
    r"^(terminate called after throwing an instance of ')([^'\n]+)'[ \t]*\n"
    r"([ \t]*what\(\):[ \t]+)(\S[^\n]*?)[ \t]*$",
    re.M,
)
_LIBCXX = re.compile(
    r"^(libc\+\+abi(?:\.dylib)?: terminating (?:with|due to) uncaught exception of type )"
    r"((?:\w+::)*\w+(?:<[^\n]*?>)?): (\S[^\n]*?)[ \t]*$",
    re.M,
)
# The C++ test frameworks' report of an uncaught exception, which names no type: GoogleTest's
# ``C++ exception with description "…" thrown in the test body.`` and Catch2's ``due to
# unexpected exception with message:`` over the message, indented and wrapped at 80 columns.
_GTEST = re.compile(
    r'^(C\+\+ exception with description ")(.*)(" thrown in (?:the test body|[\w ]+)\.)[ \t]*$',
    re.M,
)
_CATCH2 = re.compile(
    r"^(due to unexpected exception with messages?:[ \t]*\n)((?:[ \t]+\S[^\n]*(?:\n|$))+)", re.M
)
# What says a text is such a report: the frameworks' status lines.
_TEST_REPORT = re.compile(
    r"^\[ +(?:RUN|FAILED|OK) +\] |^\S+ is a Catch v?\d|^\S+:\d+: FAILED:$", re.M
)
# Their own words around the test's failure: status tags (the test's name after ``[ RUN ]``
# stays), rules, totals, banners. ``Global test environment tear-down``, ``test cases`` and
# ``host application`` are no words of the code that failed.
_RUNNER_LINE = re.compile(
    r"^(?:\[[-=]{10}\].*|\[  PASSED  \].*|\[ +(?:RUN|FAILED|OK) +\]|Running main\(\) from .*"
    r"|unknown file: Failure"
    r"|[ \t]*\d+ FAILED TESTS?|[~=.-]{20,}|\S+ is a Catch v?\d.*|Run with -\? for options"
    r"|test cases: .*|assertions: .*)",
    re.M,
)
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_NAME = re.compile(r"[A-Za-z_]\w*")
# What reports a native crash in a text (then every line the tools print is left out of what
# the user typed).
_REPORT = re.compile(
    r"^==\d+==(?:ERROR|WARNING): \w+Sanitizer|^terminate called after throwing|^libc\+\+abi"
    r"|^Program (?:received|terminated with) signal|^\(gdb\) |^\(lldb\) "
    rf"|{_TEST_REPORT.pattern}",
    re.M,
)
# The lines these tools print around the places: the sanitizers' (``==4242==`` lines, the
# access, the regions, shadow memory and its legend, a stack object's ``[48, 52) 'buf'``, the
# summary), the debuggers' (prompt, signal, threads, the stopped-on source line ``1443\t…``),
# the C runtime's (``Aborted (core dumped)``) and the exception's two lines; every indented
# line (frames, shadow memory's legend, ``This frame has…``, ``what():``). gdb names the place
# it stopped at without an address when that is a line's start (``raise (sig=6) at raise.c:26``).
_PRINTED = re.compile(
    r"^(?:==\d+==|={20,}|[ \t]*(?:=>)?0x[0-9a-f]+[: ]|[ \t]*#\d+ |[ \t]*\[\d+, \d+\) '|\d+\t"
    r"|\((?:gdb|lldb)\)|\[(?:Thread|Inferior|New Thread|Detaching)|Using host libthread_db"
    r"|Program (?:received|terminated with) signal|Thread \d+ .*received signal"
    r"|(?:READ|WRITE) of size \d|(?:previously )?(?:allocated|freed) by thread|Address 0x"
    r"|HINT: |SUMMARY: \w+Sanitizer|Shadow byte|(?:Direct|Indirect) leak of"
    r"|\w+Sanitizer:DEADLYSIGNAL|terminate called after"
    r"|[ \t]*what\(\):|libc\+\+abi|Aborted\b|Segmentation fault\b|[ \t]*(?:\* )?frame #\d+"
    r"|[ \t]*\* thread #|Process \d+ (?:stopped|exited|launched)"
    # GoogleTest's and Catch2's: status lines, rules, totals, the exception's lines.
    r"|\[[ =-]*[A-Z]*[ =-]*\]|Running main\(\) from|unknown file: Failure|C\+\+ exception with"
    r"|\d+ FAILED TESTS?|[~=.-]{20,}|\S+ is a Catch|Run with -\?|test cases: |assertions: "
    r"|due to unexpected exception|\S+:\d+: FAILED:|[ \t]+\S"
    r"|[\w:~<>]+ \(.*\) at [^\s()]+:\d+[ \t]*$)"
)


@dataclass(frozen=True, slots=True)
class Thrown:
    """An uncaught C++ exception as the runtime reported it."""

    message: str  # ``type: what()``, as other languages' error lines are written
    # What :func:`stacktraces.error_lines` blanks in the searched text: the runtime's words
    # around the type (it blanks the type's namespaces itself, as for every error line).
    blanks: list[tuple[int, int]]
    type_span: tuple[int, int] | None = None  # where the type is named, if it is


def places(text: str) -> list[Place]:
    """The places native crash reports in ``text`` name, innermost first."""
    out: list[Place] = []
    for m in _UBSAN.finditer(text):
        out.append((m.group(1), int(m.group(2)), None))
    for m in _ASSERT.finditer(text):
        out.append((m.group(1), int(m.group(2)), _function(m.group(3))))
    for m in _ASSERT_MAC.finditer(text):
        out.append((m.group(2), int(m.group(3)), m.group(1)))
    for pattern in (_SANITIZER, _GDB, _LLDB, _VALGRIND):
        for m in pattern.finditer(text):
            out.append((m.group(2), int(m.group(3)), _function(m.group(1))))
    return out


def thrown(text: str) -> list[Thrown]:
    """The uncaught C++ exceptions in ``text``, each as an error line."""
    out: list[Thrown] = []
    for m in _TERMINATE.finditer(text):
        blanks = [m.span(1), (m.end(2), m.end(3))]
        out.append(Thrown(f"{m.group(2)}: {m.group(4)}", blanks, m.span(2)))
    for m in _LIBCXX.finditer(text):
        out.append(Thrown(f"{m.group(2)}: {m.group(3)}", [m.span(1)], m.span(2)))
    for m in _GTEST.finditer(text):  # no type: a plain error's
        out.append(Thrown(f"Error: {m.group(2)}", [m.span(1), m.span(3)]))
    for m in _CATCH2.finditer(text):  # wrapped to the terminal's width: joined again
        out.append(Thrown(f"Error: {' '.join(m.group(2).split())}", [m.span(1)]))
    return out


def test_report(text: str) -> bool:
    """``text`` is what GoogleTest or Catch2 printed (it names the test that failed)."""
    return _TEST_REPORT.search(text) is not None


def runner_lines(text: str) -> list[tuple[int, int]]:
    """Where GoogleTest's or Catch2's own lines are in ``text`` (none unless it is their
    report): not words to search the code for."""
    return [m.span() for m in _RUNNER_LINE.finditer(text)] if test_report(text) else []


def printed_by(text: str) -> Callable[[str], bool] | None:
    """For a native crash report in ``text``, what says a line of it is printed; None when
    there is none."""
    if _REPORT.search(text) is None and not any(p.search(text) for p in PLACE_LINES):
        return None
    return lambda line: _PRINTED.match(line) is not None


PLACE_LINES = (_SANITIZER, _GDB, _LLDB, _VALGRIND, _UBSAN, _ASSERT, _ASSERT_MAC)


def _function(printed: str) -> str | None:
    """A printed C or C++ function's own name: ``void tinyxml2::XMLNode::InsertEndChild(
    tinyxml2::XMLNode*)`` -> ``InsertEndChild``, ``nlohmann::detail::from_json<…>`` ->
    ``from_json``."""
    name = printed
    for _ in range(16):  # nested template arguments, the innermost first
        stripped = _TEMPLATE_ARGS.sub("", name)
        if stripped == name:
            break
        name = stripped
    name = name.split("(", 1)[0].rsplit("::", 1)[-1].strip().rsplit(" ", 1)[-1]
    return name if _NAME.fullmatch(name) else None
