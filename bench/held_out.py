"""What the held-out sets built from packages share: each package's questions asked of its own
index, ``depth`` deep with no time limit (what the engine can do, not what a busy machine lets
it), and the report written with what the run was.

Used by ``runtime_errors.py``, ``js_runtime_errors.py``, ``doc_questions.py``,
``thrown_messages.py`` and ``runtime_traces.py``; a case is any object with ``project`` and
``query`` (the message sets' also ``kind``, ``gold`` and ``home``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol, TypeVar

from common import git_state, log, result_path, utc_iso

# isort: split
from code_evidence.api import Evidence, FindRequest, FindResult
from code_evidence.engine import Engine


class _Asked(Protocol):
    project: str
    query: str


C = TypeVar("C", bound=_Asked)


def answers(root: Path, index_root: Path, cases: Sequence[C]) -> Iterator[tuple[C, FindResult]]:
    """Each case with its answer, package by package (``root / project`` indexed into
    ``index_root / project`` first)."""
    by_project: dict[str, list[C]] = defaultdict(list)
    for case in cases:
        by_project[case.project].append(case)
    for project, group in by_project.items():
        log(f"{project}: {len(group)} cases")
        with Engine(root / project, index_root / project) as engine:
            engine.index()
            for case in group:
                yield case, engine.find(FindRequest(case.query, depth="deep"))


def message_rows(root: Path, index_root: Path, cases: Sequence[Any]) -> list[dict[str, Any]]:
    """The message sets' rows: the first gold file's rank among the answer's files, and
    whether the module and the home of the name it quotes are both in the first two."""
    rows: list[dict[str, Any]] = []
    for case, res in answers(root, index_root, cases):
        files = list(dict.fromkeys(r.path for r in res.results))
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f in case.gold), None)
        home_and_module = (
            rank is not None
            and rank <= 2
            and (not case.home or any(f in case.home for f in files[:2]))
        )
        rows.append(
            {
                **asdict(case),
                "rank": rank,
                "home_and_module@2": home_and_module,
                "top": files[:5],
                "insufficient": res.insufficient,
                "confidence": res.confidence,
            }
        )
    return rows


def message_table(rows: list[dict[str, Any]], kinds: Sequence[str]) -> str:
    lines = [
        "| kind | n | MRR@10 | first | home@2 | refused |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for kind in (*kinds, "all"):
        group = [r for r in rows if kind in ("all", r["kind"])]
        if not group:
            continue
        mrr = sum(1 / r["rank"] for r in group if r["rank"]) / len(group)
        first = sum(r["rank"] == 1 for r in group)
        homes = [r for r in group if r["home"]]
        home = f"{sum(r['home_and_module@2'] for r in homes)}/{len(homes)}" if homes else "-"
        refused = sum(r["insufficient"] for r in group)
        lines.append(f"| {kind} | {len(group)} | {mrr:.3f} | {first} | {home} | {refused} |")
    return "\n".join(lines)


def place_rows(
    root: Path,
    index_root: Path,
    cases: Sequence[Any],
    gold_files: Callable[[Any], Sequence[str]],
    holds: Callable[[Any, Evidence], bool],
    label: str,
) -> list[dict[str, Any]]:
    """The rows of a set whose gold is a place (a message's sites, a trace's frame): the first
    gold file's rank among the answer's files, whether the first result and any of the first
    ten hold the place (``label@1``, ``label@10``), and whether a gold file is among the first
    five (the accepted-while-wrong count needs it)."""
    rows: list[dict[str, Any]] = []
    for case, res in answers(root, index_root, cases):
        gold = set(gold_files(case))
        files = list(dict.fromkeys(r.path for r in res.results))
        rank = next((i + 1 for i, f in enumerate(files[:10]) if f in gold), None)
        hits = [holds(case, r) for r in res.results[:10]]
        rows.append(
            {
                **asdict(case),
                "rank": rank,
                f"{label}@1": bool(hits) and hits[0],
                f"{label}@10": any(hits),
                "gold@5": any(f in gold for f in files[:5]),
                "top": [f"{r.path}:{r.start}-{r.end} {r.symbol}" for r in res.results[:5]],
                "intent": res.intent,
                "insufficient": res.insufficient,
                "confidence": res.confidence,
            }
        )
    return rows


def place_table(
    rows: list[dict[str, Any]],
    groups: Sequence[tuple[str, Callable[[dict[str, Any]], bool]]],
    header: str,
    label: str,
) -> str:
    """MRR@10, ``label@1`` / ``label@10`` and the two refusal numbers (refused while the first
    file is right; accepted with no gold file among the first five) per named group."""
    cols = header.count("|") + 1
    lines = [
        f"| {header} | n | MRR@10 | {label}@1 | {label}@10 | refused while right "
        "| accepted while wrong |",
        "|" + " --- |" * (cols + 6),
    ]
    for name, member in groups:
        group = [r for r in rows if member(r)]
        if not group:
            continue
        n = len(group)
        mrr = sum(1 / r["rank"] for r in group if r["rank"]) / n
        first = sum(r[f"{label}@1"] for r in group) / n
        ten = sum(r[f"{label}@10"] for r in group) / n
        rr = sum(r["insufficient"] and r["rank"] == 1 for r in group)
        aw = sum(not r["insufficient"] and not r["gold@5"] for r in group)
        lines.append(f"| {name} | {n} | {mrr:.3f} | {first:.3f} | {ten:.3f} | {rr} | {aw} |")
    return "\n".join(lines)


def write_report(rows: list[dict[str, Any]], kind: str, out: Path | None) -> None:
    path = out or result_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {"created": utc_iso(), "git": git_state(), "cases": rows}
    path.write_text(json.dumps(report, indent=1) + "\n")
    log(f"wrote {path}")
