#!/usr/bin/env python3
"""Fit the confidence model and its refusal line from a ``quality.py`` report, and say how they
would do on projects they never saw.

Every case of the report's detailed configuration carries the signals the verdict read
(``search/verdict.signals``), whether it was refused on the quoted-phrase rule, and whether the
first scored file is gold. The model is a logistic regression over the signals (numpy, Newton
steps with a small L2 penalty); the label is "the first file is right" (``MRR@10`` = 1), and the
dev unanswerable cases (one project's commit questions asked in another project's workspace)
count as wrong.

**Leave-one-project-out.** For each project (flask, click, fastify, zod, gin, bytes, javapoet):
the weights are fitted on the other projects' cases alone (an unanswerable case belongs to both
the workspace's project and the question's, and is left out while either is held out); the
refusal line is chosen from the other projects' own out-of-project predictions (a nested round:
each of them held out in turn) as the highest line whose refused-while-right stays within
``--max-refused-right`` in every group of at least ``--min-group`` answerable questions; then
the held-out project's cases are scored with those weights and that line. Nothing a project
answered sets the weights or the line that judge it. The tables (reliability, trade-off curve,
the two refusal numbers per group) are over these held-out predictions.

``--write`` stores the weights fitted on every project, with the line chosen the same way, as
the shipped model (``server/code_evidence/search/confidence_model.json``); set
``[ranking] insufficient_below`` in ``config.py`` to the printed line with it.

  python bench/confidence_fit.py --report /tmp/quality-history.json [--write] [--out fit.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from code_evidence.search.verdict import VECTOR_SIGNALS
from refusal_fit import outcome

MODEL_PATH = (
    Path(__file__).resolve().parent.parent / "server/code_evidence/search/confidence_model.json"
)
LINES = [round(0.01 * i, 2) for i in range(0, 91)]
# Groups measured but not fitted on. Commit c asks commit a's questions again from inside the
# changed file and counts only that file as right, so an answer whose first file is another
# file the commit changed is "wrong" there and "right" in commit b, where the same situation
# (a file open, another file first) is the question: fitted on both, the model learns c's
# convention (c has four times b's cases) and refuses b's right answers. message-template
# asks the message questions again with the gold moved to the template.
NOT_FITTED = ("commit c", "message-template")
CURVE = [round(0.05 * i, 2) for i in range(0, 19)]
BINS = [(0.0, 0.1), (0.1, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 0.9), (0.9, 1.01)]


@dataclass(frozen=True, slots=True)
class Row:
    projects: frozenset[str]  # the workspace's project, and the question's when it differs
    project: str  # the workspace's project: whose held-out table the case counts in
    group: str  # "commit b / Python", "unanswerable / other languages", ...
    signals: dict[str, float]
    by_rule: bool  # refused on the quoted-phrase rule whatever the confidence
    answerable: bool
    right: bool  # the first scored file is gold
    wrong: bool  # no gold file in the top 5
    shipped: float  # the confidence the report's engine gave


def project_of(dataset: str) -> str:
    return dataset.split("-", 1)[0]


def rows(report: dict) -> list[Row]:
    out = []
    for c in report["cases_full"]:
        if not c.get("signals"):
            continue  # an empty answer: refused whatever the model says
        o = outcome(c, report["languages"])
        asked = c["id"].split(":", 1)[0]
        out.append(
            Row(
                projects=frozenset({project_of(o.workspace), project_of(asked)}),
                project=project_of(o.workspace),
                group=o.group,
                signals=c["signals"],
                by_rule=bool(c.get("refused_by_rule")),
                answerable=o.answerable,
                right=o.right,
                wrong=o.wrong,
                shipped=float(c["confidence"]),
            )
        )
    return out


# ------------------------------------------------------------------------------------- model


def matrix(rs: Sequence[Row], names: Sequence[str]) -> np.ndarray:
    return np.array([[r.signals.get(n, 0.0) for n in names] for r in rs], dtype=float)


def fit(rs: Sequence[Row], names: Sequence[str], l2: float) -> tuple[float, np.ndarray]:
    """Logistic regression by Newton steps; the intercept is not penalised. Rows of the
    ``NOT_FITTED`` groups are left out here (they are still predicted and measured)."""
    rs = [r for r in rs if not r.group.startswith(NOT_FITTED)]
    x = np.hstack([np.ones((len(rs), 1)), matrix(rs, names)])
    y = np.array([float(r.right) for r in rs])
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (p - y) + penalty * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), w[1:]


def predict(model: tuple[float, np.ndarray], rs: Sequence[Row], names: Sequence[str]) -> np.ndarray:
    b, w = model
    return 1.0 / (1.0 + np.exp(-np.clip(b + matrix(rs, names) @ w, -30, 30)))


# ------------------------------------------------------------------------------ refusal line


def refused(r: Row, p: float, line: float) -> bool:
    return r.by_rule or p < line


def group_numbers(scored: Iterable[tuple[Row, float, float]]) -> dict[str, dict[str, float]]:
    """Per group: answerable n, refused-while-right and accepted-while-wrong (shares of the
    group's answerable questions), and the share of unanswerable questions refused."""
    by: dict[str, list[tuple[Row, float, float]]] = {}
    for item in scored:
        by.setdefault(item[0].group, []).append(item)
    out = {}
    for g in sorted(by):
        ans = [(r, p, t) for r, p, t in by[g] if r.answerable]
        foreign = [(r, p, t) for r, p, t in by[g] if not r.answerable]
        out[g] = {
            "n": len(ans) or len(foreign),
            "refused_while_right": sum(1 for r, p, t in ans if r.right and refused(r, p, t))
            / max(1, len(ans)),
            "accepted_while_wrong": sum(1 for r, p, t in ans if r.wrong and not refused(r, p, t))
            / max(1, len(ans)),
            "unanswerable_refused": sum(1 for r, p, t in foreign if refused(r, p, t)) / len(foreign)
            if foreign
            else None,
        }
    return out


def choose_line(scored: list[tuple[Row, float]], bound: float, min_group: int) -> float:
    """The highest line whose refused-while-right is within ``bound`` in every group of at least
    ``min_group`` answerable questions."""
    best = 0.0
    for t in LINES:
        numbers = group_numbers((r, p, t) for r, p in scored)
        if all(
            v["refused_while_right"] <= bound
            for g, v in numbers.items()
            if not g.startswith("unanswerable") and v["n"] >= min_group
        ):
            best = t
    return best


def out_of_project(
    rs: list[Row], names: Sequence[str], l2: float, projects: Iterable[str]
) -> list[tuple[Row, float]]:
    """Each of ``projects`` held out in turn: its cases scored by weights fitted without it."""
    scored = []
    for p in projects:
        train = [r for r in rs if p not in r.projects]
        test = [r for r in rs if r.project == p]
        if not train or not test:
            continue
        scored += zip(test, predict(fit(train, names, l2), test, names), strict=True)
    return scored


def leave_one_project_out(
    rs: list[Row], names: Sequence[str], l2: float, bound: float, min_group: int
) -> tuple[list[tuple[Row, float, float]], dict[str, float]]:
    projects = sorted({r.project for r in rs})
    held: list[tuple[Row, float, float]] = []
    lines = {}
    for p in projects:
        others = [r for r in rs if p not in r.projects]
        inner = out_of_project(others, names, l2, [q for q in projects if q != p])
        lines[p] = choose_line(inner, bound, min_group)
        test = [r for r in rs if r.project == p]
        probs = predict(fit(others, names, l2), test, names)
        held += [(r, float(q), lines[p]) for r, q in zip(test, probs, strict=True)]
    return held, lines


# ------------------------------------------------------------------------------------ tables


def reliability(scored: list[tuple[Row, float]]) -> list[dict]:
    out = []
    for lo, hi in BINS:
        inside = [(r, p) for r, p in scored if lo <= p < hi]
        out.append(
            {
                "bin": [lo, min(hi, 1.0)],
                "n": len(inside),
                "mean_confidence": float(np.mean([p for _, p in inside])) if inside else None,
                "right": sum(r.right for r, _ in inside) / len(inside) if inside else None,
            }
        )
    return out


def curve(scored: list[tuple[Row, float]]) -> list[dict]:
    ans = [(r, p) for r, p in scored if r.answerable]
    foreign = [(r, p) for r, p in scored if not r.answerable]
    return [
        {
            "line": t,
            "refused_while_right": sum(1 for r, p in ans if r.right and refused(r, p, t))
            / len(ans),
            "accepted_while_wrong": sum(1 for r, p in ans if r.wrong and not refused(r, p, t))
            / len(ans),
            "unanswerable_refused": sum(1 for r, p in foreign if refused(r, p, t))
            / max(1, len(foreign)),
        }
        for t in CURVE
    ]


def signal_means(rs: Sequence[Row]) -> dict[str, float]:
    """Each vector signal's mean over the answers that had vectors: what the verdict puts in
    its place when an answer has none (``verdict.VECTOR_SIGNALS``)."""
    seen = [r.signals for r in rs if not r.signals.get("no_vector")]
    return {
        k: round(float(np.mean([s.get(k, 0.0) for s in seen])), 6) if seen else 0.0
        for k in VECTOR_SIGNALS
    }


def brier(scored: list[tuple[Row, float]]) -> float:
    return float(np.mean([(p - float(r.right)) ** 2 for r, p in scored]))


def show(title: str, scored: list[tuple[Row, float]], numbers: dict[str, dict]) -> None:
    print(f"\n== {title}  (Brier {brier(scored):.3f})")
    print("reliability: bin, n, mean confidence, share with the first file right")
    for b in reliability(scored):
        mean = "-" if b["mean_confidence"] is None else f"{b['mean_confidence']:.3f}"
        right = "-" if b["right"] is None else f"{b['right']:.3f}"
        print(f"  [{b['bin'][0]:.1f}, {b['bin'][1]:.1f})  {b['n']:5}  {mean:>6}  {right:>6}")
    print("trade-off: line, refused-while-right, accepted-while-wrong, unanswerable refused")
    for c in curve(scored):
        print(
            f"  {c['line']:4.2f}  {c['refused_while_right']:.3f}  "
            f"{c['accepted_while_wrong']:.3f}  {c['unanswerable_refused']:.3f}"
        )
    print(
        f"{'group':<34} {'n':>5} {'refused-right':>14} {'accepted-wrong':>15} "
        f"{'unans. refused':>15}"
    )
    for g, v in numbers.items():
        u = v["unanswerable_refused"]
        print(
            f"{g:<34} {v['n']:>5} {v['refused_while_right']:>14.3f} "
            f"{v['accepted_while_wrong']:>15.3f} {'-' if u is None else f'{u:.3f}':>15}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--report", type=Path, required=True, help="a quality.py JSON report")
    ap.add_argument(
        "--max-refused-right",
        type=float,
        default=0.025,
        help="the bound the line is chosen under: half a point below the 3 %% target, since a "
        "line chosen on six projects drifts on the seventh",
    )
    ap.add_argument("--min-group", type=int, default=30)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--write", action="store_true", help="store the weights fitted on all")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    data = rows(report)
    if not data:
        raise SystemExit(f"{args.report}: no case carries the verdict's signals (older report?)")
    names = sorted({n for r in data for n in r.signals})

    shipped_line = float(
        report.get("engine_config", {}).get("ranking", {}).get("insufficient_below", 0.3)
    )
    shipped = [(r, r.shipped, shipped_line) for r in data]
    show(
        f"the report's own confidence, line {shipped_line}",
        [(r, p) for r, p, _ in shipped],
        group_numbers(shipped),
    )
    held, lines = leave_one_project_out(
        data, names, args.l2, args.max_refused_right, args.min_group
    )
    print(f"\nleave-one-project-out lines: {lines}")
    held_numbers = group_numbers(held)
    show("leave-one-project-out", [(r, p) for r, p, _ in held], held_numbers)

    projects = sorted({r.project for r in data})
    line = choose_line(
        out_of_project(data, names, args.l2, projects), args.max_refused_right, args.min_group
    )
    intercept, weights = fit(data, names, args.l2)
    model = {
        "intercept": round(intercept, 6),
        "weights": {n: round(float(w), 6) for n, w in zip(names, weights, strict=True)},
        "line": line,
        "signal_means": signal_means(data),
        "fitted_on": len(data),
        "fitted_by": "bench/confidence_fit.py",
    }
    print(f"\nline on every project's out-of-project predictions: {line}")
    print("weights fitted on all:", json.dumps(model["weights"]))
    if args.write:
        MODEL_PATH.write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH}")
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "model": model,
                    "lines": lines,
                    "held_out": held_numbers,
                    "reliability": reliability([(r, p) for r, p, _ in held]),
                    "curve": curve([(r, p) for r, p, _ in held]),
                    "shipped": group_numbers(shipped),
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
