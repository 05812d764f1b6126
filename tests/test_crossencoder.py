"""The shipped cross-encoder: it loads, it ranks real (question, code) pairs the right way, and
the rerank stage keeps answering when the model is slow, missing or broken."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from code_evidence.api import Chunk, Evidence, FindRequest
from code_evidence.config import Config, ConfigError, load_config
from code_evidence.engine import Engine
from code_evidence.index.store import StoredChunk
from code_evidence.models import crossencoder
from code_evidence.models.passage import QUERY_TOKENS, passage_text
from code_evidence.search import rerank
from code_evidence.search.candidate import Candidate
from code_evidence.search.explain import explain_result
from code_evidence.search.query import QueryAnalysis, analyze

# (question, the code that answers it, code that does not): none of these is in the training
# data (written for this test), and each wrong answer shares words with the question.
PAIRS = [
    (
        "Parse an HTTP date header into a datetime",
        "def parse_http_date(value):\n    t = email.utils.parsedate_tz(value)\n"
        "    if t is None:\n        return None\n"
        "    return datetime.fromtimestamp(email.utils.mktime_tz(t), tz=timezone.utc)",
        "def format_header(name, value):\n    return f'{name}: {value}'\n",
    ),
    (
        "Remove duplicate items from a list while keeping their order",
        "def unique(items):\n    seen = set()\n    out = []\n    for x in items:\n"
        "        if x not in seen:\n            seen.add(x)\n"
        "            out.append(x)\n    return out",
        "def sort_items(items, key=None):\n    return sorted(items, key=key, reverse=True)\n",
    ),
    (
        "Retry a function call with exponential backoff",
        "def with_retries(fn, attempts=5, base=0.1):\n    for i in range(attempts):\n        try:\n"
        "            return fn()\n        except OSError:\n            time.sleep(base * 2 ** i)\n"
        "    return fn()",
        "def call_count(fn):\n    calls = 0\n    def wrapper(*a):\n        nonlocal calls\n"
        "        calls += 1\n        return fn(*a)\n    return wrapper",
    ),
    (
        "Read a configuration file and merge it over the defaults",
        "def load_settings(path, defaults):\n    with open(path) as f:\n"
        "        data = json.load(f)\n"
        "    merged = dict(defaults)\n    merged.update(data)\n    return merged",
        "def write_log(path, line):\n    with open(path, 'a') as f:\n        f.write(line + '\\n')",
    ),
    (
        "Check whether a user has permission to delete a document",
        "def can_delete(user, doc):\n    if user.is_admin:\n        return True\n"
        "    return doc.owner_id == user.id and not doc.locked",
        # Not delete_document: the model scores the action as high as the permission check
        # (MODEL_CARD.md, "Weaknesses").
        "def list_documents(user):\n    return [d for d in db.documents if d.owner_id == user.id]",
    ),
]


@pytest.fixture(scope="module")
def model() -> crossencoder.CrossEncoder:
    return crossencoder.shared()


def test_shipped_model_is_small_int8_and_loads(model: crossencoder.CrossEncoder) -> None:
    size_mb = crossencoder.MODEL_PATH.stat().st_size / 2**20
    assert size_mb <= 25
    names = [i.name for i in model.session.get_inputs()]
    assert names == ["input_ids", "attention_mask", "token_type_ids"]


@pytest.mark.parametrize(("query", "good", "bad"), PAIRS, ids=[p[0][:30] for p in PAIRS])
def test_model_prefers_the_code_that_answers(
    model: crossencoder.CrossEncoder, query: str, good: str, bad: str
) -> None:
    good_text = passage_text("src/app/util.py", good.split("(")[0].removeprefix("def "), good)
    bad_text = passage_text("src/app/util.py", bad.split("(")[0].removeprefix("def "), bad)
    s = model.scores(query, [good_text, bad_text])
    assert s.shape == (2,)
    assert s[0] > s[1], (query, s)


def test_padding_in_a_batch_barely_moves_a_score(model: crossencoder.CrossEncoder) -> None:
    """Padding is masked; what remains is dynamic int8's per-batch activation scale, which
    moves a logit by a few thousandths (a mask bug would move it by whole units)."""
    query, good, bad = PAIRS[0]
    alone = model.scores(query, [good])[0]
    together = model.scores(query, [bad, good, bad * 5])[1]
    assert math.isclose(alone, together, abs_tol=0.02)


def _cand(i: int, text: str, symbol: str) -> Candidate:
    ch = Chunk(
        path=f"pkg/m{i}.py",
        start=1,
        end=text.count("\n") + 1,
        language="python",
        kind="function",
        symbol=symbol,
        text=text,
        hash=f"hash-{i}-{symbol}",
    )
    c = Candidate(StoredChunk(i, ch, f"key{i}"))
    c.score = 1.0 / (i + 1)
    return c


class _Counting:
    """The real model, with its runs counted."""

    def __init__(self, inner: crossencoder.CrossEncoder) -> None:
        self.inner = inner
        self.pairs = 0
        self.ms_per_pair = inner.ms_per_pair

    def submit(self, query: str, passage: str, go):  # type: ignore[no-untyped-def]
        future = self.inner.submit(query, passage, go)
        self.pairs += future is not None
        return future


def test_undecodable_text_is_scored_not_raised(model: crossencoder.CrossEncoder) -> None:
    broken = "def f():\n    return '\udcff\udcfe'\n"  # lone surrogates from a bad file
    s = model.scores("what does f return \udc80", [broken, ""])
    assert s.shape == (2,)
    assert all(math.isfinite(x) for x in s)


def test_score_cache_skips_pairs_already_scored(model: crossencoder.CrossEncoder) -> None:
    counting = _Counting(model)
    rr = rerank.CrossEncoderReranker(counting, crossencoder.ScoreCache(), 4, 0.5)  # type: ignore[arg-type]
    qa = analyze(PAIRS[1][0])
    cands = [_cand(i, p[1], f"f{i}") for i, p in enumerate(PAIRS)]
    assert rr.score(qa, cands, math.inf) == 4
    assert counting.pairs == 4
    first = [c.cross for c in cands[:4]]
    fresh = [_cand(i, p[1], f"f{i}") for i, p in enumerate(PAIRS)]
    assert rr.score(qa, fresh, math.inf) == 4
    assert counting.pairs == 4  # all four came from the cache
    assert [c.cross for c in fresh[:4]] == first


def test_pairs_run_at_once_score_as_each_alone(model: crossencoder.CrossEncoder) -> None:
    """The stage runs up to one pair per core at once; each pair is still alone in its run,
    so its logit is the one it gets by itself (and the one the cache holds)."""
    assert model.workers >= 1
    rr = rerank.CrossEncoderReranker(model, crossencoder.ScoreCache(), len(PAIRS), 0.5)
    qa = analyze(PAIRS[0][0])
    cands = [_cand(i, p[1], f"h{i}") for i, p in enumerate(PAIRS)]
    assert rr.score(qa, cands, math.inf) == len(PAIRS)
    query = " ".join(qa.model_text.split()[:QUERY_TOKENS])
    for c in cands:
        ch = c.stored.chunk
        alone = passage_text(ch.path, ch.symbol, ch.text)  # short: no window cuts it
        assert c.cross == pytest.approx(float(model.scores(query, [alone])[0]), abs=1e-6)


def test_a_deadline_mid_head_leaves_a_scored_prefix(model: crossencoder.CrossEncoder) -> None:
    """Pairs stop being started once the time left is under a pair's cost; every started
    pair finishes, so the scored candidates are the head's first ones, none skipped."""

    starts = []
    real_submit = model.submit

    def submit(query: str, passage: str, go):  # type: ignore[no-untyped-def]
        def limited() -> bool:  # the fourth start finds no time left (later ones would)
            starts.append(passage)
            return len(starts) != 4 and go()

        return real_submit(query, passage, limited)

    rr = rerank.CrossEncoderReranker(model, crossencoder.ScoreCache(), len(PAIRS), 0.5)
    rr.model = type("Limited", (), {"submit": staticmethod(submit), "ms_per_pair": 0.0})()  # type: ignore[assignment]
    qa = analyze(PAIRS[3][0])
    cands = [_cand(i, p[1], f"k{i}") for i, p in enumerate(PAIRS)]
    assert rr.score(qa, cands, math.inf) == 3
    assert [c.cross is not None for c in cands] == [True] * 3 + [False] * (len(PAIRS) - 3)


