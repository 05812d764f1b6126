"""The one evaluator: run cases against an engine, score them, compare stage configurations.

``bench/quality.py`` (the shared dev set) and ``code-evidence eval`` / ``tune`` (cases mined
from the workspace's own git history) both run cases through :func:`run_case` and score them
with :func:`score_case`, so a number printed by one means the same as in the other. The
metrics are the ones the shared bench README defines: a file ranks by its best chunk, only
gold files count as hits, ``chunk@10`` asks whether a top-10 chunk overlaps a gold range.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..api import Depth, Evidence, FindRequest
from ..engine import Engine
from ..filekinds import file_flags
from ..search import query, verdict

LIMIT = 20  # results asked per case: more than the top 10 the metrics read, as an editor would
TOP_FILES = 10
TOP_CHUNKS = 10
KS = (1, 5, 10)
METRICS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10", "chunk@10")
# Variant c only (the open file holds the answer): the open file is among the first 3 files.
OPEN_IN_3 = "open@3"
COMMIT_POOLED = "commit a+b"
# The groups of the local failure cases (bench/failures, bench/messages, bench/test_reports).
FAILURE_GROUPS = (
    "trace",
    "message",
    "message-template",
    "message-mined",
    "pytest-report",
    "pytest-short",
    "pytest-summary",
    "unittest-report",
    "ipython-report",
)
GROUP_ORDER = (
    "commit a",
    "commit b",
    "commit c",
    "docstring",
    COMMIT_POOLED,
    *FAILURE_GROUPS,
    "unanswerable",
)


@dataclass(frozen=True, slots=True)
class Case:
    """A question with its labels. Only ``query`` and ``open_file`` reach the engine."""

    id: str
    dataset: str
    kind: str  # commit | docstring | trace | message
    # a: no open file | b: the user is in ``open_file``, which is never gold | c: the user is in
    # ``open_file`` and it is gold (user-built groups; scored like a)
    variant: str
    query: str
    open_file: str | None
    gold: dict[str, tuple[tuple[int, int], ...]]  # path -> gold line ranges (labels only)

    @property
    def group(self) -> str:
        return f"{self.kind} {self.variant}" if self.kind == "commit" else self.kind


@dataclass(frozen=True, slots=True)
class Hit:
    path: str
    start: int
    end: int
    line: int = 0  # where the result opens (``Evidence.line``); 0: not recorded


@dataclass(slots=True)
class CaseRun:
    """One case under one configuration: what came back, how long it took, what it scored."""

    case: Case
    hits: list[Hit]
    ms: float
    error: str | None
    metrics: dict[str, float] = field(default_factory=dict)
    stage_ms: dict[str, float] = field(default_factory=dict)
    # Hard negatives: kinds of result ranked above the first gold file (or in the top 10 when
    # no gold file made it): "test", "vendored/generated", "same-name" (a symbol named like
    # the gold one, elsewhere).
    outranked_by: list[str] = field(default_factory=list)
    confidence: float | None = None  # the answer's confidence, for fitting the refusal line
    # What the confidence model read (search/verdict.signals), to refit it from a report, and
    # whether the answer was refused on its own rule (a quoted phrase in no result).
    signals: dict[str, float] = field(default_factory=dict)
    refused_by_rule: bool = False
    # The engine's own flag: confidence under the line of the answer's family, or a rule.
    insufficient: bool = False


@dataclass(frozen=True, slots=True)
class Variant:
    """One configuration: the stages switched on (None: as shipped, so a stage added later is
    measured without editing this table), ranking settings changed, and the request depth."""

    stages: frozenset[str] | None = None
    ranking: tuple[tuple[str, Any], ...] = ()
    depth: Depth = "interactive"


_RANKED = frozenset({"lexical", "vectors", "structural", "features", "rerank"})
# The per-stage ablation, each row adding one stage to the row before it.
CONFIGS: dict[str, Variant] = {
    "vectors": Variant(frozenset({"vectors"})),
    "bm25": Variant(frozenset({"lexical"})),
    "hybrid": Variant(frozenset({"lexical", "vectors"})),
    "hybrid+features": Variant(frozenset({"lexical", "vectors", "structural", "features"})),
    "+coverage": Variant(_RANKED, (("reranker", "none"),)),
    "+bi-encoder": Variant(_RANKED, (("reranker", "bi-encoder"),)),
    "+cross-encoder": Variant(_RANKED, (("reranker", "cross-encoder"),)),
    "+cross-encoder deep": Variant(_RANKED, (("reranker", "cross-encoder"),), "deep"),
    "full": Variant(),
    # Everything but the co-change channel and feature (git history): its ablation row.
    "full -co-change": Variant(
        None, (("cochange_k", 0), ("cochange_weight", 0.0), ("cochange_boost", 0.0))
    ),
    # Issue 17's ranking features, one off at a time (index-time ones, module resolution and
    # the test conventions, are measured as before/after runs instead).
    "full -generated": Variant(ranking=(("generated_factor", 1.0), ("source_of_open_boost", 0.0))),
    "full -declarations": Variant(ranking=(("declaration_factor", 1.0),)),
    "full +distinct": Variant(ranking=(("distinct_margin", 1.5),)),
    "full -scope": Variant(ranking=(("scope_boost", 0.0),)),
}


# --------------------------------------------------------------------------- metrics


def file_ranking(hits: Iterable[Hit]) -> list[str]:
    """Distinct paths in order of first appearance: a file ranks by its best chunk."""
    return list(dict.fromkeys(h.path for h in hits))


def scored(case: Case, path: str) -> bool:
    """Whether a result in ``path`` takes part in scoring. The shared bench rule: in variant b
    the results in the open file are removed before scoring, so they neither help nor hurt (an
    engine is free to show the file one is in); variants a and c score every result."""
    return not (case.variant == "b" and case.open_file is not None and path == case.open_file)


def score_case(case: Case, hits: list[Hit]) -> dict[str, float]:
    """README metrics for one case; ``chunk@10`` is absent when no gold file has ranges.
    ``hits`` is the engine's answer as given: the variant-b rule (:func:`scored`) applies here."""
    gold = case.gold
    if not gold:
        return {}  # an unanswerable question: only its verdict (a refusal) counts
    hits = [h for h in hits if scored(case, h.path)]
    files = file_ranking(hits)[:TOP_FILES]
    m: dict[str, float] = {f"R@{k}": len(set(files[:k]) & gold.keys()) / len(gold) for k in KS}
    first = next((i for i, p in enumerate(files) if p in gold), None)
    m["MRR@10"] = 0.0 if first is None else 1.0 / (first + 1)
    dcg = sum(1.0 / math.log2(i + 2) for i, p in enumerate(files) if p in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), TOP_FILES)))
    m["nDCG@10"] = dcg / ideal
    if case.variant == "c" and case.open_file is not None:
        m[OPEN_IN_3] = float(case.open_file in files[:3])
    if any(gold.values()):
        m["chunk@10"] = float(
            any(
                h.start <= g_end and g_start <= h.end
                for h in hits[:TOP_CHUNKS]
                for g_start, g_end in gold.get(h.path, ())
            )
        )
    return m


