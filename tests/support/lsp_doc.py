"""docs/lsp-extensions.md as the doc tests read it: the methods, notifications and commands it
names, and its ``interface`` blocks. One reader for both checks of the protocol, the server's
(tests/test_lsp_docs.py) and the VS Code extension's (tests/test_client_protocol.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from support import ROOT

LSP_DOC = ROOT / "docs" / "lsp-extensions.md"


@dataclass(frozen=True)
class Field:
    name: str
    optional: bool
    type: str  # the type as written, e.g. '"quick" | "interactive" | "deep"'


def methods(text: str) -> set[str]:
    return set(re.findall(r"\*\*Method:\*\* `([^`]+)`", text))


def notifications(text: str) -> set[str]:
    return set(re.findall(r"\*\*Notification:\*\* `([^`]+)`", text))


def commands(text: str) -> set[str]:
    return set(re.findall(r"\*\*Command:\*\* `([^`]+)`", text))


def interfaces(text: str) -> dict[str, list[Field]]:
    """``interface Name [extends Base] { field?: type; }`` in the ```typescript blocks ->
    {Name: [Field, ...]} in the documented order, a base's fields not repeated."""
    found: dict[str, list[Field]] = {}
    for block in re.findall(r"```typescript\n(.*?)```", text, re.S):
        for name, body in re.findall(
            r"interface (\w+)(?: extends \w+)? \{\n(.*?)\n\}", block, re.S
        ):
            found[name] = fields(body)
    return found


def fields(body: str) -> list[Field]:
    """The fields of an interface body, one per line, ``//`` comments ignored."""
    out = []
    for line in body.splitlines():
        m = re.match(r"\s+(\w+)(\??):\s*([^;]*);", line)
        if m:
            out.append(Field(m.group(1), m.group(2) == "?", m.group(3).strip()))
    return out


def literals(type_text: str) -> set[str]:
    """The string literals of a union type: ``"a" | 'b'`` -> {"a", "b"}."""
    return {a or b for a, b in re.findall(r"\"([^\"]+)\"|'([^']+)'", type_text)}


def unions(ifaces: dict[str, list[Field]]) -> dict[tuple[str, str], set[str]]:
    """Every field whose type is a union of string literals: {(interface, field): values}."""
    return {
        (name, f.name): literals(f.type)
        for name, fs in ifaces.items()
        for f in fs
        if literals(f.type)
    }