def test_interactive_deadline_limits_pairs_deep_does_not(model: crossencoder.CrossEncoder) -> None:
    rr = rerank.CrossEncoderReranker(model, crossencoder.ScoreCache(), 5, 0.5)
    qa = analyze(PAIRS[2][0])
    cands = [_cand(i, p[1], f"g{i}") for i, p in enumerate(PAIRS)]
    assert rr.score(qa, cands, -math.inf) == 0  # a deadline already passed: nothing run
    assert all(c.cross is None for c in cands)
    assert rr.score(qa, cands, math.inf) == 5


def test_combine_blends_instead_of_replacing() -> None:
    a, b = _cand(0, "x", "a"), _cand(1, "y", "b")
    a.score, b.score = 1.0, 0.2  # a is far ahead in the first stage
    a.cross, b.cross = 0.0, 1.0  # the model slightly prefers b
    rr = rerank.CrossEncoderReranker(None, crossencoder.ScoreCache(), 2, 0.5)  # type: ignore[arg-type]
    rr.combine([a, b])
    assert a.score > b.score  # a one-logit preference does not overturn a 5x first-stage lead
    a.score, b.score = 1.0, 0.8
    rr.combine([a, b])
    assert b.score > a.score
    assert "cross-encoder-top" in b.reasons


def test_window_reads_the_lines_that_match() -> None:
    lines = ["def big(x):"] + [f"    step_{i} = work(x, {i})" for i in range(200)]
    lines[150] = "    token = refresh_oauth_token(session)"
    text = "\n".join(lines)
    part = rerank.window(text, {"refresh", "oauth", "token"}, 400)
    assert part.startswith("def big(x):")
    assert "refresh_oauth_token" in part
    assert len(part) <= 400
    assert rerank.window("def f():\n    pass", {"x"}, 400) == "def f():\n    pass"


