"""The CLI as a user runs it: a real subprocess, real output streams and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import ROOT
from support.project import git

RESULT_KEYS = {
    "query",
    "workspace",
    "commit",
    "branch",
    "results",
    "context",
    "confidence",
    "insufficient",
    "insufficient_reason",
    "trace",
}
EVIDENCE_KEYS = {"path", "start", "end", "symbol", "kind", "language", "score", "reasons", "text"}


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    return subprocess.run(
        [sys.executable, "-m", "code_evidence.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def test_find_json_shape(project: Path, tmp_path: Path) -> None:
    idx = str(tmp_path / "idx")
    out = run_cli(
        "find", "check_oauth_state", "--workspace", str(project), "--index-dir", idx, "--json"
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)  # exactly one JSON object on stdout
    assert set(data) >= RESULT_KEYS
    assert data["commit"] == git(project, "rev-parse", "HEAD") and data["branch"] == "main"
    assert 0.0 <= data["confidence"] <= 1.0
    first = data["results"][0]
    assert set(first) >= EVIDENCE_KEYS
    assert (first["path"], first["symbol"]) == ("src/shop/oauth.py", "check_oauth_state")
    assert first["start"] >= 1 and first["end"] >= first["start"]
    assert set(data["context"]) >= {"text", "tokens", "budget", "dropped"}
    for stage in data["trace"].values():
        assert set(stage) == {"candidates", "ms"}
    assert "recall.bm25" in data["trace"] and "recall.vector" in data["trace"]


def test_human_output_lists_ranked_locations(project: Path, tmp_path: Path) -> None:
    out = run_cli(
        "find",
        "voucher discount",
        "--workspace",
        str(project),
        "--index-dir",
        str(tmp_path / "idx"),
        "--limit",
        "3",
    )
    assert out.returncode == 0, out.stderr
    ranked = [line for line in out.stdout.splitlines() if line[:3].strip().rstrip(".").isdigit()]
    assert len(ranked) == 3
    assert "src/shop/pricing.py:" in ranked[0]
    assert "--- context" in out.stdout
    assert f"index: main@{git(project, 'rev-parse', 'HEAD')[:10]}" in out.stdout.splitlines()[0]


def test_a_plain_folder_given_as_an_argument(tmp_path: Path) -> None:
    # `code-evidence index FOLDER`, as other tools take a folder; the answer says it was read
    # from the working tree (it printed "index: -@-").
    folder = tmp_path / "plain"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "retry.py").write_text("def backoff_delay(attempt):\n    return 2**attempt\n")
    idx = str(tmp_path / "idx")
    out = run_cli("index", str(folder), "--index-dir", idx, "--quiet")
    assert out.returncode == 0, out.stderr
    assert f"indexed {folder}" in out.stdout
    status = run_cli("status", str(folder), "--index-dir", idx, "--json")
    assert json.loads(status.stdout)["chunks"] > 0
    found = run_cli("find", "backoff delay", "--workspace", str(folder), "--index-dir", idx)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[0].endswith("index: working tree (no commit)")
    both = run_cli("index", str(folder), "--workspace", str(tmp_path), "--index-dir", idx)
    assert both.returncode == 2 and "two workspaces given" in both.stderr


def test_batch_keeps_order_and_survives_bad_lines(project: Path, tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "query": "discount_for"}),
                "{not json",
                json.dumps({"id": "c", "query": "   "}),
                json.dumps({"id": "d", "query": "rate", "open_file": "src/shop/cart.py"}),
                json.dumps({"id": "e", "query": "x", "open_file": "/etc/passwd"}),
            ]
        )
    )
    out = run_cli(
        "find",
        "--batch",
        str(batch),
        "--workspace",
        str(project),
        "--index-dir",
        str(tmp_path / "idx"),
        "--quiet",
    )
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["a", 2, "c", "d", "e"]
    assert rows[0]["results"][0]["symbol"] == "discount_for"
    assert "error" in rows[1] and "error" in rows[2] and "empty" in rows[2]["error"]
    assert rows[3]["results"] and "error" not in rows[3]
    assert "outside" in rows[4]["error"]


def test_errors_are_clear_with_exit_code_2(project: Path, tmp_path: Path) -> None:
    missing = run_cli("find", "x", "--workspace", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "workspace not found" in missing.stderr
    assert "Traceback" not in missing.stderr
    idx = str(tmp_path / "idx")
    blank = run_cli("find", "   ", "--workspace", str(project), "--index-dir", idx)
    assert blank.returncode == 2 and "empty" in blank.stderr
    outside = run_cli(
        "find", "cart", "--workspace", str(project), "--index-dir", idx, "--open-file", "../x.py"
    )
    assert outside.returncode == 2 and "outside" in outside.stderr
    bad_cfg = project / ".code-evidence.toml"
    bad_cfg.write_text("[index]\nmax_file_byts = 10\n")
    cfg = run_cli("index", "--workspace", str(project), "--index-dir", idx)
    assert cfg.returncode == 2 and "max_file_byts" in cfg.stderr


def test_an_option_the_command_lacks_is_its_error_with_the_option_meant() -> None:
    """``--root`` (ripgrep's and others' word for the folder) and a misspelt option are the
    command's own errors, its usage shown, with the option the user meant."""
    root = run_cli("find", "--root", ".", "where is the timeout")
    assert root.returncode == 2 and "Traceback" not in root.stderr
    assert "usage: code-evidence find" in root.stderr
    assert "unrecognized arguments: --root" in root.stderr
    assert "the folder to search is --workspace" in root.stderr
    typo = run_cli("status", "--jsn")
    assert typo.returncode == 2 and "code-evidence status: error" in typo.stderr
    assert "did you mean --json?" in typo.stderr


