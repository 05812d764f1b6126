"""Python tracebacks as its interactive front ends print them: IPython's and Jupyter's, and
Rich's boxed traceback (``rich.traceback``, Typer's default display of an uncaught error).

Both print the code around each place, string literals and all, and neither uses the
interpreter's ``File "…", line N`` form: ``stacktraces`` reads their places as frames from here
and leaves what they print out of what the user typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Place = tuple[str, int, str | None]  # path as printed, line, function

# IPython's and Jupyter's traceback, outermost first as Python's: ``File ~/…/arrow/api.py:86, in
# get(*args, **kwargs)`` (IPython 8 and later), or ``/…/arrow/api.py in get(*args, **kwargs)``
# with the line on the ``---> 86`` marker of the code under it (IPython 7, classic notebooks).
_IPYTHON = re.compile(r"^File (\S[^\n]*?\.py):(\d+), in ([\w.<>]+)", re.M)
_IPYTHON7_PLACE = re.compile(r"^(\S[^\n]*?\.py) in ([\w.<>]+)\(", re.M)
_IPYTHON7 = re.compile(
    r"^(\S[^\n]*?\.py) in ([\w.<>]+)\([^\n]*\n(?:[ \t]+\d+(?:[ \t][^\n]*)?\n){0,40}-+> (\d+)",
    re.M,
)
# The lines an IPython traceback prints around its frames: the rule, the header (``ParserError
# <spaces> Traceback (most recent call last)``), the user's cell and the numbered code (``---->``
# marks the line that ran).
_IPYTHON_HEADER = re.compile(r"^[\w.]+ {2,}Traceback \(most recent call last\)", re.M)
_IPYTHON_PRINTED = re.compile(
    r"^(?:-+>|-{20,}\s*$|[\w.]+ {2,}Traceback \(most recent call last\)|Cell In\[\d+\], line \d+"
    r"|<ipython-input-)"
)
# Rich's traceback (``rich.traceback``, Typer's default): a box whose frames are ``│ /…/api.py:86
# in get │`` over the printed code, outermost first; every line of the box is printed. A place
# longer than the box wraps onto the next line (the line it leaves fills the box).
_RICH_BOX = re.compile(r"^╭─+ Traceback \(most recent call last\) ─+╮", re.M)
_RICH_PLACE = re.compile(r"(\S+\.py):(\d+) in(?: ([\w.<>]+))?")
# The lines that name a place, each alone (``stacktraces.typed_text`` drops them).
PLACE_LINES = (_IPYTHON, _IPYTHON7_PLACE)


def places(text: str) -> list[Place]:
    """IPython's and Rich's places in ``text``, outermost first (as Python prints them)."""
    ipython = [(m.group(1), int(m.group(2)), m.group(3)) for m in _IPYTHON.finditer(text)]
    ipython += [(m.group(1), int(m.group(3)), m.group(2)) for m in _IPYTHON7.finditer(text)]
    return ipython + _rich_places(text)


def printed_by(text: str) -> Callable[[str], bool] | None:
    """For IPython's or Rich's traceback in ``text``, what says a line of it is printed (its
    code, markers, rules, headers, box); None when it holds neither."""
    ipython = any(r.search(text) for r in (_IPYTHON, _IPYTHON7, _IPYTHON_HEADER))
    rich = _RICH_BOX.search(text) is not None
    if not ipython and not rich:
        return None
    return lambda line: bool(
        (ipython and _IPYTHON_PRINTED.match(line)) or (rich and line[:1] in "╭│╰")
    )


def _rich_places(text: str) -> list[Place]:
    """The places in Rich's traceback boxes, outermost first, a wrapped place joined again.
    One pass over the lines: a box runs from its header to the line that closes it."""
    places: list[Place] = []
    inside = False
    carry = ""
    for line in text.split("\n"):
        if _RICH_BOX.match(line):
            inside, carry = True, ""
            continue
        if not inside:
            continue
        if not line.startswith("│ "):
            inside = not line.startswith("╰")
            continue
        # The text between ``│ `` and `` │``, padded to the box's width with spaces: a line
        # that fills it goes on below.
        content = line.rstrip()[2:-2]
        if content and not content.endswith(" "):
            carry += content
            continue
        m = _RICH_PLACE.fullmatch((carry + content).strip())
        carry = ""
        if m:
            places.append((m.group(1), int(m.group(2)), m.group(3)))
    return places
