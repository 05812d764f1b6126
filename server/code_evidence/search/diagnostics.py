"""The places compilers and linters report, where ``path:line`` in a sentence does not find them.

A diagnostic names its place, and a relative ``src/app.py:42`` in a question is read wherever
it stands (``query._paths``). What CI logs and editors print is often not that:

- an absolute path from the machine that ran the tool: gcc, clang, swiftc, pyright
  (``  /home/u/shop/src/cart.py:20:5 - error: …``), ``mypy --show-absolute-path``, javac given
  absolute paths, Kotlin's ``e: file:///…/Main.kt:12:5 …``, MSBuild's ``/…/Program.cs(12,5):
  error CS0103``;
- Maven's ``[ERROR] /…/Broker.java:[57,9] cannot find symbol``;
- ESLint's default (``stylish``) report: the file's path alone on a line, then its problems as
  ``  12:7  error  'x' is assigned a value but never used  no-unused-vars``;
- a GitHub Actions annotation, what linters print for CI: ``::error title=ruff (F841),file=/…/
  app.py,line=42,col=5::…``.

Each becomes a frame (the frames channel maps another machine's path onto the workspace by
its suffix, as a trace's). A diagnostic's lines, with a relative path too, are printed, not
typed: the names and types a compiler quotes (``"bytes | IO[Any]"``) are not text the answer
must contain.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_EXT = r"\.[A-Za-z][\w+]{0,9}"
# An absolute path (POSIX, Windows, or a file URL) ending in a file name with an extension.
_ABSOLUTE = rf"(?:file://)?(?:/|[A-Za-z]:[\\/])[^\s:()\[\]]*?{_EXT}"
# A relative path with a folder, for the forms that no sentence uses (Maven's, ESLint's).
_RELATIVE = rf"(?:\.{{1,2}}/)*[\w.\-]+(?:/[\w.\-]+)*{_EXT}"
# The tool's own prefix before the place: Maven's level, Kotlin's ``e:``/``w:``, indentation.
_PREFIX = r"^[ \t]*(?:\[(?:ERROR|WARNING|WARN|INFO)\][ \t]+|[ew]:[ \t]+)?"
_PLACE = re.compile(
    _PREFIX
    + rf"(?:({_ABSOLUTE}):(\d+)(?::\d+)?(?::|[ \t]+-[ \t])"  # gcc, pyright, mypy, javac, Kotlin
    + rf"|({_ABSOLUTE})\((\d+)(?:,\d+)?\):"  # MSBuild, the C# compiler
    + rf"|({_ABSOLUTE}|{_RELATIVE}):\[(\d+)(?:,\d+)?\])",  # Maven
    re.M,
)
# A GitHub Actions annotation, as linters write them for CI (``ruff --output-format github``,
# golangci-lint's, ESLint's formatters): ``::error file=src/app.py,line=10,col=5::message``.
_ANNOTATION = re.compile(r"^::(?:error|warning|notice)[ \t]+([^\n]*?)::", re.M)
# A diagnostic with a relative path and a severity (mypy's ``src/app.py:42: error: …``,
# pyright's, gcc's, tsc's ``src/a.ts(5,26): error TS2339: …``): its place is read where it
# stands (``query._paths``), but its words are the tool's all the same.
_RELATIVE_DIAGNOSTIC = re.compile(
    _PREFIX
    + rf"{_RELATIVE}(?::\d+(?::\d+)?(?::|[ \t]+-)|\(\d+(?:,\d+)?\):)[ \t]*"
    + r"(?:fatal error|error|warning|note|info|hint)\b"
)
# ESLint's stylish report: a file's path alone on its line, its problems indented under it.
_STYLISH_FILE = re.compile(rf"^((?:{_ABSOLUTE})|(?:{_RELATIVE}))[ \t]*$")
_STYLISH_PROBLEM = re.compile(r"^[ \t]+(\d+):\d+[ \t]+(?:error|warning)[ \t]{2,}\S")
# The counts a tool prints under its report.
_SUMMARY = re.compile(
    r"^\s*(?:✖ \d+ problems? \(|Found \d+ errors? in \d+ files?|\d+ errors?, \d+ warnings?, "
    r"\d+ informations?|\d+ errors?$|\[(?:ERROR|INFO)\] (?:BUILD FAILURE|COMPILATION ERROR))"
)


def places(text: str) -> list[tuple[str, int]]:
    """Every (path, line) the diagnostics in ``text`` name, each form's in the order printed."""
    out: list[tuple[str, int]] = []
    for m in _PLACE.finditer(text):
        path = m.group(1) or m.group(3) or m.group(5)
        line = m.group(2) or m.group(4) or m.group(6)
        out.append((path.removeprefix("file://"), int(line)))
    for m in _ANNOTATION.finditer(text):
        fields = dict(f.split("=", 1) for f in m.group(1).split(",") if "=" in f)
        if fields.get("file") and fields.get("line", "").isdigit():
            out.append((fields["file"], int(fields["line"])))
    out.extend((path, number) for path, number, _ in _stylish(text))
    return list(dict.fromkeys(out))


def printed_by(text: str) -> Callable[[str], bool] | None:
    """For a paste that holds diagnostics, what says a line of it is the tool's (a diagnostic,
    with a relative path too, a stylish report's file and problem lines, the counts under
    them); None otherwise."""
    stylish = {printed for _, _, pair in _stylish(text) for printed in pair}
    relative = any(_RELATIVE_DIAGNOSTIC.match(line) for line in text.split("\n"))
    if not (stylish or relative or _PLACE.search(text) or _ANNOTATION.search(text)):
        return None
    return lambda line: bool(
        _PLACE.match(line)
        or _ANNOTATION.match(line)
        or _RELATIVE_DIAGNOSTIC.match(line)
        or _SUMMARY.match(line)
        or line in stylish
    )


def _stylish(text: str) -> list[tuple[str, int, tuple[str, str]]]:
    """ESLint's stylish blocks: each problem as (the file's path, its line, (the file's line,
    the problem's line)). A problem belongs to the last file line above it with only problem
    or blank lines between."""
    out: list[tuple[str, int, tuple[str, str]]] = []
    current: tuple[str, str] | None = None  # (the file's line, its path)
    for line in text.split("\n"):
        file = _STYLISH_FILE.match(line)
        problem = _STYLISH_PROBLEM.match(line) if current else None
        if file is not None:
            current = (line, file.group(1))
        elif problem is not None:
            assert current is not None
            out.append((current[1], int(problem.group(1)), (current[0], line)))
        elif line.strip():
            current = None
    return out
