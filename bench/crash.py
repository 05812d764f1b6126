"""Kill a real ``code-evidence index`` with SIGKILL and check what a restart finds.

Shared by ``bench/stress.py`` (the long loop) and ``tests/test_crash.py`` (a few kills). A run:
change the workspace (or wipe the index), start the indexer as a subprocess (``crash_hook.py``,
which can kill itself at a named point), kill it after a delay, reopen the index in-process and
check it (``index.parts.check_index``), run one index pass, and compare the store with what the
workspace holds (data lost = a file or chunk of the workspace missing or stale after that pass).

Runtime dependencies only. The tests import this file as ``bench.crash``, so it imports nothing
from ``bench/`` itself; the caller has put ``server/`` on ``sys.path``.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from code_evidence.api import FindRequest
from code_evidence.config import Config, IndexConfig
from code_evidence.engine import Engine
from code_evidence.index.chunk import chunk_file
from code_evidence.index.parts import IndexCheck, check_index

ROOT = Path(__file__).resolve().parents[1]
CRASH_HOOK = Path(__file__).resolve().with_name("crash_hook.py")

WORDS = [
    "invoice",
    "customer",
    "ledger",
    "payment",
    "refund",
    "voucher",
    "shipment",
    "parcel",
    "tariff",
    "warehouse",
    "order",
    "stock",
    "audit",
    "report",
    "session",
    "token",
    "cache",
    "queue",
    "retry",
    "backoff",
    "schema",
    "migrate",
    "export",
    "import",
]


def module_text(i: int, rev: int) -> str:
    """A Python module with a class and a few functions whose names are unique to it."""
    rnd = random.Random(i * 1000 + rev)
    a, b, c = rnd.sample(WORDS, 3)
    funcs = []
    for j in range(4):
        w = rnd.choice(WORDS)
        funcs.append(
            f"def {w}_{a}_{i}_{j}(value: int) -> int:\n"
            f'    """Compute the {w} {b} for module {i} revision {rev}."""\n'
            f"    total = value * {rnd.randint(2, 99)}\n"
            f"    for step in range({rnd.randint(2, 9)}):\n"
            f"        total += step * {rnd.randint(1, 9)}\n"
            f"    return total\n"
        )
    cls = (
        f"class {a.title()}{b.title()}{i}:\n"
        f'    """Keeps the {c} of {a}."""\n\n'
        f"    def __init__(self) -> None:\n        self.items: list[int] = []\n\n"
        f"    def add_{c}(self, item: int) -> None:\n        self.items.append(item)\n"
    )
    return "\n\n".join([f'"""Module {i} ({a}, {b}, {c}), revision {rev}."""\n', cls, *funcs])


def make_workspace(ws: Path, files: int, vectors: bool) -> None:
    (ws / "pkg").mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (ws / "pkg" / f"mod_{i:04d}.py").write_text(module_text(i, 0), encoding="utf-8")
    (ws / ".code-evidence.toml").write_text(
        f"[stages]\nvectors = {'true' if vectors else 'false'}\n", encoding="utf-8"
    )


def mutate(ws: Path, rnd: random.Random, rev: int, share: float = 0.2) -> None:
    """Rewrite a share of the modules, delete a few and add a few: work for the next pass."""
    mods = sorted((ws / "pkg").glob("mod_*.py"))
    for p in rnd.sample(mods, max(1, int(len(mods) * share))):
        p.write_text(module_text(int(p.stem[4:]), rev), encoding="utf-8")
    for p in rnd.sample(mods, min(3, len(mods))):
        p.unlink(missing_ok=True)
    top = max(int(p.stem[4:]) for p in mods) + 1
    for i in range(top, top + 3):
        (ws / "pkg" / f"mod_{i:04d}.py").write_text(module_text(i, rev), encoding="utf-8")


def indexer_env(cache_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["CODE_EVIDENCE_CACHE_DIR"] = str(cache_dir)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "server"), env.get("PYTHONPATH", "")) if p
    )
    return env


def indexer_cmd(ws: Path, idx: Path) -> list[str]:
    return [
        sys.executable,
        str(CRASH_HOOK),
        "index",
        "--workspace",
        str(ws),
        "--index-dir",
        str(idx),
        "--quiet",
    ]


def run_indexer(
    ws: Path, idx: Path, cache_dir: Path, kill_after: float | None, crash_at: str | None = None
) -> bool:
    """Run the indexer; SIGKILL it after ``kill_after`` seconds, or let it kill itself at
    ``crash_at`` (see ``crash_hook.py``). True if it died before it finished."""
    env = indexer_env(cache_dir)
    if crash_at:
        env["CE_CRASH_AT"] = crash_at
    proc = subprocess.Popen(
        indexer_cmd(ws, idx),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    if kill_after is None:
        _, err = proc.communicate(timeout=600)
        if proc.returncode == -signal.SIGKILL and crash_at:
            return True
        if proc.returncode != 0:
            raise RuntimeError(f"indexer failed ({proc.returncode}): {err.decode()[-2000:]}")
        return False
    try:
        proc.wait(timeout=kill_after)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True
    finally:
        if proc.stderr is not None:
            proc.stderr.close()


def timed_full_run(ws: Path, idx: Path, cache_dir: Path) -> float:
    t0 = time.perf_counter()
    run_indexer(ws, idx, cache_dir, None)
    return time.perf_counter() - t0


def expected_chunks(ws: Path) -> Counter[tuple[str, str]]:
    """(path, chunk hash) of every chunk the workspace's files should produce."""
    cfg = IndexConfig()
    out: Counter[tuple[str, str]] = Counter()
    for p in sorted((ws / "pkg").glob("*.py")):
        rel = p.relative_to(ws).as_posix()
        for ch in chunk_file(rel, p.read_text(encoding="utf-8"), cfg):
            out[(rel, ch.hash)] += 1
    return out


