"""Co-change: which files changed together in the workspace's own git history, recorded per
HEAD (bounded, incremental), read as the open file's partners, and used as a recall channel
and a feature with its own reason tag and explanation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from code_evidence.api import Chunk, FindRequest
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import cochange
from code_evidence.index.cochange import CoChangeTable, LoggedCommit, Partner
from code_evidence.index.store import StoredChunk
from code_evidence.search import explain, features
from code_evidence.search.candidate import Candidate
from code_evidence.search.query import analyze
from code_evidence.search.recall import EditorState
from support.project import git, init_repo, write_files

DAY = 86400
HEAD_TIME = 1_700_000_000


def table() -> CoChangeTable:
    db = sqlite3.connect(":memory:")
    db.executescript(cochange.DDL)
    return CoChangeTable(db)


def commit(sha: str, days_ago: float, *paths: str) -> LoggedCommit:
    return LoggedCommit(sha, int(HEAD_TIME - days_ago * DAY), paths)


def test_partners_are_the_files_that_changed_with_the_open_file() -> None:
    t = table()
    t.record(
        [
            commit("c3", 1, "a.py", "b.py"),
            commit("c2", 2, "a.py", "b.py", "c.py"),
            commit("c1", 3, "a.py"),
            commit("c0", 4, "d.py", "e.py"),  # never with a.py
        ],
        replace=True,
    )
    found = {p.path: p for p in t.partners("a.py", HEAD_TIME, 10)}
    assert set(found) == {"b.py", "c.py"}
    assert found["b.py"].count == 2 and found["c.py"].count == 1
    assert found["b.py"].last_time == HEAD_TIME - DAY
    assert found["b.py"].strength > found["c.py"].strength
    assert 0 < found["c.py"].strength < found["b.py"].strength <= 1
    assert t.partners("nowhere.py", HEAD_TIME, 10) == []


def test_sweeps_count_little_and_old_commits_less(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cochange.commit_weight(2) == 1.0
    assert cochange.commit_weight(50) < cochange.commit_weight(10) < 1.0
    monkeypatch.setattr(cochange, "MAX_FILES", 5)
    t = table()
    sweep = [f"f{i}.py" for i in range(6)]
    t.record([commit("s", 1, "a.py", *sweep), commit("r", 1, "a.py", "recent.py")], True)
    assert [p.path for p in t.partners("a.py", HEAD_TIME, 10)] == ["recent.py"]
    t = table()
    t.record([commit("n", 1, "a.py", "new.py"), commit("o", 2000, "a.py", "old.py")], True)
    strength = {p.path: p.strength for p in t.partners("a.py", HEAD_TIME, 10)}
    assert strength["new.py"] > 10 * strength.get("old.py", 0.0)


def test_the_table_is_bounded_and_grows_incrementally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cochange, "MAX_COMMITS", 3)
    t = table()
    t.record([commit(f"c{i}", 10 - i, "a.py", f"p{i}.py") for i in range(5)], True)
    assert t.db.execute("SELECT count(*) FROM commits").fetchone()[0] == 3
    t.record([commit("new", 0, "a.py", "fresh.py")], replace=False)
    assert t.db.execute("SELECT count(*) FROM commits").fetchone()[0] == 3
    paths = {p.path for p in t.partners("a.py", HEAD_TIME, 10)}
    assert "fresh.py" in paths and "p0.py" not in paths
    t.record([commit("new", 0, "a.py", "fresh.py")], replace=False)  # seen: not counted twice
    assert {p.path: p.count for p in t.partners("a.py", HEAD_TIME, 10)}["fresh.py"] == 1


def test_the_feature_boosts_partners_by_strength_and_tags_them() -> None:
    def cand(cid: int, path: str) -> Candidate:
        ch = Chunk(path, 1, 2, "f", "function", "python", "def f():\n    pass", f"h{cid}")
        return Candidate(stored=StoredChunk(cid, ch, None), fused=0.01)

    partner = Partner("lib/b.py", 0.8, 4, HEAD_TIME)
    cfg = Config()
    out = features.apply_features(
        [cand(1, "lib/b.py"), cand(2, "lib/c.py")],
        analyze("add a flag"),
        EditorState("src/a.py", None),
        {},
        cfg,
        cochange={"lib/b.py": partner},
    )
    vote = 1 / (cfg.ranking.rrf_k + 1)
    assert out[0].boost == pytest.approx(cfg.ranking.cochange_boost * 0.8 * vote)
    assert "co-change" in out[0].reasons and out[0].cochange == partner
    assert out[1].boost == 0.0 and "co-change" not in out[1].reasons


def test_an_open_files_partner_is_found_explained_and_updated_per_head(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    init_repo(ws)
    write_files(
        ws,
        {
            "app/orders.py": "def place_order(cart):\n    return submit(cart)\n",
            "billing/ledger.py": "def record_entry(amount):\n    return amount\n",
            "misc/other.py": "def unrelated_helper():\n    return 3\n",
        },
    )
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    for i in range(3):  # orders and the ledger always change together
        write_files(
            ws, {"app/orders.py": f"def place_order(cart):\n    return submit(cart, {i})\n"}
        )
        write_files(
            ws, {"billing/ledger.py": f"def record_entry(amount):\n    return amount + {i}\n"}
        )
        git(ws, "commit", "-qam", f"together {i}")
    request = FindRequest(query="what else changes", open_file="app/orders.py", limit=10)
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        res = eng.find(request, refresh=False)
        ledger = next(r for r in res.results if r.path == "billing/ledger.py")
        assert "co-change" in ledger.reasons and "cochange_rank" in ledger.scores
        assert ledger.scores["cochange_count"] == 4.0  # the first commit too
        assert res.results[0].path != "misc/other.py"
        line = explain.explain_result(ledger)
        assert "changed with the open file in 4 commits, last 20" in line
        # HEAD moves forward: only the new commit is read, and it counts.
        write_files(ws, {"app/orders.py": "def place_order(cart):\n    return submit(cart, 9)\n"})
        write_files(ws, {"billing/ledger.py": "def record_entry(amount):\n    return amount + 9\n"})
        git(ws, "commit", "-qam", "together again")
        eng.index()
        res = eng.find(request, refresh=False)
        ledger = next(r for r in res.results if r.path == "billing/ledger.py")
        assert ledger.scores["cochange_count"] == 5.0


def test_a_plain_folder_has_no_partners(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write_files(ws, {"a.py": "def a():\n    return b()\n", "b.py": "def b():\n    return 1\n"})
    with Engine(ws, tmp_path / "idx") as eng:
        eng.index()
        res = eng.find(FindRequest(query="b", open_file="a.py", limit=5), refresh=False)
    assert all("co-change" not in r.reasons for r in res.results)
    assert "recall.cochange" not in res.trace
