#!/usr/bin/env python3
"""Speed and scale on a large real workspace (issue 7), in one run.

On the Django 5.1.4 sdist (downloaded once and cached under ``~/.cache/code-evidence-bench``,
made a git repository) it measures:

- **cold index** until lexical answers work (vectors off: BM25 + structure), chunks/s, and the
  indexing process's peak RSS (``getrusage`` in a child process);
- **warm restart**: a new process opens the index and runs a pass that finds nothing changed;
- **save → queryable**: a function appended to a file until ``find`` returns it first;
- **find latency** p50/p95 over N distinct queries (identifiers and docstring sentences of the
  workspace), answered from the index as it is (``refresh=False``: an editor's server updates
  on file events, not per query);
- **exact identifiers vs ripgrep**: the same identifier queries with ``rg -w -F``;
- **find with the cross-encoder**: p50/p95 over the docstring sentences it scores (those that
  ``reads_as_description``), fresh answer and score caches;
- **index size** on disk;
- **branch switch**: in a copy of the workspace, a branch made with ``git`` that edits a function
  body in 5 % of the .py files, adds 3 modules and deletes 3; ``git checkout`` there and back,
  each until one index pass (BM25, structure and vectors) finishes, with the chunks the model
  embedded against the chunks whose content is new;
- **language server**: the real server (``code-evidence serve`` over stdio) on the indexed
  workspace: its RSS once idle (``/proc/<pid>/status``), hover latency over the protocol on
  call sites of a few large files, and its RSS after those hovers;
- **embedding throughput** on a sample of real chunks: the pipeline (``embed_with_cache`` into
  a cold temporary cache) against the bare ONNX session on the same inputs (one text per run)
  in the same process (the floor), plus the session options before issue 7 (``legacy_embed``
  below: one run at a time on a thread per logical CPU) for a before/after and a
  vector-identity check.

  PYTHONPATH=server python bench/speed.py                     # full run (< 10 min, 2 cores)
  PYTHONPATH=server python bench/speed.py --sample 200 --queries 100

Results: a table on stdout and ``bench/results/speed-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import dataclasses
import hashlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

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
import lsp_client as lsp
from code_evidence.api import FindRequest
from code_evidence.config import Config, load_config
from code_evidence.engine import Engine
from code_evidence.index.indexer import embed_priority
from code_evidence.index.store import StoredChunk
from code_evidence.models.embed_cache import (
    EmbeddingCache,
    embed_with_cache,
    embedding_key,
    embedding_text,
)
from code_evidence.models.embedder import Embedder, model_inputs, normalise
from code_evidence.search.query import analyze
from code_evidence.search.rerank import reads_as_description
from lsp_latency import DJANGO, django_tree, hover_positions, timed

SPEED_ROOT = CACHE_ROOT / "speed"
SAVE_FILE = "django/db/models/query.py"
SWITCH_BRANCH = "bench-switch-5pct"
SWITCH_SHARE = 0.05
# Hover positions are call sites spread over these files (large, much-used modules).
HOVER_FILES = (
    "django/db/models/query.py",
    "django/db/models/sql/query.py",
    "django/forms/models.py",
    "django/contrib/admin/options.py",
)
SERVER_WAIT_S = 600.0


# -- workspace ------------------------------------------------------------------------------


def prepare_workspace() -> Path:
    """A fresh copy of the sdist each run (a previous run's edits never leak in), as a git
    repository: what a user's checkout looks like to the scanner."""
    root = SPEED_ROOT / "django-5.1.4"
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    django_tree(root)
    (root / ".code-evidence.toml").write_text("[stages]\nvectors = false\n", encoding="utf-8")
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "workspace")
    return root


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# -- child processes: indexing with its own peak RSS ----------------------------------------


