"""Issue 21: the CLI as a new user meets it. Bad editor state stops with exit code 2 and a
clear message; an empty index says why; every progress stage ends; the human output explains
its figures (and ``--quiet`` stays terse); a query of only symbols has nothing to search for,
while a query in any script is a real query; ``--as-of`` outside git says so."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from code_evidence.api import FindRequest, checked
from code_evidence.cli_output import ProgressBar
from code_evidence.engine import EngineError
from test_cli import run_cli

CART = "src/shop/cart.py"


def test_bad_open_file_and_line_exit_2_before_indexing(project: Path, tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    base = ("find", "cart total", "--workspace", str(project), "--index-dir", str(idx))
    lines = len((project / CART).read_text().splitlines())
    cases = {
        ("--open-file", "nosuch.go"): "--open-file nosuch.go: no such file in",
        ("--open-file", CART, "--line", "0"): "--line counts from 1",
        ("--open-file", CART, "--line", "99999"): f"past the end of {CART} ({lines} lines)",
        ("--open-file", CART, "--line", str(lines + 1)): "past the end",
    }
    for extra, message in cases.items():
        out = run_cli(*base, *extra)
        assert out.returncode == 2, (extra, out.stderr)
        assert message in out.stderr and "Traceback" not in out.stderr, out.stderr
        assert out.stdout == ""
    ok = run_cli(*base, "--open-file", CART, "--line", str(lines), "--json", "--quiet")
    assert ok.returncode == 0, ok.stderr


def test_symbols_only_is_nothing_to_search_for_but_any_script_is_a_query() -> None:
    for query in ("?!", "...", "()[]{}", "-> => ::", "  ¿¡ «» —  "):
        with pytest.raises(EngineError, match="nothing to search for"):
            checked(FindRequest(query=query))
    for query in ("发票 计算", "計算する", "счёт", "حساب", "λ", "x", "404", "__init__"):
        assert checked(FindRequest(query=query))[0].query == query


def test_symbols_only_query_from_the_cli(project: Path, tmp_path: Path) -> None:
    out = run_cli("find", "?!", "--workspace", str(project), "--index-dir", str(tmp_path / "i"))
    assert out.returncode == 2 and "nothing to search for" in out.stderr, out.stderr
    chinese = run_cli(
        "find", "购物车 总价", "--workspace", str(project), "--index-dir", str(tmp_path / "i"),
        "--json", "--quiet",
    )  # fmt: skip
    assert chinese.returncode == 0, chinese.stderr
    assert json.loads(chinese.stdout)["query"] == "购物车 总价"


def _skipped_folder(root: Path) -> Path:
    root.mkdir()
    (root / "big.js").write_text("var a = 1;\n" * 200_000)  # over max_file_bytes
    (root / "app.min.js").write_text("var " + ",".join(f"a{i}={i}" for i in range(3000)) + ";")
    return root


def test_index_summary_counts_every_file_and_says_why_skipped(tmp_path: Path) -> None:
    ws = _skipped_folder(tmp_path / "ws")
    idx = str(tmp_path / "idx")
    for _ in range(2):  # the second pass reads nothing again and must still count the skips
        out = run_cli("index", "--workspace", str(ws), "--index-dir", idx)
        assert out.returncode == 0, out.stderr
        assert "2 files seen, 0 indexed" in out.stdout, out.stdout
        assert "2 skipped: 1 minified, 1 too-large" in out.stdout, out.stdout
        assert "the index is empty: every file was skipped" in out.stdout
    report = json.loads(
        run_cli("index", "--workspace", str(ws), "--index-dir", idx, "--json").stdout
    )
    assert report["files_indexed"] == 0 and report["files_skipped"] == 2
    assert report["skipped"] == {"minified": 1, "too-large": 1}


def test_empty_index_says_it_is_empty_and_why(tmp_path: Path) -> None:
    ws = _skipped_folder(tmp_path / "ws")
    out = run_cli("find", "hello", "--workspace", str(ws), "--index-dir", str(tmp_path / "i1"))
    assert out.returncode == 0, out.stderr
    assert "the index is empty: every file was skipped (2 skipped: 1 minified, 1 too-large)" in (
        out.stdout
    )
    assert "vectors unavailable" not in out.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    index = run_cli("index", "--workspace", str(empty), "--index-dir", str(tmp_path / "i2"))
    assert "the index is empty: the folder has no files to index" in index.stdout
    assert "0 files seen" in index.stdout
    out = run_cli(
        "find", "hello", "--workspace", str(empty), "--index-dir", str(tmp_path / "i2"), "--json"
    )
    data = json.loads(out.stdout)
    assert (
        data["insufficient"] and "the folder has no files to index" in (data["insufficient_reason"])
    )


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


@pytest.mark.parametrize("tty", [False, True])
def test_every_progress_stage_ends_at_100_or_says_skipped(tty: bool) -> None:
    stream = _Stream(tty)
    bar = ProgressBar(stream)
    bar("read", 1, 1)
    bar("lexical", 0, 1)  # the pass moved on without reporting lexical done
    bar("embed", 3, 10)
    bar.close()  # and ended before embed reached its total
    text = stream.getvalue().replace("\r", "\n")
    assert "lexical: skipped after 0/1" in text and "embed: skipped after 3/10" in text
    assert text.endswith("\n")
    bar2 = ProgressBar(_Stream(tty))
    bar2("lexical", 0, 1)
    bar2("lexical", 1, 1)
    bar2.close()
    assert "skipped" not in bar2.stream.getvalue()  # type: ignore[attr-defined]


def test_a_real_index_run_ends_every_stage(project: Path, tmp_path: Path) -> None:
    out = run_cli("index", "--workspace", str(project), "--index-dir", str(tmp_path / "idx"))
    assert out.returncode == 0, out.stderr
    last: dict[str, str] = {}
    for line in out.stderr.splitlines():
        m = re.match(r"(\w+): (.*)", line)
        if m and not line.startswith("note:"):
            last[m.group(1)] = m.group(2)
    assert {"read", "lexical"} <= set(last), out.stderr
    for stage, tail in last.items():
        assert tail.endswith("(100%)") or tail.startswith("skipped"), (stage, tail)


def test_human_output_explains_itself_and_quiet_stays_terse(project: Path, tmp_path: Path) -> None:
    idx = str(tmp_path / "idx")
    args = ("find", "voucher discount", "--workspace", str(project), "--index-dir", idx)
    out = run_cli(*args)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "confidence: 0-1, the chance that the first result's file is the right one" in text
    dropped = int(re.search(r"tokens, (\d+) dropped\)", text).group(1))  # type: ignore[union-attr]
    if dropped:
        assert f"dropped: {dropped} near-miss results left out of the context pack (" in text
    tags = re.search(r"^  tags: (.*)$", text, re.M)
    assert tags and "bm25 = keyword match" in tags.group(1)
    shown = {t for line in text.splitlines() if line[:3].strip().rstrip(".").isdigit()
             for t in line.split("  ")[-1].split(", ")}  # fmt: skip
    for tag in shown:
        assert f"{tag} = " in tags.group(1), tag
    quiet = run_cli(*args, "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert "confidence: 0-1" not in quiet.stdout and "tags:" not in quiet.stdout
    assert "dropped:" not in quiet.stdout and "--- context" in quiet.stdout


def test_as_of_outside_git_says_not_a_git_repository(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "a.py").write_text("def hello():\n    return 1\n")
    out = run_cli(
        "find", "hello", "--workspace", str(ws), "--index-dir", str(tmp_path / "i"),
        "--as-of", "HEAD", "--quiet",
    )  # fmt: skip
    assert out.returncode == 2 and "is not a git repository" in out.stderr, out.stderr


def test_batch_lines_naming_a_missing_file_or_a_line_past_its_end_answer_an_error(
    project: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "q.jsonl"
    items = [
        {"id": "missing", "query": "cart", "open_file": "nosuch.go"},
        {"id": "past-end", "query": "cart", "open_file": CART, "line": 99999},
        {"id": "fine", "query": "cart total", "open_file": CART, "line": 1},
    ]
    batch.write_text("\n".join(json.dumps(i) for i in items))
    out = run_cli(
        "find", "--batch", str(batch), "--workspace", str(project),
        "--index-dir", str(tmp_path / "idx"), "--quiet",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert "nosuch.go: no such file in" in rows["missing"]["error"]
    assert "line 99999 is past the end of src/shop/cart.py" in rows["past-end"]["error"]
    assert rows["fine"]["results"]


def test_the_legend_explains_every_tag_the_search_can_give() -> None:
    """Each reason tag an answer can carry (a recall channel, or a literal ``c.tag("…")`` or
    tag tuple in the search stage) has words in the legend, not its own name repeated."""
    from code_evidence.cli_output import REASON_TAGS
    from code_evidence.search import explain

    search = Path(explain.__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in search.glob("*.py"))
    tags = set(re.findall(r'\.tag\("([a-z0-9-]+)"\)', source))
    for group in re.findall(r"for tag in \(([^)]*)\)", source):  # ("caller", "callee")
        tags |= set(re.findall(r'"([a-z0-9-]+)"', group))
    tags |= set(explain.CHANNELS)
    assert len(tags) > 25
    missing = sorted(t for t in tags if not REASON_TAGS.get(t) or REASON_TAGS[t] == t)
    assert not missing, missing
