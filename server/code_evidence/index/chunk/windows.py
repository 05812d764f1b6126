"""Line windows for text without a grammar (docs, config, unknown languages), named after the
Markdown or reST heading they fall under.
"""

from __future__ import annotations

import bisect
import posixpath
import re

from .definitions import Span

# --------------------------------------------------------------------------- windows

_MD_HEADING_RE = re.compile(r"^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_RST_UNDERLINE_RE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")


def _headings(lines: list[str], path: str) -> list[tuple[int, str]]:
    """(row, title) of Markdown / reST headings, so a window can name its section."""
    ext = posixpath.splitext(path)[1].lower()
    out: list[tuple[int, str]] = []
    if ext in (".md", ".markdown", ".mdx"):
        fenced = False
        for i, line in enumerate(lines):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and line.startswith(("#", " ")):
                m = _MD_HEADING_RE.match(line)
                if m:
                    out.append((i, m.group(1)))
    elif ext in (".rst", ".rest"):
        for i in range(1, len(lines)):
            title = lines[i - 1].strip()
            if title and _RST_UNDERLINE_RE.match(lines[i]) and not _RST_UNDERLINE_RE.match(title):
                out.append((i - 1, title))
    return out


def windows(lines: list[str], path: str, size: int, overlap: int) -> list[Span]:
    size = max(1, size)
    overlap = max(0, min(overlap, size - 1))
    heads = _headings(lines, path)
    head_rows = [r for r, _ in heads]
    spans: list[Span] = []
    s = 0
    n = len(lines)
    while s < n:
        e = min(s + size - 1, n - 1)
        symbol = ""
        if heads:
            k = bisect.bisect_right(head_rows, s) - 1
            if k < 0 and head_rows[0] <= e:
                k = 0
            if k >= 0:
                symbol = heads[k][1]
        spans.append(Span(s, e, symbol, "window"))
        if e >= n - 1:
            break
        s = e - overlap + 1
    return spans
