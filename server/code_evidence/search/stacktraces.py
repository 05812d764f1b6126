"""Stack traces, error messages and test runners' reports pasted into a query.

A frame that points into the workspace is the strongest evidence a failing user can give: it
names the file and line. Frames are returned innermost first, whatever order the language
prints them in, and the error message is reduced to its literal fragments so it can be matched
against the ``raise``/``throw`` that produced it even when that used a format string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import consoles, diagnostics, native, programs


@dataclass(frozen=True, slots=True)
class Frame:
    path: str  # as printed: absolute, relative, or a bare file name (Java)
    line: int
    function: str | None
    hint: str | None = None  # Java: the package path the file name lives under ("com/x/")


_PY = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?', re.M)
# A V8 frame after its ``at``: ``fn (path:line:col)`` or ``path:line:col``; the function may be
# a constructor (``new Route (…)``, ``new`` kept) or carry the name it was called by
# (``Layer.handle [as handle_request] (…)``, ``Route.<computed> [as get] (…)``).
_V8_FRAME = (
    r"(?:(?:async |get |set )?((?:new )?[^\s(]+)(?: \[as [^\]\s]+\])? \()?"
    r"((?:file://)?(?:[^\s()]|\([\w-]+\)/)+?):(\d+):\d+\)?\s*$"  # Next.js: ``///(rsc)/./``
)
_JS = re.compile(rf"^\s*at {_V8_FRAME}", re.M)
# Firefox's and Safari's frame: ``fn@url:line:col`` (``@url:line:col`` for anonymous code); a
# path with a folder, so ``me@example.com:12:3`` is none.
_JS_GECKO = re.compile(
    r"^\s*((?:global|module|eval) code|[\w$.<>/]*)@"
    r"((?:[a-z][\w+.-]*:/+)?(?=[^\s@()]*/)(?:[^\s@()]|\([\w-]+\)/)+?):(\d+):\d+\s*$",
    re.M,
)
# What a dev server adds to a module's address: its origin (``http://localhost:5173``,
# webpack's ``webpack-internal:///./``) and a query that busts the cache (``?t=1700000000000``).
_URL_ORIGIN = re.compile(r"^[a-z][\w+.-]*://[^/]*(?:/\([\w-]+\))?(?:/\.(?=/))*")
_URL_QUERY = re.compile(r"[?#][^/]*$")
# Vitest's frame: ``❯ fn path:line:col`` or ``❯ path:line:col``.
_VITEST = re.compile(r"^\s*❯ (?:([^\s(]+) )?((?:file://)?[^\s()]+?):(\d+):\d+\s*$", re.M)
_GO = re.compile(r"^[ \t]*(\S+\.go):(\d+)(?: \+0x[0-9a-f]+)?[ \t]*$", re.M)  # tab lost in a copy
_GO_FUNC = re.compile(r"^([\w./*()-]{1,300})\(.*\)\s*$", re.M)  # bounded: see _FRAGMENT_SPLIT
_RUST_AT = re.compile(r"^\s*at (\S+\.rs):(\d+):\d+\s*$", re.M)
_RUST_PANIC = re.compile(r"panicked at (?:'.*?', )?(\S+\.rs):(\d+):\d+")
# A Rust panic's message: quoted on the header line before Rust 1.73 (``thread 'main' panicked
# at 'index out of range', src/buf.rs:12:5``), on the line after it since (and the thread's id
# after its name in recent releases: ``thread 'main' (4242) panicked at``). ``'main'`` names
# the thread, not a function of the workspace.
_RUST_PANIC_LINE = re.compile(r"^\s*thread '[^'\n]*'(?: \(\d+\))? panicked at ", re.M)
_RUST_PANIC_MESSAGE = re.compile(
    r"^\s*thread '[^'\n]*'(?: \(\d+\))? panicked at "
    r"(?:'(.*)'(?:, \S+\.rs:\d+:\d+)?|\S+\.rs:\d+:\d+:\n(.+))\s*$",
    re.M,
)
# A JVM frame: ``at`` before it in a trace; JUnit 5's console launcher prints the frame alone
# on its line (``org.apache.commons.lang3.Validate.isTrue(Validate.java:158)``), so without its
# ``at`` the frame must end the line.
_JAVA = re.compile(
    r"^\s*(at )?([\w$.]+)\.([\w$<>]+)\(([\w$]+\.(?:java|kt|scala)):(\d+)\)(?(1)|\s*$)", re.M
)
# A Ruby frame: under ``from`` after the first in Ruby's own report, under ``# `` in RSpec's.
_RUBY = re.compile(r"^\s*(?:from |# )?((?:[A-Za-z]:)?[^\s:]+\.rb):(\d+):in [`']([^'\n]*)'", re.M)
_PHP = re.compile(r"^#\d+ (\S+\.php)\((\d+)\): (?:[\w\\]+(?:->|::))?(\w+)\(", re.M)
# PHPUnit's frames: each place alone on its line, innermost first; read beside an error line
# or in PHPUnit's report (``There was 1 error:``, ``1) AppTest::testApp``), since a place typed
# alone (``src/Cart.php:12``) is a place to look at, not a failure.
_PHPUNIT = re.compile(r"^((?:[A-Za-z]:)?[^\s:]+\.php):(\d+)[ \t]*$", re.M)
_PHPUNIT_REPORT = re.compile(
    r"^(?:There (?:was|were) \d+ (?:error|failure)s?:|\d+\) [\w\\]+::\w+)\s*$", re.M
)
_PHP_THROWN = re.compile(r"^(?:PHP )?Fatal error: .*?Uncaught .*? in (\S+\.php):(\d+)\s*$", re.M)
# The place PHP prints after an uncaught error's message (``… in /srv/src/Stream.php:12``).
_PHP_PLACE = re.compile(r" in \S+\.php:\d+$")
# .NET's ``at N.T.M(args) in /src/T.cs:line 12`` and Mono's ``at N.T.M (args) [0x0004a] in
# /src/T.cs:12``.
_CSHARP = re.compile(
    r"^\s*at ([\w.`<>+\[\]]+)\.([\w<>`\[\]]+) ?\(.*?\)(?: \[0x[0-9a-f]+\])? in (.+?\.cs):"
    r"(?:line )?(\d+)\s*$",
    re.M,
)
# A qualified name's parts before its last: ``java.lang.``, ``Rack::QueryParser::``, PHP's
# ``Twig\Error\``.
_QUALIFIER = re.compile(r"(?:[\w$]+(?:\.|::|\\))+")
# What names an exception type: its parts joined by dots, Ruby's ``::`` or PHP's backslash, the
# last one capitalised (``requests.exceptions.InvalidURL``, ``java.lang.IllegalStateException``,
# ``URI::InvalidURIError``), or a bare name that reads like one (``KeyError``, ``BadParameter``).
_TYPE_LAST = (
    r"[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)"
    r"|(?:Invalid|Bad|Missing|Unknown|NoSuch|Illegal|Unsupported|Unexpected|Duplicate)[A-Z]\w*"
    r"|[A-Z]\w*(?:Failure|Fault|Panic)"
)
# An error line, ``Type: message``, whatever prefixes it (Java's ``Exception in thread`` and
# ``Caused by:``, PHP's ``PHP Fatal error:  Uncaught`` and ``Next`` for a chained one, .NET's
# ``Unhandled exception.``, Mono's ``[ERROR] FATAL UNHANDLED EXCEPTION:``, pytest's ``E   ``,
# its summary's ``FAILED tests/test_x.py::test_y - `` and ``--tb=line``'s place, JUnit 5's
# console launcher's ``=> ``): a type as above, or the bare words CLIs and runtimes print:
# ``Error:``, ``error[E0308]:``, ``panic:``, ``fatal:``, and Python's ``Exception:`` (``raise
# Exception("…")``).
_MESSAGE = re.compile(
    r"^\s*(?:Exception in thread \"[^\"]*\" |Caused by: |Next |Uncaught "
    r"|Unhandled [Ee]xception[.:] |(?:PHP )?(?:Fatal error|Warning):\s+Uncaught "
    r"|\[ERROR\] FATAL UNHANDLED EXCEPTION: |\[\w+\] "
    r"|E {1,20}|(?:FAILED|ERROR) \S+ - |\S+\.py:\d+: (?=(?:\w+\.)*[A-Z])|=> )?"
    rf"((?:[A-Za-z_][\w$]*(?:\.|::|\\))+[A-Z][\w$]*|{_TYPE_LAST}"
    r"|[Ee]rror|ERROR|Exception|panic|fatal(?: error)?|FATAL)"
    r"(?:\[\w+\])?(?: \[[\w-]+\])?:[ \t]+(\S.*?)\s*$",
    re.M,
)
# Cargo's own line after a failed ``cargo test``: the runner's, not the program's error.
_CARGO_FAILED = re.compile(r"\s*error: test failed, to rerun pass ")
# What ``go test`` adds to a panic its test runner caught and raised again.
_RECOVERED = re.compile(r" \[recovered\]$")
# pytest's short test summary, whose message is cut to the terminal's width (``…application c...``).
_SUMMARY = re.compile(r"^\s*(?:FAILED|ERROR) \S+ - ", re.M)
# pytest's report: a short entry's place (``src/flask/helpers.py:232: in url_for``, the code line
# under it), a long entry's place under its code (``test_app.py:3: ``; the last one names the
# error's type, ``…/werkzeug/local.py:519: RuntimeError``), and ``--tb=line``'s one line
# (``src/x.py:71: ValueError: …``, its message read as an error line below). Printed outermost
# first, as Python's own trace.
_PYTEST = re.compile(
    r"^(\S+\.py):(\d+):(?: in (\S+)[ \t]*$| [\w.]+[ \t]*$|[ \t]*$"
    rf"| (?=(?:\w+\.)*(?:{_TYPE_LAST}|Exception): ))",
    re.M,
)
# The lines pytest prints around them: a failure's header (``____ test_app ____``), the rule
# between entries (``_ _ _ _``), section rules (``==== FAILURES ====``, ``---- Captured stdout
# call ----``), the failing line (``>       url_for("index")``), an error line (``E   …``) and
# a long entry's locals (``self = <Tokenizer …>``, ``args = (), kwargs = {}``).
_PYTEST_PRINTED = re.compile(
    r"^(?:_{3,} .* _{3,}|(?:_ ){4,}_?|={3,} .* ={3,}|-{3,} .* -{3,}|>(?: |$)|E(?: |$)"
    r"|[A-Za-z_]\w* = \S)"
)
# node:test's TAP report (Node 20's reporter when the output is not a terminal: a CI log). The
# YAML block under a failed test's line (``not ok 1 - app``, then ``  ---`` … ``  ...``) holds the
# error (``error:``, its type as ``name:``) and its ``stack: |-`` lines: V8's frames without
# their ``at ``. Its body is read line by line, each indented as its ``---`` (or blank), so a
# block with no ``...`` ends at the first line outside it: a long log costs one scan.
_TAP_BLOCK = re.compile(
    r"^[ \t]*not ok \d+\b[^\n]*\n([ \t]+)---[ \t]*\n"
    r"((?:\1(?!\.\.\.)[^\n]*\n|[ \t]*\n)*?)\1\.\.\.[ \t]*$",
    re.M,
)
_TAP_STACK = re.compile(r"^([ \t]+)stack: \|-?[ \t]*\n((?:\1[ \t]+\S.*(?:\n|$))+)", re.M)
_TAP_FRAME = re.compile(rf"^\s*{_V8_FRAME}", re.M)  # V8's, without its ``at``
_TAP_ERROR = re.compile(
    r"^([ \t]+)error: (?:'((?:[^'\n]|'')*)'|\"((?:[^\"\\\n]|\\.)*)\"|\|-?[ \t]*\n\1[ \t]+(.*))",
    re.M,
)
_TAP_NAME = re.compile(r"^[ \t]+name: '?([\w$.]+)'?[ \t]*$", re.M)
# The lines of a test runner's report around its failures: TAP's version, a test's line, the
# plan and the ``# Subtest:`` / ``# tests 1`` comments.
_TAP_PRINTED = re.compile(r"^\s*(?:TAP version \d+|(?:not )?ok \d+\b|\d+\.\.\d+\s*$|# )")
# A test runner's own words for a failed test: pytest's summary (``_SUMMARY``), ``go test``'s
# ``--- FAIL: TestX (0.00s)``, ``cargo test``'s ``---- tests::x stdout ----``, minitest's
# ``  1) Error:``, TAP's ``not ok 1 - name``, PHPUnit's ``There was 1 error:``, and those of the
# reports ``_INDENTED_REPORT`` reads (RSpec's, Jest's, Vitest's, JUnit 5's console launcher's).
_TEST_FAILED = re.compile(
    r"^(?:--- FAIL: \S|---- \S+ stdout ----$|\s*\d+\) (?:Error|Failure):\s*$|\s*not ok \d+\b"
    r"|There (?:was|were) \d+ (?:error|failure)s?:\s*$)",
    re.M,
)
# Reports in which every indented line is printed, as in pytest's: RSpec's (a failure's
# ``Failure/Error: <the line that failed>``), Jest's (a failed test's title, ``  ● app``),
# Vitest's (`` FAIL  app.test.mjs > app``) and JUnit 5's console launcher's (``=> Type:
# message`` under the test). The user's own words around a paste are not indented.
_INDENTED_REPORT = re.compile(
    r"^(?:\s+Failure/Error: |  ● \S| FAIL  \S|\s*=> [\w$.]+: |[ \t]*\tError Trace:\t)", re.M
)
# testify's report of a failed assertion under ``go test``: labelled lines after a tab, a value
# longer than a line continued under an empty label. ``Error:`` holds testify's own words
# (``Received unexpected error:``); the error the code returned is on the lines under them.
_TESTIFY_LINE = re.compile(r"[ \t]*\t[A-Z][\w ]*:[ \t]*\t")
_TESTIFY = re.compile(
    r"^[ \t]*\tError:[ \t]*\tReceived unexpected error:[ \t]*\n"
    r"((?:[ \t]*\t {2,}\t[^\n]*(?:\n|$))+)",
    re.M,
)
# Jest's message: the first line under a failed test's title; it drops the type of a plain
# ``Error`` (``  ● app`` / blank / ``    Route.get() requires a callback function …``).
_JEST_MESSAGE = re.compile(r"^  ● [^\n]*\n[ \t]*\n[ \t]+(\S(?:[^\n]*\S)?)[ \t]*$", re.M)
# RSpec writes an error's type alone on a line and its message indented under it:
# ``     Rack::QueryParser::ParameterTypeError:`` / ``       expected Hash (got Array) …``.
_RSPEC_ERROR = re.compile(
    r"^([ \t]+)((?:[A-Z]\w*::)*[A-Z]\w*):[ \t]*\n\1[ \t]+(\S(?:[^\n]*\S)?)[ \t]*$", re.M
)
# The unindented lines those runners print around their failures: RSpec's progress and
# summary, Jest's file line and totals, Vitest's rules, PHPUnit's header, progress, failure
# titles and totals, the JUnit launcher's tree and counts, ``cargo test``'s lines.
_RUNNER_PRINTED = re.compile(
    r"^(?:[.F*]+\s*$|Failures:|Failed examples:|Finished in \d|\d+ examples?, \d+ failures?"
    r"|rspec \S+:\d+ # |(?:FAIL|PASS) \S|(?:Test Suites|Tests|Snapshots|Time): |Ran all test suites"
    r"|PHPUnit \d|There (?:was|were) \d+ |\d+\) [\w\\]+::\w+|ERRORS!|FAILURES!"
    r"|[.EFWRSI]+ +\d+ / \d+ \(|Failures \(\d+\):|Test run finished after|\[ +\d+ |[╷├│└⎯]"
    r"|running \d+ tests?$|failures:$|test result: |\S+ --- FAILED$|error: test failed)"
)
# Ruby's own line for an uncaught error puts the type last, in parentheses, after the place:
# ``lib/x.rb:12:in 'parse': Invalid port (URI::InvalidURIError)`` (the place may be cut off);
# a failed system call's type is ``Errno::ENOENT``.
_RUBY_MESSAGE = re.compile(
    r"^\s*(?:(?:[A-Za-z]:)?[^\s:]+\.rb:\d+:in [`'][^'\n]*': )?(\S.*?) "
    rf"\(((?:[A-Z]\w*::)*(?:Error|{_TYPE_LAST})|Errno::E[A-Z]+)\)\s*$",
    re.M,
)
# The lines a trace prints around its frames (Python's, Go's, PHP's, Rust's): printed, not
# typed. (A log line before a panic, logrus's ``time="…" level=panic msg="…"``, is
# ``programs.log_lines``'s.)
_PY_HEADERS = re.compile(
    r"^(?:Traceback \(most recent call last\):|During handling of the above exception"
    r"|The above exception was the direct cause|goroutine \d+ \[|Stack trace:|#\d+ \{main\}"
    r"|thrown in \S+ on line \d+|note: run with `RUST_BACKTRACE=|note: Some details are omitted"
    r"|stack backtrace:)"
)
# The values a message formats in: quoted parts (an apostrophe inside a word, ``can't``, quotes
# nothing), <reprs>, numbers, paths. A path's run is bounded: unbounded, a 20,000-character
# word cost quadratic time (each start scanned to the end for a dot).
_FRAGMENT_SPLIT = re.compile(
    r"(?<![A-Za-z])'[^']*'(?![A-Za-z])|\"[^\"]*\"|<[^>]*>|\b0x[0-9a-f]+\b|\b\d+\b"
    r"|[\w./\\-]{1,200}\.\w{1,5}\b"
)


# A terminal's escape sequences: colours and styles (CSI ``ESC [ … m``), links and titles (OSC
# ``ESC ] … BEL``). A CI log keeps them; what the user read had none.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[]_P^X][^\x07\x1b]*(?:\x07|\x1b\\)")


def plain(text: str) -> str:
    """``text`` without a terminal's escape sequences (a test runner's colours in a CI log)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def parse_frames(text: str) -> list[Frame]:
    """Every frame of every trace in ``text``, innermost first."""
    frames: list[Frame] = []
    py = [Frame(m.group(1), int(m.group(2)), m.group(3)) for m in _PY.finditer(text)]
    frames.extend(reversed(py))  # Python prints the innermost frame last
    frames.extend(Frame(*place) for place in reversed(consoles.places(text)))  # and IPython, Rich
    frames.extend(Frame(*place) for place in native.places(text))  # C and C++: innermost first
    pytest = [Frame(m.group(1), int(m.group(2)), m.group(3)) for m in _PYTEST.finditer(text)]
    frames.extend(reversed(pytest))  # and so does pytest
    tap = [
        m
        for block in _TAP_BLOCK.finditer(text)
        for stack in _TAP_STACK.finditer(block.group(2))
        for m in _TAP_FRAME.finditer(stack.group(2))
    ]
    # JavaScript's, innermost first: (function, path, line) in each pattern's first three groups.
    for m in (*tap, *_JS.finditer(text), *_VITEST.finditer(text), *_JS_GECKO.finditer(text)):
        path = m.group(2).removeprefix("file://")
        if "://" in path:  # a browser's: the module's path on the dev server
            path = _URL_QUERY.sub("", _URL_ORIGIN.sub("", path))
        if not path.endswith((".go", ".rs")):
            frames.append(Frame(path, int(m.group(3)), m.group(1) or None))
    for m in _GO.finditer(text):  # a Go frame: its file line under its function's line
        func = _GO_FUNC.match(text, text.rfind("\n", 0, m.start() - 1) + 1, m.start() - 1)
        if func or m.group(0).startswith("\t") or " +0x" in m.group(0):
            frames.append(Frame(m.group(1), int(m.group(2)), func and func[1].rsplit(".", 1)[-1]))
    for m in _RUST_PANIC.finditer(text):
        frames.append(Frame(m.group(1), int(m.group(2)), None))
    for m in _RUST_AT.finditer(text):
        frames.append(Frame(m.group(1), int(m.group(2)), None))
    for m in _JAVA.finditer(text):
        owner = m.group(2)
        package = owner.rsplit(".", 1)[0] if "." in owner else ""
        hint = package.replace(".", "/") + "/" if package else None
        frames.append(Frame(m.group(4), int(m.group(5)), m.group(3), hint))
    for m in _RUBY.finditer(text):  # innermost first, as Ruby prints them
        frames.append(Frame(m.group(1), int(m.group(2)), re.split(r"[ #.]", m.group(3))[-1]))
    # PHP: the throw site on the error line, then the stack from #0 (innermost) out.
    frames.extend(Frame(m.group(1), int(m.group(2)), None) for m in _PHP_THROWN.finditer(text))
    frames.extend(Frame(m.group(1), int(m.group(2)), m.group(3)) for m in _PHP.finditer(text))
    if _PHPUNIT_REPORT.search(text) or _MESSAGE.search(text):
        frames.extend(Frame(m.group(1), int(m.group(2)), None) for m in _PHPUNIT.finditer(text))
    for m in _CSHARP.finditer(text):
        frames.append(Frame(m.group(3), int(m.group(4)), m.group(2)))
    frames.extend(Frame(path, line, None) for path, line in diagnostics.places(text))
    return list(dict.fromkeys(frames))


