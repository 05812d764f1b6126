#!/usr/bin/env python3
"""`code-evidence eval` at scale: a few thousand commits, timed, in one run.

No repository with a long real history can be downloaded here (PyPI sdists carry no ``.git``),
so the history is made: the flask 3.1.0 sdist of the shared dev set is committed, then each of
N commits edits one function or method (a statement added at its end) with a message built from
that function's docstring ("Change how we ..."), and every tenth commit is noise the miner must
skip (a version bump, a docs-only edit). The repository is cached between runs. Measured: the
time to index HEAD (what a user has before running eval), the time to mine every commit, and
the time to replay and ask ``--max-cases`` of them, with the metrics per configuration.

  PYTHONPATH=server python bench/history_eval.py                  # 3000 commits, 200 cases
  PYTHONPATH=server python bench/history_eval.py --commits 300 --max-cases 40

Results: a table on stdout and ``bench/results/history-eval-<UTC time>.json``.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import (  # first: puts this checkout's server/ on sys.path
    CACHE_ROOT,
    DEFAULT_SHARED,
    git,
    init_repo,
    log,
    result_path,
)

# isort: split
from code_evidence.config import Config
from code_evidence.engine import Engine
from code_evidence.evaluation.backtest import evaluate_history, mine_cases, render_report
from devset import DEFAULT_WS, ensure_workspace, load_manifest

SOURCE_DATASET = "flask-3.1.0-commits"
# How a change to the function is described; varied so that two edits of one function are two
# questions, not a cherry-pick the miner drops as a duplicate.
ENDINGS = (
    "",
    " when the input is empty",
    " for names with unicode characters",
    " without copying the arguments",
    " after the application context is torn down",
    " when the configuration value is missing",
    " in debug mode",
    " for subclasses",
)
SEED = 13


def documented_functions(root: Path) -> list[tuple[str, str, str]]:
    """(path, qualified name, first docstring sentence) of the source's documented functions."""
    out = []
    for path in sorted((root / "src").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                sentence = (doc or "").strip().split("\n\n")[0].replace("\n", " ").split(". ")[0]
                if len(sentence.split()) >= 5:
                    out.append((path.relative_to(root).as_posix(), node.name, sentence))
    return out


def add_statement(path: Path, name: str, marker: int) -> bool:
    """A statement at the end of function ``name``'s body, indented like its last line; False
    (file unchanged) where that would not parse, such as a one-line ``def``."""
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    node = next(
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name
    )
    last = node.body[-1]
    lines = text.splitlines(keepends=True)
    indent = " " * last.col_offset
    at = node.end_lineno or last.lineno
    if isinstance(last, ast.Return | ast.Raise):
        at = last.lineno - 1  # before the return, or the statement would be dead code
    lines.insert(at, f"{indent}_revision_{marker} = {marker}\n")
    try:
        ast.parse("".join(lines))
    except SyntaxError:
        return False
    path.write_text("".join(lines), encoding="utf-8")
    return True


def build_history(commits: int) -> Path:
    root = CACHE_ROOT / "history-eval" / f"flask-{commits}"
    if (root / ".git").is_dir() and (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    dataset = next(d for d in load_manifest(DEFAULT_SHARED) if d["name"] == SOURCE_DATASET)
    source = ensure_workspace(DEFAULT_SHARED, DEFAULT_WS["sdist"], dataset, history=False)
    shutil.copytree(source, root)
    init_repo(root, user="Bench")
    git(root, "add", "-A")
    rng = random.Random(SEED)

    def commit(i: int, message: str) -> None:
        stamp = f"@{1600000000 + i * 3600} +0000"
        git(
            root,
            "commit",
            "-qam",
            message,
            env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp},
        )

    commit(0, "Import flask 3.1.0")
    functions = documented_functions(root)
    for i in range(1, commits + 1):
        if i % 10 == 0:
            if i % 20 == 0:
                (root / "CHANGES.rst").write_text(f"Version 3.1.{i}\n", encoding="utf-8")
                commit(i, f"Bump version to 3.1.{i}")
            else:
                with open(root / "docs" / "index.rst", "a", encoding="utf-8") as f:
                    f.write(f"\nRevision {i}.\n")
                commit(i, "Describe the latest revision in the documentation index")
            continue
        path, name, sentence = rng.choice(functions)
        while not add_statement(root / path, name, i):
            path, name, sentence = rng.choice(functions)
        what = f"{sentence[0].lower()}{sentence[1:].rstrip('.')}"
        commit(i, f"Change how we {what}{rng.choice(ENDINGS)}")
        if i % 250 == 0:
            log(f"  history: {i}/{commits} commits")
    (root / ".complete").touch()
    return root


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--max-cases", type=int, default=200)
    ap.add_argument("--configs", default="bm25,hybrid+features,full")
    args = ap.parse_args()
    t0 = time.perf_counter()
    root = build_history(args.commits)
    build_s = time.perf_counter() - t0
    configs = args.configs.split(",")
    with tempfile.TemporaryDirectory(prefix="history-eval-") as tmp:
        t0 = time.perf_counter()
        with Engine(root, Path(tmp) / "index", config=Config()) as eng:
            eng.index()  # the user's own index: it warms the shared embedding cache
        head_index_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        history = mine_cases(root, None, None, None, args.max_cases)
        mine_s = time.perf_counter() - t0
        stops: list[float] = []

        def progress(stage: str, done: int, total: int) -> None:
            stops.append(time.perf_counter())

        t0 = time.perf_counter()
        report = evaluate_history(history, Config(), configs, progress)
        eval_s = time.perf_counter() - t0
    gaps = [b - a for a, b in zip([t0, *stops], stops, strict=False)]
    print(render_report(report))
    rows = [
        ("commits in the history", f"{args.commits + 1}"),
        ("build the history (cached)", f"{build_s:.1f} s"),
        ("index HEAD (the user's index; embedding cache as found)", f"{head_index_s:.1f} s"),
        ("mine every commit", f"{mine_s:.1f} s ({history.mined.considered} read)"),
        ("replay + ask", f"{eval_s:.1f} s for {report['cases']} questions, {len(configs)} configs"),
        ("per stop (move + index pass + finds)", f"median {statistics.median(gaps) * 1000:.0f} ms"),
        ("eval total (mine + replay + ask)", f"{mine_s + eval_s:.1f} s"),
    ]
    print("\n" + "\n".join(f"{k:<40} {v}" for k, v in rows))
    out = result_path("history-eval")
    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "commits": args.commits,
        "max_cases": args.max_cases,
        "build_s": build_s,
        "head_index_s": head_index_s,
        "mine_s": mine_s,
        "eval_s": eval_s,
        "stop_median_ms": statistics.median(gaps) * 1000,
        "report": {k: v for k, v in report.items() if k != "per_case"},
    }
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
