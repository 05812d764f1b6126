"""Find latency with and without the cross-encoder, per query, on the dev set's
description-style questions (the ones the shipped default scores with the model).

Three modes in one process on the same warm index, each with a fresh score cache: the feature
scorer alone, the cross-encoder inside the interactive budget, and deep mode (no budget).
Prints a table and writes JSON (``bench/results/rerank-latency-<time>.json``).

    PYTHONPATH=server python bench/rerank_latency.py
"""

from __future__ import annotations

import json
import statistics
import time

from common import (  # first: puts this checkout's server/ on sys.path
    DEFAULT_SHARED,
    nearest_rank,
    result_path,
    utc_iso,
)

# isort: split
from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import run_case
from code_evidence.search.query import analyze
from code_evidence.search.rerank import reads_as_description
from devset import DEFAULT_INDEX_ROOT, DEFAULT_WS, ensure_workspace, load_cases, load_manifest

DATASETS = ("flask-3.1.0-docstrings", "click-8.3.0-docstrings")
MODES = (
    ("feature scorer only", "none", "interactive"),
    ("cross-encoder interactive", "cross-encoder", "interactive"),
    ("cross-encoder deep", "cross-encoder", "deep"),
)


def main() -> int:
    rows: dict[str, list[tuple[float, float, int]]] = {m[0]: [] for m in MODES}
    for name in DATASETS:
        d = next(x for x in load_manifest(DEFAULT_SHARED) if x["name"] == name)
        ws = ensure_workspace(DEFAULT_SHARED, DEFAULT_WS["sdist"], d, history=False)
        cases = [
            c for c in load_cases(DEFAULT_SHARED, d, None) if reads_as_description(analyze(c.query))
        ]
        # quality.py's sdist index of the dataset, brought up to date
        with Engine(ws, index_dir=DEFAULT_INDEX_ROOT["sdist"] / name, config=Config()) as eng:
            eng.index()
            for mode, reranker, depth in MODES:
                eng.configure(eng.config.changed(ranking={"reranker": reranker}))
                eng.forget_answers()
                run_case(eng, cases[0], 20, depth)  # untimed warm-up
                eng.forget_answers()
                for c in cases:
                    t0 = time.perf_counter()
                    res = eng.find(FindRequest(query=c.query, limit=20, depth=depth))
                    ms = (time.perf_counter() - t0) * 1000
                    stage = res.trace["rerank"]
                    rows[mode].append((ms, stage.ms, stage.candidates))
    head = (
        f"{'mode':<28} {'n':>4} {'find p50':>9} {'find p95':>9} {'rerank p50':>11} "
        f"{'rerank p95':>11} {'pairs p50':>9}"
    )
    print("find latency, ms (warm, wall clock around Engine.find)")
    print(head + "\n" + "-" * len(head))
    report: dict[str, dict[str, float]] = {}
    for mode, r in rows.items():
        find_ms = [x[0] for x in r]
        rerank_ms = [x[1] for x in r]
        pairs = [float(x[2]) for x in r]
        report[mode] = {
            "n": len(r),
            "find_p50_ms": round(statistics.median(find_ms), 1),
            "find_p95_ms": round(nearest_rank(find_ms, 0.95), 1),
            "rerank_p50_ms": round(statistics.median(rerank_ms), 1),
            "rerank_p95_ms": round(nearest_rank(rerank_ms, 0.95), 1),
            "pairs_p50": statistics.median(pairs),
        }
        a = report[mode]
        print(
            f"{mode:<28} {a['n']:>4} {a['find_p50_ms']:>9.0f} {a['find_p95_ms']:>9.0f} "
            f"{a['rerank_p50_ms']:>11.0f} {a['rerank_p95_ms']:>11.0f} {a['pairs_p50']:>9.0f}"
        )
    out = result_path("rerank-latency")
    created = utc_iso()
    out.write_text(
        json.dumps({"created": created, "datasets": DATASETS, "modes": report}, indent=1)
    )
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
