"""Mined cases asked against the index as of their parent commits: the loop ``eval`` and
``tune`` share.

Cases are visited in time order, grouped by parent commit (variants a and b of one commit
share a stop), and the replayed tree moves forward from stop to stop, so each index pass reads
only what changed in between. The index at a stop is the parent's: the commit being asked
about is never in it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config
from ..git import Git
from ..index.snapshot import UnsafeTree
from .evaluate import (
    CONFIGS,
    METRICS,
    Case,
    CaseRun,
    Variant,
    file_ranking,
    fmt,
    group_metrics,
    hard_negative_shares,
    latency,
    run_variants,
)
from .mining import Mined, mine
from .replay import Replay

Progress = Callable[[str, int, int], None]
MISSES_SHOWN = 5
# The default ablation: each row adds one stage. The model rows of bench/quality.py are left
# to --configs: the cross-encoder sits out change requests anyway (crossencoder.py's gate).
DEFAULT_CONFIGS = ("bm25", "vectors", "hybrid", "hybrid+features", "+coverage", "full")


@dataclass(slots=True)
class MinedCases:
    """The mined cases of a workspace, oldest commit first."""

    workspace: Path
    mined: Mined
    cases: list[Case]
    parent_of: dict[str, str]  # case id -> the commit its index is built at
    git: Git
    # Stops refused because their tree holds an unsafe path: commit -> what was wrong.
    unsafe: dict[str, str] = dataclasses.field(default_factory=dict)


def mine_cases(
    workspace: Path,
    commits: int | None,
    since: str | None,
    progress: Progress | None = None,
    max_commits: int | None = None,
    git: Git | None = None,
) -> MinedCases:
    """The mined cases; with ``max_commits``, commits evenly spaced over the whole range (so
    old and new code are both asked about) until that many are kept."""
    git = git if git is not None else Git(workspace)
    mined = mine(workspace, commits, since, progress, git)
    if max_commits is not None and len(mined.commits) > max_commits:
        step = len(mined.commits) / max_commits
        mined.commits = [mined.commits[int(i * step)] for i in range(max_commits)]
    name = workspace.resolve().name or "workspace"
    cases, parent_of = [], {}
    for commit in mined.commits:
        for case in commit.cases(name):
            cases.append(case)
            parent_of[case.id] = commit.parent
    return MinedCases(workspace.resolve(), mined, cases, parent_of, git)


def backtest(
    history: MinedCases,
    cases: list[Case],
    config: Config,
    variants: dict[str, Variant],
    progress: Progress | None = None,
    scratch: Path | None = None,
    cold: bool = True,
) -> dict[str, list[CaseRun]]:
    """Every variant on every case, each case against the index as of its parent commit.
    ``cold=False`` keeps answers and model scores across variants (see
    ``evaluate.configured``): for fitting, where only the metrics count. A stop whose tree
    holds an unsafe path (``.git``, ``..``, absolute) is skipped with its cases, and recorded
    in ``history.unsafe``."""
    stops: dict[str, list[Case]] = {}
    for case in cases:
        stops.setdefault(history.parent_of[case.id], []).append(case)
    runs: dict[str, list[CaseRun]] = {name: [] for name in variants}
    first = True
    with Replay(history.workspace, config, scratch, history.git) as replay:
        for i, (parent, at_stop) in enumerate(stops.items(), 1):
            try:
                engine = replay.at(parent)
            except UnsafeTree as exc:
                history.unsafe[parent] = str(exc)
                engine = None
            if engine is not None:
                # Warm up once, at the first stop: model sessions load on first use, and the
                # latency figures should not carry that.
                done_at_stop = run_variants(engine, at_stop, variants, warm_up=first, cold=cold)
                first = False
                for name, done in done_at_stop.items():
                    runs[name].extend(done)
            if progress:
                progress("eval", i, len(stops))
    return runs


def evaluate_history(
    history: MinedCases,
    config: Config,
    configs: list[str],
    progress: Progress | None = None,
    scratch: Path | None = None,
) -> dict[str, Any]:
    """The ``code-evidence eval`` report: metrics per configuration of the ablation."""
    t0 = time.perf_counter()
    variants = {c: CONFIGS[c] for c in configs}
    if not any(
        config.stages.vectors and (v.stages is None or "vectors" in v.stages)
        for v in variants.values()
    ):
        # No configuration reads vectors: the replayed index need not embed anything.
        config = dataclasses.replace(
            config, stages=dataclasses.replace(config.stages, vectors=False)
        )
    runs = backtest(history, history.cases, config, variants, progress, scratch)
    primary = "full" if "full" in runs else configs[-1]
    asked = len(runs[primary]) if primary in runs else 0
    return {
        "workspace": str(history.workspace),
        "commits_considered": history.mined.considered,
        "commits_mined": len(history.mined.commits),
        "skipped": dict(history.mined.skipped.most_common()),
        "unsafe_trees": dict(history.unsafe),
        "cases": asked,
        "cases_unsafe": len(history.cases) - asked if history.unsafe else 0,
        "seconds": round(time.perf_counter() - t0, 1),
        "metrics": {c: group_metrics(r) for c, r in runs.items()},
        "latency": {c: latency(r) for c, r in runs.items()},
        "hard_negatives": hard_negative_shares(runs[primary]) if primary in runs else {},
        "primary": primary,
        "per_case": [case_record(r) for r in runs.get(primary, [])],
    }


def case_record(r: CaseRun) -> dict[str, Any]:
    return {
        "id": r.case.id,
        "group": r.case.group,
        "query": r.case.query,
        "open_file": r.case.open_file,
        "metrics": r.metrics,
        "gold_files": sorted(r.case.gold),
        "top_files": file_ranking(r.hits)[:10],
        "error": r.error,
        "outranked_by": r.outranked_by,
    }


def render_report(report: dict[str, Any]) -> str:
    """A table a person can read: one row per configuration, the metrics of each case group."""
    groups = [
        g
        for g in ("commit a", "commit b", "commit a+b")
        if any(g in m for m in report["metrics"].values())
    ]
    skipped = ", ".join(f"{k} {v}" for k, v in report["skipped"].items()) or "none"
    lines = [
        f"workspace  {report['workspace']}",
        f"history    {report['commits_considered']} commits read, {report['commits_mined']} "
        f"became cases ({report['cases']} questions); skipped: {skipped}",
        f"run        {report['seconds']} s; each case asked against the index as of its parent "
        "commit",
    ]
    for commit, why in report.get("unsafe_trees", {}).items():
        lines.append(f"refused    {commit[:12]}: {why}; its questions were not asked")
    lines.append("")
    if not report["cases"]:
        lines.append("no commit in this range is a usable question (see the skip reasons)")
        return "\n".join(lines)
    head = f"{'configuration':<18} {'group':<11} {'n':>4} " + " ".join(f"{k:>8}" for k in METRICS)
    lines += [head, "-" * len(head)]
    for conf, by_group in report["metrics"].items():
        for g in groups:
            a = by_group.get(g)
            if a:
                cells = " ".join(fmt(a[k]) for k in METRICS)
                lines.append(f"{conf:<18} {g:<11} {a['n']:>4} {cells}")
    misses = [c for c in report["per_case"] if not c["metrics"].get("R@10")]
    if misses:
        lines.append(
            f"\nmissed entirely [{report['primary']}] ({len(misses)}; first {MISSES_SHOWN}):"
        )
        for c in misses[:MISSES_SHOWN]:
            top = c["top_files"][0] if c["top_files"] else "-"
            lines.append(f"  {c['id']}: {c['query'][:70]!r}")
            lines.append(f"      wanted {', '.join(c['gold_files'])}; ranked first {top}")
    lat = report["latency"].get(report["primary"], {})
    if lat.get("n"):
        lines.append(
            f"\nfind latency [{report['primary']}]: median {lat['median_ms']:.0f} ms, "
            f"p95 {lat['p95_ms']:.0f} ms"
        )
    return "\n".join(lines)