def pytest_report(text: str) -> bool:
    """``text`` holds what pytest printed: an entry's place or a summary line."""
    return _PYTEST.search(text) is not None or _SUMMARY.search(text) is not None


def test_report(text: str) -> bool:
    """``text`` is what a test runner printed (pytest, ``go test``, ``cargo test``, minitest,
    node:test's TAP, RSpec, Jest, Vitest, JUnit 5's console launcher, PHPUnit, GoogleTest,
    Catch2): it always names the test that failed, and what it asks is where the error comes
    from."""
    return (
        pytest_report(text)
        or _TEST_FAILED.search(text) is not None
        or _INDENTED_REPORT.search(text) is not None
        or native.test_report(text)
    )


def typed_text(text: str) -> str:
    """What the user typed around a paste: the question without its trace (frame lines, the
    code lines a Python trace prints under them, trace headers) and without its error lines.
    Must-match text is read from here only: a frame's path (``<string>``, another machine's
    ``/.../console.py``) or a value formatted into a message is not something the answer
    contains."""
    frame_res = (_PY, _JS, _VITEST, _JS_GECKO, _GO, _GO_FUNC, _RUST_AT, _RUST_PANIC, _JAVA)
    frame_res += (_RUBY, _PHP, _PHPUNIT, _CSHARP, *consoles.PLACE_LINES, *native.PLACE_LINES)
    frame_res += (_PYTEST, _MESSAGE, _RUBY_MESSAGE, _RUST_PANIC_LINE)
    # In a pytest report every indented line is printed: the code of a long entry, the line
    # under a short entry's place; so in RSpec's, Jest's, Vitest's and JUnit's
    # (``_INDENTED_REPORT``).
    pytest = pytest_report(text)
    console = consoles.printed_by(text)  # IPython's or Rich's traceback: what they print
    crash = native.printed_by(text)  # a sanitizer's, a debugger's: what the tools print
    program = programs.printed_by(text)  # log lines, cobra's usage, ``go run``'s exit line
    diagnostic = diagnostics.printed_by(text)  # a compiler's or a linter's report
    indented = pytest or console is not None or _INDENTED_REPORT.search(text) is not None
    runner = indented or _TEST_FAILED.search(text) is not None
    text = _TAP_BLOCK.sub("", text)  # a TAP block is printed whole (its test's line too)
    kept: list[str] = []
    under_frame = panic_next = False
    for line in text.split("\n"):
        if panic_next:  # the message under a Rust panic's header
            panic_next = False
            continue
        if (indented and line[:1] in (" ", "\t")) or (pytest and _PYTEST_PRINTED.match(line)):
            continue
        if any(p is not None and p(line) for p in (console, crash, program, diagnostic)):
            continue
        if runner and (_TAP_PRINTED.match(line) or _RUNNER_PRINTED.match(line)):
            continue
        if _PY.match(line):
            under_frame = True
            continue
        if _RUST_PANIC_LINE.match(line) and line.rstrip().endswith(":"):
            panic_next = True
            continue
        if under_frame and line[:1] in (" ", "\t") and line.strip():
            continue  # the code line (and ^^^ markers) under a Python frame
        under_frame = False
        if _PY_HEADERS.match(line.strip()) or any(r.search(line) for r in frame_res):
            continue
        kept.append(line)
    return "\n".join(kept)