@dataclass(slots=True)
class RunResult:
    run: int
    point: str  # crash point (crash_hook.py) or "timed"
    delay_s: float
    killed: bool
    vectors: bool
    wiped: bool
    consistent_on_open: bool  # what a reader finds right after the restart
    repaired: bool  # the restart noted a rebuild
    complete_after_pass: bool  # after one more index pass: every part agrees, all vectors in
    lost: int  # chunks of the workspace missing or stale after that pass
    find_ok: bool
    notes: list[str]
    check: dict[str, object]


def check_after_kill(
    ws: Path, idx: Path, vectors: bool
) -> tuple[IndexCheck, IndexCheck, int, bool, list[str]]:
    """Reopen (as a restarted server would), check, index once, check again, and query."""
    cfg = Config()
    cfg = cfg.changed(stages={"vectors": vectors})
    with Engine(ws, idx, config=cfg) as eng:
        notes = list(eng.notes)
        on_open = check_index(
            eng.parts.store, eng.parts.lexical, eng.parts.vectors if vectors else None
        )
        eng.index()
        # Query before the second check: a damaged segment that opened fine is found (and
        # rebuilt) by the first read that fails.
        expected = expected_chunks(ws)
        stem = Path(next(iter(sorted(expected)))[0]).stem
        res = eng.find(FindRequest(f"module {int(stem[4:])} revision", limit=5), refresh=False)
        find_ok = bool(res.results)
        after = check_index(
            eng.parts.store, eng.parts.lexical, eng.parts.vectors if vectors else None
        )
        stored: Counter[tuple[str, str]] = Counter(
            (path, h)
            for path, h in eng.parts.store.db.execute("SELECT path, hash FROM chunks")
            if path.startswith("pkg/")
        )
        lost = sum((expected - stored).values()) + sum((stored - expected).values())
    return on_open, after, lost, find_ok, notes


def one_run(
    run: int,
    ws: Path,
    idx: Path,
    cache_dir: Path,
    delay: float,
    vectors: bool,
    wipe: bool,
    rnd: random.Random,
    crash_at: str | None = None,
) -> RunResult:
    if wipe:
        shutil.rmtree(idx, ignore_errors=True)
    else:
        mutate(ws, rnd, rev=run + 1)
    if crash_at:
        killed = run_indexer(ws, idx, cache_dir, None, crash_at)
    else:
        killed = run_indexer(ws, idx, cache_dir, delay)
    on_open, after, lost, find_ok, notes = check_after_kill(ws, idx, vectors)
    digest = hashlib.sha256(repr(asdict(on_open)).encode()).hexdigest()[:8]
    return RunResult(
        run=run,
        point=crash_at or "timed",
        delay_s=round(delay, 3),
        killed=killed,
        vectors=vectors,
        wiped=wipe,
        consistent_on_open=on_open.consistent,
        repaired=any("rebuilt" in n for n in notes),
        complete_after_pass=after.complete if vectors else after.consistent,
        lost=lost,
        find_ok=find_ok,
        notes=notes,
        check={
            "chunks": on_open.chunks,
            "lexical": on_open.lexical_docs,
            "vectors": on_open.vectors,
            "lexical_extra": len(on_open.lexical_extra),
            "lexical_missing": len(on_open.lexical_missing),
            "vector_extra": len(on_open.vector_extra),
            "vector_missing": on_open.vector_missing,
            "digest": digest,
        },
    )
