#!/usr/bin/env python3
"""Retrieval-quality benchmark: run the engine on every dev case, score it, compare stages.

Each dataset workspace is indexed once; every stage configuration of the ablation then runs on
that same index (stages are switched on ``eng.config.stages`` between ``find`` calls), so the
deltas between rows come from the stages alone, not from different indexes. Only ``query`` and
``open_file`` reach the engine; everything else in a case is a label.

The metrics are the ones defined in the shared bench README. They are computed here (per case,
so they can be grouped any way) and, for the ``full`` configuration, checked against the
shared ``score.py`` run as a subprocess: a metric drift between the two is a bug in this file
and stops the run.

Two workspace modes, each with its own workspace and index roots so they never mix: sdist
workspaces (the default; the Python datasets only) and, with ``--history``, git checkouts at each
base tag with their past (``materialize.py --history``), which adds the non-Python datasets.

  PYTHONPATH=server python bench/quality.py --ws /tmp/bench-ws
  PYTHONPATH=server python bench/quality.py --history
  PYTHONPATH=server python bench/quality.py --dataset click-8.3.0-commits --cases-limit 5
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (  # first: puts this checkout's server/ on sys.path
    DEFAULT_SHARED,
    REPO,
    git_state,
    log,
    result_path,
    stamp,
)

# isort: split
from code_evidence import api, config
from code_evidence.engine import Engine
from code_evidence.evaluation.evaluate import (
    COMMIT_POOLED,
    CONFIGS,
    FAILURE_GROUPS,
    GROUP_ORDER,
    HARD_NEGATIVES,
    LIMIT,
    METRICS,
    OPEN_IN_3,
    TOP_CHUNKS,
    TOP_FILES,
    Case,
    CaseRun,
    aggregate,
    file_ranking,
    fmt,
    group_metrics,
    hard_negative_shares,
    latency,
    metrics_table,
    run_variants,
    stage_latency,
)
from devset import (
    DEFAULT_INDEX_ROOT,
    DEFAULT_WS,
    FAILURES_DIR,
    MESSAGES_DIR,
    TEST_REPORTS_DIR,
    ensure_workspace,
    in_sdist_mode,
    load_cases,
    load_failure_cases,
    load_manifest,
    unanswerable_cases,
    variant_c_cases,
)

GROUPS = ("commit a", "commit b", "docstring")
# Built here from the commit cases (devset.variant_c_cases): the open file holds the answer.
# Not in score.py's files, so neither its cross-check nor a reference covers it.
VARIANT_C = "commit c"
# Best reference method per group, from the "Reference baselines (dev set)" table of
# shared/bench/README.md: hybrid-rrf for commit a and docstring, hybrid-rrf+open for commit b.
Reference = dict[str, tuple[str, float, float | None]]  # group -> (method, MRR@10, chunk@10)
REFERENCE: Reference = {
    "commit a": ("hybrid-rrf", 0.643, 0.640),
    "commit b": ("hybrid-rrf+open", 0.756, 0.650),
    "docstring": ("hybrid-rrf", 0.691, 0.676),
}
# The same for the five non-Python commit datasets, pooled ("Pooled over the five non-Python
# commit datasets" table). The README gives no chunk@10 per dataset, so the per-dataset rows and
# what is derived from them (macro average, pooled without zod) compare on MRR@10 alone.
REFERENCE_NON_PYTHON: Reference = {
    "commit a": ("hybrid-rrf", 0.562, 0.633),
    "commit b": ("hybrid-rrf+open", 0.522, 0.469),
}
METHOD = {"commit a": "hybrid-rrf", "commit b": "hybrid-rrf+open"}  # the best, per variant
# "Per dataset, MRR@10 of the best reference (hybrid-rrf for a, hybrid-rrf+open for b)".
REFERENCE_DATASET: dict[str, dict[str, float]] = {
    "fastify-v4.24.0-commits": {"commit a": 0.337, "commit b": 0.128},
    "zod-v3.22.0-commits": {"commit a": 0.581, "commit b": 0.539},
    "gin-v1.9.0-commits": {"commit a": 0.536, "commit b": 0.478},
    "bytes-v1.4.0-commits": {"commit a": 0.728, "commit b": 0.786},
    "javapoet-1.9.0-commits": {"commit a": 0.632, "commit b": 0.653},
}
# Left out of one non-Python pooled row: zod keeps a generated copy of its sources (deno/lib/),
# so 24 of its 29 commits have twin gold files, and in every variant-b case the open file's
# twin is the gold.
WITHOUT = "zod-v3.22.0-commits"
# Project goals: MRR@10 pooled over all commit cases (a+b) and over docstring cases.
GOALS: dict[str, float] = {COMMIT_POOLED: 0.75, "docstring": 0.85}
# A dataset's language is the one most of its gold files are written in.
LANGUAGES = {
    ".py": "Python",
    ".js": "JavaScript",
    ".mjs": "JavaScript",
    ".cjs": "JavaScript",
    ".ts": "TypeScript",
    ".tsx": "TypeScript",
    ".go": "Go",
    ".rs": "Rust",
    ".java": "Java",
}
PYTHON = "Python"
# Rows of the per-language table besides one per language.
NON_PYTHON_POOLED = "non-Python pooled"
NON_PYTHON_MACRO = "non-Python macro"
NON_PYTHON_WITHOUT = "non-Python pooled w/o zod"
ALL_POOLED = "all datasets pooled"
LANGUAGE_MACRO = "macro over languages"


# --------------------------------------------------------------------------- data


@dataclass(slots=True)
class DatasetRun:
    name: str
    workspace: str
    index_dir: str
    index_s: float
    index_report: Any
    runs: dict[str, list[CaseRun]]  # configuration -> one run per case
    language: str


def dataset_language(cases: list[Case]) -> str:
    """The language most gold files of the dataset are written in ("other" if none is known)."""
    counts = Counter(LANGUAGES.get(Path(path).suffix, "other") for c in cases for path in c.gold)
    return counts.most_common(1)[0][0] if counts else "other"


# --------------------------------------------------------------------------- cross-check


def results_jsonl(runs: list[CaseRun]) -> str:
    """The shared results format: one ``{"id", "results": [{path, start, end}]}`` per line,
    each result with the ``line`` it opens at too (score.py reads only the others)."""
    lines = []
    for r in runs:
        res = [{"path": h.path, "start": h.start, "end": h.end, "line": h.line} for h in r.hits]
        lines.append(json.dumps({"id": r.case.id, "results": res}))
    return "\n".join(lines) + "\n"


def parse_score_output(text: str) -> dict[str, dict[str, float]]:
    """``score.py`` prints ``group n metric...``; groups are ``kind/variant``."""
    rows: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2 + len(METRICS) or parts[0] == "group":
            continue
        rows[parts[0]] = {"n": float(parts[1])} | {
            k: float(v) for k, v in zip(METRICS, parts[2:], strict=True)
        }
    return rows


def cross_check(shared: Path, runs: list[CaseRun], results_path: Path) -> dict[str, Any]:
    """Score ``runs`` with the shared score.py and fail loudly if any pooled number differs.

    score.py scores every case of the files it is given, so with ``--cases-limit`` it gets
    case files cut to exactly the cases that ran.
    """
    results_path.write_text(results_jsonl(runs), encoding="utf-8")
    ran = {r.case.id for r in runs}
    with tempfile.TemporaryDirectory(prefix="quality-cases-") as tmp:
        case_args: list[str] = []
        for d in load_manifest(shared):
            lines = [
                line
                for line in (shared / d["cases"]).read_text(encoding="utf-8").splitlines()
                if line.strip() and json.loads(line)["id"] in ran
            ]
            if lines:
                p = Path(tmp) / f"{d['name']}.jsonl"
                p.write_text("\n".join(lines) + "\n", encoding="utf-8")
                case_args += ["--cases", str(p)]
        if not case_args:  # only groups built here ran (variant c, unanswerable)
            return {"score_py_output": "", "groups_checked": []}
        cmd = [sys.executable, str(shared / "score.py"), *case_args, "--results", str(results_path)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    theirs = parse_score_output(out)
    ours = {g: aggregate([r.metrics for r in runs if r.case.group == g]) for g in GROUPS}
    mismatches = []
    for g, mine in ours.items():
        if not mine["n"]:
            continue
        key = "docstring/a" if g == "docstring" else g.replace(" ", "/")
        row = theirs.get(key)
        if row is None:
            mismatches.append(f"{g}: missing from score.py output")
            continue
        for k in ("n", *METRICS):
            a, b = mine[k], row[k]
            same = (a is None and math.isnan(b)) or (a is not None and abs(a - b) <= 5e-4 + 1e-9)
            if not same:
                mismatches.append(f"{g} {k}: ours {a} vs score.py {b}")
    if mismatches:
        raise AssertionError("metrics differ from score.py:\n  " + "\n  ".join(mismatches))
    return {"score_py_output": out, "groups_checked": sorted(theirs)}


# --------------------------------------------------------------------------- engine runs


INDEX_MARKER = ".quality-bench-index"


def prepare_index_dir(index_dir: Path, fresh: bool) -> None:
    """Wipe only folders this script made (marker file), never a folder passed by mistake."""
    if fresh and index_dir.exists():
        if not (index_dir / INDEX_MARKER).is_file() and any(index_dir.iterdir()):
            raise SystemExit(f"{index_dir}: not empty and not made by quality.py; not deleting it")
        shutil.rmtree(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / INDEX_MARKER).touch()


def progress_logger(name: str) -> Callable[[str, int, int], None]:
    """Log each index phase once, and its completion, instead of a line per file."""
    state = {"stage": ""}

    def report(stage: str, done: int, total: int) -> None:
        if stage != state["stage"]:
            state["stage"] = stage
            log(f"  {name}: {stage} ({total})")
        elif total and done == total:
            log(f"  {name}: {stage} done ({total})")

    return report


def run_dataset(
    name: str,
    ws: Path,
    index_dir: Path,
    cases: list[Case],
    configs: list[str],
    limit: int,
    fresh: bool,
    overrides: dict[str, Any] | None = None,
) -> DatasetRun:
    prepare_index_dir(index_dir, fresh)
    with Engine(ws, index_dir=index_dir, config=config.Config()) as eng:
        t0 = time.perf_counter()
        report = eng.index(progress=progress_logger(name))
        index_s = time.perf_counter() - t0
        log(f"{name}: indexed in {index_s:.1f}s")
        runs = run_variants(eng, cases, {c: CONFIGS[c] for c in configs}, limit, overrides)
    for conf, conf_runs in runs.items():
        errors = sum(1 for r in conf_runs if r.error)
        log(f"  {name} [{conf}]: {len(cases)} cases" + (f", {errors} errors" if errors else ""))
    return DatasetRun(name, str(ws), str(index_dir), index_s, report, runs, dataset_language(cases))


# --------------------------------------------------------------------------- report


def hard_negative_table(runs: list[CaseRun]) -> tuple[str, dict[str, dict[str, float]]]:
    data = hard_negative_shares(runs)
    lines = [f"{'group':<12}" + "".join(f"{k:>20}" for k in HARD_NEGATIVES)]
    for g, row in data.items():
        lines.append(f"{g:<12}" + "".join(f"{row[k]:>20.3f}" for k in HARD_NEGATIVES))
    return "\n".join(lines), data


Groups = dict[str, dict[str, float | int | None]]


def comparison(
    groups: Groups,
    reference: Reference = REFERENCE,
    scope: str = PYTHON,
) -> list[dict[str, Any]]:
    """Against the best README baseline per group: PASS only when MRR and chunk both reach it
    (MRR alone where the README gives no chunk figure)."""
    rows = []
    for g, (method, ref_mrr, ref_chunk) in reference.items():
        a = groups.get(g)
        if not a or not a["n"]:
            continue
        mrr, chunk = a["MRR@10"], a["chunk@10"]
        d_mrr = None if mrr is None else mrr - ref_mrr
        d_chunk = None if chunk is None or ref_chunk is None else chunk - ref_chunk
        chunk_ok = ref_chunk is None or (d_chunk is not None and d_chunk >= 0)
        ok = d_mrr is not None and d_mrr >= 0 and chunk_ok
        rows.append(
            {
                "scope": scope,
                "group": g,
                "reference": method,
                "n": a["n"],
                "MRR@10": mrr,
                "ref_MRR@10": ref_mrr,
                "delta_MRR@10": d_mrr,
                "chunk@10": chunk,
                "ref_chunk@10": ref_chunk,
                "delta_chunk@10": d_chunk,
                "pass": ok,
            }
        )
    return rows


def macro(rows: list[Groups]) -> Groups:
    """Per group, the mean of the datasets' figures (each dataset weighs the same); ``n`` is
    the number of cases behind it, ``datasets`` how many datasets."""
    out: Groups = {}
    for g in dict.fromkeys(g for r in rows for g in r):
        aggs = [r[g] for r in rows if g in r and r[g]["n"]]
        row: dict[str, float | int | None] = {"n": sum(int(a["n"] or 0) for a in aggs)}
        for k in (*METRICS, OPEN_IN_3):
            vals = [float(a[k]) for a in aggs if a.get(k) is not None]
            if k == OPEN_IN_3 and not vals:
                continue
            row[k] = sum(vals) / len(vals) if vals else None
        row["n_chunk"] = sum(int(a["n_chunk"] or 0) for a in aggs)
        row["datasets"] = len(aggs)
        out[g] = row
    return out


def language_rows(dataset_runs: list[DatasetRun], conf: str) -> dict[str, Groups]:
    """One row per language (Python first, then in manifest order) and, when other languages
    ran, the non-Python summaries: pooled, the macro average over their datasets, and pooled
    without zod."""
    langs = dict.fromkeys([PYTHON] + [dr.language for dr in dataset_runs])
    rows: dict[str, Groups] = {}
    for lang in langs:
        runs = [r for dr in dataset_runs if dr.language == lang for r in dr.runs[conf]]
        if runs:
            rows[lang] = group_metrics(runs)
    other = [dr for dr in dataset_runs if dr.language != PYTHON]
    if other:
        rows[NON_PYTHON_POOLED] = group_metrics([r for dr in other for r in dr.runs[conf]])
        rows[NON_PYTHON_MACRO] = macro([group_metrics(dr.runs[conf]) for dr in other])
        rest = [dr for dr in other if dr.name != WITHOUT]
        if rest and len(rest) < len(other):
            rows[NON_PYTHON_WITHOUT] = group_metrics([r for dr in rest for r in dr.runs[conf]])
        rows[ALL_POOLED] = group_metrics([r for dr in dataset_runs for r in dr.runs[conf]])
        rows[LANGUAGE_MACRO] = macro([rows[lang] for lang in langs if lang in rows])
    return rows


def references(
    manifest: list[dict[str, Any]], dataset_runs: list[DatasetRun]
) -> dict[str, Reference]:
    """The best reference beside each row of the per-language and per-dataset tables: the
    README's pooled tables (Python; the five non-Python datasets together), its per-dataset
    MRR@10, and what follows from those: a language's n-weighted MRR@10 over its datasets
    (with the manifest's case counts), their macro average, pooled without zod."""
    n_cases = {d["name"]: d["n_cases"] for d in manifest}
    ran = [dr.name for dr in dataset_runs if dr.name in REFERENCE_DATASET]

    def weighted(names: list[str]) -> Reference:
        out: Reference = {}
        for g, method in METHOD.items():
            n = [n_cases[d][g[-1]] for d in names]
            if sum(n):
                mrr = sum(REFERENCE_DATASET[d][g] * k for d, k in zip(names, n, strict=True))
                out[g] = (method, mrr / sum(n), None)
        return out

    refs: dict[str, Reference] = {PYTHON: dict(REFERENCE)}
    for lang in dict.fromkeys(dr.language for dr in dataset_runs if dr.language != PYTHON):
        names = [dr.name for dr in dataset_runs if dr.language == lang]
        if set(names) <= set(ran):
            refs[lang] = weighted(names)
    others = [dr.name for dr in dataset_runs if dr.language != PYTHON]
    if ran and set(others) <= set(ran):
        if set(ran) == set(REFERENCE_DATASET):
            refs[NON_PYTHON_POOLED] = dict(REFERENCE_NON_PYTHON)
        refs[NON_PYTHON_MACRO] = {
            g: (m, sum(REFERENCE_DATASET[d][g] for d in ran) / len(ran), None)
            for g, m in METHOD.items()
        }
        rest = [d for d in ran if d != WITHOUT]
        if rest and len(rest) < len(ran):
            refs[NON_PYTHON_WITHOUT] = weighted(rest)
    return refs | {name: weighted([name]) for name in ran}


def cell(a: dict[str, float | int | None] | None) -> str:
    if not a or not a["n"]:
        return "-"
    opened = f" o3 {fmt(a[OPEN_IN_3], 0)}" if a.get(OPEN_IN_3) is not None else ""
    return f"{fmt(a['MRR@10'], 0)} / {fmt(a['chunk@10'], 0)}{opened} ({a['n']})"


def ref_cell(ref: tuple[str, float, float | None] | None) -> str:
    if ref is None:
        return "-"
    return f"{ref[1]:.3f} / {'-' if ref[2] is None else f'{ref[2]:.3f}'}"


def summary_table(
    title: str, rows: dict[str, Groups], refs: dict[str, Reference], tags: dict[str, str]
) -> str:
    """Rows x groups of ``MRR@10 / chunk@10 (n)``, each commit group with its reference."""
    present = {g for groups in rows.values() for g in groups}
    groups = [g for g in GROUP_ORDER if g in present]
    width = max(len(f"{name} {tags.get(name, '')}") for name in rows) + 1
    cols: list[tuple[str, str, int]] = []  # (group, "" or "ref", width)
    for g in groups:
        cols.append((g, "", 22))
        if g in METHOD:
            cols.append((g, "ref", 14))
    head = f"{'':<{width}}" + "".join(f"{'ref' if kind else g:>{w}}" for g, kind, w in cols)
    lines = [title, head, "-" * len(head)]
    for name, groups_of in rows.items():
        label = f"{name} {tags.get(name, '')}".rstrip()
        line = f"{label:<{width}}"
        for g, kind, w in cols:
            text = ref_cell(refs.get(name, {}).get(g)) if kind else cell(groups_of.get(g))
            line += f"{text:>{w}}"
        lines.append(line)
    return "\n".join(lines)


def goals(groups: dict[str, dict[str, float | int | None]]) -> list[dict[str, Any]]:
    out = []
    for g, target in GOALS.items():
        a = groups.get(g)
        if a and a["n"]:
            mrr = a["MRR@10"]
            out.append(
                {
                    "group": g,
                    "n": a["n"],
                    "MRR@10": mrr,
                    "target": target,
                    "pass": mrr is not None and mrr >= target,
                }
            )
    return out


def comparison_table(
    compare: dict[str, list[dict[str, Any]]],
    goal_rows: dict[str, list[dict[str, Any]]],
    primary: str,
) -> str:
    """One table for every configuration (per-dataset rows for ``primary`` only), then one goal
    line per configuration."""
    head = (
        f"{'config':<20} {'scope':<26} {'group':<10} {'reference':<16} {'ref MRR':>7} "
        f"{'MRR@10':>7} {'delta':>7} {'ref chk':>7} {'chunk@10':>8} {'delta':>7}  verdict"
    )
    lines = ["vs README reference best (MRR@10 / chunk@10)", head, "-" * len(head)]
    for conf, rows in compare.items():
        for r in rows:
            if conf != primary and r["scope"] in REFERENCE_DATASET:
                continue
            lines.append(
                f"{conf:<20} {r['scope']:<26} {r['group']:<10} {r['reference']:<16} "
                f"{fmt(r['ref_MRR@10'], 7)} {fmt(r['MRR@10'], 7)} {signed(r['delta_MRR@10'])} "
                f"{fmt(r['ref_chunk@10'], 7)} {fmt(r['chunk@10'])} "
                f"{signed(r['delta_chunk@10'])}  {'PASS' if r['pass'] else 'FAIL'}"
            )
    lines.append("")
    for conf, rows in goal_rows.items():
        goal_text = ", ".join(
            f"{g['group']} MRR@10 {fmt(g['MRR@10'], 0)} (n={g['n']}) >= {g['target']:.2f} "
            f"{'PASS' if g['pass'] else 'FAIL'}"
            for g in rows
        )
        lines.append(f"goal [{conf}]: {goal_text or 'no cases'}")
    return "\n".join(lines)


def signed(v: float | None) -> str:
    return f"{'-':>7}" if v is None else f"{v:>+7.3f}"


def latency_table(by_conf: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'config':<20} {'n':>5} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} "
        f"{'rerank med':>10}  errors"
    )
    lines = ["find latency (warm, wall clock around Engine.find)", head, "-" * len(head)]
    for conf, lat in by_conf.items():
        rerank_ms = lat.get("stage_median_ms", {}).get("rerank")
        lines.append(
            f"{conf:<20} {lat['n']:>5} {num(lat['median_ms'], 10)} {num(lat['p95_ms'], 8)} "
            f"{num(lat['max_ms'], 8)} {num(rerank_ms, 10)}  {lat['errors']}"
        )
    return "\n".join(lines)


