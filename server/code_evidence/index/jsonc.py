"""JSON with comments and trailing commas, as ``tsconfig.json`` and VS Code settings write it.

Manifests come from the repository, so they are untrusted: the reader never raises on bad input
(it answers ``{}``), bounds the size it reads, and leaves path checks to its callers.
"""

from __future__ import annotations

import json
import re

MAX_CHARS = 1_000_000  # a manifest larger than this is not a manifest
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def strip_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments, strings left intact."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def loads_jsonc(text: str) -> dict:
    """The top-level object of a JSONC document, or ``{}`` when it is not one."""
    if len(text) > MAX_CHARS:
        return {}
    cleaned = _TRAILING_COMMA.sub(r"\1", strip_comments(text))
    try:
        data = json.loads(cleaned)
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}
