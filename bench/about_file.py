#!/usr/bin/env python3
""" "What else must change with this file?": the dev set's variant-b cases asked that way.

A variant-b case is a commit's question asked from one file it changed; its gold is the other
files the commit changed (``score.py`` leaves the open file out). Asked instead as a question
that names nothing but the file (``PHRASINGS``), the engine can only answer from the file
itself: ``search/subject.py`` reads such a question as the names the file defines. This asks
every variant-b case of the commit datasets once with its own question and once per phrasing,
on the ``quality.py --history`` indexes (configuration ``full``), and reports per phrasing
file MRR@10, R@5 and R@10, the two refusal numbers (refused while the first file is right;
accepted with no gold file in the first five), and the find's median time; per project for
the first phrasing. The last row ranks the open file's co-change partners alone
(``cochange.partners``), the history's own answer.

  PYTHONPATH=server python bench/about_file.py --index-root DIR [--phrasing TEXT ...]

Results: a table on stdout and a JSON file (``--out``, default
``bench/results/about-file-<UTC time>.json``) with per-case records.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import log, write_report  # first: server/ on sys.path

# isort: split
from code_evidence import config
from code_evidence.api import FindRequest
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import CONFIGS, Case, Hit, configured, score_case
from devset import (
    add_index_options,
    built_index,
    ensure_workspace,
    load_cases,
    load_manifest,
)

ASKED = "(the commit's own question)"
PARTNERS = "(co-change partners alone)"
PHRASINGS = (
    "what else must change with this file?",
    "what else needs to change when I edit this",
    "files that usually change together with this one",
    "what depends on this module",
    "this",
)


def record(case: Case, asked: str, hits: list[Hit], ms: float | None, **verdict: Any) -> dict:
    m = score_case(case, hits)
    out: dict[str, Any] = {
        "id": case.id,
        "dataset": case.dataset,
        "asked": asked,
        "files": list(dict.fromkeys(h.path for h in hits))[:10],
        "MRR@10": m["MRR@10"],
        "R@5": m["R@5"],
        "R@10": m["R@10"],
        "ms": ms,
    }
    if verdict:
        out["refused_right"] = verdict["insufficient"] and m["MRR@10"] == 1.0
        out["accepted_wrong"] = not verdict["insufficient"] and m["R@5"] == 0.0
        out["confidence"] = verdict["confidence"]
    return out


def ask(eng: Engine, case: Case, asked: str) -> dict[str, Any]:
    question = case.query if asked == ASKED else asked
    req = FindRequest(query=question, open_file=case.open_file, limit=10, budget_tokens=0)
    t0 = time.perf_counter()
    res = eng.find(req, refresh=False)
    ms = (time.perf_counter() - t0) * 1000
    hits = [Hit(e.path, e.start, e.end) for e in res.results]
    return record(case, asked, hits, ms, insufficient=res.insufficient, confidence=res.confidence)


def partners(eng: Engine, case: Case) -> dict[str, Any]:
    store = eng.reader
    head = store.get_meta("history_head_time")
    found = store.cochange().partners(case.open_file or "", int(head), 10) if head else []
    return record(case, PARTNERS, [Hit(p.path, 1, 1) for p in found], None)


def summary(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by[r["asked"]].append(r)
    out: dict[str, dict[str, float]] = {}
    for asked, rs in by.items():
        row: dict[str, float] = {"n": len(rs)}
        for k in ("MRR@10", "R@5", "R@10"):
            row[k] = sum(r[k] for r in rs) / len(rs)
        if "refused_right" in rs[0]:
            row["refused_right"] = sum(r["refused_right"] for r in rs) / len(rs)
            row["accepted_wrong"] = sum(r["accepted_wrong"] for r in rs) / len(rs)
            row["median_ms"] = statistics.median(r["ms"] for r in rs)
        out[asked] = row
    return out


def per_project(records: list[dict[str, Any]], asked: str) -> dict[str, dict[str, float]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        if r["asked"] == asked:
            by[r["dataset"].split("-")[0]].append(r)
    return {
        p: {
            "n": len(rs),
            "MRR@10": sum(r["MRR@10"] for r in rs) / len(rs),
            "R@10": sum(r["R@10"] for r in rs) / len(rs),
        }
        for p, rs in by.items()
    }


def table(rows: dict[str, dict[str, float]]) -> str:
    lines = [
        f"{'asked':<52}{'n':>5}{'MRR@10':>8}{'R@5':>7}{'R@10':>7}"
        f"{'refused right':>15}{'accepted wrong':>16}{'median ms':>11}"
    ]
    for asked, r in rows.items():
        tail = (
            f"{r['refused_right']:>15.3f}{r['accepted_wrong']:>16.3f}{r['median_ms']:>11.1f}"
            if "refused_right" in r
            else f"{'-':>15}{'-':>16}{'-':>11}"
        )
        lines.append(
            f"{asked[:51]:<52}{r['n']:>5.0f}{r['MRR@10']:>8.3f}{r['R@5']:>7.3f}{r['R@10']:>7.3f}"
            + tail
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    add_index_options(ap)
    ap.add_argument("--phrasing", action="append", help="ask this instead (repeatable)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    phrasings = tuple(args.phrasing or PHRASINGS)
    shared = args.shared.resolve()
    datasets = [
        d
        for d in load_manifest(shared)
        if d["kind"] == "commit" and (not args.dataset or d["name"] in args.dataset)
    ]
    records: list[dict[str, Any]] = []
    for d in datasets:
        ws = ensure_workspace(shared, args.ws.resolve(), d, True)
        cases = [c for c in load_cases(shared, d, None) if c.variant == "b"]
        index_dir = built_index(args.index_root, d["name"])
        eng = Engine(ws, index_dir=index_dir, config=config.Config())
        with eng, configured(eng, CONFIGS["full"], {}):
            for case in cases:
                records.extend(ask(eng, case, asked) for asked in (ASKED, *phrasings))
                records.append(partners(eng, case))
        log(f"{d['name']}: {len(cases)} cases")
    rows = summary(records)
    print(table(rows))
    projects = per_project(records, phrasings[0])
    print(f"\nper project, {phrasings[0]!r}: MRR@10 / R@10")
    print(
        "  ".join(
            f"{p} ({r['n']:.0f}) {r['MRR@10']:.3f} / {r['R@10']:.3f}" for p, r in projects.items()
        )
    )
    report = {"phrasings": list(phrasings), "rows": rows, "per_project": projects}
    write_report(args.out, "about-file", {**report, "cases": records})
    return 0


if __name__ == "__main__":
    sys.exit(main())
