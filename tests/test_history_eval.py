"""`code-evidence eval` / `tune`: cases mined from git history, replayed without leaking the
future, scored by the one evaluator, fitted with a split by time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from code_evidence.cli import main
from code_evidence.config import TUNED_FILE, load_config, read_tuned
from code_evidence.engine import Engine
from code_evidence.evaluation import tune as tune_mod
from code_evidence.evaluation.backtest import mine_cases
from code_evidence.evaluation.evaluate import Case, CaseRun, score_case
from code_evidence.evaluation.mining import (
    clean_message,
    code_signature,
    is_source,
    mine,
    old_side_ranges,
    skip_reason_for_message,
)
from code_evidence.evaluation.replay import Replay
from code_evidence.search import verdict
from support.history import Repo, build_history


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """24 real questions (each changes one described function; every third also changes its
    neighbour in the next module) among commits that must all be skipped."""
    return build_history(tmp_path_factory.mktemp("hist") / "service")


# --------------------------------------------------------------------------- unit


def test_clean_message_drops_ids_trailers_urls_and_checklists() -> None:
    message = (
        "Retry the upload when the server times out (#123)\n\n"
        "The client gave up after one try, see https://example.com/issue/9.\n"
        "- [x] tests added\n"
        "Fixes gh-77\n\n"
        "Signed-off-by: A Dev <a@example.com>\n"
        "Co-authored-by: B Dev <b@example.com>\n"
    )
    assert clean_message(message) == (
        "Retry the upload when the server times out The client gave up after one try, see"
    )


@pytest.mark.parametrize(
    ("subject", "author", "reason"),
    [
        ("Bump actions/checkout from 3 to 4", "dependabot[bot] <x@github.com>", "bot"),
        ("Release 2.3.1", "Dev <d@example.com>", "release or version bump"),
        ("2.3.1", "Dev <d@example.com>", "release or version bump"),
        ('Revert "make the cache smaller"', "Dev <d@example.com>", "revert"),
        ("Fix typos in the session module", "Dev <d@example.com>", "typo, format or lint"),
        ("Format code with black", "Dev <d@example.com>", "typo, format or lint"),
        ("Fix mypy errors in the loader", "Dev <d@example.com>", "typo, format or lint"),
        ("Fix formatting of error messages for bad options", "Dev <d@example.com>", None),
        ("Drop support for Python 3.7", "Dev <d@example.com>", "runtime-version sweep"),
        ("docs: explain the blueprint order", "Dev <d@example.com>", "docs"),
        ("[pre-commit.ci] auto update", "Dev <d@example.com>", "dependencies or tooling"),
        ("Retry uploads when the server times out", "Dev <d@example.com>", None),
    ],
)
def test_message_skip_rules(subject: str, author: str, reason: str | None) -> None:
    assert skip_reason_for_message(subject, author) == reason


def test_old_side_ranges_label_insertions_by_their_neighbours() -> None:
    diff = b"@@ -10,3 +10,4 @@\n-a\n@@ -20 +21 @@\n-b\n@@ -30,0 +31,2 @@\n+c\n"
    assert old_side_ranges(diff) == ((10, 12), (20, 20), (30, 31))


def test_code_signature_ignores_docstrings_comments_and_layout() -> None:
    old = 'def f(x):\n    """Old words."""\n    return x  # note\n'
    reworded = 'def f(x):\n    """New words."""\n\n    return x\n'
    changed = 'def f(x):\n    """Old words."""\n    return x + 1\n'
    assert code_signature("a.py", old) == code_signature("a.py", reworded)
    assert code_signature("a.py", old) != code_signature("a.py", changed)
    assert code_signature("a.go", "x := 1 // one\n") == code_signature("a.go", "x :=  1\n")


def test_source_files_exclude_tests_docs_examples_and_glue() -> None:
    assert is_source("src/service/upload.py")
    assert not is_source("tests/test_upload.py")
    assert not is_source("docs/conf.py")
    assert not is_source("examples/demo.py")
    assert not is_source("setup.py")
    assert not is_source("README.md")


def test_score_case_follows_the_shared_metric_definitions() -> None:
    from code_evidence.evaluation.evaluate import Hit

    case = Case("x", "d", "commit", "a", "q", None, {"a.py": ((10, 20),), "b.py": ((1, 2),)})
    hits = [Hit("c.py", 1, 5), Hit("a.py", 30, 40), Hit("a.py", 15, 16)]
    m = score_case(case, hits)
    assert m["MRR@10"] == 0.5 and m["R@1"] == 0.0 and m["R@5"] == 0.5 and m["chunk@10"] == 1.0


def test_variant_b_scores_without_the_open_file() -> None:
    """The shared rule: in variant b the open file's results neither help nor hurt; in a and c
    (the open file is gold) every result counts."""
    from code_evidence.evaluation.evaluate import Hit

    gold = {"b.py": ((1, 2),)}
    hits = [Hit("open.py", 1, 5)] * 10 + [Hit("b.py", 1, 2)]
    b = score_case(Case("x:b", "d", "commit", "b", "q", "open.py", gold), hits)
    assert b["MRR@10"] == 1.0 and b["R@1"] == 1.0 and b["chunk@10"] == 1.0
    a = score_case(Case("x:a", "d", "commit", "a", "q", None, gold), hits)
    assert a["MRR@10"] == 0.5 and a["chunk@10"] == 0.0
    c_gold = {"open.py": ((1, 2),), **gold}
    c = score_case(Case("x:c", "d", "commit", "c", "q", "open.py", c_gold), hits)
    assert c["MRR@10"] == 1.0 and c["R@1"] == 0.5 and c["chunk@10"] == 1.0


# --------------------------------------------------------------------------- mining


def test_mining_keeps_the_questions_and_says_why_the_rest_was_skipped(
    history_repo: dict[str, Any],
) -> None:
    repo, questions = history_repo["repo"], history_repo["questions"]
    mined = mine(repo.root)
    assert {c.sha for c in mined.commits} == set(questions)
    assert mined.skipped == {
        "first commit": 1,
        "bot": 1,
        "release or version bump": 1,
        "no source change": 1,
        "comments, docstrings or whitespace only": 1,
        "adds or renames source files": 1,
        "typo, format or lint": 1,
    }
    times = [c.time for c in mined.commits]
    assert times == sorted(times)
    for commit in mined.commits:
        assert commit.parent == repo.git("rev-parse", f"{commit.sha}^")
        assert {f.path for f in commit.files} == set(questions[commit.sha])
        assert "#" not in commit.query  # the PR number is a label, never part of the question
        for f in commit.files:  # every range points at lines the parent has and the diff changed
            parent_lines = repo.git("show", f"{commit.parent}:{f.path}").splitlines()
            assert f.ranges and all(1 <= a <= b <= len(parent_lines) + 1 for a, b in f.ranges)


def test_variant_b_opens_the_file_that_changed_most(history_repo: dict[str, Any]) -> None:
    history = mine_cases(history_repo["repo"].root, None, None)
    b_cases = [c for c in history.cases if c.variant == "b"]
    assert b_cases
    for case in b_cases:
        assert case.open_file is not None and case.open_file not in case.gold
        assert len(case.gold) == 1


def test_max_commits_spreads_over_the_whole_range(history_repo: dict[str, Any]) -> None:
    full = mine_cases(history_repo["repo"].root, None, None)
    few = mine_cases(history_repo["repo"].root, None, None, max_commits=4)
    assert len(few.mined.commits) == 4
    assert few.mined.commits[0].sha == full.mined.commits[0].sha
    assert few.mined.commits[-1].time > full.mined.commits[len(full.mined.commits) // 2].time


def test_since_limits_the_range_and_a_bad_ref_is_a_clear_error(
    history_repo: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    repo = history_repo["repo"]
    all_commits = mine(repo.root).commits
    since = all_commits[-5].sha
    assert [c.sha for c in mine(repo.root, since=since).commits] == [
        c.sha for c in all_commits[-4:]
    ]
    assert main(["eval", "--workspace", str(repo.root), "--since", "no-such-ref"]) == 2
    assert "does not name a commit" in capsys.readouterr().err


def test_a_cherry_pick_is_asked_once(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "picks")
    spaces = "def parse(line):\n    return line.split(' ')\n"
    tabs = "def parse(line):\n    return line.replace('\\t', ' ').split(' ')\n"
    repo.write("src/parser.py", spaces)
    repo.commit("Initial parser")
    repo.write("src/parser.py", tabs)
    first = repo.commit("Make the parser accept tabs between fields")
    repo.write("src/parser.py", spaces)
    back = repo.commit("Go back to splitting fields on spaces only for now")
    repo.write("src/parser.py", tabs)
    repo.commit(f"Parser: accept tabs between fields\n\n(cherry picked from commit {first})")
    mined = mine(repo.root)
    assert [c.sha for c in mined.commits] == [first, back]
    assert mined.skipped["duplicate"] == 1


def test_blob_reader_stays_in_step_after_a_folder_or_a_missing_path(tmp_path: Path) -> None:
    from code_evidence.git import Git

    repo = Repo(tmp_path / "blobs")
    repo.write("src/a.py", "A = 1\n")
    sha = repo.commit("Initial")
    with Git(repo.root).blobs() as blobs:
        assert blobs.read(sha, "src") is None  # a folder: its listing is read past, not kept
        assert blobs.read(sha, "nope.py") is None
        assert blobs.read(sha, "src/a.py") == b"A = 1\n"


# --------------------------------------------------------------------------- replay


def _archive(repo: Repo, sha: str) -> dict[str, str]:
    names = repo.git("ls-tree", "-r", "--name-only", sha).splitlines()
    return {n: repo.git("show", f"{sha}:{n}") for n in names}


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8").rstrip("\n")
        for p in root.rglob("*")
        if p.is_file()
    }


def test_replay_tree_equals_each_commit_forward_and_back(history_repo: dict[str, Any]) -> None:
    repo = history_repo["repo"]
    shas = repo.git("rev-list", "--reverse", "HEAD").splitlines()
    cfg = load_config(repo.root)
    with Replay(repo.root, cfg) as replay:
        for sha in [shas[0], shas[5], shas[9], shas[2], shas[-1]]:
            replay.move_to(sha)
            assert _tree(replay.tree) == {k: v.rstrip("\n") for k, v in _archive(repo, sha).items()}
        root = replay.root
    assert not root.exists()


def test_a_workspace_inside_a_repository_mines_and_replays_only_its_folder(
    tmp_path: Path,
) -> None:
    repo = Repo(tmp_path / "mono")
    repo.write("service/src/queue.py", "def push(item):\n    return [item]\n")
    repo.write("other/src/noise.py", "def noise():\n    return 0\n")
    repo.commit("Initial import of two projects")
    repo.write("service/src/queue.py", "def push(item):\n    return [item, item]\n")
    repo.write("other/src/noise.py", "def noise():\n    return 1\n")
    sha = repo.commit("Push every queued item twice so the retry sees it")
    workspace = repo.root / "service"
    [commit] = mine(workspace).commits
    assert commit.sha == sha and [f.path for f in commit.files] == ["src/queue.py"]
    with Replay(workspace, load_config(workspace)) as replay:
        replay.move_to(commit.parent)
        assert _tree(replay.tree) == {"src/queue.py": "def push(item):\n    return [item]"}
        replay.move_to(sha)
        assert _tree(replay.tree) == {"src/queue.py": "def push(item):\n    return [item, item]"}


def test_the_index_at_a_stop_never_holds_the_commit_asked_about(
    history_repo: dict[str, Any],
) -> None:
    repo = history_repo["repo"]
    commit = mine(repo.root).commits[-1]
    with Replay(repo.root, load_config(repo.root)) as replay:
        engine = replay.at(commit.parent)
        path = commit.files[0].path
        indexed = "".join(e.text for e in engine.outline(path))
        assert indexed.count("step_") == repo.git("show", f"{commit.parent}:{path}").count("step_")
        assert indexed.count("step_") < repo.git("show", f"{commit.sha}:{path}").count("step_")


# --------------------------------------------------------------------------- CLI


def test_eval_reports_every_configuration_and_leaves_the_workspace_alone(
    history_repo: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = history_repo["repo"]
    head, status = repo.git("rev-parse", "HEAD"), repo.git("status", "--porcelain")
    index_dir = tmp_path / "index"
    out = tmp_path / "eval.json"
    argv = ["eval", "--workspace", str(repo.root), "--index-dir", str(index_dir)]
    assert main([*argv, "--configs", "bm25,full", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "commit a+b" in text and "bm25" in text and "full" in text
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["commits_mined"] == len(history_repo["questions"])
    assert report["skipped"]["bot"] == 1
    full = report["metrics"]["full"]["commit a"]
    # The messages describe the function in its own words: BM25 alone puts it first most times.
    assert report["metrics"]["bm25"]["commit a"]["R@1"] >= 0.75
    assert full["MRR@10"] >= 0.75 and full["n"] == len(history_repo["questions"])
    assert len(report["per_case"]) == report["cases"]
    assert repo.git("rev-parse", "HEAD") == head and repo.git("status", "--porcelain") == status
    assert not index_dir.exists()  # eval never opens (or creates) the workspace's own index


def test_tune_splits_by_time_stores_only_what_validates_and_status_says_so(
    history_repo: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = history_repo["repo"]
    index_dir = tmp_path / "index"
    argv = ["tune", "--workspace", str(repo.root), "--index-dir", str(index_dir), "--quiet"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["train_cases"] + report["validation_cases"] == len(
        mine_cases(repo.root, None, None).cases
    )
    stored = read_tuned(index_dir)
    if report["ranking"]:
        assert stored["ranking"] == report["ranking"]
        if set(report["ranking"]) - {"insufficient_below"}:
            assert report["after"]["validation"]["mrr"] > report["before"]["validation"]["mrr"]
        with Engine(repo.root, index_dir) as eng:
            assert eng.status().ranking.startswith("tuned")
    else:
        assert stored == {}
    assert main([*argv, "--reset"]) == 0
    assert not (index_dir / TUNED_FILE).exists()


def test_eval_without_vector_configurations_embeds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from code_evidence.config import Config
    from code_evidence.evaluation.backtest import evaluate_history
    from code_evidence.models.embedder import Embedder

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was asked to embed")

    monkeypatch.setattr(Embedder, "embed", refuse)
    repo = Repo(tmp_path / "lexical")
    repo.write("src/clock.py", "def tick(now):\n    return now + 1\n")
    repo.commit("Initial clock")
    repo.write("src/clock.py", "def tick(now):\n    return now + 2\n")
    repo.commit("Advance the clock by two seconds on every tick")
    history = mine_cases(repo.root, None, None)
    report = evaluate_history(history, Config(), ["bm25"])  # vectors are on in Config()
    assert report["metrics"]["bm25"]["commit a"]["R@1"] == 1.0


def test_tune_refuses_a_history_too_short_to_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = Repo(tmp_path / "tiny")
    repo.write("src/a.py", "def a():\n    return 1\n")
    repo.commit("Initial")
    repo.write("src/a.py", "def a():\n    return 2\n")
    repo.commit("Return two from the first helper instead of one")
    assert main(["tune", "--workspace", str(repo.root), "--quiet"]) == 2
    assert "tuning needs at least" in capsys.readouterr().err


def test_eval_outside_git_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    assert main(["eval", "--workspace", str(tmp_path), "--quiet"]) == 2
    assert "not a git repository" in capsys.readouterr().err


# --------------------------------------------------------------------------- tune rules


def _runs(mrr_by_case: dict[str, float], name: str) -> list[CaseRun]:
    runs = []
    for cid, mrr in mrr_by_case.items():
        case = Case(cid, "d", "commit", "a", name, None, {"x.py": ()})
        runs.append(CaseRun(case, [], 1.0, None, metrics={"MRR@10": mrr, "R@1": float(mrr == 1)}))
    return runs


def test_tune_never_ships_a_setting_worse_on_validation(
    history_repo: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setting that wins every training case and loses every validation case stays out."""
    history = mine_cases(history_repo["repo"].root, None, None)
    train, valid = tune_mod.split_by_time(history)

    def fake_backtest(
        h: Any, cases: list[Case], cfg: Any, variants: dict[str, Any], *a: Any, **kw: Any
    ) -> dict[str, list[CaseRun]]:
        out = {}
        for name in variants:
            better = name != tune_mod.DEFAULT
            out[name] = _runs(
                {
                    c.id: (1.0 if better else 0.5) if c.id in train else (0.2 if better else 0.5)
                    for c in cases
                },
                name,
            )
        return out

    monkeypatch.setattr(tune_mod, "backtest", fake_backtest)
    report = tune_mod.tune(history, load_config(history.workspace))
    assert report["chosen"] != tune_mod.DEFAULT
    assert report["candidates"][report["chosen"]]["train"]["mrr"] == 1.0
    assert not report["shipped"] and report["ranking"] == {}
    time_at = {c.parent: c.time for c in history.mined.commits}
    times = {i: time_at[p] for i, p in history.parent_of.items()}
    assert max(times[i] for i in train) <= min(times[i] for i in valid)