def test_index_then_status(project: Path, tmp_path: Path) -> None:
    idx = str(tmp_path / "idx")
    out = run_cli("index", "--workspace", str(project), "--index-dir", idx, "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["files_changed"] > 0 and report["skipped"].get("secret") == 1
    assert report["chunks_total"] > 10
    status = run_cli("status", "--workspace", str(project), "--index-dir", idx, "--json")
    data = json.loads(status.stdout)
    assert data["pending"] == 0 and data["chunks"] == report["chunks_total"]
    assert data["commit"] == git(project, "rev-parse", "HEAD")
    assert data["model"] and data["index_bytes"] > 0
    (project / "src/shop/pricing.py").write_text("def gone():\n    pass\n")
    status = run_cli("status", "--workspace", str(project), "--index-dir", idx)
    assert "1 files pending" in status.stdout


def test_default_index_dir_is_outside_the_workspace(project: Path) -> None:
    out = run_cli("status", "--json", cwd=project)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert not data["index_dir"].startswith(str(project))
    assert Path(data["index_dir"]).name.startswith("shop-")


def test_explain_and_as_of_from_the_cli(project: Path, tmp_path: Path) -> None:
    idx = str(tmp_path / "idx")
    out = run_cli(
        "find", "discount_for", "--workspace", str(project), "--index-dir", idx, "--explain"
    )
    assert out.returncode == 0, out.stderr
    explained = out.stdout.split("--- explain ---", 1)[1]
    assert "src/shop/pricing.py:" in explained and "bm25 #1" in explained
    past = run_cli(
        "find",
        "shipping_cost",
        "--workspace",
        str(project),
        "--index-dir",
        idx,
        "--as-of",
        "feature",
        "--json",
    )
    data = json.loads(past.stdout)
    assert data["results"][0]["path"] == "src/shop/shipping.py"
    assert data["commit"] == git(project, "rev-parse", "feature")
    bad = run_cli("find", "x", "--workspace", str(project), "--index-dir", idx, "--as-of", "nope")
    assert bad.returncode == 2 and "does not name a commit" in bad.stderr


def test_find_deep_lets_the_cross_encoder_score_more(project: Path) -> None:
    q = "check the oauth state of a request"
    deep = run_cli("find", q, "--workspace", str(project), "--json", "--deep", "--quiet")
    assert deep.returncode == 0, deep.stderr
    answer = json.loads(deep.stdout)
    assert any("cross" in r["scores"] for r in answer["results"])
    quick = run_cli("find", q, "--workspace", str(project), "--json", "--quiet")
    assert quick.returncode == 0, quick.stderr
    scored = [r for r in json.loads(quick.stdout)["results"] if "cross" in r["scores"]]
    assert len(scored) <= 12  # interactive: the pair cap, whatever the time left


CART = "src/shop/cart.py"


def test_one_bad_batch_line_does_not_abort_the_batch(project: Path, tmp_path: Path) -> None:
    """Issue 14: a mistyped field or a line number past any file answered {id, error} for that
    line; the lines after it were still answered."""
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        "\n".join(
            json.dumps(item)
            for item in [
                {"id": "path-is-a-number", "query": "cart total", "open_file": 5},
                {"id": "huge-line", "query": "cart", "open_file": CART, "line": 10**30},
                {"id": "line-is-text", "query": "cart", "open_file": CART, "line": "9"},
                {"id": "query-is-a-list", "query": ["cart"]},
                {"id": "fine", "query": "discount_for"},
            ]
        )
    )
    out = run_cli(
        "find", "--batch", str(batch), "--workspace", str(project),
        "--index-dir", str(tmp_path / "idx"), "--quiet",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["id"] for r in rows] == [
        "path-is-a-number", "huge-line", "line-is-text", "query-is-a-list", "fine",
    ]  # fmt: skip
    assert all("error" in r for r in rows[:4]) and "internal error" not in out.stdout
    assert "open_file" in rows[0]["error"] and "line" in rows[1]["error"]
    assert rows[4]["results"][0]["symbol"] == "discount_for"


def test_human_output_escapes_control_characters(project: Path, tmp_path: Path) -> None:
    """Issue 14: a carriage return in a file name overwrote the rank column; an escape
    sequence could drive the terminal. Human output shows them escaped."""
    (project / "src/shop/evil\rname.py").write_text(
        'def overwrite_the_rank_column():\n    return "\x1b[2J\x1b[31mred"\n'
    )
    out = run_cli(
        "find", "overwrite_the_rank_column", "--workspace", str(project),
        "--index-dir", str(tmp_path / "idx"), "--limit", "3", "--explain",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stdout and "\x1b" not in out.stdout
    assert "src/shop/evil\\rname.py:" in out.stdout and "\\x1b[2J" in out.stdout
    first = next(line for line in out.stdout.splitlines() if line.startswith(" 1. "))
    assert "evil\\rname.py" in first and "overwrite_the_rank_column" in first
    as_json = run_cli(
        "find", "overwrite_the_rank_column", "--workspace", str(project),
        "--index-dir", str(tmp_path / "idx"), "--json",
    )  # fmt: skip
    assert json.loads(as_json.stdout)["results"][0]["path"] == "src/shop/evil\rname.py"
