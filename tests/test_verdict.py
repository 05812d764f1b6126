"""The verdict: the shipped confidence model loads, reads only signals the engine computes,
rises with the evidence, and its line is the configured refusal line; the fitting script
recovers a known model."""

from __future__ import annotations

import dataclasses
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


def test_what_a_pasted_message_quotes_is_a_value_once_a_result_writes_the_message() -> None:
    # One printed line with no type before it: its quotes are the values formatted in.
    qa = analyze("Redirect response '301 Moved Permanently' for url 'http://x' location: '/y'")
    code = "message = \"{error_type} '{0.status_code} {0.reason_phrase}' for url '{0.url}'\""
    writes = ev("httpx/_models.py", 1.0, 0.5, code, "message-template", bm25=1)
    writes.scores["template_coverage"] = 0.41
    others = strong()[1:]
    refused = verdict.judge(qa, None, [ev("httpx/_client.py", 1.0, 0.5, code), *others], 0.0)
    assert refused.insufficient and "301 Moved Permanently" in (refused.reason or "")
    accepted = verdict.judge(qa, None, [writes, *others], 0.0)
    assert not accepted.insufficient


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
    settings = confidence_fit.Settings(tuple(names), bound=0.03)
    held, lines = confidence_fit.leave_one_project_out(rows, settings)
    assert set(lines) == {"a", "b", "c"}
    assert all(0.0 < t[confidence_fit.ALL] < 0.9 for t in lines.values())
    numbers = confidence_fit.group_numbers(held)["commit a / Python"]
    assert numbers["refused_while_right"] <= 0.03 and numbers["accepted_while_wrong"] == 0.0


def test_an_answer_without_vectors_is_judged_on_the_rest_not_read_as_far_from_the_question() -> (
    None
):
    """Vectors off, an index still embedding, or the models stepping aside for Chinese text:
    the cosine signals are unobserved, so the shipped means stand in for them."""
    model = verdict.shipped()
    assert set(model.means) == {*verdict.VECTOR_SIGNALS, *verdict.CROSS_SIGNALS}
    qa = analyze("where is compute_cart_total")
    with_vectors = verdict.signals(qa, None, strong())
    without = verdict.signals(qa, None, [without_vectors(e) for e in strong()])
    assert without["no_vector"] == 1.0 and without["cos_max"] == 0.0
    imputed = {**without, **model.means}
    assert model.probability(without) == pytest.approx(model.probability(imputed))
    cross_means = {k: v for k, v in model.means.items() if k in verdict.CROSS_SIGNALS}
    zeros = verdict.ConfidenceModel(model.intercept, model.weights, model.line, cross_means)
    assert model.probability(without) > zeros.probability(without)
    assert model.probability(with_vectors) == zeros.probability(with_vectors)


def without_vectors(e: Evidence) -> Evidence:
    kept = {k: v for k, v in e.scores.items() if k not in ("cosine", "vector_rank")}
    return Evidence(
        e.path, e.start, e.end, e.symbol, e.kind, e.language, e.score, list(e.reasons), e.text, kept
    )


def test_a_weighted_unanswerable_case_pulls_the_fit_and_each_family_gets_its_own_line() -> None:
    """Cost-sensitive: an unanswerable case counted k times moves the fitted probability of
    answers like it down; with one line per family, each family's line is set on its own."""
    base = [row("a", right=True, known_names=1.0) for _ in range(40)]
    base += [row("a", right=False, known_names=1.0) for _ in range(10)]
    foreign = [
        dataclasses.replace(row("a", right=False, known_names=0.0), answerable=False)
        for _ in range(5)
    ]
    foreign += [row("a", right=True, known_names=0.0) for _ in range(5)]
    names = ["known_names"]
    plain = confidence_fit.predict(confidence_fit.fit(base + foreign, names, 1.0), foreign, names)
    heavy = confidence_fit.fit(base + foreign, names, 1.0, unanswerable_weight=10.0)
    assert confidence_fit.predict(heavy, foreign, names)[0] < plain[0]
    py = [row("a", right=True, python=1.0) for _ in range(30)]
    other = [row("a", right=True, python=0.0) for _ in range(30)]
    scored = [(r, 0.6) for r in py] + [(r, 0.3) for r in other]
    lines = confidence_fit.choose_lines(
        scored, confidence_fit.Settings(("python",), bound=0.0, min_group=1, per_family=True)
    )
    assert lines == {"other": 0.3, "python": 0.6}


