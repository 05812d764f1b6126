#!/usr/bin/env python3
"""MCP and language-server latency on the dev questions, over the real protocols.

1. **find through MCP vs the CLI batch**: each dev question of a dataset asked once through
   ``code-evidence find --batch --deep`` (models loaded once; per-question time is the gap
   between two output lines, the first line dropped as it pays the model loading) and once
   through ``find_evidence`` on a running ``code-evidence mcp`` (depth deep, after one
   warm-up question), on the same index. The bar: MCP p50 <= CLI batch p50 + 15 ms.
2. **requests never block each other**: the hover-like request (LSP ``textDocument/hover``,
   MCP ``related_code``) timed idle, then while another client task runs deep finds back to
   back (each question new, so no answer cache helps). The bar: loaded p95 <= 2x idle p95.
   ``--lsp-server DIR`` runs the language server from another checkout's ``server/`` (the
   "before" row: one read thread per folder).

  PYTHONPATH=server python bench/mcp_latency.py --index-root /tmp/me-idx
  PYTHONPATH=server python bench/mcp_latency.py --dataset flask-3.1.0-commits --hovers 30

Workspaces are the shared dev set's (read, never written); indexes go under --index-root.
Results: tables on stdout and ``bench/results/mcp-latency-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import DEFAULT_SHARED, log, machine, result_path, summary, utc_iso

# isort: split
from devset import DEFAULT_WS, ensure_workspace, load_cases, load_manifest
from lsp_client import Client, find, hover, initialize, make_client, open_doc, settled, wait_status
from mcp_client import call, connect, server_env, server_params

DEFAULT_DATASETS = ["click-8.3.0-commits", "flask-3.1.0-commits"]
BAR_MS = 15.0


def cli_batch(ws: Path, index_dir: Path, questions: list[dict[str, Any]]) -> list[float]:
    """Per-question ms inside one ``find --batch --deep`` process (first line dropped)."""
    qfile = index_dir.parent / f"{index_dir.name}-questions.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    cmd = [
        sys.executable, "-m", "code_evidence.cli", "find", "--batch", str(qfile), "--deep",
        "--quiet", "--workspace", str(ws), "--index-dir", str(index_dir),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=server_env(), text=True)
    assert proc.stdout is not None
    stamps = []
    for _line in proc.stdout:
        stamps.append(time.perf_counter())
    if proc.wait() != 0:
        raise SystemExit(f"find --batch failed ({proc.returncode})")
    return [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]


def def_lines(ws: Path, limit: int) -> list[tuple[str, int, int, str]]:
    """(path, 0-based line, column, name) of call sites in the workspace's largest Python
    files: where a hover lands; spread over files so no two share a cached panel."""
    files = sorted(
        (p for p in ws.rglob("*.py") if "test" not in p.as_posix()),
        key=lambda p: -p.stat().st_size,
    )[:8]
    out: list[tuple[str, int, int, str]] = []
    for p in files:
        for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines()):
            m = re.search(r"\b([A-Za-z_][A-Za-z0-9_]{3,})\(", line)
            if m and not line.lstrip().startswith(("def ", "class ", "#")):
                out.append((p.relative_to(ws).as_posix(), i, m.start(1) + 1, m.group(1)))
    step = max(1, len(out) // limit)
    return out[::step][:limit]


async def deep_loop(ask: Any, questions: list[str], stop: asyncio.Event) -> int:
    """Deep finds back to back until ``stop``; each question new (a counter appended)."""
    n = 0
    while not stop.is_set():
        q = questions[n % len(questions)]
        await ask(f"{q} {n}")
        n += 1
    return n


async def under_load(
    probe: Any, positions: list[Any], ask: Any, questions: list[str]
) -> tuple[list[float], list[float], int]:
    """The probe on half the positions idle, then on the other half while deep finds run."""
    idle_pos, load_pos = positions[0::2], positions[1::2]
    idle = [await probe(p) for p in idle_pos]
    stop = asyncio.Event()
    loop = asyncio.create_task(deep_loop(ask, questions, stop))
    await asyncio.sleep(1.0)  # the first deep find is running
    loaded = []
    for p in load_pos:
        loaded.append(await probe(p))
        await asyncio.sleep(0.05)
    stop.set()
    finds = await loop
    return idle, loaded, finds


async def mcp_part(ws: Path, index_dir: Path, questions: list[dict[str, Any]], hovers: int):
    out: dict[str, Any] = {}
    async with connect(server_params(ws, index_dir), errlog=sys.stderr) as session:
        await call(session, "find_evidence", {"query": "warm up the models", "depth": "deep"})
        ms = []
        for q in questions:
            args = {"query": q["query"], "depth": "deep"}
            if q.get("open_file"):
                args["open_file"] = q["open_file"]
            answer = await call(session, "find_evidence", args)
            if answer.is_error:
                raise SystemExit(f"find_evidence failed: {answer.text}")
            ms.append(answer.ms)
        out["find"] = summary(ms)

        async def probe(pos: tuple[str, int, int, str]) -> float:
            answer = await call(session, "related_code", {"path": pos[0], "line": pos[1] + 1})
            return answer.ms

        async def ask(query: str) -> None:
            await call(session, "find_evidence", {"query": query, "depth": "deep"})

        idle, loaded, finds = await under_load(
            probe, def_lines(ws, hovers * 2), ask, [q["query"] for q in questions]
        )
        out["related_idle"] = summary(idle)
        out["related_loaded"] = summary(loaded)
        out["deep_finds_meanwhile"] = finds
    return out


async def lsp_part(
    ws: Path, index_dir: Path, questions: list[dict[str, Any]], hovers: int, server: Path
):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(server)
    client: Client = make_client()
    cmd = [sys.executable, "-m", "code_evidence.cli", "serve", "--index-dir", str(index_dir)]
    await client.start_io(*cmd, env=env)
    out: dict[str, Any] = {"server": str(server)}
    try:
        await initialize(client, ws)
        await wait_status(client, settled, 0, 3600)
        positions = def_lines(ws, hovers * 2)
        for rel in sorted({p[0] for p in positions}):
            open_doc(client, ws / rel)
        await find(client, {"query": "warm up the models", "depth": "deep"}, timeout=None)

        async def probe(pos: tuple[str, int, int, str]) -> float:
            t0 = time.perf_counter()
            await hover(client, ws / pos[0], pos[1], pos[2])
            return (time.perf_counter() - t0) * 1000

        async def ask(query: str) -> None:
            await find(client, {"query": query, "depth": "deep"}, timeout=None)

        idle, loaded, finds = await under_load(
            probe, positions, ask, [q["query"] for q in questions]
        )
        out["hover_idle"] = summary(idle)
        out["hover_loaded"] = summary(loaded)
        out["deep_finds_meanwhile"] = finds
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 60)
        client.exit(None)
        await client.stop()
    return out


def ratio(loaded: dict[str, float], idle: dict[str, float]) -> float:
    return loaded["p95_ms"] / max(idle["p95_ms"], 1e-9)


def table(results: dict[str, Any]) -> str:
    lines = ["find: MCP find_evidence vs CLI batch (deep, same index, each question once)"]
    lines.append(f"{'dataset':<24} {'n':>4} {'CLI p50':>9} {'MCP p50':>9} {'diff':>8}  bar")
    for name, r in results["datasets"].items():
        cli, mcp = r["cli_batch"], r["mcp"]["find"]
        diff = mcp["p50_ms"] - cli["p50_ms"]
        ok = "ok" if diff <= BAR_MS else "OVER"
        lines.append(
            f"{name:<24} {mcp['n']:>4} {cli['p50_ms']:>8.1f}  {mcp['p50_ms']:>8.1f}  "
            f"{diff:>+7.1f}  {ok} (<= +{BAR_MS:.0f} ms)"
        )
    lines.append("")
    lines.append("hover-like requests while deep finds run back to back (p95 ms)")
    lines.append(f"{'dataset':<24} {'server':<22} {'idle':>8} {'loaded':>8} {'ratio':>6}  finds")
    for name, r in results["datasets"].items():
        rows = [("MCP related_code", r["mcp"], "related_idle", "related_loaded")]
        for label, lsp in r.get("lsp", {}).items():
            rows.append((f"LSP hover ({label})", lsp, "hover_idle", "hover_loaded"))
        for label, part, ik, lk in rows:
            rt = ratio(part[lk], part[ik])
            lines.append(
                f"{name:<24} {label:<22} {part[ik]['p95_ms']:>8.1f} {part[lk]['p95_ms']:>8.1f} "
                f"{rt:>5.2f}x  {part['deep_finds_meanwhile']}"
            )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    p.add_argument("--dataset", action="append", help="dataset(s) (default: %(default)s)")
    p.add_argument("--index-root", type=Path, required=True, help="your own index folder root")
    p.add_argument("--cases", type=int, default=None, help="first N questions of each")
    p.add_argument("--hovers", type=int, default=30, help="probes idle, and as many loaded")
    p.add_argument(
        "--lsp-server",
        type=Path,
        action="append",
        default=None,
        help="a server/ folder to run the language server from (repeat to compare); "
        "default: this checkout's",
    )
    p.add_argument("--no-lsp", action="store_true")
    args = p.parse_args()
    names = args.dataset or DEFAULT_DATASETS
    manifest = {d["name"]: d for d in load_manifest(args.shared)}
    servers = args.lsp_server or [Path(__file__).resolve().parents[1] / "server"]
    results: dict[str, Any] = {"datasets": {}}
    for name in names:
        dataset = manifest[name]
        ws = ensure_workspace(args.shared, DEFAULT_WS["sdist"], dataset, history=False)
        index_dir = args.index_root / name
        index_dir.parent.mkdir(parents=True, exist_ok=True)
        cases = load_cases(args.shared, dataset, args.cases)
        questions = [{"id": c.id, "query": c.query, "open_file": c.open_file} for c in cases]
        log(f"{name}: indexing {ws} into {index_dir}")
        subprocess.run(
            [sys.executable, "-m", "code_evidence.cli", "index", "--quiet", "--workspace",
             str(ws), "--index-dir", str(index_dir)],
            check=True, env=server_env(),
        )  # fmt: skip
        log(f"{name}: CLI batch, {len(questions)} questions")
        cli = cli_batch(ws, index_dir, questions)
        log(f"{name}: MCP")
        mcp = asyncio.run(mcp_part(ws, index_dir, questions, args.hovers))
        r: dict[str, Any] = {"cli_batch": summary(cli), "mcp": mcp, "lsp": {}}
        if not args.no_lsp:
            for server in servers:
                label = server.resolve().parent.name
                log(f"{name}: LSP from {server}")
                r["lsp"][label] = asyncio.run(
                    lsp_part(ws, index_dir, questions, args.hovers, server.resolve())
                )
        results["datasets"][name] = r
    results["meta"] = {**machine(), "utc": utc_iso(), "load_avg": os.getloadavg()}
    print(table(results))
    path = result_path("mcp-latency")
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