def num(v: float | None, width: int) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:>{width}.1f}"


def refusal_rows(dataset_runs: list[DatasetRun], conf: str) -> dict[str, dict[str, Any]]:
    """The two refusal numbers per group (kind/variant x language): *refused while right*
    (flagged insufficient although the first scored file is gold) and *accepted while wrong*
    (not flagged, with no gold file in the top 5), each as a share of the group's cases. An
    answer is flagged as the engine flagged it (``insufficient``: its confidence under the line
    of its family, ``insufficient_below`` plus the model's offset, or a must-match rule); a
    report of an engine that did not say is read at the configured line."""
    line = config.Config().ranking.insufficient_below
    by: dict[str, list[CaseRun]] = {}
    for dr in dataset_runs:
        for r in dr.runs[conf]:
            by.setdefault(f"{r.case.group} / {dr.language}", []).append(r)
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(by):
        rs = [r for r in by[key] if r.confidence is not None]
        if not rs:
            continue
        refused = [r for r in rs if _flagged(r, line)]
        right = sum(1 for r in refused if r.metrics.get("MRR@10") == 1.0)
        wrong = sum(1 for r in rs if r not in refused and not r.metrics.get("R@5"))
        out[key] = {
            "n": len(rs),
            "refused": len(refused) / len(rs),
            "refused_while_right": right / len(rs),
            "accepted_while_wrong": wrong / len(rs),
        }
    return out