def test_config_file_wins_over_tuned_settings(tmp_path: Path) -> None:
    (tmp_path / ".code-evidence.toml").write_text("[ranking]\nrrf_k = 30\n", encoding="utf-8")
    cfg = load_config(tmp_path, {"rrf_k": 100, "bm25_weight": 1.5})
    assert cfg.ranking.rrf_k == 30 and cfg.ranking.bm25_weight == 1.5
    assert load_config(tmp_path, {"no_such_key": 1}).ranking.rrf_k == 30  # stale file ignored
    (tmp_path / TUNED_FILE).write_text("{half a file", encoding="utf-8")
    assert read_tuned(tmp_path) == {}


def test_stored_settings_reach_the_engine_and_its_status(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    report = {
        "created": "2026-11-30T00:00:00+00:00",
        "ranking": {"rrf_k": 40, "bm25_weight": 1.5},
        "before": {"validation": {"mrr": 0.5}},
        "after": {"validation": {"mrr": 0.625}},
    }
    (tmp_path / "idx").mkdir()
    tune_mod.store(tmp_path / "idx", report)
    with Engine(tmp_path / "ws", tmp_path / "idx") as eng:
        assert (eng.config.ranking.rrf_k, eng.config.ranking.bm25_weight) == (40, 1.5)
        assert eng.status().ranking == (
            "tuned 2026-11-30: rrf_k=40, bm25_weight=1.5; validation MRR@10 0.500 -> 0.625"
        )
    with Engine(tmp_path / "ws", tmp_path / "idx2") as eng:
        assert eng.config.ranking.rrf_k == 60 and eng.status().ranking == "defaults"


def test_the_tuned_refusal_line_reads_each_answer_against_its_family_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The engine refuses a Python answer under the configured line plus the model's Python
    offset; the tuner's share of refused right answers must count it the same way."""
    model = verdict.ConfidenceModel(0.0, {}, 0.2, offsets={"python": 0.1, "other": 0.0})
    monkeypatch.setattr(verdict, "shipped", lambda: model)
    case = Case("c", "d", "commit", "a", "q", None, {"x.py": ()})

    def run(confidence: float, python: bool) -> CaseRun:
        r = CaseRun(case, [], 1.0, None, metrics={"R@1": 1.0}, confidence=confidence)
        r.signals = {"python": 1.0 if python else 0.0}
        return r

    # 0.25: over the configured 0.2, under Python's 0.3. Flagged for Python only.
    assert tune_mod.refused_share([run(0.25, python=True)], 0.2) == 1.0
    assert tune_mod.refused_share([run(0.25, python=False)], 0.2) == 0.0
    # Right Python answers at 0.25 are refused under a configured line above 0.15 (read
    # without the offset, the line would stay at the default 0.2 and refuse them all).
    assert tune_mod.refusal_line([run(0.25, python=True)] * 10, 0.2) == pytest.approx(0.15)
    assert tune_mod.refusal_line([run(0.25, python=False)] * 10, 0.2) == pytest.approx(0.2)