def _vm_hwm_mb(pid: int | str) -> float:
    """A process's own peak RSS. Not ``ru_maxrss``: Linux carries it across exec, so a child
    started from this (by then large) benchmark process reported the parent's peak as its own
    (2.2 GB for an indexing child that peaks at 0.6 GB). VmHWM belongs to the new memory map."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:  # gone already
        pass
    return 0.0


class TreePeak:
    """Peak RSS of this process and the processes it starts, read every ``every`` seconds
    while they live: this process's VmHWM, plus the VmHWM of each reading worker (a large pass
    reads in worker processes that live as long as its reading, so their peaks overlap this
    process's), plus the largest of the other, short-lived children (git). A sum of peaks: at
    least the true peak of the whole tree at any moment."""

    def __init__(self, every: float = 0.25) -> None:
        self.children: dict[str, tuple[str, float]] = {}  # pid -> (kind, VmHWM MB)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            for task in Path("/proc/self/task").iterdir():
                try:
                    pids = (task / "children").read_text(encoding="ascii").split()
                except OSError:
                    continue
                for pid in pids:
                    kind, hwm = self.children.get(pid, ("", 0.0))
                    self.children[pid] = (kind or _process_kind(pid), max(hwm, _vm_hwm_mb(pid)))

    def report(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        own = _vm_hwm_mb("self") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        workers = [mb for kind, mb in self.children.values() if kind == "reading worker"]
        others = [mb for kind, mb in self.children.values() if kind != "reading worker"]
        return {
            "peak_rss_mb": own + sum(workers) + max(others, default=0.0),
            "peak_rss_main_mb": own,
            "peak_rss_workers_mb": [round(mb, 1) for mb in workers],
            "peak_rss_other_children_mb": round(max(others, default=0.0), 1),
            "other_children": sorted({k for k, _ in self.children.values()} - {"reading worker"}),
        }


def _process_kind(pid: str) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return ""
    if b"code_evidence.index.readworker" in argv:
        return "reading worker"
    return Path(argv[0].decode("utf-8", "replace")).name if argv and argv[0] else ""


def child_index(workspace: str, index_dir: str) -> None:
    """Runs in a fresh interpreter: open the engine, one index pass, report as JSON."""
    peak = TreePeak()
    t_start = time.perf_counter()
    with Engine(workspace, index_dir=index_dir) as engine:
        t_open = time.perf_counter()
        report = engine.index()
        t_done = time.perf_counter()
        state = engine.state
    print(
        json.dumps(
            {
                "open_s": t_open - t_start,
                "index_s": t_done - t_open,
                "ready_s": t_done - t_start,
                "state": state,
                "files_seen": report.files_seen,
                "files_changed": report.files_changed,
                "chunks_total": report.chunks_total,
                "chunks_added": report.chunks_added,
                **peak.report(),
            }
        )
    )


def child_json(flag: str, workspace: Path, index_dir: Path, cache_dir: str | None = None) -> Any:
    """Run this file as ``--child-<flag>`` in a fresh interpreter (its own peak RSS, imports
    and model loads) and return the JSON it prints last. ``cache_dir``: an embedding cache of
    its own (cold) instead of the user's."""
    env = lsp.server_env()
    if cache_dir is not None:
        env["CODE_EVIDENCE_CACHE_DIR"] = cache_dir
    proc = subprocess.run(
        [sys.executable, __file__, f"--child-{flag}", str(workspace), str(index_dir)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{flag} child failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_child(workspace: Path, index_dir: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = child_json("index", workspace, index_dir)
    out["process_wall_s"] = time.perf_counter() - t0  # interpreter start and imports included
    return out


def vectors_on(workspace: Path) -> Config:
    """The workspace's configuration (vectors off for the speed workspace) with vectors on."""
    config = load_config(workspace)
    return dataclasses.replace(config, stages=dataclasses.replace(config.stages, vectors=True))


def child_vectors(workspace: str, index_dir: str, every: bool = False) -> None:
    """A cold index with vectors on, stopped once every source-code chunk (embed_priority 0,
    embedded first) has its vector, or with ``every`` once every chunk that gets a vector has
    it (the pass's end). Run with a fresh CODE_EVIDENCE_CACHE_DIR (no warm cache)."""
    config = vectors_on(Path(workspace))
    cancel = threading.Event()
    marks: dict[str, float] = {}
    peak = TreePeak()
    t_start = time.perf_counter()
    with Engine(workspace, index_dir=index_dir, config=config) as engine:
        source: list[int] = []

        def progress(stage: str, done: int, total: int) -> None:
            if stage == "embed" and "embed_start" not in marks:
                marks["embed_start"] = time.perf_counter() - t_start
                source.append(
                    sum(embed_priority(sc.chunk) == 0 for sc in engine.reader.all_chunks())
                )
            if stage == "embed" and source and done >= source[0]:
                marks.setdefault("source_done", time.perf_counter() - t_start)
                if not every:
                    marks["embedded_at_stop"] = done
                    cancel.set()

        report = engine.index(progress=progress, cancel=cancel)
        all_s = time.perf_counter() - t_start
        vectors = len(engine.parts.vectors)
        status = engine.status(scan=False)
    print(
        json.dumps(
            {
                "chunks_total": report.chunks_total,
                "source_chunks": source[0] if source else 0,
                "embedded": report.embedded,
                "vectors": vectors,
                "vectors_wanted": status.vector_target,
                "lexical_and_parse_s": marks.get("embed_start"),
                "source_vectors_s": marks.get("source_done"),
                **({"all_vectors_s": all_s} if every else {}),
                **peak.report(),
            }
        )
    )


def run_source_vectors(workspace: Path, every: bool = False) -> dict[str, Any]:
    index_dir = SPEED_ROOT / "index-vectors"
    shutil.rmtree(index_dir, ignore_errors=True)
    with tempfile.TemporaryDirectory() as cache_dir:
        return child_json("vectors-all" if every else "vectors", workspace, index_dir, cache_dir)


def all_vectors_only(t_run: float) -> int:
    """Issue 24's Django row: a cold start (fresh index, cold embedding cache) until every
    chunk that gets a vector has it, with when the source chunks had theirs."""
    root = prepare_workspace()
    log("cold index with vectors on, until every vector is in (about 10 minutes) ...")
    out = run_source_vectors(root, every=True)
    out.update(load_avg_1m=os.getloadavg()[0], **machine(), utc=utc_iso())
    out["wall_s"] = round(time.perf_counter() - t_run, 1)
    for key in ("lexical_and_parse_s", "source_vectors_s", "all_vectors_s"):
        print(f"{key:20} {out[key] / 60:6.2f} min" if out.get(key) else f"{key:20} -")
    print(
        f"vectors {out['vectors']:,} of {out['vectors_wanted']:,} wanted, "
        f"{out['chunks_total']:,} chunks; peak RSS {out['peak_rss_mb']:.0f} MB"
    )
    path = result_path("speed-vectors")
    path.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print(f"wrote {path}")
    return 0


# -- branch switch --------------------------------------------------------------------------


class PlaceholderEmbedder(Embedder):
    """Pseudo-random unit vectors (seeded by the text) under the real model's id, without
    running the model. The branch-switch row needs a base index where every chunk has a
    vector, not good vectors; the real model would take ~23 minutes for all of Django on
    2 cores. Every vector the switch itself computes comes from the real model."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8)
            out[i] = np.random.default_rng(int.from_bytes(digest.digest())).standard_normal(
                self.dim
            )
        return normalise(out)


class CountingEmbedder(Embedder):
    """The real model, counting the texts it embeds and the seconds it spends on them."""

    def __init__(self) -> None:
        super().__init__()
        self.texts = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        try:
            return super().embed(texts)
        finally:
            self.texts += len(texts)
            self.seconds += time.perf_counter() - t0


def append_statement(path: Path, rng: random.Random, n: int) -> bool:
    """Append a statement to the body of one function of ``path`` (picked by ``rng``),
    indented like the body's last statement: the function's chunk changes, the rest of the
    file only moves. False when no function has a body on lines of its own."""
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
    except SyntaxError:  # template files of startproject are .py but not Python
        return False
    lasts = [
        node.body[-1]
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body[-1].lineno > node.lineno
    ]
    if not lasts:
        return False
    last = rng.choice(lasts)
    lines = text.splitlines(keepends=True)
    end = last.end_lineno or last.lineno
    lines[end - 1] = lines[end - 1].rstrip("\r\n") + "\n"
    lines.insert(end, f"{' ' * last.col_offset}bench_switch_edit = {n}\n")
    path.write_text("".join(lines), encoding="utf-8")
    return True


def make_switch_branch(root: Path) -> dict[str, int]:
    """The ``bench-switch-5pct`` branch of the git repository at ``root``, made with git: a
    function body edited in ``SWITCH_SHARE`` of the tracked .py files (picked at random,
    tests included), 3 modules added and 3 deleted. Leaves ``main`` checked out."""
    rng = random.Random(5)
    files = git(root, "ls-files", "*.py").splitlines()
    rng.shuffle(files)
    want = round(len(files) * SWITCH_SHARE)
    git(root, "checkout", "-q", "-b", SWITCH_BRANCH)
    rest = iter(files)
    modified = 0
    for rel in rest:
        if modified == want:
            break
        modified += append_statement(root / rel, rng, modified)
    deleted = [next(rest) for _ in range(3)]
    for rel in deleted:
        (root / rel).unlink()
    for i in range(3):
        (root / "django" / f"bench_switch_added_{i}.py").write_text(
            f'def bench_switch_feature_{i}(request):\n    """Only the branch has it."""\n'
            "    return request\n",
            encoding="utf-8",
        )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"edit {modified} of {len(files)} .py files")
    git(root, "checkout", "-q", "main")
    return {"py_files": len(files), "modified": modified, "added": 3, "deleted": len(deleted)}


def vector_keys(engine: Engine) -> set[str]:
    return {sc.emb_key for sc in engine.reader.all_chunks() if sc.emb_key}


def timed_switch(engine: Engine, model: CountingEmbedder, branch: str) -> dict[str, Any]:
    """``git checkout`` then one index pass, timed from the checkout until the pass is done
    (BM25, structure and vectors at the new HEAD). ``changed_keys``: embedding keys (chunk
    contents) the index holds after the switch and did not before; a content-addressed
    cache should make the model embed exactly those the cache has never seen."""
    before = vector_keys(engine)
    texts, seconds = model.texts, model.seconds
    t0 = time.perf_counter()
    git(engine.workspace, "checkout", "-q", branch)
    checkout_s = time.perf_counter() - t0
    report = engine.index()
    consistent_s = time.perf_counter() - t0
    status = engine.status()
    return {
        "to": branch,
        "checkout_s": round(checkout_s, 2),
        "consistent_s": round(consistent_s, 2),
        "model_s": round(model.seconds - seconds, 2),
        "files_changed": report.files_changed,
        "files_removed": report.files_removed,
        "chunks_added": report.chunks_added,
        "chunks_removed": report.chunks_removed,
        "changed_keys": len(vector_keys(engine) - before),
        "embedded": report.embedded,
        "model_texts": model.texts - texts,
        "vectors_from_cache": report.vectors_from_cache,
        "pending": status.pending,
        "state": status.state,
        "at_head": status.indexed_commit == status.commit,
    }


def child_switch(workspace: str, index_dir: str) -> None:
    """Runs in a fresh interpreter with a cold embedding cache of its own: the base index at
    ``main`` (placeholder vectors), then the switch to the branch and back with the real
    model, loaded beforehand as in a running server."""
    root = Path(workspace)
    config = vectors_on(root)
    t0 = time.perf_counter()
    with Engine(root, index_dir, config=config, embedder=PlaceholderEmbedder()) as engine:
        base = engine.index()
    base_s = time.perf_counter() - t0
    model = CountingEmbedder()
    model.embed(["warm up the model session"])
    with Engine(root, index_dir, config=config, embedder=model) as engine:
        switches = [timed_switch(engine, model, b) for b in (SWITCH_BRANCH, "main")]
    base_info = {"chunks": base.chunks_total, "vectors": base.embedded, "s": round(base_s, 1)}
    print(json.dumps({"base": base_info, "switches": switches}))


def run_switch(root: Path) -> dict[str, Any]:
    """The branch-switch row, in a copy of the workspace (the cached one is never edited)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / root.name
        shutil.copytree(root, ws, symlinks=True)
        edits = make_switch_branch(ws)
        (Path(tmp) / "cache").mkdir()
        out = child_json("switch", ws, Path(tmp) / "index", str(Path(tmp) / "cache"))
    return {"edits": edits, **out}


# -- queries --------------------------------------------------------------------------------

_DOC = re.compile(r'"""\s*([A-Z][^"\n]{24,}?[.!?])\s', re.S)


def make_queries(chunks: list[StoredChunk], n: int) -> tuple[list[str], list[str]]:
    """Half identifiers (defined symbols of non-test code), half docstring first sentences."""
    rng = random.Random(7)
    idents = sorted(
        {
            sc.chunk.symbol.rsplit(".", 1)[-1]
            for sc in chunks
            if sc.chunk.language == "python" and not sc.chunk.is_test and sc.chunk.symbol
        }
    )
    idents = [i for i in idents if len(i) >= 6 and not i.startswith("__")]
    docs = sorted(
        {
            m.group(1).strip()
            for sc in chunks
            if sc.chunk.language == "python" and not sc.chunk.is_test
            for m in [_DOC.search(sc.chunk.text)]
            if m
        }
    )
    rng.shuffle(idents)
    rng.shuffle(docs)
    half = n // 2
    return idents[:half], docs[: n - half]


def time_find(engine: Engine, queries: list[str]) -> tuple[list[float], int]:
    lat, empty = [], 0
    engine.find(FindRequest(query="warm up the readers"), refresh=False)
    for q in queries:
        t0 = time.perf_counter()
        res = engine.find(FindRequest(query=q), refresh=False)
        lat.append((time.perf_counter() - t0) * 1000)
        empty += not res.results
    return lat, empty


def find_rows(engine: Engine, idents: list[str], docs: list[str]) -> dict[str, Any]:
    """The find rows: identifiers, docstring sentences, and the two together."""
    lat_i, empty_i = time_find(engine, idents)
    lat_d, empty_d = time_find(engine, docs)
    return {
        "find_identifiers": {**summary(lat_i), "empty": empty_i},
        "find_docstrings": {**summary(lat_d), "empty": empty_d},
        "find_all": summary(lat_i + lat_d),
    }


def find_only(n: int, profile: Path | None, t_run: float) -> int:
    """The find rows alone, in a fresh process on an index left by an earlier run (made here
    when missing), optionally under cProfile: what an A/B of query latency needs, run
    alternately with the other side so machine load falls on both."""
    root = SPEED_ROOT / "django-5.1.4"
    index_dir = SPEED_ROOT / "index-django-5.1.4"
    if not index_dir.exists():
        root = prepare_workspace()
        log("cold index ...")
        run_child(root, index_dir)
    with Engine(root, index_dir=index_dir, config=load_config(root)) as engine:
        chunks = list(engine.parts.store.all_chunks())
        idents, docs = make_queries(chunks, n)
        log(f"find x {len(idents) + len(docs)} ...")
        if profile is not None:
            import cProfile

            prof = cProfile.Profile()
            result = prof.runcall(find_rows, engine, idents, docs)
            prof.dump_stats(str(profile))
        else:
            result = find_rows(engine, idents, docs)
        result["find_cross_encoder"] = time_cross_encoder(engine, docs)
    meta = {
        **machine(),
        "load_avg_1m": os.getloadavg()[0],
        "wall_s": round(time.perf_counter() - t_run, 1),
        "utc": utc_iso(),
    }
    for row in ("find_all", "find_identifiers", "find_docstrings", "find_cross_encoder"):
        r = result[row]
        print(f"{row:20} p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms  (n={r['n']})")
    path = result_path("speed-find")
    path.write_text(json.dumps({"meta": meta, **result}, indent=2), encoding="utf-8")
    print(f"wrote {path} ({meta['wall_s']} s)")
    return 0


def time_cross_encoder(engine: Engine, sentences: list[str]) -> dict[str, Any]:
    """Find latency where the cross-encoder runs: the sentences it scores (descriptions
    without names), interactive depth, fresh answer and score caches."""
    described = [q for q in sentences if reads_as_description(analyze(q))]
    engine.forget_answers()
    engine.find(FindRequest(query="what the warm up loads"), refresh=False)  # model session
    lat, pairs = [], []
    for q in described:
        t0 = time.perf_counter()
        res = engine.find(FindRequest(query=q), refresh=False)
        lat.append((time.perf_counter() - t0) * 1000)
        pairs.append(res.trace["rerank"].candidates)
    return {**summary(lat), "pairs_p50": float(np.median(pairs)) if pairs else 0.0}


def time_rg(root: Path, idents: list[str]) -> list[float] | None:
    rg = shutil.which("rg")
    if rg is None:
        return None
    lat = []
    for ident in idents:
        t0 = time.perf_counter()
        subprocess.run(
            [rg, "-n", "-w", "-F", "--no-messages", ident, str(root)],
            capture_output=True,
            check=False,
        )
        lat.append((time.perf_counter() - t0) * 1000)
    return lat


def save_to_queryable(engine: Engine, root: Path, rounds: int) -> list[float]:
    target = root / SAVE_FILE
    original = target.read_text(encoding="utf-8")
    out = []
    try:
        for i in range(rounds):
            marker = f"bench_speed_saved_{i}_{int(time.time())}"
            time.sleep(0.01)  # a new mtime, as an editor's save would give
            t0 = time.perf_counter()
            with target.open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {marker}(payload):\n    return payload\n")
            res = engine.find(FindRequest(query=marker, limit=1), refresh=True)
            if not res.results or res.results[0].symbol != marker:
                raise RuntimeError(f"{marker} not queryable after one refresh")
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        target.write_text(original, encoding="utf-8")
    return out


# -- the language server ---------------------------------------------------------------------


def proc_memory(pid: int) -> dict[str, float]:
    """VmRSS (now) and VmHWM (peak) of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mb": round(fields["VmRSS"], 1), "hwm_mb": round(fields["VmHWM"], 1)}


def cpu_ticks(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    utime, stime = stat.rsplit(")", 1)[1].split()[11:13]
    return int(utime) + int(stime)


async def wait_idle(pid: int, quiet_s: float = 2.0) -> float:
    """Wait until the process has used no CPU for ``quiet_s`` (background work such as the
    cross-encoder preload is over); returns the seconds waited."""
    t0 = time.perf_counter()
    ticks, since = cpu_ticks(pid), time.perf_counter()
    while time.perf_counter() - since < quiet_s:
        await asyncio.sleep(0.25)
        now = cpu_ticks(pid)
        if now != ticks:
            ticks, since = now, time.perf_counter()
        if time.perf_counter() - t0 > SERVER_WAIT_S:
            raise TimeoutError(f"server {pid} never went idle")
    return time.perf_counter() - t0


async def server_rows(root: Path, index_dir: Path, hovers: int) -> dict[str, Any]:
    """The real server on the indexed workspace: its memory once idle, hover latency over
    the protocol (each hover a definitions/callers lookup plus a ``quick`` find, as in an
    editor), and its memory after them."""
    client = await lsp.start(index_dir, SPEED_ROOT / "server-stderr.log")
    out: dict[str, Any] = {}
    try:
        await lsp.initialize(client, root, capabilities=lsp.PROGRESS_ONLY)
        await lsp.wait_status(client, lsp.settled, 0, SERVER_WAIT_S)
        pid = client._server.pid if client._server else 0
        out["idle_after_s"] = round(await wait_idle(pid), 1)
        out["idle"] = proc_memory(pid)
        positions = []
        per_file = -(-(hovers + 1) // len(HOVER_FILES))  # + 1: the warm-up
        for rel in HOVER_FILES:
            text = (root / rel).read_text(encoding="utf-8")
            lsp.open_doc(client, root / rel, text)
            positions += [
                (root / rel, line, col) for line, col, _ in hover_positions(text, per_file)
            ]
        await lsp.hover(client, *positions[0])  # warm-up, not timed
        lat, panels = [], 0
        for path, line, col in positions[1:]:
            res, ms = await timed(lsp.hover(client, path, line, col))
            lat.append(ms)
            panels += res is not None
        out["hover"] = {**summary(lat), "panels": panels}
        out["after_hovers"] = proc_memory(pid)
    finally:
        await lsp.stop(client)
    return out


# -- embedding throughput -------------------------------------------------------------------


def legacy_embed(embedder: Embedder, session: Any, texts: list[str]) -> np.ndarray:
    """``Embedder.embed`` with the session options before issue 7 (the "before" of the
    before/after and the reference the new vectors must match): one text per run, as the
    shipped model needs (its activations are quantised per run), one run at a time."""
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for i, feed in enumerate(bare_feeds(embedder, texts)):
        out[i] = session.run(["last_hidden_state"], feed)[0][0].mean(axis=0)
    return normalise(out)


def legacy_session(embedder: Embedder) -> Any:
    """The session options before issue 7: one intra-op thread per logical CPU."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = os.cpu_count() or 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(
        str(embedder.model_path), sess_options=opts, providers=["CPUExecutionProvider"]
    )


def bare_feeds(embedder: Embedder, texts: list[str]) -> list[dict[str, np.ndarray]]:
    """The model inputs the pipeline feeds (one text per run, no padding), built up front so
    the timed loop is nothing but ``session.run``."""
    return [model_inputs(ids) for ids in embedder.token_ids(texts)]


def embed_bench(chunks: list[StoredChunk], sample: int, repeats: int) -> dict[str, Any]:
    rng = random.Random(11)
    picked = rng.sample(chunks, min(sample, len(chunks)))
    embedder = Embedder()
    by_key = {embedding_key(sc.chunk, embedder.model_id): embedding_text(sc.chunk) for sc in picked}
    keys = list(by_key)
    texts = [by_key[k] for k in keys]
    tokens = sum(len(ids) for ids in embedder.token_ids(texts))
    session = embedder._get_session()
    session.run(["last_hidden_state"], bare_feeds(embedder, texts[:1])[0])  # warm-up

    feeds = bare_feeds(embedder, texts)
    old_session = legacy_session(embedder)
    legacy_embed(embedder, old_session, texts[:8])  # warm-up
    # Best of ``repeats`` for each, interleaved, so a burst of noise on the machine (a shared
    # VM) does not decide the ratio.
    bare_s = pipeline_s = legacy_s = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for feed in feeds:
            session.run(["last_hidden_state"], feed)
        bare_s = min(bare_s, time.perf_counter() - t0)

        with tempfile.TemporaryDirectory() as tmp:
            cache = EmbeddingCache(Path(tmp) / "embeddings.sqlite")
            t0 = time.perf_counter()
            vectors, computed = embed_with_cache(embedder, cache, by_key)
            pipeline_s = min(pipeline_s, time.perf_counter() - t0)
            cache.close()
        new = np.stack([vectors[k] for k in keys])

        t0 = time.perf_counter()
        old = legacy_embed(embedder, old_session, texts)
        legacy_s = min(legacy_s, time.perf_counter() - t0)

    diff = float(np.abs(new - old).max())
    n = len(texts)
    return {
        "chunks": n,
        "tokens": tokens,
        "mean_tokens": round(tokens / n, 1),
        "embedded": computed,
        "repeats": repeats,
        "threads": embedder.threads,
        "bare_s": round(bare_s, 2),
        "pipeline_s": round(pipeline_s, 2),
        "legacy_s": round(legacy_s, 2),
        "bare_chunks_per_s": round(n / bare_s, 1),
        "pipeline_chunks_per_s": round(n / pipeline_s, 1),
        "legacy_chunks_per_s": round(n / legacy_s, 1),
        "pipeline_vs_bare": round(bare_s / pipeline_s, 3),
        "max_abs_diff_vs_legacy": diff,
    }


# -- report ---------------------------------------------------------------------------------


def switch_rows(sw: dict[str, Any]) -> list[tuple[str, str, str]]:
    e = sw["edits"]
    rows = [
        (
            f"branch switch: {e['modified']} of {e['py_files']} .py files edited "
            f"(+{e['added']} -{e['deleted']})",
            "",
            "",
        )
    ]
    for s in sw["switches"]:
        ratio = s["embedded"] / s["changed_keys"] if s["changed_keys"] else float("nan")
        rows += [
            (
                f"  to {s['to']}: checkout -> consistent",
                f"{s['consistent_s']:.1f} s (model {s['model_s']:.1f} s), {s['state']}, "
                f"pending {s['pending']}",
                "<= 5 s",
            ),
            (
                "    chunks embedded / content new",
                f"{s['embedded']} / {s['changed_keys']} = {ratio:.2f} "
                f"({s['vectors_from_cache']} from cache)",
                "= 1" if s["to"] == SWITCH_BRANCH else "0: all in the cache",
            ),
        ]
    return rows


def table(r: dict[str, Any]) -> str:
    cold, warm = r["cold_index"], r["warm_restart"]
    rows = [
        ("measure", "value", "target"),
        (
            "cold index, lexical ready",
            f"{cold['ready_s']:.1f} s ({cold['process_wall_s']:.1f} s with start-up)",
            "<= 15 s",
        ),
        ("  chunks / files", f"{cold['chunks_total']} / {cold['files_seen']}", ""),
        ("  chunks/s", f"{cold['chunks_total'] / cold['index_s']:.0f}", ""),
        ("  peak RSS (indexing process)", f"{cold['peak_rss_mb']:.0f} MB", "<= 1 GB"),
        ("index size on disk", f"{r['index_mb']:.0f} MB", ""),
        (
            "warm restart to ready",
            f"{warm['ready_s']:.2f} s ({warm['process_wall_s']:.1f} s with start-up)",
            "<= 2 s",
        ),
        ("save -> queryable p50", f"{r['save_to_queryable']['p50_ms']:.0f} ms", "<= 500 ms"),
    ]
    for key, label in (
        ("find_all", "find p50 / p95"),
        ("find_identifiers", "  identifiers p50 / p95"),
        ("find_docstrings", "  docstring sentences p50 / p95"),
    ):
        s = r[key]
        rows.append(
            (f"{label} (n={s['n']})", f"{s['p50_ms']:.0f} / {s['p95_ms']:.0f} ms", "p95 <= 150 ms")
        )
    ce = r["find_cross_encoder"]
    rows.append(
        (
            f"find with cross-encoder (n={ce['n']} descriptions, {ce['pairs_p50']:.0f} pairs)",
            f"{ce['p50_ms']:.0f} / {ce['p95_ms']:.0f} ms",
            "p95 <= 300 ms",
        )
    )
    hv, srv = r["server"]["hover"], r["server"]
    rows += [
        (
            f"hover, LSP round trip (n={hv['n']})",
            f"{hv['p50_ms']:.0f} / {hv['p95_ms']:.0f} ms",
            "p95 <= 50 ms",
        ),
        (
            "idle server RSS (VmRSS / VmHWM)",
            f"{srv['idle']['rss_mb']:.0f} / {srv['idle']['hwm_mb']:.0f} MB",
            "<= 1 GB",
        ),
        (
            f"  after {hv['n']} hovers",
            f"{srv['after_hovers']['rss_mb']:.0f} / {srv['after_hovers']['hwm_mb']:.0f} MB",
            "",
        ),
    ]
    rows += switch_rows(r["branch_switch"])
    if r.get("rg"):
        rg = r["rg"]
        rows.append(
            (
                "rg -w -F, same identifiers p50",
                f"{rg['p50_ms']:.0f} ms; find/rg = {r['find_vs_rg_p50']:.2f}",
                "",
            )
        )
    else:
        rows.append(("rg comparison", "skipped: ripgrep not installed", ""))
    e = r["embedding"]
    rows += [
        (
            f"embedding, {e['chunks']} chunks ({e['mean_tokens']:.0f} tokens avg)",
            f"bare {e['bare_chunks_per_s']}/s, pipeline {e['pipeline_chunks_per_s']}/s",
            "",
        ),
        ("  pipeline / bare", f"{e['pipeline_vs_bare'] * 100:.0f} %", ">= 80 %"),
        (
            "  one run at a time, a thread per CPU (before issue 7)",
            f"{e['legacy_chunks_per_s']}/s, max |diff| {e['max_abs_diff_vs_legacy']:.1e}",
            "diff < 1e-3",
        ),
    ]
    sv = r.get("source_vectors")
    if sv and sv.get("source_vectors_s") is not None:
        rows.append(
            (
                f"source-code vectors ({sv['source_chunks']} chunks, cold cache)",
                f"{sv['source_vectors_s']:.0f} s after start",
                "<= 600 s",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def main() -> int:
    global SPEED_ROOT
    if len(sys.argv) == 4 and sys.argv[1] == "--child-index":
        child_index(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--child-vectors":
        child_vectors(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--child-vectors-all":
        child_vectors(sys.argv[2], sys.argv[3], every=True)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--child-switch":
        child_switch(sys.argv[2], sys.argv[3])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=120, help="find queries (>= 100 for p95)")
    p.add_argument("--sample", type=int, default=500, help="chunks for the embedding benchmark")
    p.add_argument("--saves", type=int, default=3)
    p.add_argument("--hovers", type=int, default=120, help="hover positions (>= 100 for p95)")
    p.add_argument("--repeats", type=int, default=2, help="embedding timings: best of N")
    p.add_argument(
        "--work",
        type=Path,
        default=SPEED_ROOT,
        help=f"folder for the workspace copy and the indexes (default {SPEED_ROOT}); one per "
        "concurrent run",
    )
    p.add_argument(
        "--find-only",
        action="store_true",
        help="only the find rows, on the workspace and index a previous run left in --work "
        "(made first if missing): for alternating A/B runs of query latency",
    )
    p.add_argument(
        "--profile",
        type=Path,
        help="with --find-only: write a cProfile of the find rows (pstats format) here",
    )
    p.add_argument(
        "--source-vectors",
        action="store_true",
        help="also index with vectors on (cold cache) until every source chunk has its vector "
        "(about 6 more minutes on 2 cores)",
    )
    p.add_argument(
        "--all-vectors-only",
        action="store_true",
        help="only a cold start with vectors on (cold embedding cache) until every chunk that "
        "gets a vector has it (issue 24's 10-minute row; about 10 minutes on 2 cores)",
    )
    args = p.parse_args()
    SPEED_ROOT = args.work.resolve()
    t_run = time.perf_counter()
    if args.find_only:
        return find_only(args.queries, args.profile, t_run)
    if args.all_vectors_only:
        return all_vectors_only(t_run)

    root = prepare_workspace()
    index_dir = SPEED_ROOT / "index-django-5.1.4"
    shutil.rmtree(index_dir, ignore_errors=True)
    log("cold index ...")
    cold = run_child(root, index_dir)
    log("warm restart ...")
    warm = run_child(root, index_dir)
    result: dict[str, Any] = {"cold_index": cold, "warm_restart": warm}
    result["index_mb"] = dir_bytes(index_dir) / 1e6

    with Engine(root, index_dir=index_dir, config=load_config(root)) as engine:
        chunks = list(engine.parts.store.all_chunks())
        idents, docs = make_queries(chunks, args.queries)
        log(f"find x {len(idents) + len(docs)} ...")
        result.update(find_rows(engine, idents, docs))
        rg = time_rg(root, idents)
        if rg is not None:
            result["rg"] = summary(rg)
            result["find_vs_rg_p50"] = round(
                result["find_identifiers"]["p50_ms"] / result["rg"]["p50_ms"], 2
            )
        log("find with the cross-encoder ...")
        result["find_cross_encoder"] = time_cross_encoder(engine, docs)
        log("save -> queryable ...")
        result["save_to_queryable"] = summary(save_to_queryable(engine, root, args.saves))
    log(f"language server: idle memory, {args.hovers} hovers ...")
    result["server"] = asyncio.run(server_rows(root, index_dir, args.hovers))
    log("branch switch (vectors on) ...")
    result["branch_switch"] = run_switch(root)
    log(f"embedding {args.sample} chunks ...")
    result["embedding"] = embed_bench(chunks, args.sample, args.repeats)
    if args.source_vectors:
        log("source vectors (cold embedding cache) ...")
        result["source_vectors"] = run_source_vectors(root)

    meta = {
        "workspace": str(root),
        "source": DJANGO,
        "vectors": "off for the index and query rows; embedding measured separately",
        **machine(),
        "wall_s": round(time.perf_counter() - t_run, 1),
        "utc": utc_iso(),
        "queries_sample": {"identifiers": idents[:5], "docstrings": docs[:3]},
    }
    result = {"meta": meta, **result}
    print(f"workspace: {DJANGO}, {os.cpu_count()} CPUs, vectors off for index/find rows")
    print(table(result))
    path = result_path("speed")
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"wrote {path} ({meta['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
