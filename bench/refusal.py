"""Calibrate the "insufficient evidence" verdict: wrong evidence served vs. answers refused.

Answerable questions are the dev cases on their own workspace. Unanswerable ones are the same
questions asked of the *other* project (flask history against a click checkout and back): the
evidence is not there, so the right answer is a refusal. For each confidence threshold this
prints how often a wrong top result is served with confidence (wrong-evidence rate) and how
often a right top result is flagged insufficient (false refusals), and writes JSON.

    PYTHONPATH=server python bench/refusal.py [--ws DIR] [--index-root DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import CACHE_ROOT, DEFAULT_SHARED, result_path  # first: puts server/ on sys.path

# isort: split
from code_evidence.api import FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from devset import ensure_workspace, load_cases, load_manifest

THRESHOLDS = [round(0.05 * i, 2) for i in range(0, 17)]


def run(args: argparse.Namespace) -> dict[str, Any]:
    shared = Path(args.shared)
    datasets = [d for d in load_manifest(shared) if d["name"].endswith("-commits")]
    if args.dataset:
        datasets = [d for d in datasets if d["name"] in args.dataset]
    cases = {d["name"]: load_cases(shared, d, args.cases_limit) for d in datasets}
    rows: list[dict[str, Any]] = []
    for d in datasets:
        ws = ensure_workspace(shared, Path(args.ws), d, history=False)
        project = d["repo"]
        foreign = [c for o in datasets if o["repo"] != project for c in cases[o["name"]]]
        foreign = foreign[: len(cases[d["name"]])]
        with Engine(ws, Path(args.index_root) / d["name"], config=Config()) as eng:
            eng.index()
            for case, answerable in [(c, True) for c in cases[d["name"]]] + [
                (c, False) for c in foreign
            ]:
                res = eng.find(
                    FindRequest(case.query, open_file=case.open_file if answerable else None),
                    refresh=False,
                )
                top = res.results[0].path if res.results else None
                rows.append(
                    {
                        "dataset": d["name"],
                        "answerable": answerable,
                        "top_correct": answerable and top in case.gold,
                        "confidence": res.confidence,
                        "insufficient": res.insufficient,
                        "reason": res.insufficient_reason,
                    }
                )
    return {"rows": rows, "table": table(rows)}


def table(rows: list[dict[str, Any]]) -> list[dict[str, float]]:
    """Per threshold: refusal when confidence < t (the configured rule also refuses on missing
    quoted text or error codes, independent of t; those rows count as refused at every t)."""
    out = []
    answerable = [r for r in rows if r["answerable"]]
    correct = [r for r in answerable if r["top_correct"]]
    for t in THRESHOLDS:

        def refused(r: dict[str, Any], t: float = t) -> bool:
            strict = r["insufficient"] and r["reason"] and r["reason"].startswith("no result")
            return bool(strict) or r["confidence"] < t

        served = [r for r in rows if not refused(r)]
        wrong = [r for r in served if not r["top_correct"]]
        out.append(
            {
                "threshold": t,
                "served": len(served) / len(rows),
                "wrong_evidence_rate": len(wrong) / max(1, len(served)),
                "false_refusal_rate": sum(refused(r) for r in correct) / max(1, len(correct)),
                "unanswerable_served": sum(not refused(r) for r in rows if not r["answerable"])
                / max(1, len(rows) - len(answerable)),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--shared", default=str(DEFAULT_SHARED))
    p.add_argument("--ws", default=str(CACHE_ROOT / "ws"))
    p.add_argument("--index-root", default=str(CACHE_ROOT / "refusal-index"))
    p.add_argument("--dataset", action="append")
    p.add_argument("--cases-limit", type=int)
    p.add_argument("--out")
    args = p.parse_args(argv)
    t0 = time.time()
    report = run(args)
    configured = Config().ranking.insufficient_below
    rows = report["rows"]
    conf_a = [r["confidence"] for r in rows if r["answerable"] and r["top_correct"]]
    conf_u = [r["confidence"] for r in rows if not r["answerable"]]
    print(
        f"cases: {sum(r['answerable'] for r in rows)} answerable "
        f"({len(conf_a)} with a correct top file), {len(conf_u)} unanswerable (foreign project)"
    )
    print(
        f"median confidence: correct answers {statistics.median(conf_a):.3f}, "
        f"unanswerable {statistics.median(conf_u):.3f}"
    )
    print(
        f"{'threshold':>9} {'served':>7} {'wrong-evidence':>15} {'false-refusal':>14} "
        f"{'unanswerable-served':>20}"
    )
    for row in report["table"]:
        mark = "  <- configured" if abs(row["threshold"] - configured) < 1e-9 else ""
        print(
            f"{row['threshold']:>9.2f} {row['served']:>7.3f} {row['wrong_evidence_rate']:>15.3f} "
            f"{row['false_refusal_rate']:>14.3f} {row['unanswerable_served']:>20.3f}{mark}"
        )
    out = Path(args.out) if args.out else result_path("refusal")
    out.parent.mkdir(parents=True, exist_ok=True)
    report["configured_threshold"] = configured
    report["wall_s"] = round(time.time() - t0, 1)
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
