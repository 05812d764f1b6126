#!/usr/bin/env python3
"""How cost grows with the workspace (issue 24): the same measurements at about 50,000 chunks
(Django alone) and at ``--chunks N`` (a monorepo of several large sdists side by side).

The workspace is made of sdists (downloaded once with ``pip download`` into
``~/.cache/code-evidence-bench/downloads``), each extracted into a folder of its own under one
git repository: Django 5.1.4 first (the 50k point, the workspace of ``speed.py``), then sympy,
Django 4.2, ansible-core, botocore, salt, Django 3.2, then copies of them (``copy-2/``
…) until the estimated chunk count reaches N (estimated from text lines, calibrated on the
Django point; the table shows the real count). Vectors are off for both sizes: embedding 500k
chunks takes hours on 2 cores, so every row is BM25, structure, features and the
cross-encoder where the default runs it.

At each size, in one run:

- **lexical ready**: a cold index in a fresh process until BM25 and structure answer, and the
  peak RSS (VmHWM) of that process; **index size** on disk;
- **warm restart**: a new process opens the index and runs a pass that finds nothing changed
  (three restarts, the median);
- **find p50/p95** over the stated mix: half exact identifiers (defined symbols of non-test
  code), half descriptions (first docstring sentences), default interactive depth, so the
  cross-encoder scores the descriptions that read as one; answered from the index as it is;
- **language server**: ``code-evidence serve`` on the indexed workspace: its RSS once idle;
  then **save → queryable**: a function appended to a file on disk, until
  ``codeEvidence/find`` returns it first (the watcher's event, the server's pass, the find);
- **branch switch**: ``git checkout`` of a branch editing a function body in 5 % of the .py
  files, until one index pass is done.

With ``--django-vectors``, the one row that is Django's alone (issue 24): a cold start of the
Django workspace with vectors on and an empty embedding cache, until every chunk that gets a
vector has it (``speed.py --all-vectors-only``, about 10 minutes on 2 cores).

  PYTHONPATH=server python bench/scale.py                   # 500,000 chunks (hours on 2 cores)
  PYTHONPATH=server python bench/scale.py --chunks 60000    # a quick check of the script

Results: a table with the growth ratio of each row and ``bench/results/scale-<UTC>.json``
(top level: ``chunks``, ``lexical_ready_s``, ``peak_rss_mb``, ``find_p95_ms``,
``save_p95_ms`` at N; ``sizes``: every row at each size).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

from common import CACHE_ROOT, git, init_repo, log, machine, result_path, summary, utc_iso

# isort: split
import lsp_client as lsp
from code_evidence.config import load_config
from code_evidence.engine import Engine
from speed import (
    SWITCH_SHARE,
    append_statement,
    dir_bytes,
    make_queries,
    proc_memory,
    run_child,
    run_source_vectors,
    wait_idle,
)
from speed import find_rows as speed_find_rows

SCALE_ROOT = Path(os.environ.get("CODE_EVIDENCE_SCALE_ROOT", CACHE_ROOT / "scale"))
SMALL_ROOT = SCALE_ROOT / "ws-small"  # the Django point's workspace
DOWNLOADS = CACHE_ROOT / "downloads"
# In the order they join the workspace; the first alone is the small point.
SDISTS = (
    "Django==5.1.4",
    "sympy==1.13.3",
    "Django==4.2.16",
    "ansible-core==2.17.6",
    "botocore==1.35.60",
    "salt==3007.1",
    "Django==3.2.25",
)
# Chunks per line of each kind of file, measured on the 450,534-chunk run (a single rate per
# text line, calibrated on Django, counted botocore's JSON at 118k chunks and gave 51k; leaving
# JSON out then fell short): Python is cut at its definitions, other text into line windows,
# and the JavaScript of these sdists is mostly minified (skipped). Other suffixes held under
# 1 % of that run's chunks. Per sdist the estimate is off by up to a third either way (Django
# has more chunks a line than salt), over that run's ten parts it was within 0.3 %.
CHUNKS_PER_LINE = {".py": 0.062, ".html": 0.071, ".js": 0.003}
WINDOW_SUFFIXES = (".json", ".po", ".txt", ".rst", ".yml", ".css", ".md", ".xml", ".svg")
WINDOW_PER_LINE = 0.021
SWITCH_BRANCH = "bench-scale-switch"
SERVER_WAIT_S = 3600.0
SAVE_TIMEOUT_S = 60.0
DOWNLOAD_TIMEOUT_S = 600.0


# -- the workspace --------------------------------------------------------------------------


def sdist_file(spec: str) -> Path:
    """The sdist of ``spec`` (``name==version``), downloaded once with pip."""
    name, version = spec.split("==")
    stem = name.replace("-", "_")
    for cand in DOWNLOADS.glob("*.tar.gz"):
        base = cand.name[: -len(".tar.gz")]
        if base.lower() in (f"{name}-{version}".lower(), f"{stem}-{version}".lower()):
            return cand
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    log(f"downloading the {spec} sdist into {DOWNLOADS} ...")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", spec,
         "-d", str(DOWNLOADS)],
        check=True,
        timeout=DOWNLOAD_TIMEOUT_S,
    )  # fmt: skip
    return sdist_file(spec)


def extract(spec: str, dest: Path) -> None:
    tmp = dest.parent / (dest.name + ".extract")
    shutil.rmtree(tmp, ignore_errors=True)
    with tarfile.open(sdist_file(spec)) as tar:
        tar.extractall(tmp, filter="data")
    (inner,) = list(tmp.iterdir())
    inner.rename(dest)
    shutil.rmtree(tmp, ignore_errors=True)


def estimated_chunks(folder: Path) -> float:
    """The chunks ``folder`` will give, from its lines (``CHUNKS_PER_LINE``)."""
    n = 0.0
    for path in folder.rglob("*"):
        rate = CHUNKS_PER_LINE.get(path.suffix, WINDOW_PER_LINE * (path.suffix in WINDOW_SUFFIXES))
        if rate and path.is_file():
            with path.open("rb") as fh:
                n += rate * sum(1 for _ in fh)
    return n


def commit_all(root: Path) -> None:
    (root / ".code-evidence.toml").write_text("[stages]\nvectors = false\n", encoding="utf-8")
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "workspace")
    # The workspace and its git objects (1-2 GB at 500k chunks) are still being written back
    # to disk: measured right away, the cold index competed with that writeback (519,588
    # chunks 184.8 s, 159.6 s after a sync). Flush it, so the row measures the index.
    os.sync()


def small_workspace() -> Path:
    """Django 5.1.4 alone, in a folder of its own as in the large one."""
    root = SMALL_ROOT
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    extract(SDISTS[0], root / "django-5.1.4")
    commit_all(root)
    return root


def large_workspace(chunks: int) -> tuple[Path, list[str]]:
    """Sdists side by side (then copies of them) until ``chunks`` are estimated
    (``estimated_chunks``)."""
    root = SCALE_ROOT / f"ws-{chunks}"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    parts: list[str] = []
    estimate, copy = 0.0, 1
    while estimate < chunks:
        for spec in SDISTS:
            if estimate >= chunks:
                break
            folder = spec.replace("==", "-").lower() + (f"-copy-{copy}" if copy > 1 else "")
            try:
                extract(spec, root / folder)
            except (subprocess.SubprocessError, OSError) as exc:
                log(f"  {spec} unavailable ({exc}); skipped")
                continue
            estimate += estimated_chunks(root / folder)
            parts.append(folder)
            log(f"  + {folder}: about {estimate:,.0f} chunks")
        copy += 1
        if not parts:
            raise RuntimeError("no sdist could be fetched")
    commit_all(root)
    return root, parts


# -- rows -----------------------------------------------------------------------------------


def find_rows(root: Path, index_dir: Path, queries: int) -> dict[str, Any]:
    with Engine(root, index_dir=index_dir, config=load_config(root)) as engine:
        chunks = list(engine.parts.store.all_chunks())
        idents, docs = make_queries(chunks, queries)
        del chunks
        rows = speed_find_rows(engine, idents, docs)
    return {
        "identifiers": rows["find_identifiers"],
        "descriptions": rows["find_docstrings"],
        "all": rows["find_all"],
        "sample": {"identifiers": idents[:3], "descriptions": docs[:2]},
    }


def save_target(root: Path) -> Path:
    """A large, much-used module: Django's QuerySet wherever Django sits."""
    hits = sorted(root.glob("django-5.1.4*/django/db/models/query.py"))
    return hits[0] if hits else max(root.rglob("*.py"), key=lambda p: p.stat().st_size)


