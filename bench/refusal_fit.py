#!/usr/bin/env python3
"""Where the refusal line should sit, read from a ``quality.py`` report: the trade-off curve,
a reliability table and a leave-one-project-out choice of the line.

Every case of the report's detailed configuration carries the answer's ``confidence``; an
answer is flagged insufficient when it is under the line. Two numbers per group (kind/variant x
language family): *refused while right* (flagged although the first file is gold) and
*accepted while wrong* (not flagged, no gold file in the top 5); unanswerable questions
(another project's, asked in this workspace) should all be refused.

Leave-one-project-out: for each project (flask, click, fastify, zod, gin, bytes, javapoet), the
line is chosen on the other projects' cases alone (the highest line whose refused-while-right
stays within ``--max-refused-right`` of their answerable cases) and then measured on the held-out
project's cases, so no project's own answers set the line that judges them.

  python bench/refusal_fit.py --report /tmp/quality-history.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

LINES = [round(0.05 * i, 2) for i in range(0, 17)]
BINS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


@dataclass(frozen=True, slots=True)
class Row:
    project: str
    group: str  # "commit b / Python", "unanswerable / Go", ...
    confidence: float
    answerable: bool
    right: bool  # the first file is gold
    wrong: bool  # no gold file in the top 5


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one case of a ``quality.py`` report came out, whatever the confidence said."""

    workspace: str  # the dataset whose workspace answered (another's for unanswerable cases)
    group: str  # "commit b / Python", "unanswerable / other languages", ...
    answerable: bool
    right: bool  # the first file is gold
    wrong: bool  # no gold file in the top 5


def outcome(case: dict, languages: dict[str, str]) -> Outcome:
    cid = case["id"]
    workspace = cid.rsplit("@", 1)[-1] if "@" in cid else cid.split(":", 1)[0]
    family = "Python" if languages.get(workspace, "other") == "Python" else "other languages"
    m = case["metrics"]
    answerable = case["group"] != "unanswerable"
    return Outcome(
        workspace,
        f"{case['group']} / {family}",
        answerable,
        answerable and m.get("MRR@10") == 1.0,
        not answerable or not m.get("R@5"),
    )


def rows(report: dict) -> list[Row]:
    out = []
    for c in report["cases_full"]:
        if c.get("confidence") is None:
            continue
        o = outcome(c, report["languages"])
        out.append(
            Row(
                o.workspace.split("-", 1)[0],
                o.group,
                float(c["confidence"]),
                o.answerable,
                o.right,
                o.wrong,
            )
        )
    return out


def numbers(rs: Iterable[Row], line: float) -> dict[str, float]:
    rs = list(rs)
    answerable = [r for r in rs if r.answerable]
    foreign = [r for r in rs if not r.answerable]
    refused_right = sum(1 for r in answerable if r.right and r.confidence < line)
    accepted_wrong = sum(1 for r in answerable if r.wrong and r.confidence >= line)
    return {
        "n": len(answerable),
        "refused_while_right": refused_right / max(1, len(answerable)),
        "accepted_while_wrong": accepted_wrong / max(1, len(answerable)),
        "unanswerable": len(foreign),
        "unanswerable_refused": sum(1 for r in foreign if r.confidence < line)
        / max(1, len(foreign)),
    }


def choose_line(rs: list[Row], max_refused_right: float) -> float:
    """The highest line whose refused-while-right stays within the bound on these cases."""
    ok = [t for t in LINES if numbers(rs, t)["refused_while_right"] <= max_refused_right]
    return max(ok) if ok else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--report", type=Path, required=True, help="a quality.py JSON report")
    ap.add_argument("--max-refused-right", type=float, default=0.03)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    data = rows(report)
    if not data:
        raise SystemExit(f"{args.report}: no case carries a confidence (an older report?)")

    print(
        "trade-off (all groups pooled): line, refused-while-right, accepted-while-wrong "
        "(shares of answerable questions), unanswerable refused"
    )
    curve = []
    for t in LINES:
        n = numbers(data, t)
        curve.append({"line": t, **n})
        print(
            f"  {t:4.2f}  {n['refused_while_right']:.3f}  {n['accepted_while_wrong']:.3f}  "
            f"{n['unanswerable_refused']:.3f}"
        )

    print("\nreliability: confidence bin, answerable questions, share with the first file gold")
    reliability = []
    for lo, hi in BINS:
        inside = [r for r in data if r.answerable and lo <= r.confidence < hi]
        share = sum(r.right for r in inside) / len(inside) if inside else None
        reliability.append({"bin": [lo, min(hi, 1.0)], "n": len(inside), "right": share})
        print(
            f"  [{lo:.1f}, {min(hi, 1.0):.1f})  {len(inside):5}  "
            f"{'-' if share is None else f'{share:.3f}'}"
        )

    projects = sorted({r.project for r in data})
    held: list[tuple[Row, float]] = []
    lines = {}
    for p in projects:
        line = choose_line([r for r in data if r.project != p], args.max_refused_right)
        lines[p] = line
        held += [(r, line) for r in data if r.project == p]
    print(
        f"\nleave-one-project-out line (refused-while-right <= {args.max_refused_right} on the "
        f"other projects): {lines}"
    )
    groups = sorted({r.group for r, _ in held})
    per_group = {}
    print(
        f"{'group':<34} {'n':>5} {'refused-right':>14} {'accepted-wrong':>15} "
        f"{'unans. refused':>15}"
    )
    for g in groups:
        part = [(r, t) for r, t in held if r.group == g]
        answerable = [r for r, _ in part if r.answerable]
        foreign = [(r, t) for r, t in part if not r.answerable]
        row = {
            "n": len(answerable) or len(foreign),
            "refused_while_right": sum(
                1 for r, t in part if r.answerable and r.right and r.confidence < t
            )
            / max(1, len(answerable)),
            "accepted_while_wrong": sum(
                1 for r, t in part if r.answerable and r.wrong and r.confidence >= t
            )
            / max(1, len(answerable)),
            "unanswerable_refused": sum(1 for r, t in foreign if r.confidence < t)
            / max(1, len(foreign))
            if foreign
            else None,
        }
        per_group[g] = row
        u = row["unanswerable_refused"]
        print(
            f"{g:<34} {row['n']:>5} {row['refused_while_right']:>14.3f} "
            f"{row['accepted_while_wrong']:>15.3f} {'-' if u is None else f'{u:.3f}':>15}"
        )
    if args.out:
        args.out.write_text(
            json.dumps(
                {"curve": curve, "reliability": reliability, "lines": lines, "held_out": per_group},
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