def refusal_table(rows: dict[str, dict[str, Any]]) -> str:
    head = (
        f"{'group / language':<30} {'n':>5} {'refused':>8} {'refused-right':>14} "
        f"{'accepted-wrong':>15}"
    )
    lines = [head, "-" * len(head)]
    for key, r in rows.items():
        lines.append(
            f"{key:<30} {r['n']:>5} {r['refused']:>8.3f} {r['refused_while_right']:>14.3f} "
            f"{r['accepted_while_wrong']:>15.3f}"
        )
    return "\n".join(lines)


def _flagged(r: CaseRun, line: float) -> bool:
    # getattr: an older engine's CaseRun (a "before" run) has no flag of its own
    flag = getattr(r, "insufficient", None)
    return flag if flag is not None else r.confidence is not None and r.confidence < line


def per_case_record(r: CaseRun) -> dict[str, Any]:
    return {
        "id": r.case.id,
        "group": r.case.group,
        "confidence": r.confidence,
        # getattr: the same bench can run an older engine's evaluate (a "before" run)
        "signals": getattr(r, "signals", {}),
        "refused_by_rule": getattr(r, "refused_by_rule", False),
        "insufficient": getattr(r, "insufficient", None),
        "metrics": r.metrics,
        "gold_files": sorted(r.case.gold),
        "top_files": file_ranking(r.hits)[:TOP_FILES],
        "top_chunks": [f"{h.path}:{h.start}-{h.end}" for h in r.hits[:TOP_CHUNKS]],
        "ms": round(r.ms, 2),
        "error": r.error,
        "outranked_by": r.outranked_by,
    }