@dataclass(frozen=True, slots=True)
class ErrorLines:
    """What a text's error lines say, read in one pass."""

    # The error lines from their type on (what a runtime prints before it, ``PHP Fatal
    # error:  Uncaught``, is not the message), Ruby's ``Invalid port (URI::InvalidURIError)``
    # and a Rust panic's message (``panic: …``) written the same way, type first; the place PHP
    # prints after the message is a frame (:func:`parse_frames`), not its text.
    messages: list[str]
    # The text with what each error line says about the runtime and the type's home blanked:
    # the runtime's prefix (``PHP Fatal error:  Uncaught``, ``Exception in thread "main"``)
    # and the type's qualifier (``Symfony\Component\Console\Exception\``, ``java.lang.``,
    # Ruby's ``Rack::QueryParser::``). Their words match every file that imports or declares
    # something in that namespace (a PHP file's ``namespace`` and ``use`` lines), not the place
    # that threw; the type's own name and the message stay. A C++ test framework's own lines
    # (status, totals, banners) are blanked too.
    searched: str


def unqualified(type_name: str) -> str:
    """``click.exceptions.BadParameter`` -> ``BadParameter`` (also ``URI::InvalidURIError``,
    ``Twig\\Error\\SyntaxError``)."""
    qualifier = _QUALIFIER.match(type_name)
    return type_name[qualifier.end() :] if qualifier else type_name


