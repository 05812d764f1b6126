"""Fit the ranking settings to this workspace's history, with a split by time.

Older mined cases train, newer ones validate: the question a tuned setting must answer is
whether it helps on commits it never saw, the way it will be used. The search is deliberately
small (each setting moved alone over a short grid around the default, then the movers that
helped on the training cases together), because a few hundred cases cannot support more
freedom than that. What is stored must beat the defaults on validation; otherwise the defaults
stay and the report says so.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..api import EngineError
from ..config import TUNED_FILE, Config, RankingConfig
from ..paths import open_private, private_dir
from ..search import verdict
from .backtest import MinedCases, Progress, backtest
from .evaluate import COMMIT_POOLED, CaseRun, Variant, group_metrics

# The grid: values around each default (README "Configuration" says what each one does).
GRID: dict[str, tuple[float, ...]] = {
    "rrf_k": (20, 40, 60, 100),
    "bm25_weight": (0.5, 1.0, 1.5),
    "vector_weight": (0.5, 1.0, 1.5),
    "structural_weight": (0.25, 0.5, 1.0),
    "exact_symbol_boost": (0.5, 1.0, 2.0),
    "neighbour_boost": (0.5, 1.0, 2.0),
    "same_dir_boost": (0.25, 0.5, 1.0),
    "call_boost": (0.5, 1.0, 2.0),
    "open_file_factor": (0.25, 0.5, 1.0),
    "test_penalty": (0.3, 0.5, 0.8),
    "rerank_blend": (0.1, 0.25, 0.5),
}
TRAIN_SHARE = 0.7
MIN_CASES = 20  # fewer than this cannot tell a better setting from noise
MIN_VALIDATION = 5  # commits
# The refusal line may refuse at most this share of answers whose top file is right.
REFUSED_CORRECT_TARGET = 0.10
DEFAULT = "defaults"


class TuneError(EngineError):
    """Too little history to fit anything."""


@dataclass(frozen=True, slots=True)
class Score:
    """What tuning maximises: MRR@10 over all commit cases, chunk@10 breaking ties."""

    mrr: float
    chunk: float
    n: int

    @classmethod
    def of(cls, runs: list[CaseRun]) -> Score:
        pooled = group_metrics(runs).get(COMMIT_POOLED) or {"MRR@10": 0.0, "chunk@10": 0.0}
        return cls(float(pooled["MRR@10"] or 0.0), float(pooled["chunk@10"] or 0.0), len(runs))

    def beats(self, other: Score) -> bool:
        return (self.mrr, self.chunk) > (other.mrr, other.chunk)


def split_by_time(history: MinedCases) -> tuple[list[str], list[str]]:
    """Case ids: the older ``TRAIN_SHARE`` of the commits train, the newer ones validate. Both
    variants of one commit stay on the same side."""
    commits = list(dict.fromkeys(history.parent_of[c.id] for c in history.cases))
    cut = round(len(commits) * TRAIN_SHARE)
    train_parents = set(commits[:cut])
    train = [c.id for c in history.cases if history.parent_of[c.id] in train_parents]
    valid = [c.id for c in history.cases if history.parent_of[c.id] not in train_parents]
    return train, valid


def one_at_a_time(defaults: RankingConfig) -> dict[str, Variant]:
    variants = {DEFAULT: Variant()}
    for key, values in GRID.items():
        for value in values:
            if value != getattr(defaults, key):
                variants[f"{key}={value:g}"] = Variant(ranking=((key, value),))
    return variants


def _against_line(r: CaseRun) -> float:
    """The answer's confidence less its family's offset (``ConfidenceModel.offsets``): the
    engine refuses it under a configured line exactly when this is under that line."""
    return (r.confidence or 0.0) - verdict.shipped().line_for(r.signals, 0.0)


def refusal_line(runs: list[CaseRun], default: float) -> float:
    """The highest line that refuses at most ``REFUSED_CORRECT_TARGET`` of the right answers,
    never above the default: history has no unanswerable questions, so raising the line could
    not be checked against what it is for."""
    right = sorted(
        _against_line(r) for r in runs if r.metrics.get("R@1") and r.confidence is not None
    )
    if not right:
        return default
    return min(default, right[int(len(right) * REFUSED_CORRECT_TARGET)])


def refused_share(runs: list[CaseRun], line: float) -> float | None:
    right = [r for r in runs if r.metrics.get("R@1") and r.confidence is not None]
    if not right:
        return None
    return sum(1 for r in right if _against_line(r) < line) / len(right)


def tune(
    history: MinedCases,
    config: Config,
    progress: Progress | None = None,
    scratch: Path | None = None,
) -> dict[str, Any]:
    """Fit on the older cases, check on the newer; returns the report, with ``"ranking"`` (the
    settings to store) empty when nothing beat the defaults on validation."""
    t0 = time.perf_counter()
    if len(history.cases) < MIN_CASES:
        raise TuneError(
            f"{len(history.cases)} usable cases in this history; tuning needs at least "
            f"{MIN_CASES} (widen the range with --commits or --since)"
        )
    train_ids, valid_ids = split_by_time(history)
    if len({history.parent_of[i] for i in valid_ids}) < MIN_VALIDATION:
        raise TuneError("too few recent commits to validate on; widen the range")
    by_id = {c.id: c for c in history.cases}
    train = [by_id[i] for i in train_ids]

    # Round 1, training cases only: each setting moved alone.
    grid = one_at_a_time(config.ranking)
    runs = backtest(history, train, config, grid, _stage(progress, "fit"), scratch, cold=False)
    base = Score.of(runs[DEFAULT])
    movers: dict[str, tuple[float, Score]] = {}  # key -> best value that beat the default
    for name, variant in grid.items():
        if name == DEFAULT:
            continue
        (key, value), score = variant.ranking[0], Score.of(runs[name])
        if score.beats(movers.get(key, (0.0, base))[1]):
            movers[key] = (value, score)
    candidates = {DEFAULT: Variant()}
    if movers:
        together = tuple((k, v) for k, (v, _) in sorted(movers.items()))
        candidates["tuned"] = Variant(ranking=together)
        if len(movers) > 1:  # the strongest mover alone, in case the others only add noise
            best = max(movers, key=lambda k: (movers[k][1].mrr, movers[k][1].chunk))
            candidates[f"{best} only"] = Variant(ranking=((best, movers[best][0]),))

    # Round 2, every case: the candidates side by side; pick on train, judge on validation.
    final = backtest(
        history, history.cases, config, candidates, _stage(progress, "check"), scratch, cold=False
    )
    train_set = set(train_ids)

    def part(name: str, ids: set[str]) -> list[CaseRun]:
        return [r for r in final[name] if r.case.id in ids]

    valid_set = set(valid_ids)
    scores = {
        name: (Score.of(part(name, train_set)), Score.of(part(name, valid_set)))
        for name in candidates
    }
    chosen = max(
        (n for n in candidates if n != DEFAULT),
        key=lambda n: (scores[n][0].mrr, scores[n][0].chunk),
        default=DEFAULT,
    )
    ship = chosen != DEFAULT and scores[chosen][1].beats(scores[DEFAULT][1])
    settings = dict(candidates[chosen].ranking) if ship else {}

    default_line = config.ranking.insufficient_below
    line = refusal_line(part(DEFAULT, train_set), default_line)
    refusal = {
        "default": default_line,
        "fitted": line,
        "validation_refused_correct_default": refused_share(part(DEFAULT, valid_set), default_line),
        "validation_refused_correct_fitted": refused_share(part(DEFAULT, valid_set), line),
    }
    before = refusal["validation_refused_correct_default"]
    after = refusal["validation_refused_correct_fitted"]
    if line < default_line and before is not None and after is not None and after < before:
        settings["insufficient_below"] = round(line, 3)

    return {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "workspace": str(history.workspace),
        "head": history.mined.commits[-1].sha if history.mined.commits else None,
        "train_cases": len(train_ids),
        "validation_cases": len(valid_ids),
        "seconds": round(time.perf_counter() - t0, 1),
        "grid": {name: asdict(Score.of(r)) for name, r in runs.items()},
        "candidates": {
            n: {"train": asdict(t), "validation": asdict(v)} for n, (t, v) in scores.items()
        },
        "chosen": chosen,
        "unsafe_trees": dict(history.unsafe),
        "shipped": bool(settings),
        "refusal": refusal,
        "before": {"train": asdict(scores[DEFAULT][0]), "validation": asdict(scores[DEFAULT][1])},
        "after": {
            "train": asdict(scores[chosen][0] if ship else scores[DEFAULT][0]),
            "validation": asdict(scores[chosen][1] if ship else scores[DEFAULT][1]),
        },
        "ranking": settings,
    }


def _stage(progress: Progress | None, name: str) -> Progress | None:
    if progress is None:
        return None
    return lambda _stage, done, total: progress(name, done, total)


def store(index_dir: Path, report: dict[str, Any]) -> Path:
    """Write the tune result where the engine reads it (atomically: a reader never sees half)."""
    path = index_dir / TUNED_FILE
    tmp = path.with_suffix(".tmp")
    private_dir(index_dir)
    with open(open_private(tmp, "w"), "w", encoding="utf-8") as fh:
        fh.write(json.dumps(report, indent=1) + "\n")
    tmp.replace(path)
    return path


def render_tune(report: dict[str, Any]) -> str:
    b, a = report["before"], report["after"]
    lines = [
        f"cases      {report['train_cases']} train (older commits), "
        f"{report['validation_cases']} validation (newer), {report['seconds']} s",
        f"{'':<22} {'train MRR@10':>13} {'chunk@10':>9} {'valid MRR@10':>13} {'chunk@10':>9}",
    ]
    for commit, why in report.get("unsafe_trees", {}).items():
        lines.insert(1, f"refused    {commit[:12]}: {why}; its questions were not asked")
    for name, c in report["candidates"].items():
        t, v = c["train"], c["validation"]
        lines.append(
            f"{name:<22} {t['mrr']:>13.3f} {t['chunk']:>9.3f} {v['mrr']:>13.3f} {v['chunk']:>9.3f}"
        )
    r = report["refusal"]
    if r["validation_refused_correct_default"] is not None:
        lines.append(
            f"refusal line {r['default']:.2f} -> {r['fitted']:.2f}: right answers refused on "
            f"validation {r['validation_refused_correct_default']:.1%} -> "
            f"{r['validation_refused_correct_fitted']:.1%}"
        )
    if report["ranking"]:
        settings = ", ".join(f"{k} = {v:g}" for k, v in report["ranking"].items())
        lines.append(
            f"kept: {settings} (validation MRR@10 {b['validation']['mrr']:.3f} -> "
            f"{a['validation']['mrr']:.3f})"
        )
    else:
        lines.append("kept the defaults: no fitted setting beat them on the validation commits")
    return "\n".join(lines)
