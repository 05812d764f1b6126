#!/usr/bin/env python3
"""A scripted agent session over MCP, recorded with real outputs and latencies, for
docs/agents.md: a question, ``find_evidence``, ``related_code`` on what it found, then a
second find narrowed by what was learned (the file found is now the open file).

  PYTHONPATH=server python bench/agent_session.py --index-root /tmp/me-idx > session.md

The workspace is the dev set's flask 3.1.0 sdist (read, never written); the pack budget is
kept small (``--budget``) so the transcript stays readable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from common import DEFAULT_SHARED, machine, utc_iso

# isort: split
from devset import DEFAULT_WS, ensure_workspace, load_manifest
from mcp_client import Answer, call, connect, server_env, server_params

QUESTION = "which error handler is called for an exception raised in a view"
NARROWED = "how are HTTP exceptions handled differently from other exceptions"


def block(tool: str, args: dict[str, Any], answer: Answer, show: str) -> str:
    return (
        f"**{tool}** `{json.dumps(args)}` → {answer.ms:.0f} ms\n\n```text\n{show.rstrip()}\n```\n"
    )


async def session(ws: Path, index_dir: Path, budget: int) -> str:
    out = []
    async with connect(server_params(ws, index_dir)) as s:
        status = await call(s, "index_status")
        out.append(block("index_status", {}, status, status.text))
        args: dict[str, Any] = {"query": QUESTION, "budget_tokens": budget}
        first = await call(s, "find_evidence", args)
        out.append(block("find_evidence", args, first, first.text))
        assert first.data is not None
        top = first.data["results"][0]
        rel_args = {"path": top["path"], "line": top["line"]}  # where it holds the question
        related = await call(s, "related_code", rel_args)
        out.append(block("related_code", rel_args, related, related.text))
        narrowed = {
            "query": NARROWED,
            "open_file": top["path"],
            "line": top["line"],
            "budget_tokens": budget,
        }
        second = await call(s, "find_evidence", narrowed)
        out.append(block("find_evidence", narrowed, second, second.text))
    return "\n".join(out)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    p.add_argument("--index-root", type=Path, required=True)
    p.add_argument("--dataset", default="flask-3.1.0-commits")
    p.add_argument("--budget", type=int, default=600)
    args = p.parse_args()
    dataset = {d["name"]: d for d in load_manifest(args.shared)}[args.dataset]
    ws = ensure_workspace(args.shared, DEFAULT_WS["sdist"], dataset, history=False)
    index_dir = args.index_root / args.dataset
    subprocess.run(
        [sys.executable, "-m", "code_evidence.cli", "index", "--quiet", "--workspace", str(ws),
         "--index-dir", str(index_dir)],
        check=True, env=server_env(),
    )  # fmt: skip
    text = asyncio.run(session(ws, index_dir, args.budget))
    m = machine()
    print(f"<!-- {args.dataset}, {utc_iso()}, {m} -->\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
