"""The verdict: the shipped confidence model loads, reads only signals the engine computes,
rises with the evidence, and its line is the configured refusal line; the fitting script
recovers a known model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from code_evidence.api import Evidence
from code_evidence.config import Config
from code_evidence.search import verdict
from code_evidence.search.query import analyze

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import confidence_fit


def ev(
    path: str,
    score: float,
    cosine: float | None = None,
    text: str = "def run():\n    pass",
    *reasons: str,
    **ranks: float,
) -> Evidence:
    scores = {f"{k}_rank": v for k, v in ranks.items()}
    if cosine is not None:
        scores["cosine"] = cosine
    return Evidence(path, 1, 2, "run", "function", "python", score, list(reasons), text, scores)


def strong() -> list[Evidence]:
    text = "def compute_cart_total(cart):\n    return sum(i.price for i in cart.items)"
    first = ev("shop/cart.py", 1.0, 0.72, text, "exact-identifier", bm25=1, vector=1)
    rest = [ev(f"shop/other{i}.py", 0.2, 0.3, "x = 1", bm25=i + 2) for i in range(9)]
    return [first, *rest]


def weak() -> list[Evidence]:
    return [ev(f"lib/m{i}.py", 1.0 - 0.01 * i, 0.12, "y = 2", bm25=5 + i) for i in range(10)]


QUESTION = "where is compute_cart_total summed over the cart items"


def test_the_shipped_model_loads_and_reads_only_signals_the_engine_computes() -> None:
    model = verdict.shipped()
    computed = verdict.signals(analyze(QUESTION), None, strong())
    assert model.weights and set(model.weights) <= set(computed)
    assert all(0.0 <= v <= 1.0 for v in computed.values())
    data = json.loads(verdict.MODEL_PATH.read_text(encoding="utf-8"))
    assert data["fitted_by"] == "bench/confidence_fit.py"


def test_the_configured_refusal_line_is_the_one_fitted_with_the_weights() -> None:
    assert Config().ranking.insufficient_below == pytest.approx(verdict.shipped().line)


def test_confidence_rises_with_the_evidence_and_the_line_separates_the_two() -> None:
    qa = analyze(QUESTION)
    line = verdict.shipped().line
    good = verdict.judge(qa, None, strong(), line)
    poor = verdict.judge(qa, None, weak(), line)
    assert good.confidence > poor.confidence
    assert not good.insufficient and good.reason is None
    assert poor.insufficient and (poor.reason or "").startswith("weak evidence")
    # Monotone in the cosine of the best chunk (its weights are positive).
    closer = [ev("lib/m0.py", 1.0, 0.5, "y = 2", bm25=5), *weak()[1:]]
    assert verdict.judge(qa, None, closer, line).confidence > poor.confidence


def test_a_missing_quoted_phrase_or_nothing_at_all_is_refused_whatever_the_model_says() -> None:
    qa = analyze('where does it print "connection reset by peer"')
    refused = verdict.judge(qa, None, strong(), 0.0)
    assert refused.insufficient and "connection reset by peer" in (refused.reason or "")
    assert verdict.judge(qa, None, [], 0.0).insufficient


def row(project: str, right: bool, **signals: float) -> confidence_fit.Row:
    return confidence_fit.Row(
        frozenset({project}),
        project,
        "commit a / Python",
        signals,
        False,
        True,
        right,
        not right,
        0.5,
    )


def test_the_fit_recovers_which_signal_predicts_a_right_answer() -> None:
    rows = [
        row(p, right=bool(i % 2), cos_max=0.2 + 0.5 * (i % 2) + 0.01 * (i % 7), noise=(i % 3) / 3)
        for p in ("a", "b", "c")
        for i in range(60)
    ]
    names = ["cos_max", "noise"]
    model = confidence_fit.fit(rows, names, l2=1.0)
    assert model[1][0] > 3.0 and abs(model[1][1]) < 1.0
    probs = confidence_fit.predict(model, rows, names)
    assert all((p > 0.5) == r.right for p, r in zip(probs, rows, strict=True))
    # Held out project by project, the line keeps refused-while-right within the bound.
    held, lines = confidence_fit.leave_one_project_out(rows, names, 1.0, 0.03, 30)
    assert set(lines) == {"a", "b", "c"} and all(0.0 < t < 0.9 for t in lines.values())
    numbers = confidence_fit.group_numbers(held)["commit a / Python"]
    assert numbers["refused_while_right"] <= 0.03 and numbers["accepted_while_wrong"] == 0.0
