#!/usr/bin/env python3
"""Language-server latency on a large workspace, measured over the protocol.

Starts ``code-evidence serve`` as an editor would (stdio, JSON-RPC) on a git repository and
measures what a user waits for:

- **initial index**: ``initialize`` until the first settled ``codeEvidence/status`` (lexical
  readiness: BM25 and structure answer; ``partial`` while vectors are missing) and, with
  vectors on, until ``ready``;
- **find** and **hover** latency (p50/p95, client-side round trip) on queries and identifiers
  of the workspace, with and without an open document;
- **save → queryable**: a function appended to a file on disk until ``codeEvidence/find``
  returns it first (watcher debounce + incremental pass + query);
- **branch switch**: ``git checkout`` until the status says the index moved to the new HEAD,
  with the pass's re-chunked files and re-embedded chunk counts (the embedding cache is
  content addressed: switching back must embed nothing).

The default workspace is the Django 5.1.4 sdist (``pip download``, cached under
``~/.cache/code-evidence-bench``), made a git repository with a ``bench-switch`` branch that
edits, adds and deletes files. ``--workspace DIR`` copies any folder instead. Vectors are off by
default: embedding ~50k chunks on a laptop CPU takes longer than the rest of the benchmark, so
the default run measures lexical readiness, and says so. ``--vectors on`` measures the real
thing (use a smaller ``--workspace`` or a warm embedding cache).

  PYTHONPATH=server python bench/lsp_latency.py
  PYTHONPATH=server python bench/lsp_latency.py --workspace . --vectors on --queries 10

Results: a table on stdout and ``bench/results/lsp-latency-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types

from common import (  # first: puts this checkout's server/ on sys.path
    CACHE_ROOT,
    git,
    init_repo,
    log,
    machine,
    result_path,
    summary,
    utc_iso,
)

# isort: split
from lsp_client import (
    PROGRESS_ONLY,
    find,
    hover,
    initialize,
    open_doc,
    settled,
    start,
    stop,
    wait_status,
)

DJANGO = "Django==5.1.4"
BRANCH = "bench-switch"

DJANGO_QUERIES = [
    "where is the CSRF token checked",
    "QuerySet.filter",
    "how are migrations squashed",
    "get_object_or_404",
    "password hashing algorithm PBKDF2",
    "template variable resolution",
    "select_related prefetch_related",
    "how does the URL resolver match a path",
    "session expiry",
    "ModelForm validation clean",
    "transaction.atomic savepoint",
    "signals post_save receiver",
    "cache backend memcached",
    "timezone aware datetime conversion",
    "admin changelist search",
    "HttpResponseRedirect",
    "where are static files collected",
    "database router allow_migrate",
    "paginator page out of range",
    "email backend smtp send_messages",
]
DJANGO_OPEN_FILE = "django/db/models/query.py"


# -- workspace ------------------------------------------------------------------------------


def django_tree(dest: Path) -> None:
    downloads = CACHE_ROOT / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    sdist = downloads / "Django-5.1.4.tar.gz"
    if not sdist.exists():
        log(f"downloading the {DJANGO} sdist into {downloads} ...")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             DJANGO, "-d", str(downloads)],
            check=True,
        )  # fmt: skip
    tmp = dest.parent / (dest.name + ".extract")
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp, filter="data")
    (inner,) = list(tmp.iterdir())
    inner.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)


def copy_tree(src: Path, dest: Path) -> None:
    skip = shutil.ignore_patterns(".git", ".venv", "venv", "node_modules", "__pycache__", "results")
    shutil.copytree(src, dest, ignore=skip, symlinks=True)


def branch_edits(root: Path) -> dict[str, Any]:
    """Edits for the ``bench-switch`` branch: modify 20 files, add 2, delete 3 (Python files of
    the package, not tests). Returns what was done and a symbol only the branch has."""
    files = sorted(
        p for p in root.rglob("*.py")
        if "test" not in p.as_posix() and p.stat().st_size > 2000 and ".git" not in p.parts
    )  # fmt: skip
    step = max(1, len(files) // 25)
    picked = files[::step][:25]
    modified, deleted = picked[:20], picked[20:23]
    for i, p in enumerate(modified):
        with p.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\ndef bench_branch_helper_{i}(value):\n    return value\n")
    for p in deleted:
        p.unlink()
    new_dir = modified[0].parent
    for i in range(2):
        (new_dir / f"bench_added_{i}.py").write_text(
            f"def bench_added_feature_{i}(request):\n    return request\n", encoding="utf-8"
        )
    return {
        "modified": len(modified),
        "added": 2,
        "deleted": len(deleted),
        "branch_symbol": "bench_added_feature_0",
        "branch_file": (new_dir / "bench_added_0.py").relative_to(root).as_posix(),
    }


def prepare(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    name = "django-5.1.4" if args.workspace is None else Path(args.workspace).resolve().name
    root = CACHE_ROOT / "lsp" / name
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    if args.workspace is None:
        django_tree(root)
    else:
        copy_tree(Path(args.workspace).resolve(), root)
    (root / ".code-evidence.toml").write_text(
        f"[stages]\nvectors = {'true' if args.vectors == 'on' else 'false'}\n", encoding="utf-8"
    )
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "workspace")
    git(root, "checkout", "-q", "-b", BRANCH)
    edits = branch_edits(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "branch edits")
    git(root, "checkout", "-q", "main")
    return root, edits


# -- measuring ------------------------------------------------------------------------------


async def timed(coro: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = await coro
    return out, (time.perf_counter() - t0) * 1000


def hover_positions(text: str, limit: int) -> list[tuple[int, int, str]]:
    """Call sites in a file: (0-based line, column inside the name, name)."""
    out = []
    for i, line in enumerate(text.splitlines()):
        for m in re.finditer(r"\b([A-Za-z_][A-Za-z0-9_]{3,})\(", line):
            if line.lstrip().startswith(("def ", "class ", "#")):
                continue
            out.append((i, m.start(1) + 1, m.group(1)))
            break
    step = max(1, len(out) // limit)
    return out[::step][:limit]


async def measure(args: argparse.Namespace, root: Path, edits: dict[str, Any]) -> dict[str, Any]:
    index_dir = CACHE_ROOT / "lsp" / f"index-{root.name}"
    shutil.rmtree(index_dir, ignore_errors=True)
    server_log = CACHE_ROOT / "lsp" / "server-stderr.log"
    client = await start(index_dir, server_log)
    out: dict[str, Any] = {"server_log": str(server_log)}
    try:
        t0 = time.perf_counter()
        await initialize(client, root, capabilities=PROGRESS_ONLY)
        first = await wait_status(client, settled, 0, args.timeout)
        out["initial"] = {
            "lexical_ready_s": round(time.perf_counter() - t0, 2),
            "files": first["files"],
            "chunks": first["chunks"],
            "vectors": args.vectors,
            "pass": first["lastPass"],
        }
        if args.vectors == "on" and first["state"] != "ready":
            ready = await wait_status(client, lambda s: s["state"] == "ready", 0, args.timeout)
            out["initial"]["ready_s"] = round(time.perf_counter() - t0, 2)
            out["initial"]["vectors_done"] = ready["vectorsDone"]
        log(f"initial index: {out['initial']}")

        # find: half plain, half with an open document and cursor
        open_rel = DJANGO_OPEN_FILE if (root / DJANGO_OPEN_FILE).exists() else None
        if open_rel is None:
            open_rel = (
                max(
                    (p for p in root.rglob("*.py") if ".git" not in p.parts),
                    key=lambda p: p.stat().st_size,
                )
                .relative_to(root)
                .as_posix()
            )
        open_path = root / open_rel
        open_text = open_path.read_text(encoding="utf-8", errors="replace")
        open_doc(client, open_path, open_text)
        queries = DJANGO_QUERIES if args.workspace is None else [
            name for _, _, name in hover_positions(open_text, 40)
        ]  # fmt: skip
        queries = queries[: args.queries]
        # warm-up (model, caches), not timed; no timeout: a large workspace takes what it takes
        await find(client, {"query": queries[0]}, timeout=None)
        plain, with_doc = [], []
        n_lines = max(1, len(open_text.splitlines()))
        for i, q in enumerate(queries * args.repeat):
            _, ms = await timed(find(client, {"query": q}, timeout=None))
            plain.append(ms)
            params = {
                "query": q,
                "textDocument": {"uri": open_path.as_uri()},
                "position": {"line": (i * 97) % n_lines, "character": 0},
            }
            _, ms = await timed(find(client, params, timeout=None))
            with_doc.append(ms)
        out["find"] = summary(plain)
        out["find_open_document"] = summary(with_doc)

        # hover on call sites of the open file
        hovers, panels = [], 0
        for line, col, _name in hover_positions(open_text, args.hovers):
            res, ms = await timed(hover(client, open_path, line, col))
            hovers.append(ms)
            panels += res is not None
        out["hover"] = {**summary(hovers), "panels": panels}

        # save -> queryable
        target = open_path
        original = target.read_text(encoding="utf-8")
        save_ms = []
        for i in range(args.saves):
            marker = f"bench_saved_marker_{i}_{int(time.time())}"
            t0 = time.perf_counter()
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {marker}(payload):\n    return payload\n")
            while True:
                ans = await find(client, {"query": marker, "limit": 1}, timeout=None)
                if ans["results"] and ans["results"][0]["symbol"] == marker:
                    break
                if time.perf_counter() - t0 > args.timeout:
                    raise TimeoutError(f"{marker} never became queryable")
                await asyncio.sleep(0.02)
            save_ms.append((time.perf_counter() - t0) * 1000)
        out["save_to_queryable"] = summary(save_ms)
        target.write_text(original, encoding="utf-8")
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=open_path.as_uri())
            )
        )
        # A pass that starts after the restore: the tree is back to the commit before switching.
        reindex = types.ExecuteCommandParams(command="codeEvidence.reindex", arguments=[])
        await asyncio.wait_for(client.workspace_execute_command_async(reindex), args.timeout)

        # branch switch there and back
        switches = []
        for branch in (BRANCH, "main"):
            n = len(client.statuses)
            t0 = time.perf_counter()
            git(root, "checkout", "-q", branch)
            moved = await wait_status(
                client, lambda s: settled(s) and "HEAD moved" in (s["message"] or ""), n,
                args.timeout,
            )  # fmt: skip
            indexed_s = time.perf_counter() - t0
            want = edits["branch_symbol"]
            ans = await find(client, {"query": want, "limit": 3}, timeout=None)
            has = any(r["symbol"] == want for r in ans["results"])
            lp = moved["lastPass"]
            switches.append(
                {
                    "to": branch,
                    "switch_s": round(indexed_s, 2),
                    "files_changed": lp["files_changed"],
                    "files_removed": lp["files_removed"],
                    "chunks_added": lp["chunks_added"],
                    "chunks_removed": lp["chunks_removed"],
                    "embedded": lp["embedded"],
                    "vectors_from_cache": lp["vectors_from_cache"],
                    "pass_ms": round(lp["ms"], 1),
                    "branch_symbol_found": has,
                    "commit": moved["indexedCommit"],
                }
            )
        out["branch_switch"] = switches
    finally:
        await stop(client)
    return out


def table(result: dict[str, Any]) -> str:
    rows = [("measure", "n", "p50 ms", "p95 ms", "max ms")]
    for key in ("find", "find_open_document", "hover", "save_to_queryable"):
        s = result[key]
        rows.append(
            (key, str(s["n"]), f"{s['p50_ms']:.1f}", f"{s['p95_ms']:.1f}", f"{s['max_ms']:.1f}")
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    init = result["initial"]
    lines.append("")
    ready = f", ready (vectors) {init['ready_s']} s" if "ready_s" in init else ""
    lines.append(
        f"initial index: {init['files']} files, {init['chunks']} chunks; lexical readiness "
        f"{init['lexical_ready_s']} s{ready}"
    )
    lines.append(f"hover panels shown: {result['hover']['panels']}/{result['hover']['n']}")
    lines.append("branch switch (checkout -> index at new HEAD):")
    for s in result["branch_switch"]:
        lines.append(
            f"  to {s['to']:<13} {s['switch_s']:>6.2f} s  files changed {s['files_changed']:>3} "
            f"removed {s['files_removed']:>2}  chunks +{s['chunks_added']} -{s['chunks_removed']}  "
            f"embedded {s['embedded']} (from cache {s['vectors_from_cache']})  "
            f"branch symbol found: {s['branch_symbol_found']}"
        )
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workspace", help="a folder to copy and use instead of Django 5.1.4")
    p.add_argument("--vectors", choices=("on", "off"), default="off")
    p.add_argument("--queries", type=int, default=20, help="distinct find queries")
    p.add_argument("--repeat", type=int, default=2, help="rounds over the queries")
    p.add_argument("--hovers", type=int, default=40)
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for a state")
    args = p.parse_args()
    root, edits = prepare(args)
    t0 = time.perf_counter()
    result = asyncio.run(measure(args, root, edits))
    meta = {
        "workspace": str(root),
        "source": DJANGO if args.workspace is None else str(Path(args.workspace).resolve()),
        "vectors": args.vectors,
        "note": (
            "vectors off: answers come from BM25 + structure + features (lexical readiness); "
            "embedded counts are 0 by construction, chunks_added is what a vectors-on index "
            "would look up in the embedding cache"
            if args.vectors == "off"
            else "vectors on: full pipeline"
        ),
        "branch_edits": edits,
        **machine(),
        "wall_s": round(time.perf_counter() - t0, 1),
        "utc": utc_iso(),
    }
    result = {"meta": meta, **result}
    print(f"workspace: {meta['source']} ({meta['note']})")
    print(table(result))
    path = result_path("lsp-latency")
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
