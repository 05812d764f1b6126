"""``code-evidence mcp``: the MCP server over stdio, on the official MCP Python SDK.

The SDK's low-level ``Server`` does the protocol (JSON-RPC framing, the handshake, concurrent
requests, ``notifications/cancelled``); this module lists the tools of ``schemas.py`` with their
schemas and routes each call to the :class:`AgentWorkspace`: arguments checked at once, the
wait for recent changes on a thread, the work on the request pool in the call's lane, the
answer awaited, so the event loop keeps serving other calls meanwhile:

- a tool call whose arguments are wrong, or that names a path outside the workspace, answers
  with ``isError`` and a message that says what to fix (the model reads it and corrects the
  call), and the server goes on serving;
- an unknown tool is a protocol error (``-32602``);
- a cancelled call stops: a queued one never starts, a running deep find stops between two
  cross-encoder pairs;
- stdout is the protocol: logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..api import EngineError, RequestCancelled
from . import schemas, tools
from .workspace import INDEX_WAIT_S, AgentWorkspace

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602

INSTRUCTIONS = (
    "Code Evidence answers questions about the code of this workspace with ranked, cited "
    "evidence: call find_evidence before grepping or reading files to locate code; it "
    "returns the relevant code itself under a token budget. Use related_code for what a "
    "function connects to (callers, callees, tests). Paths are workspace-relative, lines "
    "1-based. When an answer says there is no reliable evidence, do not act on its candidates."
)


def tool_list() -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            input_schema=spec.input_schema,
            output_schema=spec.output_schema,
            annotations=types.ToolAnnotations(
                title=spec.title, read_only_hint=True, open_world_hint=False
            ),
        )
        for spec in schemas.TOOLS
    ]


def _result(answer: tuple[dict[str, Any], str]) -> types.CallToolResult:
    data, text = answer
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=data
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


class CodeEvidenceMCP:
    """The SDK server and the workspace it answers for."""

    def __init__(self, workspace: AgentWorkspace) -> None:
        self.workspace = workspace
        self.server: Server[Any] = Server(
            "code-evidence",
            version=__version__,
            title="Code Evidence",
            instructions=INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        ws = self.workspace
        cancel = threading.Event()
        try:
            job = ws.job(name, params.arguments, cancel)
            notes = (
                await anyio.to_thread.run_sync(ws.settle, abandon_on_cancel=True)
                if job.waits
                else []
            )
            answer = await asyncio.wrap_future(ws.pool.submit(job.priority, job.run, notes))
        except KeyError as exc:
            known = ", ".join(schemas.BY_NAME)
            raise MCPError(
                INVALID_PARAMS, f"unknown tool {name!r}; this server has: {known}"
            ) from exc
        except (tools.ArgumentError, EngineError) as exc:
            return _error(str(exc))
        except RequestCancelled as exc:
            return _error(f"{name}: cancelled ({exc})")
        except asyncio.CancelledError:
            cancel.set()  # the client gave up: a running deep find stops between two pairs
            raise
        except Exception as exc:  # a bug: say so, keep serving
            log.exception("%s failed", name)
            return _error(f"{name}: internal error ({type(exc).__name__}: {exc}); see the log")
        return _result(answer)

    async def run_stdio(self) -> None:
        async with stdio_server() as (read_stream, write_stream):
            await self.server.run(
                read_stream, write_stream, self.server.create_initialization_options()
            )


def serve(
    workspace: str,
    index_dir: str | None = None,
    trust_other_owner: bool = False,
    index_wait_s: float = INDEX_WAIT_S,
) -> int:
    """Run over stdio until the client closes stdin. The workspace is opened (and its first
    pass started) before the handshake, so the first question finds the models loaded."""
    level = os.environ.get("CODE_EVIDENCE_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    ws = AgentWorkspace(
        Path(workspace),
        Path(index_dir) if index_dir else None,
        trust_other_owner=trust_other_owner,
        index_wait_s=index_wait_s,
    )
    for note in ws.engine.notes:
        log.warning("%s", note)
    try:
        ws.start()
        anyio.run(CodeEvidenceMCP(ws).run_stdio)
    finally:
        ws.close()
    return 0


__all__ = ["CodeEvidenceMCP", "serve", "tool_list"]
