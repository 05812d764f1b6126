"""The dev groups the quality bench builds beside the shared ones: variant c (the open file
holds the answer, scored with ``open@3``) and unanswerable questions (another project's,
scored by their verdict only)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from code_evidence.config import Config
from code_evidence.evaluation.evaluate import (
    OPEN_IN_3,
    Case,
    CaseRun,
    Hit,
    aggregate,
    score_case,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from devset import publish, unanswerable_cases, variant_c_cases


def commit(cid: str, variant: str, gold: dict[str, tuple[tuple[int, int], ...]]) -> Case:
    return Case(
        cid, "d", "commit", variant, "fix the thing", "x.py" if variant == "b" else None, gold
    )


def test_variant_c_puts_the_user_in_the_most_changed_file_and_labels_its_hunks() -> None:
    a = commit("a1", "a", {"small.py": ((1, 2),), "big.py": ((10, 30), (40, 41))})
    b = commit("b1", "b", {"big.py": ((10, 30),)})
    unranged = commit("a2", "a", {"x.md": ()})
    [c] = variant_c_cases([a, b, unranged])
    assert (c.id, c.variant, c.open_file) == ("a1#c", "c", "big.py")
    assert c.gold == {"big.py": ((10, 30), (40, 41))} and c.group == "commit c"
    # Scored like a (the open file's results count) and with open@3.
    m = score_case(c, [Hit("other.py", 1, 5), Hit("big.py", 12, 14)])
    assert m["MRR@10"] == 0.5 and m["chunk@10"] == 1.0 and m[OPEN_IN_3] == 1.0
    far = [Hit(f"f{i}.py", 1, 2) for i in range(3)] + [Hit("big.py", 1, 2)]
    assert score_case(c, far)[OPEN_IN_3] == 0.0
    assert aggregate([m, score_case(c, far)])[OPEN_IN_3] == 0.5


def test_unanswerable_questions_come_from_the_foreign_project(tmp_path: Path) -> None:
    lines = [
        {"id": f"z{i}", "kind": "commit", "variant": v, "query": f"q{i}", "gold": [{"path": "p"}]}
        for i, v in enumerate("abaa")
    ]
    (tmp_path / "zod.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    manifest = [
        {"name": "fastify-v4.24.0-commits", "repo": "fastify/fastify", "cases": "f.jsonl"},
        {"name": "zod-v3.22.0-commits", "repo": "colinhacks/zod", "cases": "zod.jsonl"},
    ]
    cases = unanswerable_cases(tmp_path, manifest, manifest[0], 2)
    assert [c.query for c in cases] == ["q0", "q2"]  # variant a only, at most n
    assert all(c.kind == "unanswerable" and not c.gold and c.open_file is None for c in cases)
    assert cases[0].dataset == "fastify-v4.24.0-commits"
    assert score_case(cases[0], [Hit("p", 1, 2)]) == {}  # only the verdict counts


def test_the_refusal_line_is_chosen_without_the_held_out_project() -> None:
    from confidence_fit import ALL, Row, choose_line, group_numbers, outcome

    def row(project: str, right: bool, answerable: bool = True) -> Row:
        group = "commit a / Python" if answerable else "unanswerable / Python"
        return Row(frozenset({project}), project, group, {}, False, answerable, right, not right, 0)

    scored = [(row("a", True), 0.5), (row("a", False), 0.1), (row("a", True), 0.15)]
    scored += [(row("a", False, answerable=False), 0.05)]
    # Above 0.15 a right answer would be refused (1 of 3 answerable > 3 %).
    assert choose_line(scored, 0.03, 1) == 0.15
    n = group_numbers((r, p, {ALL: 0.15}) for r, p in scored)
    assert n["commit a / Python"]["refused_while_right"] == 0.0
    assert n["commit a / Python"]["accepted_while_wrong"] == 0.0
    assert n["unanswerable / Python"]["unanswerable_refused"] == 1.0
    n = group_numbers((r, p, {ALL: 0.2}) for r, p in scored)
    assert n["commit a / Python"]["refused_while_right"] == 1 / 3
    # How a report's case came out: the workspace that answered and its language family.
    case = {
        "id": "click-8.1.7-commits:abc:a@flask-2.0.0-commits",
        "group": "unanswerable",
        "metrics": {},
    }
    o = outcome(case, {"flask-2.0.0-commits": "Python"})
    assert (o.workspace, o.group, o.answerable, o.right, o.wrong) == (
        "flask-2.0.0-commits",
        "unanswerable / Python",
        False,
        False,
        True,
    )


def test_the_wide_unanswerable_set_asks_every_other_project_but_not_twice(tmp_path: Path) -> None:
    """refusal.py: a workspace is asked questions of every other project, spread over the
    donor's datasets; of the project quality.py already asks there, other questions than
    its own; confidence_fit reads them as same-family or cross-family unanswerable cases."""
    from confidence_fit import rows
    from refusal import wide_cases

    def write(name: str, prefix: str, n: int) -> None:
        lines = [
            {
                "id": f"{prefix}{i}",
                "kind": "commit",
                "variant": "a",
                "query": f"{prefix} q{i}",
                "gold": [{"path": "p"}],
            }
            for i in range(n)
        ]
        (tmp_path / name).write_text("\n".join(json.dumps(x) for x in lines) + "\n")

    write("f.jsonl", "fastify", 4)
    write("z.jsonl", "zod", 6)
    write("g.jsonl", "gin", 4)
    manifest = [
        {"name": "fastify-v4.24.0-commits", "repo": "fastify/fastify", "cases": "f.jsonl"},
        {"name": "zod-v3.22.0-commits", "repo": "colinhacks/zod", "cases": "z.jsonl"},
        {"name": "gin-v1.9.0-commits", "repo": "gin-gonic/gin", "cases": "g.jsonl"},
    ]
    cases = wide_cases(tmp_path, manifest, manifest[0], 2, narrow=2)
    # zod is fastify's foreign project: its first two questions are quality.py's, not asked.
    assert [c.query for c in cases] == ["zod q2", "zod q4", "gin q0", "gin q2"]  # by repo
    assert all(c.id.endswith("@fastify-v4.24.0-commits") and not c.gold for c in cases)
    report = {
        "languages": {"fastify-v4.24.0-commits": "JavaScript", "flask-2.0.0-commits": "Python"},
        "cases_full": [
            {
                "id": f"{q}:a@fastify-v4.24.0-commits",
                "group": "unanswerable",
                "metrics": {},
                "signals": {"cos_max": 0.2},
                "confidence": 0.4,
            }
            for q in ("zod-v3.22.0-commits:z2", "flask-2.0.0-commits:f1")
        ],
    }
    read = rows(report, wide=True)
    assert [r.group for r in read] == [
        "unanswerable-same / other languages",
        "unanswerable-cross / other languages",
    ]
    assert not any(r.answerable for r in read)
    assert read[1].projects == frozenset({"fastify", "flask"})


def test_the_refusal_table_counts_what_the_engine_flagged() -> None:
    """An answer over the configured line can still be flagged (its family's line is higher);
    the quality bench's refusal numbers are the engine's flags, not a re-check of one line."""
    from quality import DatasetRun, refusal_rows

    case = commit("a1", "a", {"x.py": ()})
    line = Config().ranking.insufficient_below

    def run(insufficient: bool, right: bool) -> CaseRun:
        r = CaseRun(case, [], 1.0, None, confidence=line + 0.01)
        r.metrics = {"MRR@10": 1.0 if right else 0.0, "R@5": 1.0 if right else 0.0}
        r.insufficient = insufficient
        return r

    runs = [run(True, right=True), run(False, right=True), run(False, right=False)]
    dr = DatasetRun("d", "ws", "idx", 0.0, None, {"full": runs}, "Python")
    [row] = refusal_rows([dr], "full").values()
    assert row["refused"] == pytest.approx(1 / 3)
    assert row["refused_while_right"] == pytest.approx(1 / 3)
    assert row["accepted_while_wrong"] == pytest.approx(1 / 3)


def test_a_workspace_built_by_a_second_run_at_once_gives_way_to_the_first(tmp_path: Path) -> None:
    """Two bench runs that materialize the same missing workspace each build it in a scratch
    folder and rename it into place: the first rename wins, the second run's copy is dropped,
    and neither ever reads a half-written tree."""
    ws = tmp_path / "flask-docstrings"
    for run, text in (("a", "first"), ("b", "second")):
        built = tmp_path / f".scratch-{run}" / "flask-docstrings"
        built.mkdir(parents=True)
        (built / "app.py").write_text(text)
        publish(built, ws)
        assert not built.exists()
    assert (ws / "app.py").read_text() == "first"


def test_docstring_sets_first_sentence_per_language() -> None:
    """Chinese ends at 。！？ and needs 8 Chinese characters; English ends at a full stop before a
    space, reduces Sphinx roles and needs 6 words (the shared rule)."""
    from docstring_sets import first_sentence, qualifies

    zh = first_sentence("获取债券最新交易日成交明细。更多说明\n\nParameters\n----------")
    assert zh == "获取债券最新交易日成交明细。" and qualifies(zh, "zh")
    assert not qualifies("获取数据。", "zh")
    en = first_sentence(
        "Return the :meth:`~rich.console.Console.print` output as text. The rest is detail.\n"
        "\nArgs:\n    x: a value",
        "en",
    )
    assert en == "Return the print output as text."
    assert qualifies(en, "en") and not qualifies("Return the text.", "en")
    assert first_sentence("Version 1.2 of the format: read it\nfrom a file", "en") == (
        "Version 1.2 of the format: read it from a file"
    )


def test_package_sets_ask_each_language_where_its_questions_exist() -> None:
    """Chinese-documented sets in Chinese (and in English where the team translated them), the
    English held-out sets in English; every set's case file exists, every twin has a case."""
    from chinese import CHINESE_DOCUMENTED, ENGLISH_HELD_OUT, english_twins, package_cases

    assert len(CHINESE_DOCUMENTED) == 9 and len(ENGLISH_HELD_OUT) == 4
    for name in (*CHINESE_DOCUMENTED, *ENGLISH_HELD_OUT):
        assert package_cases(name, None)
    twinned = [n for n in CHINESE_DOCUMENTED if english_twins(n)]
    assert sorted(twinned) == [
        "baostock-0.9.4-docstrings",
        "easytrader-0.23.7-docstrings",
        "jqdatasdk-1.9.8-docstrings",
        "lunar_python-1.4.8-docstrings",
        "werobot-1.13.1-docstrings",
    ]
    for name in twinned:
        ids = {c.id for c in package_cases(name, None)}
        assert set(english_twins(name)) == ids
    assert not any(english_twins(n) for n in ENGLISH_HELD_OUT)


def test_open_lines_counts_where_each_gold_result_opens() -> None:
    """bench/open_lines.py: of the results overlapping a gold range (2+ lines), how many start
    in it and how many open in it; a trace case's first result holding its frame line."""
    from open_lines import measure

    case = commit("t1", "a", {"g.py": ((20, 22),)})
    answers = {
        "t1": [
            {"path": "g.py", "start": 10, "end": 30, "line": 21},  # opens in gold
            {"path": "g.py", "start": 21, "end": 40, "line": 35},  # starts in gold only
            {"path": "other.py", "start": 1, "end": 50, "line": 3},  # not gold: left out
            {"path": "g.py", "start": 22, "end": 22, "line": 22},  # one line: left out
        ]
    }
    row = measure([case], answers, {"t1": 21}, min_lines=2)["commit a"]
    assert row["results"] == 2
    assert row["start_in_gold"] == 0.5 and row["line_in_gold"] == 0.5
    assert row["frame_cases"] == 1 and row["frame_start"] == 0.0 and row["frame_line"] == 1.0
    # An older run without lines opens every result at its start.
    old = {"t1": [{k: v for k, v in r.items() if k != "line"} for r in answers["t1"]]}
    assert measure([case], old, {}, min_lines=2)["commit a"]["line_in_gold"] == 0.5


def test_about_file_scores_the_other_files_and_both_refusal_numbers() -> None:
    """bench/about_file.py: a variant-b case asked as "what else must change with this file?"
    is scored on the other changed files (the open file left out, as score.py does), and an
    answer counts as refused while right or accepted while wrong by its verdict."""
    from about_file import record, summary

    case = commit("t1", "b", {"y.py": (), "z.py": ()})
    hits = [Hit("x.py", 1, 2), Hit("y.py", 1, 2), Hit("w.py", 1, 2), Hit("z.py", 1, 2)]
    right = record(case, "this", hits, 10.0, insufficient=True, confidence=0.1)
    assert right["MRR@10"] == 1.0 and right["R@5"] == 1.0 and right["refused_right"]
    wrong = record(case, "that", [Hit("w.py", 1, 2)], 30.0, insufficient=False, confidence=0.9)
    assert wrong["MRR@10"] == 0.0 and wrong["accepted_wrong"] and not wrong["refused_right"]
    history = record(case, "partners", [Hit("z.py", 1, 1)], None)
    assert "refused_right" not in history and history["R@10"] == 0.5
    rows = summary([right, wrong, history])
    assert rows["this"]["refused_right"] == 1.0 and rows["that"]["median_ms"] == 30.0
    assert "median_ms" not in rows["partners"]
