"""What the held-out sets built from packages share: each package's questions asked of its own
index, ``depth`` deep with no time limit (what the engine can do, not what a busy machine lets
it), and the report written with what the run was.

Used by ``runtime_errors.py`` and ``doc_questions.py``; a case is any object with ``project``
and ``query``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
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


def write_report(rows: list[dict[str, Any]], kind: str, out: Path | None) -> None:
    path = out or result_path(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {"created": utc_iso(), "git": git_state(), "cases": rows}
    path.write_text(json.dumps(report, indent=1) + "\n")
    log(f"wrote {path}")
