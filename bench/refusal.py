#!/usr/bin/env python3
"""The wide unanswerable set: every commit workspace asked other projects' commit questions.

``quality.py``'s unanswerable group asks each commit workspace ten questions of *one* other
project (``devset.FOREIGN_PROJECT``: flask and click ask each other's, the other languages go
round a ring): 20 distinct Python questions and 50 others. Held out, that leaves the Python
workspaces with nothing to learn from: with flask (or click) held out, every Python
unanswerable case goes with it, so the model that judges flask's workspace has seen another
project's question only in a JavaScript, Go, Rust or Java workspace. This script asks each
commit workspace ``--per-project`` questions (variant a, spread over the donor's commit
datasets) of *every* other project (of the one ``quality.py`` asks there, other questions than
its ``--narrow`` ones) and records each answer the way ``quality.py`` does (the verdict's
signals, the quoted-phrase rule, the engine's confidence) so that

    python bench/confidence_fit.py --report Q.json --unanswerable WIDE.json

fits on them (leave-one-project-out as ever: a case belongs to the workspace's project and the
question's) and measures them beside the narrow group: ``unanswerable-same`` (a question of
the workspace's language family: more flask and click questions asked in each other's
workspace, JavaScript and TypeScript, Go, Rust and Java) and ``unanswerable-cross`` (the other
family's). Printed here: the share refused at the engine's own line, by the workspace's
language family and the question's.

    PYTHONPATH=server python bench/refusal.py --index-root /tmp/q-idx \
        [--per-project 8] [--set rerank_budget_ms=60000] [--out wide.json]

``--index-root``: a ``quality.py --history`` run's (each workspace's index is brought up to
date, not rebuilt); the workspaces are the shared ``--history`` checkouts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from common import CACHE_ROOT, DEFAULT_SHARED, log, result_path  # first: server/ on sys.path

# isort: split
from code_evidence import config
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import CONFIGS, Case, run_variants
from devset import ensure_workspace, load_manifest, read_cases, unanswerable_cases
from quality import dataset_language, per_case_record, rounded


def commit_datasets(manifest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [d for d in manifest if d["name"].endswith("-commits")]


def donor_questions(
    shared: Path, datasets: list[dict[str, Any]], repo: str, n: int, skip: set[str]
) -> list[Case]:
    """``n`` variant-a questions of ``repo``, evenly spread over all its commit datasets'
    (distinct questions only: the same commit is asked in several releases' datasets), none of
    ``skip``."""
    seen: dict[str, Case] = {}
    for d in datasets:
        if d.get("repo") != repo:
            continue
        for c in read_cases(shared / d["cases"], d["name"], None):
            if c.variant == "a" and c.query not in skip:
                seen.setdefault(c.query, c)
    pool = list(seen.values())
    if len(pool) <= n:
        return pool
    return [pool[i * len(pool) // n] for i in range(n)]


def wide_cases(
    shared: Path,
    manifest: list[dict[str, Any]],
    workspace: dict[str, Any],
    n: int,
    narrow: int = 10,
) -> list[Case]:
    """``n`` questions of every other project for ``workspace``; of the project ``quality.py``
    already asks there (``devset.FOREIGN_PROJECT``, its ``narrow`` questions), others."""
    datasets = commit_datasets(manifest)
    mine = workspace.get("repo", "")
    asked = {c.query for c in unanswerable_cases(shared, manifest, workspace, narrow)}
    others = sorted({d.get("repo", "") for d in datasets} - {mine})
    return [
        Case(
            f"{c.id}@{workspace['name']}", workspace["name"], "unanswerable", "a", c.query, None, {}
        )
        for repo in others
        for c in donor_questions(shared, datasets, repo, n, asked)
    ]


def parse_set(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    shared = Path(args.shared).resolve()
    manifest = load_manifest(shared)
    datasets = commit_datasets(manifest)
    asked = [d for d in datasets if not args.dataset or d["name"] in args.dataset]
    languages = {
        d["name"]: dataset_language(read_cases(shared / d["cases"], d["name"], None))
        for d in datasets
    }
    records = []
    for d in asked:
        ws = ensure_workspace(shared, Path(args.ws).resolve(), d, history=True)
        cases = wide_cases(shared, manifest, d, args.per_project, args.narrow)
        with Engine(ws, index_dir=Path(args.index_root) / d["name"], config=config.Config()) as eng:
            eng.index()
            runs = run_variants(eng, cases, {"full": CONFIGS["full"]}, ranking=args.ranking)
        records += [per_case_record(r) for r in runs["full"]]
        log(f"{d['name']}: {len(cases)} questions of other projects")
    return {"languages": languages, "cases_full": records}


def family(language: str) -> str:
    return "Python" if language == "Python" else "other"


def summary(report: dict[str, Any]) -> list[str]:
    """Share refused as the engine flagged it (its family's line, or the quoted-phrase rule),
    by the workspace's language family and the question's."""
    langs = report["languages"]
    asked: Counter[tuple[str, str]] = Counter()
    refused: Counter[tuple[str, str]] = Counter()
    for c in report["cases_full"]:
        question, workspace = c["id"].split(":", 1)[0], c["id"].rsplit("@", 1)[-1]
        key = (family(langs.get(workspace, "")), family(langs.get(question, "")))
        asked[key] += 1
        refused[key] += bool(c["insufficient"])
    return [
        f"workspace {w:<6} question {q:<6} n {n:>4}  refused {refused[w, q] / n:.3f}"
        for (w, q), n in sorted(asked.items())
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--shared", default=str(DEFAULT_SHARED))
    p.add_argument("--ws", default=str(CACHE_ROOT / "ws-history"))
    p.add_argument("--index-root", required=True, help="a quality.py --history run's")
    p.add_argument("--dataset", action="append", help="only these workspaces (repeatable)")
    p.add_argument("--per-project", type=int, default=8, help="questions of each other project")
    p.add_argument(
        "--narrow",
        type=int,
        default=10,
        help="quality.py's --unanswerable: its questions are not asked again here",
    )
    p.add_argument(
        "--set",
        dest="ranking",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [ranking] setting for the run, as quality.py's --set",
    )
    p.add_argument("--out")
    args = p.parse_args(argv)
    args.ranking = parse_set(args.ranking)
    t0 = time.time()
    report = run(args)
    # The configured line the engine ran at (each family's is this plus the model's offset).
    line = args.ranking.get("insufficient_below", config.Config().ranking.insufficient_below)
    for row in summary(report):
        print(row)
    report |= {
        "kind": "unanswerable-wide",
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "line": line,
        "wall_s": round(time.time() - t0, 1),
    }
    out = Path(args.out) if args.out else result_path("refusal-wide")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rounded(report), indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