def test_failing_model_falls_back_to_the_order_before_it() -> None:
    class Broken:
        name = "cross-encoder"
        cut_by_deadline = True

        def wanted(self, qa: QueryAnalysis, head: int) -> int:
            return head

        def score(self, qa, cands, deadline):  # type: ignore[no-untyped-def]
            raise RuntimeError("onnxruntime exploded")

        def combine(self, scored):  # type: ignore[no-untyped-def]
            raise AssertionError("never called")

    cands = [_cand(i, p[1], f"h{i}") for i, p in enumerate(PAIRS)]
    for c in cands:
        c.fused = c.score
    ordered, scored, notes = rerank.rerank(
        cands, analyze("a question"), [rerank.FeatureReranker(), Broken()], 50, None
    )
    assert [c.id for c in ordered] == sorted(c.id for c in cands)
    assert scored == 0
    assert any("cross-encoder rerank failed (onnxruntime exploded)" in n for n in notes)


def test_engine_uses_the_model_and_degrades_without_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Engine(project, index_dir=project / ".idx", config=Config()) as eng:
        eng.index()
        deep = eng.find(FindRequest("check the oauth state of a request", depth="deep"))
        assert deep.results
        assert any("cross" in r.scores for r in deep.results)
        quick = eng.find(FindRequest("check the oauth state of a request", depth="quick"))
        assert not any("cross" in r.scores for r in quick.results)

        monkeypatch.setattr(crossencoder, "MODEL_PATH", project / "missing.onnx")
        res = eng.find(FindRequest("check the oauth state of a request", limit=5))
        assert res.results
        assert any("cross-encoder unavailable" in n for n in res.notes)
        assert not any("cross" in r.scores for r in res.results)


def test_config_rejects_an_unknown_reranker(tmp_path: Path) -> None:
    (tmp_path / ".code-evidence.toml").write_text('[ranking]\nreranker = "gpt"\n')
    with pytest.raises(ConfigError, match="reranker"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("query", "described"),
    [
        ("Returns the default stream encoding if not found.", True),
        ("Open a resource file relative to the application's instance folder", True),
        ("Fix default handling to defer UNSET normalization", False),
        ("don't close the buffer of a named wrapper", False),
        ("Hide UNSET values in Context.invoke", False),  # names code: exact matching's job
        ("_paired", False),  # a private name is a name, not a description
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
            "    main()\nKeyError: 'user'",
            False,
        ),
        (" ".join(["word"] * 31), False),
        ("", False),
    ],
)
def test_model_runs_for_descriptions_not_change_requests_or_errors(
    query: str, described: bool
) -> None:
    assert rerank.reads_as_description(analyze(query)) is described


def test_config_rejects_an_unknown_cross_encoder_scope(tmp_path: Path) -> None:
    (tmp_path / ".code-evidence.toml").write_text('[ranking]\ncross_encoder_for = "some"\n')
    with pytest.raises(ConfigError, match="cross_encoder_for"):
        load_config(tmp_path)


def test_model_reorders_within_a_soft_penalty_not_across_it() -> None:
    code, test = (
        _cand(0, "def total(self): ...", "Cart.total"),
        _cand(1, "def test_total(): ...", "x"),
    )
    code.score, test.score = 1.0, 0.5
    test.factor = 0.5  # a test, and the question is not about tests
    code.cross, test.cross = 1.0, 5.0  # the model likes the test's name match much more
    rr = rerank.CrossEncoderReranker(None, crossencoder.ScoreCache(), 2, 1.0)  # type: ignore[arg-type]
    rr.combine([code, test])
    assert code.score > test.score


def test_the_template_that_writes_the_message_is_not_lowered_by_the_model() -> None:
    """serde_json: ``panic!("cannot access key {:?} in JSON {}", …)`` writes the pasted
    message; the model read the two-line ``NumberKey`` as closer to it. An exact match of most
    of the message is not the model's to overrule; a template that writes little of it is."""
    template, near = (
        _cand(0, 'panic!("cannot access key {:?} in JSON {}")', "index"),
        _cand(1, "struct NumberKey;", "NumberKey"),
    )
    template.score, near.score = 0.9, 1.0
    template.cross, near.cross = -3.0, 0.0
    template.template_coverage = 0.67
    rr = rerank.CrossEncoderReranker(None, crossencoder.ScoreCache(), 2, 0.5)  # type: ignore[arg-type]
    rr.combine([template, near])
    assert template.score == 0.9 and near.score == 1.0
    template.score, template.template_coverage = 0.9, 0.3  # a literal that writes little of it
    rr.combine([template, near])
    assert template.score < 0.9 * 0.5
    # --explain says the model's reading was not counted, not that it multiplied the score.
    trusted = Evidence("a.rs", 1, 9, "index", "function", "rust", 0.9, [], "", {"cross": -3.0})
    trusted.scores["template_coverage"] = 0.67
    assert "not counted" in explain_result(trusted) and "exp(" not in explain_result(trusted)
    trusted.scores["template_coverage"] = 0.3
    assert "exp(blend" in explain_result(trusted)