def rounded(obj: Any) -> Any:
    """Floats to 6 digits, so reports diff on real changes rather than float noise."""
    if isinstance(obj, float):
        return round(obj, 6)
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [rounded(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help="shared bench folder")
    ap.add_argument(
        "--history",
        action="store_true",
        help="git checkouts at each base tag with their past (materialize.py --history), which "
        "adds the non-Python datasets; its own workspace and index roots",
    )
    ap.add_argument(
        "--ws",
        type=Path,
        default=None,
        help=f"materialized workspaces root (default {DEFAULT_WS['sdist']}, with --history "
        f"{DEFAULT_WS['history']})",
    )
    ap.add_argument("--dataset", action="append", help="only these datasets (repeatable)")
    ap.add_argument("--limit", type=int, default=LIMIT, help="results requested per query")
    ap.add_argument(
        "--ablation",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run every stage configuration (default), or only `full`",
    )
    ap.add_argument("--out", type=Path, default=None, help="JSON report path")
    ap.add_argument(
        "--index-root",
        type=Path,
        default=None,
        help=f"one index per dataset under it (default {DEFAULT_INDEX_ROOT['sdist']}, with "
        f"--history {DEFAULT_INDEX_ROOT['history']})",
    )
    ap.add_argument(
        "--reuse-index",
        action="store_true",
        help="update an existing index instead of rebuilding it (faster; index time is then "
        "an update time, and engine changes that do not touch files may not show)",
    )
    ap.add_argument("--cases-limit", type=int, default=None, help="first N cases per dataset")
    ap.add_argument(
        "--failures",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"also run the traceback cases of {FAILURES_DIR.relative_to(REPO)} (default: when "
        "that folder exists)",
    )
    ap.add_argument(
        "--messages",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"also run the message cases of {MESSAGES_DIR.relative_to(REPO)} (labelled at the "
        "template; mined from other languages' sources; default: when that folder exists)",
    )
    ap.add_argument(
        "--test-reports",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"also run the cases of {TEST_REPORTS_DIR.relative_to(REPO)} (the failure cases as "
        "pytest and unittest print them; default: when that folder exists)",
    )
    ap.add_argument(
        "--variant-c",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run variant c (the open file holds the answer), built from the commit "
        "cases of variant a (default: on)",
    )
    ap.add_argument(
        "--unanswerable",
        type=int,
        default=10,
        metavar="N",
        help="ask each commit dataset's workspace N questions of another project (devset."
        "FOREIGN_PROJECT), which should be refused (0: none)",
    )
    ap.add_argument(
        "--variants",
        type=lambda v: sorted(set(v.split(","))),
        default=None,
        help="only cases of these variants, comma-separated (a, b, c), to iterate on a group",
    )
    ap.add_argument(
        "--configs",
        type=lambda v: v.split(","),
        help=f"comma-separated configurations to run (known: {', '.join(CONFIGS)})",
    )
    ap.add_argument(
        "--set",
        dest="ranking",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a [ranking] setting for every configuration (repeatable), to try a value",
    )
    args = ap.parse_args(argv)
    for conf in args.configs or []:
        if conf not in CONFIGS:
            ap.error(f"unknown configuration {conf!r}; known: {', '.join(CONFIGS)}")
    ranking: dict[str, Any] = {}
    for item in args.ranking:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--set {item!r}: expected KEY=VALUE")
        try:
            ranking[key] = json.loads(value)
        except json.JSONDecodeError:
            ranking[key] = value
    args.ranking = ranking
    args.mode = "history" if args.history else "sdist"
    args.ws = args.ws or DEFAULT_WS[args.mode]
    args.index_root = args.index_root or DEFAULT_INDEX_ROOT[args.mode]
    if args.limit < TOP_FILES:
        ap.error(f"--limit must be at least {TOP_FILES} (the metrics read the top {TOP_FILES})")
    if args.cases_limit is not None and args.cases_limit < 1:
        ap.error("--cases-limit must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    shared: Path = args.shared.resolve()
    if not (shared / "manifest.json").is_file():
        raise SystemExit(f"{shared}: no manifest.json (pass --shared)")
    manifest = load_manifest(shared)
    known = [d["name"] for d in manifest]
    unknown = sorted(set(args.dataset or []) - set(known))
    if unknown:
        raise SystemExit(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(known)}")
    asked = [d for d in manifest if not args.dataset or d["name"] in args.dataset]
    datasets = [d for d in asked if args.history or in_sdist_mode(d)]
    skipped = [d["name"] for d in asked if d not in datasets]
    if skipped:  # not an error: these exist only as git checkouts
        log(f"not in sdist mode (git checkouts only, run with --history): {', '.join(skipped)}")
    if not datasets:
        raise SystemExit("no dataset to run in sdist mode; pass --history")
    configs = list(CONFIGS) if args.ablation else ["full"]
    if args.configs:
        configs = args.configs
    primary = "full" if "full" in configs else configs[-1]  # the one the report details
    failures = FAILURES_DIR.is_dir() if args.failures is None else args.failures
    if failures and not FAILURES_DIR.is_dir():
        raise SystemExit(f"{FAILURES_DIR}: missing (build it with bench/failures/make_cases.py)")
    messages = MESSAGES_DIR.is_dir() if args.messages is None else args.messages
    reports = TEST_REPORTS_DIR.is_dir() if args.test_reports is None else args.test_reports
    created = stamp()
    out: Path = args.out or result_path(f"quality-{args.mode}")
    out.parent.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    dataset_runs: list[DatasetRun] = []
    for d in datasets:
        ws = ensure_workspace(shared, args.ws.resolve(), d, args.history)
        cases = load_cases(shared, d, args.cases_limit)
        if failures:
            cases += load_failure_cases(FAILURES_DIR, d["name"], args.cases_limit)
        if messages:
            cases += load_failure_cases(MESSAGES_DIR, d["name"], args.cases_limit)
        if reports:
            cases += load_failure_cases(TEST_REPORTS_DIR, d["name"], args.cases_limit)
        if args.variant_c:
            cases += variant_c_cases(cases)
        if args.unanswerable:
            cases += unanswerable_cases(shared, manifest, d, args.unanswerable)
        if args.variants:
            cases = [c for c in cases if c.variant in args.variants]
        index_dir = args.index_root.resolve() / d["name"]
        dataset_runs.append(
            run_dataset(
                d["name"],
                ws,
                index_dir,
                cases,
                configs,
                args.limit,
                not args.reuse_index,
                args.ranking,
            )
        )

    # The pooled tables, the goals and the README reference are Python's (the shared dev set's
    # "Pooled over the dev datasets"); other languages get their own rows and references.
    python_runs = [dr for dr in dataset_runs if dr.language == PYTHON]
    other_runs = [dr for dr in dataset_runs if dr.language != PYTHON]
    pooled = {c: group_metrics([r for dr in python_runs for r in dr.runs[c]]) for c in configs}
    pooled_other = {c: group_metrics([r for dr in other_runs for r in dr.runs[c]]) for c in configs}
    per_dataset = {c: {dr.name: group_metrics(dr.runs[c]) for dr in dataset_runs} for c in configs}
    per_language = {c: language_rows(dataset_runs, c) for c in configs}
    refs = references(manifest, dataset_runs)
    languages = {dr.name: dr.language for dr in dataset_runs}
    latencies = {}
    for c in configs:
        runs = [r for dr in dataset_runs for r in dr.runs[c]]
        latencies[c] = latency(runs) | {
            "errors": sum(1 for r in runs if r.error),
            "error_cases": [{"id": r.case.id, "error": r.error} for r in runs if r.error],
            "stage_median_ms": stage_latency(runs),
        }
    full_runs = [r for dr in dataset_runs for r in dr.runs[primary]]
    # A disagreement with score.py fails the run, but only after the report is written, so the
    # evidence for the bug is kept.
    failure: str | None = None
    try:
        check = cross_check(shared, full_runs, out.with_suffix(".full.jsonl"))
    except (AssertionError, subprocess.CalledProcessError) as exc:
        failure = f"{exc}\n{getattr(exc, 'stderr', '') or ''}".strip()
        check = {"error": failure}

    for c in configs:
        print(
            metrics_table(f"\n== {c} (pooled over {len(python_runs)} Python datasets)", pooled[c])
        )
        if other_runs:
            title = f"\n== {c} (pooled over {len(other_runs)} non-Python datasets)"
            print(metrics_table(title, pooled_other[c]))
    if other_runs:
        for c in configs:
            title = f"\nper language [{c}]: MRR@10 / chunk@10 (n), ref = best reference"
            print(summary_table(title, per_language[c], refs, {}))
    title = f"\nper dataset [{primary}]: MRR@10 / chunk@10 (n), ref = best reference"
    print(
        summary_table(
            title, per_dataset[primary], refs, {k: f"({v})" for k, v in languages.items()}
        )
    )
    negatives_text, negatives = hard_negative_table(
        [r for dr in python_runs for r in dr.runs[primary]]
    )
    print(f"\nhard negatives [{primary}, Python]: share of cases where one outranks the gold file")
    print(negatives_text)
    negatives_other: dict[str, dict[str, float]] = {}
    if other_runs:
        text, negatives_other = hard_negative_table(
            [r for dr in other_runs for r in dr.runs[primary]]
        )
        print(f"\nhard negatives [{primary}, non-Python]")
        print(text)
    compare: dict[str, list[dict[str, Any]]] = {}
    for c in configs:
        rows = {**per_language[c], **per_dataset[c]}
        compare[c] = [
            row
            for scope, ref in refs.items()
            if scope in rows
            for row in comparison(rows[scope], ref, scope)
        ]
    goal_rows = {c: goals(pooled[c]) for c in configs}
    print("\n" + comparison_table(compare, goal_rows, primary))
    # The local failure groups are scored the same way, but score.py's cross-check and the
    # reference comparison cover only the shared GROUPS.
    if any(g in pooled[primary] for g in FAILURE_GROUPS):
        print(f"({', '.join(FAILURE_GROUPS)}: local cases, no reference baseline to compare with)")
    refusals = refusal_rows(dataset_runs, primary)
    print(
        f"\nrefusals [{primary}] at insufficient_below {config.Config().ranking.insufficient_below}"
    )
    print(refusal_table(refusals))
    print("\n" + latency_table(latencies))
    for c in configs:
        for e in latencies[c]["error_cases"][:3]:
            print(f"  error [{c}] {e['id']}: {e['error']}")
    print("\nindex time per dataset")
    for dr in dataset_runs:
        rep = dr.index_report
        cache = (  # the embedding cache is shared across workspaces, so say what it saved
            f"  {getattr(rep, 'chunks_total', '?')} chunks, {getattr(rep, 'embedded', '?')} "
            f"embedded, {getattr(rep, 'vectors_from_cache', '?')} from cache"
        )
        print(f"  {dr.name:<24} {dr.index_s:>7.1f}s{cache}")
    if skipped:
        print(f"\nnot in sdist mode (run with --history): {', '.join(skipped)}")
    if failure is None:
        groups_checked = ", ".join(check["groups_checked"])
        print(f"\nscore.py agrees with these metrics for [{primary}] (groups: {groups_checked})")

    report = {
        "created": created,
        "wall_s": round(time.perf_counter() - started, 1),
        "mode": args.mode,
        "git": git_state(),
        "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "engine_config": api.to_json_dict(config.Config()),
        "configurations": {
            c: {
                "stages": sorted(CONFIGS[c].stages) if CONFIGS[c].stages else "default",
                "ranking": dict(CONFIGS[c].ranking),
                "depth": CONFIGS[c].depth,
            }
            for c in configs
        },
        "skipped_datasets": skipped,
        "languages": languages,
        "reference": {
            scope: {g: {"method": m, "MRR@10": a, "chunk@10": b} for g, (m, a, b) in ref.items()}
            for scope, ref in refs.items()
        },
        "goals": GOALS,
        "metrics": pooled,  # Python datasets
        "metrics_non_python": pooled_other,
        "per_language": per_language,
        "per_dataset": per_dataset,
        "hard_negatives": negatives,  # Python datasets
        "hard_negatives_non_python": negatives_other,
        "comparison": compare,
        "goal_check": goal_rows,
        "refusals": refusals,
        "latency": latencies,
        "index": {
            dr.name: {
                "seconds": round(dr.index_s, 2),
                "index_dir": dr.index_dir,
                "workspace": dr.workspace,
                "report": api.to_json_dict(dr.index_report),
            }
            for dr in dataset_runs
        },
        "score_py": check,
        "full_results_jsonl": str(out.with_suffix(".full.jsonl")),
        "cases_full": [per_case_record(r) for r in full_runs],
        # Every configuration per case, [MRR@10, chunk@10] (chunk None where not scored), so
        # two runs can be diffed case by case on any ablation row.
        "cases_by_config": {
            c: {
                r.case.id: [r.metrics.get("MRR@10"), r.metrics.get("chunk@10")]
                for dr in dataset_runs
                for r in dr.runs[c]
            }
            for c in configs
        },
    }
    out.write_text(json.dumps(rounded(report), indent=1) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    if failure is not None:
        log(f"FAILED cross-check against score.py: {failure}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
