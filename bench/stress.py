#!/usr/bin/env python3
"""Crash and corruption campaign (issue 8): the long version of ``tests/test_crash.py``.

Kill loop: SIGKILL a real ``code-evidence index`` subprocess at random delays, ``--runs`` times,
cycling through three modes on generated workspaces: vectors off with the index wiped first
(kills land in the first build: chunking, SQLite, Tantivy), vectors off after changing a share
of the files (incremental pass), vectors on after changing files (kills land in embedding and
USearch saves; the embedding cache starts cold). After each kill the index is reopened
in-process and checked (SQLite ids == Tantivy ids, USearch keys a subset), one pass is run,
then checked again against the chunks the workspace should produce (data lost), and queried.

Corruption: each index file is truncated and overwritten with noise in turn; the reopened
engine must rebuild and answer.

  PYTHONPATH=server python bench/stress.py              # 60 kills, ~5 minutes on 2 cores
  PYTHONPATH=server python bench/stress.py --runs 6 --files 100
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from crash_support import (  # noqa: E402
    RunResult,
    check_after_kill,
    make_workspace,
    mutate,
    one_run,
    run_indexer,
    timed_full_run,
)

# Where the kills land: named points (tests/crash_hook.py) and timed kills, by mode.
POINTS_PLAIN = (
    "timed",
    "timed",
    "chunk",
    "sqlite",
    "store-commit",
    "tantivy",
    "tantivy-after",
    "usearch-replace",
)
POINTS_VECTORS = ("timed", "embed", "usearch", "usearch-replace", "store-commit", "tantivy")
MODES = (
    ("off-wipe", False, True),
    ("off-incremental", False, False),
    ("on-incremental", True, False),
)


def kill_loop(root: Path, runs: int, files: int, seed: int) -> list[RunResult]:
    rnd = random.Random(seed)
    cache = root / "cache"
    spaces: dict[bool, tuple[Path, Path, float]] = {}
    for vectors in (False, True):
        ws, idx = root / f"ws-{vectors}", root / f"idx-{vectors}"
        n = files if not vectors else max(20, files // 3)
        make_workspace(ws, n, vectors)
        full = timed_full_run(ws, idx, cache)
        if vectors:  # an incremental pass is what the vector runs kill: time one
            mutate(ws, rnd, rev=10_000)
            full = timed_full_run(ws, idx, cache)
        spaces[vectors] = (ws, idx, full)
        print(f"vectors {'on' if vectors else 'off'}: {n} files, a pass takes {full:.2f}s")
    out: list[RunResult] = []
    for i in range(runs):
        name, vectors, wipe = MODES[i % len(MODES)]
        ws, idx, full = spaces[vectors]
        delay = rnd.uniform(0.35, 1.05) * full
        point = rnd.choice(POINTS_VECTORS if vectors else POINTS_PLAIN)
        crash_at = None
        if point != "timed":
            # n: which hit of the point dies (passes touch ~60 files; saves happen 2-3 times)
            n = rnd.randint(1, 50) if point in ("chunk", "sqlite") else 1
            n = rnd.randint(1, 2) if point in ("usearch", "usearch-replace") and vectors else n
            n = 2 if point == "store-commit" and wipe else n
            crash_at = f"{point}:{n}"
        r = one_run(
            i, ws, idx, cache, delay, vectors=vectors, wipe=wipe, rnd=rnd, crash_at=crash_at
        )
        out.append(r)
        flag = "ok" if r.consistent_on_open and r.complete_after_pass and not r.lost else "BAD"
        print(
            f"run {i:3d} {name:<16} {crash_at or f'kill@{delay:.2f}s':<18} killed={r.killed!s:<5} "
            f"chunks={r.check['chunks']} repaired={r.repaired!s:<5} lost={r.lost} {flag}",
            flush=True,
        )
    return out


def corrupt_loop(root: Path, seed: int) -> list[dict[str, object]]:
    """Truncate and overwrite each index file in turn; reopen, pass, query."""
    rnd = random.Random(seed)
    ws, idx, cache = root / "ws-corrupt", root / "idx-corrupt", root / "cache"
    make_workspace(ws, 30, vectors=True)
    run_indexer(ws, idx, cache, None)
    out: list[dict[str, object]] = []
    for way in ("truncate", "noise"):
        for name in (
            "store.sqlite",
            "vectors.usearch",
            "lexical/meta.json",
            "lexical/*.idx",
            "lexical/*.store",
            "embeddings.sqlite",
        ):
            base = cache if name == "embeddings.sqlite" else idx
            targets = sorted(base.glob(name))
            if not targets:
                continue
            target = targets[0]
            data = target.read_bytes()
            if way == "truncate":
                target.write_bytes(data[: len(data) // 3])
            else:
                at = rnd.randrange(0, max(1, len(data) - 64))
                target.write_bytes(data[:at] + os.urandom(64) + data[at + 64 :])
            try:
                on_open, after, lost, find_ok, notes = check_after_kill(ws, idx, vectors=True)
                # Detected on open or at the first failed read; either way whole after it.
                ok = after.complete and lost == 0 and find_ok
                out.append(
                    {
                        "file": name,
                        "way": way,
                        "ok": ok,
                        "detected_on_open": not on_open.consistent or bool(notes),
                        "lost": lost,
                        "notes": notes,
                    }
                )
            except Exception as exc:  # a crash here is the finding: record it, go on
                out.append({"file": name, "way": way, "ok": False, "error": repr(exc)})
                shutil.rmtree(idx, ignore_errors=True)
                run_indexer(ws, idx, cache, None)
            print(f"corrupt {way:<8} {name:<20} {'ok' if out[-1]['ok'] else 'BAD'}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=60)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ce-stress-") as tmp:
        root = Path(tmp)
        os.environ["CODE_EVIDENCE_CACHE_DIR"] = str(root / "cache")
        runs = kill_loop(root, args.runs, args.files, args.seed)
        corrupt = corrupt_loop(root, args.seed)
    figures = {
        "runs": len(runs),
        "killed mid-pass": sum(r.killed for r in runs),
        "kill points": dict(Counter(r.point.split(":")[0] for r in runs if r.killed)),
        "inconsistent on reopen": sum(not r.consistent_on_open for r in runs),
        "auto-repaired (rebuild noted)": sum(r.repaired for r in runs),
        "incomplete after one pass": sum(not r.complete_after_pass for r in runs),
        "chunks lost or stale": sum(r.lost for r in runs),
        "find failed": sum(not r.find_ok for r in runs),
        "corruptions tried": len(corrupt),
        "corruptions not recovered": sum(not c["ok"] for c in corrupt),
    }
    print("\n| figure | value |\n| --- | --- |")
    for k, v in figures.items():
        print(f"| {k} | {v} |")
    print(f"\n{time.perf_counter() - t0:.0f}s")
    args.out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    path = args.out / f"stress-{stamp}.json"
    path.write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "figures": figures,
                "runs": [asdict(r) for r in runs],
                "corrupt": corrupt,
            },
            indent=1,
        )
    )
    print(f"wrote {path}")
    bad = figures["inconsistent on reopen"] + figures["chunks lost or stale"]
    return 1 if bad or figures["find failed"] or figures["corruptions not recovered"] else 0


if __name__ == "__main__":
    sys.exit(main())