async def server_rows(root: Path, index_dir: Path, saves: int) -> dict[str, Any]:
    """The real server: idle RSS once its first pass is done and it went quiet, then saves
    on disk until ``codeEvidence/find`` answers with the new function (p50/p95)."""
    client = await lsp.start(index_dir, SCALE_ROOT / "server-stderr.log")
    out: dict[str, Any] = {}
    target = save_target(root)
    original = target.read_text(encoding="utf-8")
    try:
        await lsp.initialize(client, root, capabilities=lsp.PROGRESS_ONLY)
        await lsp.wait_status(client, lsp.settled, 0, SERVER_WAIT_S)
        pid = client._server.pid if client._server else 0
        out["idle_after_s"] = round(await wait_idle(pid), 1)
        out["idle"] = proc_memory(pid)
        await lsp.find(client, {"query": "warm up the readers", "limit": 1}, timeout=None)
        lat = []
        for i in range(saves):
            marker = f"bench_scale_saved_{i}_{int(time.time())}"
            await asyncio.sleep(0.5)  # apart: each save is its own event, as in an editor
            t0 = time.perf_counter()
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {marker}(payload):\n    return payload\n")
            while True:
                ans = await lsp.find(client, {"query": marker, "limit": 1}, timeout=None)
                if ans["results"] and ans["results"][0]["symbol"] == marker:
                    break
                if time.perf_counter() - t0 > SAVE_TIMEOUT_S:
                    raise TimeoutError(f"{marker} never became queryable")
                await asyncio.sleep(0.02)
            lat.append((time.perf_counter() - t0) * 1000)
        out["save"] = {**summary(lat), "file": str(target.relative_to(root))}
        out["after_saves"] = proc_memory(pid)
    finally:
        target.write_text(original, encoding="utf-8")
        await lsp.stop(client)
    return out