def error_lines(text: str) -> ErrorLines:
    messages: list[str] = []
    spans: list[tuple[int, int]] = []  # what ``searched`` blanks

    def qualifier_span(start: int, end: int) -> None:  # the type named at text[start:end]
        qualifier = _QUALIFIER.match(text, start, end)
        if qualifier:
            spans.append((start, qualifier.end()))

    blocks = [(b.start(), b.end()) for b in _TAP_BLOCK.finditer(text)]
    for start, end in blocks:
        block = text[start:end]
        error = _TAP_ERROR.search(block)
        if error is None:
            continue
        if error.group(2) is not None:  # 'single-quoted'
            body = error.group(2).replace("''", "'")
        elif error.group(3) is not None:  # "double-quoted": its first line, unescaped
            body = re.sub(r"\\(.)", r"\1", error.group(3).split("\\n", 1)[0])
        else:  # |- a block: its first line
            body = error.group(4)
        body = body.strip()
        name = _TAP_NAME.search(block)
        messages.append(f"{name.group(1) if name else 'Error'}: {body}")
    for m in _MESSAGE.finditer(text):
        if any(start <= m.start() < end for start, end in blocks):
            continue  # read above: the block's ``error:`` key is not an error line of its own
        if _CARGO_FAILED.match(text, m.start()) or _TESTIFY_LINE.match(text, m.start()):
            continue  # cargo's own line; a testify label (its error is read below)
        message = _PHP_PLACE.sub("", text[m.start(1) : m.end()].strip())
        message = _RECOVERED.sub("", message)
        if _SUMMARY.match(text, m.start()) and message.endswith("..."):
            message = message[:-3].rsplit(None, 1)[0]  # cut to the width: its last word is part
        messages.append(message)
        spans.append((m.start(), m.start(1)))
        qualifier_span(*m.span(1))
    for m in _TESTIFY.finditer(text):
        returned = " ".join(line.split("\t", 2)[-1].strip() for line in m.group(1).splitlines())
        messages.append(f"Error: {returned}")
        spans.append((m.start(), m.start(1)))
    for m in _RUBY_MESSAGE.finditer(text):
        messages.append(f"{m.group(2)}: {m.group(1)}")
        qualifier_span(*m.span(2))
    for m in _JEST_MESSAGE.finditer(text):
        if not _MESSAGE.match(m.group(1)):
            messages.append(f"Error: {m.group(1)}")
    if _INDENTED_REPORT.search(text) or _RUBY.search(text):
        for m in _RSPEC_ERROR.finditer(text):
            messages.append(f"{m.group(2)}: {m.group(3)}")
            qualifier_span(*m.span(2))
    for m in _RUST_PANIC_MESSAGE.finditer(text):
        messages.append(f"panic: {m.group(1) or m.group(2)}")
        spans.append((m.start(), m.start(1) if m.group(1) is not None else m.start(2)))
    for thrown in native.thrown(text):  # an uncaught C++ exception
        messages.append(thrown.message)
        spans.extend(thrown.blanks)
        if thrown.type_span is not None:
            qualifier_span(*thrown.type_span)
    spans.extend(native.runner_lines(text))  # GoogleTest's and Catch2's own lines
    for record in programs.log_lines(text):  # its message and error; ``Type: …`` read as such
        messages.extend(t if _MESSAGE.fullmatch(t) else f"Error: {t}" for t in record.texts)
        spans.extend(record.blanks())
    messages = list(dict.fromkeys(messages))
    if not spans:
        return ErrorLines(messages, text)
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return ErrorLines(messages, "".join(out))


