#!/usr/bin/env python3
"""Where results open: each result's ``line`` against the gold lines.

A result is a range; an editor, a terminal link and a hover's link open it at its ``line``
(``search/focus.py``). This reads the answers ``quality.py`` recorded (its ``.full.jsonl``,
which keeps every result's ``line``) and asks, for every one of a case's first ten results
that overlaps a gold range of its file: does the result's first line lie in the gold lines,
and does the line it opens at? Commit cases' gold lines are the commit's hunks, a message
case's the statement that writes the message, a docstring case's the whole function. For the
cases built from a trace (``frame_line`` in ``bench/failures``), also: does a result holding
the trace's innermost workspace frame open at that frame's line?

  python bench/open_lines.py --results /tmp/q.full.jsonl [--min-lines 2] [--out F.json]

No engine runs here: the numbers are those of the run that wrote the results.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import DEFAULT_SHARED, log, result_path, utc_iso  # first: server/ on sys.path

# isort: split
from code_evidence.evaluation.evaluate import GROUP_ORDER, Case
from devset import (
    FAILURES_DIR,
    MESSAGES_DIR,
    TEST_REPORTS_DIR,
    dev_cases,
    load_manifest,
)

NEAR = 3  # lines: "near" the gold, a screen's glance away


def all_cases(shared: Path) -> tuple[list[Case], dict[str, int]]:
    """Every case quality.py asks by default, and the frame line of those built from a trace
    (a label the engine's ``Case`` does not carry: read from the case files themselves)."""
    cases: list[Case] = []
    frame_lines: dict[str, int] = {}
    for d in load_manifest(shared):
        cases += dev_cases(shared, d)
        for folder in (FAILURES_DIR, MESSAGES_DIR, TEST_REPORTS_DIR):
            path = folder / f"{d['name']}.jsonl"
            if path.is_file():
                for line in path.read_text(encoding="utf-8").splitlines():
                    raw = json.loads(line) if line.strip() else {}
                    if raw.get("frame_line"):
                        frame_lines[raw["id"]] = int(raw["frame_line"])
    return cases, frame_lines


def distance(line: int, ranges: tuple[tuple[int, int], ...]) -> int:
    """Lines from ``line`` to the nearest gold range (0 inside one)."""
    return min(0 if a <= line <= b else min(abs(line - a), abs(line - b)) for a, b in ranges)


def measure(
    cases: list[Case], answers: dict[str, list[dict[str, Any]]], frame_lines: dict[str, int],
    min_lines: int,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per group: the results overlapping gold (of ``min_lines`` or more lines), where their
    first line and their ``line`` lie; and the frame cases' opening line."""
    rows: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for case in cases:
        results = answers.get(case.id)
        if results is None:
            continue
        row = rows[case.group]
        frame = frame_lines.get(case.id.removesuffix("#c"))
        for r in results[:10]:
            ranges = case.gold.get(r["path"])
            start, end, line = int(r["start"]), int(r["end"]), int(r.get("line") or r["start"])
            if frame is not None and ranges and start <= frame <= end:
                row["frame_start"].append(start == frame)
                row["frame_line"].append(line == frame)
                frame = None  # the first result holding it
            if not ranges or not any(a <= end and start <= b for a, b in ranges):
                continue
            if end - start + 1 < min_lines:
                continue
            row["start_d"].append(distance(start, ranges))
            row["line_d"].append(distance(line, ranges))
            row["moved"].append(line != start)
    out: dict[str, dict[str, Any]] = {}
    for group, row in rows.items():
        n = len(row["start_d"])
        if not n:
            continue

        def share(values: list[int], near: int) -> float:
            return sum(1 for v in values if v <= near) / len(values)

        got: dict[str, Any] = {
            "results": n,
            "start_in_gold": share(row["start_d"], 0),
            "line_in_gold": share(row["line_d"], 0),
            "start_near_gold": share(row["start_d"], NEAR),
            "line_near_gold": share(row["line_d"], NEAR),
            "median_lines_from_gold_start": statistics.median(row["start_d"]),
            "median_lines_from_gold_line": statistics.median(row["line_d"]),
            "moved": sum(row["moved"]) / n,
        }
        if row["frame_line"]:
            got["frame_cases"] = len(row["frame_line"])
            got["frame_start"] = sum(row["frame_start"]) / len(row["frame_start"])
            got["frame_line"] = sum(row["frame_line"]) / len(row["frame_line"])
        out[group] = got
    return out


def table(rows: dict[str, dict[str, Any]]) -> str:
    order = {g: i for i, g in enumerate(GROUP_ORDER)}
    head = (
        "| group | results | first line in gold | opens in gold | first line within 3 | "
        "opens within 3 | median lines from gold (first / opens) | opens past its first "
        "line | trace cases: opens at the frame's line (first line / opens) |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    lines = [head]
    for group in sorted(rows, key=lambda g: (order.get(g, len(order)), g)):
        r = rows[group]
        frame = (
            f"{r['frame_start']:.3f} / {r['frame_line']:.3f} ({r['frame_cases']})"
            if "frame_cases" in r
            else "-"
        )
        lines.append(
            f"| {group} | {r['results']} | {r['start_in_gold']:.3f} | {r['line_in_gold']:.3f} | "
            f"{r['start_near_gold']:.3f} | {r['line_near_gold']:.3f} | "
            f"{r['median_lines_from_gold_start']:g} / {r['median_lines_from_gold_line']:g} | "
            f"{r['moved']:.3f} | {frame} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, required=True, help="quality.py's .full.jsonl")
    ap.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    ap.add_argument(
        "--min-lines", type=int, default=2, help="leave out results shorter than this (lines)"
    )
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if not args.results.is_file():
        raise SystemExit(f"{args.results}: no such file (quality.py writes it beside --out)")
    answers: dict[str, list[dict[str, Any]]] = {}
    for line in args.results.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            answers[rec["id"]] = rec["results"]
    if not any("line" in r for rs in answers.values() for r in rs):
        log("note: these results record no line (an older run): every result opens at its start")
    cases, frame_lines = all_cases(args.shared.resolve())
    rows = measure(cases, answers, frame_lines, args.min_lines)
    print(f"Results of the first ten overlapping a gold range, {args.min_lines}+ lines:\n")
    print(table(rows))
    out = args.out or result_path("open-lines")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"created": utc_iso(), "results_file": str(args.results), "groups": rows}, indent=2
        ),
        encoding="utf-8",
    )
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
