"""The change-frequency prior (``index/churn.py``, ``features.change_prior``): without an open
file, of files that match a question alike, the one the history changed most often comes
first, tagged ``often-changed``; with an open file, or without history, nothing changes. And
the other secondary evidence of change questions: examples and packaging glue."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from code_evidence import api
from code_evidence.api import Chunk
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.index import cochange
from code_evidence.index.churn import counts
from code_evidence.index.cochange import CoChangeTable, LoggedCommit
from code_evidence.index.store import StoredChunk
from code_evidence.search import features
from code_evidence.search.candidate import Candidate
from code_evidence.search.features import change_prior
from code_evidence.search.query import analyze
from code_evidence.search.recall import EditorState
from support.project import git, init_repo, write_files

DAY = 86400
HEAD = 1_700_000_000


def test_the_prior_is_a_log_share_of_the_most_changed_for_questions_in_words() -> None:
    seen = {"a.go": 15.0, "b.go": 3.0, "c.go": 0.0}
    words = analyze("fix(binding): dereference pointer to struct")
    prior = change_prior(seen, EditorState(None, None), words)
    assert prior["a.go"] == 1.0 and 0 < prior["b.go"] < 1.0 and prior["c.go"] == 0.0
    assert change_prior(seen, EditorState("b.go", None), words) == {}
    assert change_prior({}, EditorState(None, None), words) == {}
    assert change_prior({"a.go": 0.0}, EditorState(None, None), words) == {}
    # Every candidate changed alike (one commit of everything): no vote for anyone.
    assert change_prior({"a.go": 2.0, "b.go": 2.0}, EditorState(None, None), words) == {}
    low = change_prior({"a.go": 8.0, "b.go": 2.0, "c.go": 1.0}, EditorState(None, None), words)
    assert low["c.go"] == 0.0 and 0 < low["b.go"] < low["a.go"] == 1.0
    # A pasted error names its place by its own text.
    error = analyze("RuntimeError: Working outside of application context.")
    assert change_prior(seen, EditorState(None, None), error) == {}


def test_churn_counts_focused_recent_commits() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(cochange.DDL)
    CoChangeTable(db).record(
        [
            LoggedCommit("n1", HEAD - DAY, ("hot.go", "x.go")),
            LoggedCommit("n2", HEAD - 2 * DAY, ("hot.go", "y.go")),
            LoggedCommit("old", HEAD - 730 * DAY, ("cold.go", "x.go")),
            LoggedCommit("sweep", HEAD - DAY, (*(f"f{i}.go" for i in range(40)), "z.go")),
        ],
        replace=True,
    )
    got = counts(db, HEAD, ["hot.go", "cold.go", "z.go", "never.go"])
    assert got["hot.go"] > 1.9 and 0.2 < got["cold.go"] < 0.3  # two years old: a quarter
    assert got["z.go"] < 0.1  # one file of a sweep of 41
    assert got["never.go"] == 0.0


def test_the_often_changed_file_comes_first_without_an_open_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    init_repo(ws)
    same = "func decodeFormValue(v string) string {\n\treturn strings.TrimSpace(v)\n}\n"
    write_files(
        ws,
        {
            "binding/a_form.go": f"package binding\n\n{same}",
            "binding/mapping.go": f"package binding\n\n{same}".replace("decode", "parse"),
            "notes.txt": "start",
        },
    )
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    for i in range(6):
        write_files(ws, {"binding/mapping.go": f"package binding\n\n// v{i}\n{same}"})
        write_files(ws, {"notes.txt": f"{i}"})
        git(ws, "commit", "-qam", f"mapping {i}")
    eng = Engine(ws, tmp_path / "idx")
    try:
        eng.index()
        res = eng.find(api.FindRequest(query="trim space of the form value", limit=5))
        first = res.results[0]
        assert first.path == "binding/mapping.go" and "often-changed" in first.reasons
        res = eng.find(
            api.FindRequest(query="trim space of the form value", limit=5, open_file="notes.txt")
        )
        assert all("often-changed" not in r.reasons for r in res.results)
    finally:
        eng.close()


def cand(cid: int, path: str) -> Candidate:
    ch = Chunk(path, 1, 2, "f", "function", "javascript", "function f () {}", f"h{cid}")
    return Candidate(stored=StoredChunk(cid, ch, None), fused=0.01)


@pytest.mark.parametrize(
    ("question", "demoted"),
    [
        ("fix: bind this to the instance in onClose", True),
        ("docs: fix the onClose example", False),  # the headline asks about examples
        ("how does onClose bind this?", False),  # how something works: an example shows it
        ("fix: onClose\n\n* update the example", True),  # a bullet is not the subject
    ],
)
def test_examples_are_secondary_to_the_code_they_show(question: str, demoted: bool) -> None:
    out = features.apply_features(
        [cand(1, "examples/hooks.js"), cand(2, "lib/hooks.js"), cand(3, "setup.py")],
        analyze(question),
        EditorState(None, None),
        {},
        Config(),
    )
    by_path = {c.stored.chunk.path: c for c in out}
    for path in ("examples/hooks.js", "setup.py"):
        assert ("outside-source" in by_path[path].reasons) is demoted
        assert by_path[path].factor == (Config().ranking.outside_source_factor if demoted else 1.0)
    assert by_path["lib/hooks.js"].factor == 1.0
