"""Drive the real MCP server the way an agent host does: ``code-evidence mcp`` started over
stdio, the official MCP Python SDK's own client (``ClientSession`` over ``stdio_client``).

Used by mcp_latency.py, agent_session.py and the tests (``tests/test_mcp.py`` imports this
file as ``bench.mcp_client``), so it imports nothing from ``bench/`` itself; the caller has put
``server/`` on ``sys.path``. The SDK is the ``mcp`` extra (``pip install -e '.[mcp]'``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[1]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment (with its CODE_EVIDENCE_CACHE_DIR) with this checkout's ``server/``
    first on PYTHONPATH: the server started as a subprocess runs this tree's code."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra or {})
    return env


def server_params(
    workspace: Path,
    index_dir: Path,
    launcher: Sequence[str] | None = None,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> StdioServerParameters:
    """``code-evidence mcp`` on ``workspace`` as a host starts it (``launcher``: a script that
    runs the CLI after instrumenting it, for tests that need a slow disk or model)."""
    start = list(launcher) if launcher else ["-m", "code_evidence.cli"]
    return StdioServerParameters(
        command=sys.executable,
        args=[
            *start,
            "mcp",
            "--workspace",
            str(workspace),
            "--index-dir",
            str(index_dir),
            *args,
        ],
        env=server_env(env),
    )


@asynccontextmanager
async def connect(
    params: StdioServerParameters, errlog: TextIO = sys.stderr
) -> AsyncIterator[ClientSession]:
    """An initialized session with the server; the server stops when the block ends."""
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@dataclass
class Answer:
    """One tool call as an agent sees it."""

    data: dict[str, Any] | None  # structured content
    text: str  # the text content (what a text-only host shows the model)
    is_error: bool
    ms: float  # client-side round trip


async def call(session: ClientSession, tool: str, args: dict[str, Any] | None = None) -> Answer:
    t0 = time.perf_counter()
    result = await session.call_tool(tool, args or {})
    ms = (time.perf_counter() - t0) * 1000
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    data = result.structured_content if isinstance(result.structured_content, dict) else None
    return Answer(data, text, result.is_error, ms)