def aggregate(per_case: list[dict[str, float]]) -> dict[str, float | int | None]:
    """Means over cases; a metric no case has (``chunk@10``) is None, not NaN, for JSON."""
    out: dict[str, float | int | None] = {"n": len(per_case)}
    for k in METRICS:
        vals = [m[k] for m in per_case if k in m]
        out[k] = sum(vals) / len(vals) if vals else None
    out["n_chunk"] = sum(1 for m in per_case if "chunk@10" in m)
    opened = [m[OPEN_IN_3] for m in per_case if OPEN_IN_3 in m]
    if opened:
        out[OPEN_IN_3] = sum(opened) / len(opened)
    return out


def group_metrics(runs: list[CaseRun]) -> dict[str, dict[str, float | int | None]]:
    """Per group (commit a / commit b / docstring ...) plus the pooled commit row."""
    by_group: dict[str, list[dict[str, float]]] = {}
    for r in runs:
        by_group.setdefault(r.case.group, []).append(r.metrics)
        if r.case.kind == "commit" and r.case.variant in "ab":
            by_group.setdefault(COMMIT_POOLED, []).append(r.metrics)
    keys = sorted(
        by_group,
        key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g),
    )
    return {g: aggregate(by_group[g]) for g in keys}


def latency(runs: list[CaseRun]) -> dict[str, float | int | None]:
    ms = sorted(r.ms for r in runs)
    if not ms:
        return {"n": 0, "median_ms": None, "p95_ms": None, "max_ms": None}
    p95 = ms[min(len(ms) - 1, math.ceil(0.95 * len(ms)) - 1)]  # nearest-rank percentile
    return {"n": len(ms), "median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}


def stage_latency(runs: list[CaseRun]) -> dict[str, float]:
    """Median ms per engine stage, from the trace each FindResult carries."""
    per: dict[str, list[float]] = {}
    for r in runs:
        for stage, ms in r.stage_ms.items():
            per.setdefault(stage, []).append(ms)
    return {s: statistics.median(v) for s, v in per.items()}


def fmt(v: float | int | None, width: int = 8) -> str:
    return f"{'-':>{width}}" if v is None else f"{v:>{width}.3f}"


def metrics_table(title: str, groups: dict[str, dict[str, float | int | None]]) -> str:
    extra = (OPEN_IN_3,) if any(OPEN_IN_3 in a for a in groups.values()) else ()
    head = f"{'group':<12} {'n':>4} " + " ".join(f"{k:>8}" for k in (*METRICS, *extra))
    lines = [title, head, "-" * len(head)]
    for g, a in groups.items():
        cells = " ".join(fmt(a.get(k)) for k in (*METRICS, *extra))
        lines.append(f"{g:<12} {a['n']:>4} " + cells)
    return "\n".join(lines)


# --------------------------------------------------------------------------- engine runs


def run_case(eng: Engine, case: Case, limit: int = LIMIT, depth: Depth = "interactive") -> CaseRun:
    """Ask the engine one case's question; a case that fails is scored as an empty answer (the
    same as score.py scores a missing result line) and the run goes on."""
    request = FindRequest(query=case.query, open_file=case.open_file, limit=limit, depth=depth)
    t0 = time.perf_counter()
    try:
        res = eng.find(request, refresh=False)
    except Exception as exc:  # one broken case is reported, never the end of a run
        ms = (time.perf_counter() - t0) * 1000
        failed = CaseRun(case, [], ms, f"{type(exc).__name__}: {exc}")
        failed.metrics = score_case(case, [])
        return failed
    ms = (time.perf_counter() - t0) * 1000
    hits = [Hit(e.path, int(e.start), int(e.end), int(e.line)) for e in res.results]
    stage_ms = {s: float(t.ms) for s, t in (res.trace or {}).items()}
    run = CaseRun(
        case,
        hits,
        ms,
        None,
        stage_ms=stage_ms,
        confidence=res.confidence,
        insufficient=res.insufficient,
    )
    if res.results:
        qa = query.analyze(case.query)
        doc_freq = eng.parts.lexical.view().doc_freq
        run.signals = verdict.signals(qa, case.open_file, res.results[: verdict.TOP], doc_freq)
        run.refused_by_rule = (res.insufficient_reason or "").startswith("no result")
    run.metrics = score_case(case, hits)
    run.outranked_by = hard_negatives(eng, case, res.results)
    return run


HARD_NEGATIVES = ("test", "vendored/generated", "same-name")


def hard_negatives(eng: Engine, case: Case, results: list[Evidence]) -> list[str]:
    """Kinds of result ranked above the first gold file, among the results the metrics score
    (in variant b, nothing in the open file counts, as in :func:`score_case`)."""
    results = [e for e in results if scored(case, e.path)]
    gold_rank = next((i for i, e in enumerate(results) if e.path in case.gold), TOP_FILES)
    gold_names = set()
    for path, ranges in case.gold.items():
        for start, _end in ranges:
            at = eng.symbol_at(path, start)
            if at is not None and at.symbol:
                gold_names.add(at.symbol.rsplit(".", 1)[-1])
    kinds = set()
    for e in results[: min(gold_rank, TOP_FILES)]:
        is_test, is_generated, is_vendor = file_flags(e.path, "")
        if is_test:
            kinds.add("test")
        if is_generated or is_vendor:
            kinds.add("vendored/generated")
        if e.symbol and e.symbol.rsplit(".", 1)[-1] in gold_names:
            kinds.add("same-name")
    return sorted(kinds)


def hard_negative_shares(runs: list[CaseRun]) -> dict[str, dict[str, float]]:
    """Share of cases per group where each kind of hard negative outranks the gold."""
    by_group: dict[str, list[CaseRun]] = {}
    for r in runs:
        by_group.setdefault(r.case.group, []).append(r)
    return {
        g: {k: sum(k in r.outranked_by for r in rs) / len(rs) for k in HARD_NEGATIVES}
        for g, rs in by_group.items()
    }


@contextmanager
def configured(
    eng: Engine, variant: Variant, ranking: dict[str, Any] | None = None, cold: bool = True
) -> Iterator[None]:
    """Run under one configuration (the variant's stages, the engine's ranking settings with
    ``ranking`` then the variant's changes on top) and put everything back afterwards.
    ``cold``: each configuration pays for its own answers and model scores (the caches are
    cleared on the way in and out), so its latency means something. Without it they are kept:
    answers are keyed by configuration anyway, and a cross-encoder score does not depend on
    the settings being compared."""
    base = eng.config
    stages = {
        f.name: getattr(base.stages, f.name) if variant.stages is None else f.name in variant.stages
        for f in dataclasses.fields(base.stages)
    }
    config = base.changed(stages=stages, ranking={**(ranking or {}), **dict(variant.ranking)})
    with eng.with_config(config):
        if cold:
            eng.forget_answers()
        try:
            yield
        finally:
            if cold:
                eng.forget_answers()


def run_variants(
    eng: Engine,
    cases: list[Case],
    variants: dict[str, Variant],
    limit: int = LIMIT,
    ranking: dict[str, Any] | None = None,
    warm_up: bool = True,
    cold: bool = True,
) -> dict[str, list[CaseRun]]:
    """Every variant on the same index, so the deltas between rows come from the stages and
    settings alone. ``warm_up``: one untimed run per variant first (model sessions load on
    first use), for latency figures that mean something; ``cold``: see :func:`configured`."""
    runs: dict[str, list[CaseRun]] = {}
    for name, variant in variants.items():
        with configured(eng, variant, ranking, cold):
            if cases and warm_up:
                run_case(eng, cases[0], limit, variant.depth)
                eng.forget_answers()
            runs[name] = [run_case(eng, c, limit, variant.depth) for c in cases]
    return runs
