"""docs/agents.md against the MCP server: the tools, every parameter (its type, whether it is
required, its default) and every field of every answer must be what the server declares, and
the host configuration snippets must be valid JSON that starts this server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from code_evidence.mcp import schemas

DOC = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def tool_sections(text: str) -> dict[str, str]:
    tools = text.split("\n## Tools\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### `(\w+)`\n", tools, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def documented_params(section: str) -> dict[str, tuple[str, bool, str | None]]:
    """``- `name` (type[, required][, default X]): ...`` -> {name: (type, required, default)}."""
    found = {}
    for name, spec in re.findall(r"^- `(\w+)` \(([^)]*)\):", section, re.M):
        bits = [b.strip() for b in spec.split(",")]
        default = next((b.removeprefix("default ") for b in bits if b.startswith("default ")), None)
        found[name] = (bits[0], "required" in bits, default)
    return found


def documented_fields(section: str) -> list[str]:
    m = re.search(r"^Returns: (.*?)\.\n", section, re.M | re.S)
    return re.findall(r"`(\w+)`", m.group(1)) if m else []


def declared_params(tool: schemas.ToolSpec) -> dict[str, tuple[str, bool, str | None]]:
    props: dict[str, Any] = tool.input_schema["properties"]
    required = set(tool.input_schema.get("required", []))
    out = {}
    for name, spec in props.items():
        default = spec.get("default")
        shown = None if default is None else json.dumps(default)
        out[name] = (_TYPES[spec["type"]], name in required, shown)
    return out


def mismatches(text: str) -> list[str]:
    problems = []
    sections = tool_sections(text)
    if list(sections) != [t.name for t in schemas.TOOLS]:
        problems.append(
            f"tools: doc has {list(sections)}, server {[t.name for t in schemas.TOOLS]}"
        )
    for tool in schemas.TOOLS:
        section = sections.get(tool.name, "")
        declared = declared_params(tool)
        documented = documented_params(section)
        same_as = re.search(r"parameters as `(\w+)`", section)
        if not documented and same_as:  # "The same search and parameters as `find_evidence`"
            documented = documented_params(sections.get(same_as.group(1), ""))
        if documented != declared:
            problems.append(f"{tool.name} parameters: doc {documented}, server {declared}")
        fields = list(tool.output_schema["properties"])
        if documented_fields(section) != fields:
            problems.append(
                f"{tool.name} returns: doc {documented_fields(section)}, server {fields}"
            )
    return problems


def test_the_tools_are_documented_as_the_server_declares_them() -> None:
    assert mismatches(DOC.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace('- `depth` (string, default "deep")', "- `depth` (string)"),
        lambda t: t.replace("`requests_queued`.", "`requests_queued`, `eta`."),
        lambda t: t.replace("### `related_code`", "### `related`"),
        lambda t: t.replace("- `line` (integer, required)", "- `line` (string, required)"),
    ],
)
def test_the_check_fails_on_drift(edit: Any) -> None:
    text = DOC.read_text(encoding="utf-8")
    doctored = edit(text)
    assert doctored != text
    assert mismatches(doctored)


def test_host_snippets_are_valid_and_start_this_server() -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    configs = [json.loads(b) for b in blocks]
    maps = []
    for cfg in configs:
        if "mcpServers" in cfg:
            maps.append(("mcpServers", cfg["mcpServers"]))
        elif "servers" in cfg:
            maps.append(("servers", cfg["servers"]))
        else:
            maps.append(("mcp.servers", cfg["mcp"]["servers"]))
    assert [m[0] for m in maps] == ["mcpServers", "servers", "mcp.servers"]
    for kind, servers in maps:
        server = servers["code-evidence"]
        assert server["command"] == "code-evidence"
        assert server["args"][:2] == ["mcp", "--workspace"], kind
        if kind != "mcpServers":
            assert server["type"] == "stdio"