def switch_row(root: Path, index_dir: Path) -> dict[str, Any]:
    """A branch editing a function body in 5 % of the .py files (made with git, then
    undone), ``git checkout`` to it until one index pass is done, and back."""
    rng = random.Random(5)
    files = git(root, "ls-files", "*.py").splitlines()
    rng.shuffle(files)
    want = round(len(files) * SWITCH_SHARE)
    git(root, "checkout", "-q", "-b", SWITCH_BRANCH)
    modified = 0
    for rel in files:
        if modified == want:
            break
        modified += append_statement(root / rel, rng, modified)
    git(root, "commit", "-qam", f"edit {modified} .py files")
    git(root, "checkout", "-q", "main")
    out: dict[str, Any] = {"py_files": len(files), "modified": modified}
    with Engine(root, index_dir=index_dir, config=load_config(root)) as engine:
        engine.index()  # the index at main (the saves above moved one file and back)
        for branch in (SWITCH_BRANCH, "main"):
            t0 = time.perf_counter()
            git(root, "checkout", "-q", branch)
            report = engine.index()
            out[branch] = {
                "s": round(time.perf_counter() - t0, 2),
                "files_changed": report.files_changed,
                "chunks_added": report.chunks_added,
            }
    git(root, "branch", "-q", "-D", SWITCH_BRANCH)
    return out