def error_messages(text: str) -> list[str]:
    """``KeyError: 'user'`` -> ``["KeyError: 'user'"]`` (see :class:`ErrorLines`)."""
    return error_lines(text).messages


def value_spans(body: str) -> list[tuple[int, int]]:
    """Where a message body's formatted-in values are (see :func:`literal_text`)."""
    return [m.span() for m in _FRAGMENT_SPLIT.finditer(body)]


def literal_text(body: str) -> str:
    """A message body with the values formatted into it (quoted parts, numbers, paths)
    blanked: the text its template wrote."""
    return _FRAGMENT_SPLIT.sub(" ", body)


def message_fragments(message: str) -> list[str]:
    """The literal parts of an error message that the source code must contain: values that
    were formatted in (quoted names, numbers, paths) are cut out, and single words are
    dropped as too common to be evidence."""
    body = message.split(":", 1)[1] if ":" in message else message
    out = []
    for part in _FRAGMENT_SPLIT.split(body):
        part = part.strip(" .,;:()[]{}")
        if len(part.split()) >= 2 and len(part) >= 10:
            out.append(part)
    return out


# A Python source root before a package (``src/flask/app.py``): an installed package's frames
# name the package without it (``…/site-packages/flask/app.py``).
_SOURCE_ROOT = re.compile(r"^(?:[^/]+/)*?(?:src|lib)/(?=[^/]+/)")


def map_to_workspace(frame: Frame, paths: list[str]) -> str | None:
    """The workspace file a printed frame path means: exact, or the longest path suffix match
    (absolute paths from another machine, ``./src/x.js``, Java's bare file names, a Python
    package installed from the workspace's ``src/`` or ``lib/``, named from its root)."""
    printed = re.sub(r"^(?:\./)+", "", frame.path.replace("\\", "/")).lstrip("/")
    if printed in paths:
        return printed
    bare = "/" not in printed
    name = printed.rsplit("/", 1)[-1]
    best: str | None = None
    for p in paths:
        if not p.endswith(name):
            continue  # every match below ends with the printed file's name
        installed = _SOURCE_ROOT.sub("", p, count=1) if p.endswith(".py") else p
        suffix = printed == installed or printed.endswith(("/" + p, "/" + installed))
        java_like = bare and p.endswith("/" + printed) and (not frame.hint or frame.hint in p)
        if (suffix or java_like) and (best is None or len(p) > len(best)):
            best = p
    return best
