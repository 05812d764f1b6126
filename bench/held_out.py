"""What the held-out sets built from packages share: each package's questions asked of its own
index, ``depth`` deep with no time limit (what the engine can do, not what a busy machine lets
it), and the report written with what the run was.

Used by ``runtime_errors.py``, ``js_runtime_errors.py`` and ``doc_questions.py``; a case is
any object with ``project`` and ``query`` (the message sets' also ``kind``, ``gold`` and
``home``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol, TypeVar

from common import git_state, log, result_path, utc_iso

# isort: split
from code_evidence.api import FindRequest, FindResult
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


def write_report(rows: list[dict[str, Any]], kind: str, out: Path | None) -> None:
    path = out or result_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {"created": utc_iso(), "git": git_state(), "cases": rows}
    path.write_text(json.dumps(report, indent=1) + "\n")
    log(f"wrote {path}")