def progress(label: str, out: dict[str, Any]) -> None:
    """Each row as soon as it is measured: the log, and ``partial-<label>.json`` beside the
    workspaces, so a run stopped early still leaves what it measured."""
    flat_rows = {k: v for k, v in out.items() if not isinstance(v, dict)}
    log(f"[{label}] so far: {json.dumps(flat_rows)}")
    (SCALE_ROOT / f"partial-{label}.json").write_text(json.dumps(out, indent=2))


def measure(root: Path, label: str, args: argparse.Namespace) -> dict[str, Any]:
    index_dir = SCALE_ROOT / f"index-{label}"
    shutil.rmtree(index_dir, ignore_errors=True)
    log(f"[{label}] cold index ...")
    cold = run_child(root, index_dir)
    log(f"[{label}] {cold['chunks_total']} chunks in {cold['ready_s']:.1f} s; warm restart ...")
    # Three restarts, the median reported: one stalled for 4 s once (the same index gave
    # 0.8-1.7 s right after), and one run should not decide a row that reads one pass.
    warms = sorted((run_child(root, index_dir) for _ in range(3)), key=lambda w: w["ready_s"])
    warm = warms[1]
    out: dict[str, Any] = {
        "chunks": cold["chunks_total"],
        "files": cold["files_seen"],
        "lexical_ready_s": round(cold["ready_s"], 2),
        "lexical_ready_process_s": round(cold["process_wall_s"], 2),
        "peak_rss_mb": round(cold["peak_rss_mb"], 1),
        "index_mb": round(dir_bytes(index_dir) / 1e6, 1),
        "warm_restart_s": round(warm["ready_s"], 3),
        "warm_restart_process_s": round(warm["process_wall_s"], 2),
        "warm_restarts_s": [round(w["ready_s"], 3) for w in warms],
        "estimated_chunks": round(estimated_chunks(root)),
    }
    progress(label, out)
    log(f"[{label}] find x {args.queries} ...")
    out["find"] = find_rows(root, index_dir, args.queries)
    out["find_p50_ms"] = out["find"]["all"]["p50_ms"]
    out["find_p95_ms"] = out["find"]["all"]["p95_ms"]
    progress(label, out)
    log(f"[{label}] language server: idle memory, {args.saves} saves ...")
    server = asyncio.run(server_rows(root, index_dir, args.saves))
    out["server"] = server
    out["lsp_idle_rss_mb"] = server["idle"]["rss_mb"]
    out["save_p50_ms"] = server["save"]["p50_ms"]
    out["save_p95_ms"] = server["save"]["p95_ms"]
    progress(label, out)
    if not args.no_switch:
        log(f"[{label}] branch switch ...")
        out["switch"] = switch_row(root, index_dir)
    return out


# -- report ---------------------------------------------------------------------------------

ROWS = (
    ("chunks", "chunks", "{:,.0f}", ""),
    ("files", "files indexed", "{:,.0f}", ""),
    ("lexical_ready_s", "cold index, lexical ready", "{:.1f} s", "<= 180 s"),
    ("peak_rss_mb", "peak RSS while indexing", "{:.0f} MB", "<= 1536 MB"),
    ("index_mb", "index size on disk", "{:.0f} MB", ""),
    ("warm_restart_s", "warm restart to ready", "{:.2f} s", "<= 2 s"),
    ("find_p50_ms", "find p50 (mix)", "{:.0f} ms", ""),
    ("find_p95_ms", "find p95 (mix)", "{:.0f} ms", "<= 200 ms"),
    ("save_p50_ms", "save -> queryable p50 (LSP)", "{:.0f} ms", ""),
    ("save_p95_ms", "save -> queryable p95 (LSP)", "{:.0f} ms", "<= 500 ms"),
    ("lsp_idle_rss_mb", "language server idle RSS", "{:.0f} MB", ""),
    ("switch_s", "branch switch 5 %, to consistent", "{:.1f} s", ""),
)