def test_a_family_offset_moves_the_line_for_that_family_only() -> None:
    model = dataclasses.replace(verdict.shipped(), offsets={"python": 0.5})
    qa = analyze(QUESTION)
    python_answer = strong()
    other_answer = [dataclasses.replace(e, language="go") for e in strong()]
    p = verdict.judge(qa, None, python_answer, 0.2, model=model)
    o = verdict.judge(qa, None, other_answer, 0.2, model=model)
    assert verdict.line_family(verdict.signals(qa, None, python_answer)) == "python"
    # The same evidence: refused as Python only when its confidence is under 0.2 + 0.5.
    assert p.insufficient == (p.confidence < 0.7)
    assert o.insufficient == (o.confidence < 0.2)


def test_the_vocabulary_signals_read_what_the_workspace_holds() -> None:
    """A name held nowhere, rare words, and how much of the question's information the first
    result holds (rare words weigh more than common ones); each word looked up once."""
    df = {"compute_cart_total": 0, "compute": 40, "cart": 2, "total": 90, "summed": 0}
    asked: list[str] = []

    def doc_freq(term: str) -> int:
        asked.append(term)
        return df.get(term, 50)

    qa = analyze("where is compute_cart_total summed over the cart items")
    sig = verdict.vocabulary(qa, doc_freq, {"def", "cart_price", "cart"})
    assert sig["names_missing"] == 1.0 and sig["known_names"] == 0.0
    assert 0.0 < sig["rare_terms"] < 1.0
    assert len(asked) == len(set(asked))
    common = verdict.vocabulary(qa, doc_freq, {"total", "compute", "x"})
    assert sig["explained_first"] > common["explained_first"]  # "cart" is rarer than both
    assert verdict.vocabulary(qa, None)["names_missing"] == 0.0


def test_a_chinese_question_the_models_sat_out_is_marked_so() -> None:
    zh = analyze("在哪里计算购物车的总价")
    assert verdict.signals(zh, None, strong())["han"] > 0.5
    assert verdict.signals(zh, None, strong())["models_aside"] == 0.0
    aside = verdict.signals(zh, None, [without_vectors(e) for e in strong()])
    assert aside["models_aside"] == 1.0
    english = verdict.signals(analyze(QUESTION), None, [without_vectors(e) for e in strong()])
    assert english["han"] == 0.0 and english["models_aside"] == 0.0


def test_the_fit_reads_unobserved_signals_as_the_shipped_model_does() -> None:
    """A training answer without vectors is imputed with the training means, so a model
    written from the fit scores it as the fit did."""
    rows = [row(p, right=bool(i % 2), cos_max=0.3 + 0.4 * (i % 2)) for p in "ab" for i in range(40)]
    rows += [row("a", right=True, cos_max=0.0, no_vector=1.0) for _ in range(10)]
    names = ("cos_max", "no_vector")
    settings = confidence_fit.Settings(names)
    b, w = settings.fit(rows)
    means = confidence_fit.signal_means(rows)
    shipped = verdict.ConfidenceModel(b, dict(zip(names, map(float, w), strict=True)), 0.5, means)
    fitted = settings.scores(rows, rows[-1:])[0]
    assert shipped.probability(rows[-1].signals) == pytest.approx(fitted)


def test_where_the_questions_words_meet_and_how_the_channels_agree() -> None:
    """The question's words all in one result (or one file) against scattered over several:
    one chunk that holds "cart" and "total" explains more than two chunks holding one each;
    the channels' best results in the first file count as agreement."""
    df = {"cart": 2, "total": 3, "summed": 0, "compute_cart_total": 0, "compute": 4}
    qa = analyze("where is the cart total summed")
    meet = verdict.vocabulary(qa, df.get, chunks=[{"cart", "total"}, {"x"}])
    scattered = verdict.vocabulary(qa, df.get, chunks=[{"cart"}, {"total"}])
    assert meet["explained_chunk"] > scattered["explained_chunk"] > 0.0
    same_file = verdict.vocabulary(qa, df.get, files=[{"cart", "total"}])
    assert same_file["explained_file"] == meet["explained_chunk"]
    common = verdict.vocabulary(qa, lambda t: 500)
    assert verdict.vocabulary(qa, df.get)["specific"] > common["specific"] > 0.0
    led = verdict.signals(qa, None, strong())
    assert led["channels_agree"] == 1.0 and led["files_spread"] == 1.0
    led_elsewhere = [ev("a.py", 1.0, 0.3, bm25=9, vector=1), ev("b.py", 0.9, 0.2, bm25=1)]
    assert verdict.signals(qa, None, led_elsewhere)["channels_agree"] == 0.5
    one_file = [dataclasses.replace(e, path="lib/m0.py") for e in weak()]
    assert verdict.signals(qa, None, one_file)["files_spread"] == 0.0