def flat(size: dict[str, Any]) -> dict[str, Any]:
    out = dict(size)
    if "switch" in size:
        out["switch_s"] = size["switch"][SWITCH_BRANCH]["s"]
    return out


def table(small: dict[str, Any], large: dict[str, Any]) -> str:
    a, b = flat(small), flat(large)
    rows = [("measure", f"{a['chunks']:,} chunks", f"{b['chunks']:,} chunks", "ratio", "target")]
    for key, label, fmt, target in ROWS:
        if key not in a or key not in b:
            continue
        ratio = b[key] / a[key] if a[key] else float("nan")
        rows.append((label, fmt.format(a[key]), fmt.format(b[key]), f"{ratio:.2f}x", target))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", type=int, default=500_000, help="size of the large workspace")
    p.add_argument("--queries", type=int, default=120, help="find queries per size (>= 100)")
    p.add_argument("--saves", type=int, default=20, help="saves per size (>= 20 for p95)")
    p.add_argument("--no-switch", action="store_true", help="skip the branch-switch row")
    p.add_argument(
        "--django-vectors",
        action="store_true",
        help="add Django's every-vector row (a cold start with vectors on, about 10 minutes)",
    )
    p.add_argument(
        "--small-only", action="store_true", help="only the Django point (a before/after check)"
    )
    p.add_argument(
        "--small-from",
        type=Path,
        help="the Django point from an earlier --small-only run's JSON instead of measuring it",
    )
    args = p.parse_args()
    t_run = time.perf_counter()

    if args.small_from:
        small = json.loads(args.small_from.read_text(encoding="utf-8"))
    else:
        small = measure(small_workspace(), "small", args)
    if args.django_vectors:
        log("[small] cold start with vectors on, until every vector is in (about 10 minutes) ...")
        root = SMALL_ROOT if SMALL_ROOT.is_dir() else small_workspace()  # after --small-from
        small["vectors"] = run_source_vectors(root, True)
        small["all_vectors_min"] = round(small["vectors"]["all_vectors_s"] / 60, 2)
    if args.small_only:
        path = result_path("scale-small")
        path.write_text(json.dumps({**small, "utc": utc_iso(), **machine()}, indent=2))
        print(json.dumps({k: v for k, v in small.items() if not isinstance(v, dict)}, indent=1))
        print(f"wrote {path}")
        return 0
    log(f"building the large workspace ({args.chunks:,} chunks) ...")
    large_root, parts = large_workspace(args.chunks)
    large = measure(large_root, "large", args)

    result: dict[str, Any] = {
        "chunks": large["chunks"],
        "lexical_ready_s": large["lexical_ready_s"],
        "peak_rss_mb": large["peak_rss_mb"],
        "find_p95_ms": large["find_p95_ms"],
        "save_p95_ms": large["save_p95_ms"],
        **({"django_all_vectors_min": small["all_vectors_min"]} if args.django_vectors else {}),
        "sizes": {"small": small, "large": large},
        "meta": {
            "requested_chunks": args.chunks,
            "large_parts": parts,
            "vectors": "off at both sizes (BM25, structure, features, cross-encoder)",
            "find_mix": "half identifiers, half first docstring sentences; interactive",
            "load": os.getloadavg(),
            **machine(),
            "wall_s": round(time.perf_counter() - t_run, 1),
            "utc": utc_iso(),
        },
    }
    print(table(small, large))
    if args.django_vectors:
        v = small["vectors"]
        print(
            f"Django, cold start with vectors on: every source vector at "
            f"{v['source_vectors_s'] / 60:.2f} min, every vector ({v['vectors']:,} of "
            f"{v['vectors_wanted']:,}) at {small['all_vectors_min']:.2f} min (target <= 10 min); "
            f"peak RSS {v['peak_rss_mb']:.0f} MB"
        )
    path = result_path("scale")
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"wrote {path} ({result['meta']['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
